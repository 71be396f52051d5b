"""The correlation table as text, CSV (RFC 4180, formula-safe) and JSON.

Shared by the ``correlate`` and ``report`` commands and the report page.
"""

import csv
import io
import json
import math
import textwrap

from evaluation.correlation import COEFFICIENTS, CorrelationResult
from evaluation.human import csv_safe


def _csv_cell(value):
    """Numbers stay numbers, None is an empty cell, text that could start a formula gets a leading quote."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return value
    return csv_safe(str(value))


def correlation_csv(results: dict[str, dict[str, CorrelationResult]]) -> str:
    header = ["metric", "language", "n", "n_comparisons"]
    for name in COEFFICIENTS:
        header += [name, f"{name}_ci_lo", f"{name}_ci_hi", f"{name}_p"]
    header += ["p_n", "n_boot", "mirrored", "note"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(header)
    for metric, by_language in results.items():
        for language, result in by_language.items():
            row = [metric, language, result.n, result.n_comparisons]
            for name in COEFFICIENTS:
                ci = getattr(result, f"{name}_ci")
                row += [
                    getattr(result, name),
                    ci[0] if ci else None,
                    ci[1] if ci else None,
                    getattr(result, f"{name}_p"),
                ]
            row += [result.p_n, result.n_boot, result.mirrored, result.note]
            writer.writerow([_csv_cell(value) for value in row])
    return buffer.getvalue()


def correlation_json(results: dict[str, dict[str, CorrelationResult]]) -> str:
    data = {
        metric: {language: result.as_dict() for language, result in by_language.items()}
        for metric, by_language in results.items()
    }
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _number(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.3f}"


def _p_value(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def correlation_text(results: dict[str, dict[str, CorrelationResult]], *, show_p: bool) -> str:
    header = ["metric", "language", "N"]
    for name in COEFFICIENTS:
        header.append(f"{name} [95% CI]")
        if show_p:
            header.append(f"{name} p")
    rows = []
    for metric, by_language in results.items():
        for language, result in by_language.items():
            row = [metric, language, str(result.n)]
            for name in COEFFICIENTS:
                ci = getattr(result, f"{name}_ci")
                cell = _number(getattr(result, name))
                if ci is not None:
                    cell += f" [{_number(ci[0])}, {_number(ci[1])}]"
                row.append(cell)
                if show_p:
                    row.append(_p_value(getattr(result, f"{name}_p")))
            rows.append(row)
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    # Names align left, numbers right.
    left = {0, 1}

    def render(line):
        cells = [
            cell.ljust(w) if i in left else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths))
        ]
        return "  ".join(cells).rstrip()

    lines = [render(header), "  ".join("-" * w for w in widths)]
    lines += [render(row) for row in rows]
    first = next(iter(next(iter(results.values())).values()))
    lines.append("")
    lines.append(textwrap.fill(f"N: points the coefficients are computed on. {first.note}", width=100))
    if not show_p:
        lines.append("p-values: with --verbosity 2, and in --format csv / json.")
    if first.n_boot:
        lines.append(f"95% CI: percentile bootstrap, {first.n_boot} resamples of the comparisons.")
    return "\n".join(lines) + "\n"
