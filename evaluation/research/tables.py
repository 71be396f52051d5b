"""Every table the platform prints, in one place: aligned text, CSV (RFC 4180, formula-safe) and JSON.

* :func:`format_table` renders rows of the human-evaluation numbers (Table 1, Table 2, ΔS×S) with
  the column lists their modules define;
* ``correlation_*`` render the metric-vs-human correlation results.

Shared by the ``human_tables``, ``correlate`` and ``report`` commands, the report page and the admin.
"""

from __future__ import annotations

import csv
import io
import json
import math
import numbers
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from evaluation.research.correlation import COEFFICIENTS, CorrelationResult

# A column: "key", or (key, header), or (key, header, number format for text, e.g. ".1f").
ColumnSpec = str | tuple[str, str] | tuple[str, str, str]
TableFormat = Literal["text", "csv", "json"]

MISSING_TEXT = "n/a"
# A spreadsheet treats a cell starting with one of these as a formula (or strips it first).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\0")


def _columns(columns: Sequence[ColumnSpec]) -> list[tuple[str, str, str]]:
    out = []
    for column in columns:
        if isinstance(column, str):
            out.append((column, column, ""))
        elif len(column) == 2:
            out.append((column[0], column[1], ""))
        else:
            out.append((column[0], column[1], column[2]))
    return out


def _value(row: Any, key: str) -> Any:
    value = row[key] if isinstance(row, Mapping) else getattr(row, key)
    if (
        isinstance(value, numbers.Real)
        and not isinstance(value, numbers.Integral)
        and not math.isfinite(value)
    ):
        return None  # NaN / infinity never reach a table
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


def _plain(value: Any) -> Any:
    """What json cannot serialise itself: numbers (numpy, Decimal) as numbers, anything else as text."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value) if math.isfinite(value) else None
    return str(value)


def _structured(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=_plain)


def csv_safe(text: str) -> str:
    """Neutralise a CSV string cell a spreadsheet would run as a formula: prefix a single quote."""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _text_cell(value: Any, number_format: str) -> str:
    if value is None:
        return MISSING_TEXT
    if isinstance(value, bool):
        return str(value).lower()
    if _is_number(value):
        if number_format:
            try:
                return format(value, number_format)
            except (TypeError, ValueError):  # e.g. "d" given for a float
                pass
        return str(value)
    if isinstance(value, Mapping | list | tuple):
        return _structured(value)
    return str(value)


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if _is_number(value):
        return str(value)
    if isinstance(value, Mapping | list | tuple):
        return csv_safe(_structured(value))
    return csv_safe(str(value))


def format_table(rows: Iterable[Any], columns: Sequence[ColumnSpec], fmt: TableFormat = "text") -> str:
    """Render rows (dataclasses, named tuples or other objects by attribute; mappings by key).

    * ``"text"``: a header line and aligned columns (numbers right-aligned, formatted with the
      column's number format, e.g. ``.1f`` for percentages; missing values as ``n/a``);
    * ``"csv"``: RFC 4180 via the ``csv`` module (CRLF line ends, header row of column headers);
      numbers at full precision and negative numbers as numbers; missing values empty; string cells
      starting with = + - @ tab CR or NUL prefixed with a single quote so no spreadsheet runs them;
    * ``"json"``: a list of objects keyed by column key, full precision, ``null`` for missing.

    Raises ``ValueError`` for an unknown format.
    """
    specs = _columns(columns)
    rows = list(rows)
    values = [[_value(row, key) for key, _, _ in specs] for row in rows]

    if fmt == "json":
        records = [{key: value for (key, _, _), value in zip(specs, row)} for row in values]
        return json.dumps(records, ensure_ascii=False, indent=2, allow_nan=False, default=_plain)

    if fmt == "csv":
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow([csv_safe(header) for _, header, _ in specs])
        writer.writerows([_csv_cell(value) for value in row] for row in values)
        return buffer.getvalue()

    if fmt != "text":
        raise ValueError(f"unknown table format {fmt!r}; choose text, csv or json")
    cells = [
        [_text_cell(value, number_format) for value, (_, _, number_format) in zip(row, specs)]
        for row in values
    ]
    right = [
        any(_is_number(row[i]) for row in values)
        and all(row[i] is None or _is_number(row[i]) for row in values)
        for i in range(len(specs))
    ]
    widths = [max([len(header)] + [len(row[i]) for row in cells]) for i, (_, header, _) in enumerate(specs)]

    def line(texts: Sequence[str]) -> str:
        parts = [t.rjust(w) if r else t.ljust(w) for t, w, r in zip(texts, widths, right)]
        return "  ".join(parts).rstrip()

    out = [line([header for _, header, _ in specs]), line(["-" * w for w in widths])]
    out.extend(line(row) for row in cells)
    return "\n".join(out) + "\n"


# --- Correlation tables ----------------------------------------------------------------------


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
