"""Every table the platform shows, in one place: aligned text, CSV (RFC 4180, formula-safe), JSON and
the cells of an HTML table.

* :func:`format_table` renders rows of the human-evaluation numbers (Table 1, Table 2, ΔS×S) with
  the column lists their modules define, as text, CSV or JSON;
* :func:`html_table` turns the same rows and columns into the cells that the one template include,
  ``templates/partials/table.html``, draws (the report page, the admin's results and statistics);
* ``correlation_*`` render the metric-vs-human correlation results, :func:`per_caption_html` the
  per-caption agreement.

Shared by the ``human_tables``, ``correlate`` and ``report`` commands, the report page and the admin.
A number is formatted the same way in each: the column's format, ``n/a`` where it is undefined.
"""

from __future__ import annotations

import csv
import io
import json
import math
import numbers
import textwrap
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal

from core.csv_cells import csv_safe
from evaluation.human import SXS_COLUMNS
from evaluation.research.correlation import ACCURACIES, ALL, COEFFICIENTS, CorrelationResult

# A column: "key", or (key, header), or (key, header, number format for text, e.g. ".1f").
ColumnSpec = str | tuple[str, str] | tuple[str, str, str]
TableFormat = Literal["text", "csv", "json"]

MISSING_TEXT = "n/a"
# Scores of a demo or untrained model (the registry's ``is_demo`` flag): shown wherever they appear.
DEMO_TAG = "demo model — not results"


def demo_label(metric: str, demo_metrics: Collection[str]) -> str:
    """``CLIPScore [demo model — not results]`` for a metric scored by a demo model, else the name."""
    return f"{metric} [{DEMO_TAG}]" if metric in demo_metrics else metric


def demo_note(demo_metrics: Collection[str]) -> str:
    """One sentence naming the metrics scored by a demo or untrained model (empty if none)."""
    if not demo_metrics:
        return ""
    return (
        f"{', '.join(sorted(demo_metrics))}: {DEMO_TAG}. Scored by a demo or untrained model (a tiny random "
        "CLIP model shows the workflow); these numbers say nothing about the metric."
    )


# A spreadsheet treats a cell starting with one of these as a formula (or strips it first).


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
    header += ["p_n", "n_boot", "mirrored", "note", "kendall_tau_c_variant"]
    for name in ACCURACIES:
        header += [name, f"{name}_ci_lo", f"{name}_ci_hi"]
    header += ["soft_pairwise_accuracy_mc_error", "n_soft"]
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
            row += [result.p_n, result.n_boot, result.mirrored, result.note, result.kendall_tau_c_variant]
            for name in ACCURACIES:
                ci = getattr(result, f"{name}_ci")
                row += [getattr(result, name), ci[0] if ci else None, ci[1] if ci else None]
            row += [result.soft_pairwise_accuracy_mc_error, result.n_soft]
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


def _accuracies_shown(results: dict[str, dict[str, CorrelationResult]]) -> list[str]:
    """The accuracies to show: pairwise always, soft pairwise where some comparison has it."""
    shown = ["pairwise_accuracy"]
    if any(r.soft_pairwise_accuracy is not None for by in results.values() for r in by.values()):
        shown.append("soft_pairwise_accuracy")
    return shown


def _with_interval(value: float | None, ci: tuple[float, float] | None) -> str:
    cell = _number(value)
    if ci is not None and value is not None:
        cell += f" [{_number(ci[0])}, {_number(ci[1])}]"
    return cell


def correlation_not_pooled(results: Mapping[str, Mapping[str, CorrelationResult]]) -> dict[str, list[str]]:
    """``{metric: [its languages]}`` for the metrics some language of the table has no comparison
    with: their ``all`` row covers only those languages, so it is not comparable with the pooled rows
    of the other metrics and says so."""
    languages = list(dict.fromkeys(code for by in results.values() for code in by if code != ALL))
    out = {}
    for metric, by_language in results.items():
        having = [code for code in languages if code in by_language and by_language[code].n_comparisons > 0]
        if len(having) < len(languages):
            out[metric] = having
    return out


def _language_label(metric: str, language: str, apart: Mapping[str, Sequence[str]]) -> str:
    if language == ALL and metric in apart:
        return f"{ALL} (only {', '.join(apart[metric])}: not pooled)"
    return language


def not_pooled_note(apart: Mapping[str, Sequence[str]]) -> str:
    """One sentence on the ``all`` rows that cover fewer languages than the others (empty if none)."""
    if not apart:
        return ""
    return (
        f"all pools a metric only where it is present in every language: {', '.join(apart)} "
        f"{'is' if len(apart) == 1 else 'are'} not, so {'its' if len(apart) == 1 else 'their'} all row "
        "covers only the languages it names and cannot be compared with the other metrics' all rows."
    )


def correlation_text(
    results: dict[str, dict[str, CorrelationResult]], *, show_p: bool, demo_metrics: Collection[str] = ()
) -> str:
    accuracies = _accuracies_shown(results)
    header = ["metric", "language", "N"]
    for name in COEFFICIENTS:
        header.append(f"{name} [95% CI]")
        if show_p:
            header.append(f"{name} p")
    header += [f"{_ACCURACY_TITLES[name]} [95% CI]" for name in accuracies]
    rows = []
    apart = correlation_not_pooled(results)
    for metric, by_language in results.items():
        for language, result in by_language.items():
            row = [demo_label(metric, demo_metrics), _language_label(metric, language, apart), str(result.n)]
            for name in COEFFICIENTS:
                row.append(_with_interval(getattr(result, name), getattr(result, f"{name}_ci")))
                if show_p:
                    row.append(_p_value(getattr(result, f"{name}_p")))
            for name in accuracies:
                cell = _with_interval(getattr(result, name), getattr(result, f"{name}_ci"))
                if name == "soft_pairwise_accuracy" and result.soft_pairwise_accuracy_mc_error:
                    # Drawn p-values: the bound on the Monte-Carlo error stands beside the value.
                    cell = cell.replace(
                        _number(result.soft_pairwise_accuracy),
                        f"{_number(result.soft_pairwise_accuracy)} ±{result.soft_pairwise_accuracy_mc_error:.3f}",
                        1,
                    )
                row.append(cell)
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
    if apart:
        lines.append(textwrap.fill(not_pooled_note(apart), width=100))
    if demo_metrics:
        lines.append(textwrap.fill(demo_note(demo_metrics), width=100))
    if not show_p:
        lines.append("p-values: with --verbosity 2, and in --format csv / json.")
    if first.n_boot:
        lines.append(f"95% CI: percentile bootstrap, {first.n_boot} resamples of the comparisons.")
    lines.append(
        f"tau_c: {first.kendall_tau_c_variant}, for the coefficient, its p-value and its interval "
        "(ΔS×S is not a rating scale, so seed 001's m does not apply)."
    )
    lines.append(textwrap.fill(ACCURACY_NOTES["pairwise_accuracy"], width=100))
    if "soft_pairwise_accuracy" in accuracies:
        lines.append(textwrap.fill(ACCURACY_NOTES["soft_pairwise_accuracy"], width=100))
    return "\n".join(lines) + "\n"


_ACCURACY_TITLES = {"pairwise_accuracy": "pairwise acc", "soft_pairwise_accuracy": "soft pairwise acc"}
ACCURACY_NOTES = {
    "pairwise_accuracy": (
        "pairwise acc: the share of comparisons where Δmetric has the sign of ΔS×S (Kocmi et al. 2021), "
        "over the comparisons as entered; its interval resamples the comparisons."
    ),
    "soft_pairwise_accuracy": (
        "soft pairwise acc (WMT24): 1 − mean |p_people − p_metric| over the comparisons whose judgments "
        "are known, each p the permutation p-value (over images) that m2 beats m1: exact (every sign "
        "pattern) up to 18 images, else drawn, and then ±: a bound on the value's Monte-Carlo standard error."
    ),
}


# --- HTML tables ------------------------------------------------------------------------------------
# An interval column: ((low key, high key), header, number format) shown as "[low, high]".
IntervalSpec = tuple[tuple[str, str], str, str]


def _html_cell(text: str, numeric: bool) -> dict[str, Any]:
    return {"text": text, "numeric": numeric}


def html_table(
    rows: Iterable[Any],
    columns: Sequence[ColumnSpec | IntervalSpec],
    *,
    attributes: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """``{"headers": [cell], "rows": [{"attrs": [(name, value)], "cells": [cell]}]}``, a cell being
    ``{"text", "numeric"}``, for ``templates/partials/table.html``. Columns as for :func:`format_table`,
    plus interval columns; a column with a number format is numeric (right-aligned).
    ``attributes``: (data attribute name, row key) pairs, e.g. ``("language", "language")`` gives
    ``data-language="de"`` on each row."""
    specs = []
    for column in columns:
        if isinstance(column, tuple) and isinstance(column[0], tuple):
            specs.append(column)
        else:
            specs.extend(_columns([column]))
    headers = [_html_cell(header, bool(fmt)) for _, header, fmt in specs]
    out = []
    for row in rows:
        cells = []
        for key, _, fmt in specs:
            if isinstance(key, tuple):
                low, high = _value(row, key[0]), _value(row, key[1])
                text = MISSING_TEXT if low is None or high is None else f"[{low:{fmt}}, {high:{fmt}}]"
                cells.append(_html_cell(text, True))
            else:
                value = _value(row, key)
                text = ("yes" if value else "no") if isinstance(value, bool) else _text_cell(value, fmt)
                cells.append(_html_cell(text, bool(fmt)))
        attrs = [(name, str(_value(row, key))) for name, key in attributes]
        out.append({"attrs": attrs, "cells": cells})
    return {"headers": headers, "rows": out}


def _coefficient(value: float | None) -> str:
    return MISSING_TEXT if value is None else f"{value:.3f}"


def _p_text(value: float | None) -> str:
    return MISSING_TEXT if value is None else (f"{value:.2g}" if value < 0.001 else f"{value:.3f}")


def correlation_html(
    results: dict[str, dict[str, CorrelationResult]], demo_metrics: Collection[str] = ()
) -> dict[str, Any]:
    """The correlation table for the page: metric, language, N, comparisons, each coefficient with its
    95% interval, and the p-values; rows carry ``data-metric`` and ``data-language``."""
    headers = ["metric", "language", "N", "comparisons"]
    headers += [f"{_COEFFICIENT_TITLES[name]} [95% CI]" for name in COEFFICIENTS]
    headers.append("p (Pearson, Spearman, τ_b, τ_c)")
    accuracies = _accuracies_shown(results)
    headers += [f"{_ACCURACY_TITLES[name]} [95% CI]" for name in accuracies]
    headers.append("τ_c variant")
    rows = []
    apart = correlation_not_pooled(results)
    for metric, by_language in results.items():
        for language, result in by_language.items():
            cells = [
                _html_cell(demo_label(metric, demo_metrics), False),
                _html_cell(_language_label(metric, language, apart), False),
                _html_cell(str(result.n), True),
                _html_cell(str(result.n_comparisons), True),
            ]
            for name in COEFFICIENTS:
                ci = getattr(result, f"{name}_ci")
                text = _coefficient(getattr(result, name)) + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
                cells.append(_html_cell(text, True))
            cells.append(
                _html_cell(", ".join(_p_text(getattr(result, f"{n}_p")) for n in COEFFICIENTS), True)
            )
            for name in accuracies:
                cells.append(
                    _html_cell(_with_interval(getattr(result, name), getattr(result, f"{name}_ci")), True)
                )
            cells.append(_html_cell(result.kendall_tau_c_variant, False))
            attrs = [("metric", metric), ("language", language)]
            if language == ALL and metric in apart:
                attrs.append(("pooled", "false"))
            if metric in demo_metrics:
                attrs.append(("demo-model", "true"))
            rows.append({"attrs": attrs, "cells": cells})
    numeric = range(2, len(headers) - 1)
    return {
        "headers": [_html_cell(h, i in numeric) for i, h in enumerate(headers)],
        "rows": rows,
        "note": not_pooled_note(apart),
        "demo_note": demo_note(demo_metrics),
    }


_COEFFICIENT_TITLES = {
    "pearson": "Pearson",
    "spearman": "Spearman",
    "kendall_tau_b": "Kendall τ_b",
    "kendall_tau_c": "Kendall τ_c",
}

# Per-caption agreement (rows: metric, language, ratings, n, n_not_enough_info, coefficients).
PER_CAPTION_COLUMNS = (
    ("metric", "metric", ""),
    ("language", "language", ""),
    ("ratings", "ratings", ""),
    ("n", "N", "d"),
    ("n_not_enough_info", "NEI left out", "d"),
    ("kendall_tau_b", "kendall_tau_b", ".3f"),
    ("kendall_tau_c", "kendall_tau_c", ".3f"),
    ("spearman", "spearman", ".3f"),
    ("tau23", "tau23 (ε calibrated)", ".3f"),
    ("acc23", "acc23 (ε calibrated)", ".3f"),
    ("acc23_epsilon", "ε", ".4g"),
    ("kendall_tau_c_variant", "tau_c variant", ""),
)

# A side-by-side row (human.selectors.sxs_table_rows): which pair, then the numbers. Text and CSV
# outputs show every column of SXS_COLUMNS and the controls; a page shows the headline numbers.
# Headers a reader understands without the paper at hand: Table 1 and 2 keep the paper's "Id".
SXS_PAIR_COLUMNS = (
    ("language", "language", ""),
    ("m1", "m1", ""),
    ("m2", "m2", ""),
    ("subset", "subset", ""),
)
SXS_TABLE_COLUMNS = (
    *SXS_PAIR_COLUMNS,
    *SXS_COLUMNS,
    ("control_judgments", "controls", "d"),
    ("control_pass_rate", "controls passed", ".3f"),
)
SXS_PAGE_COLUMNS = (
    *SXS_PAIR_COLUMNS,
    ("n_images", "images", "d"),
    ("wins_pct", "WINS", ".1f"),
    ("losses_pct", "LOSSES", ".1f"),
    ("delta_sxs", "ΔS×S", ".1f"),
    (("ci_low", "ci_high"), "95% interval", ".1f"),
)
