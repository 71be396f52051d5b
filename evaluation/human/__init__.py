"""The human-evaluation numbers, as plain functions over plain data (no Django here).

* :mod:`.sxs`: side-by-side aggregation, WINS / LOSSES / ΔS×S with a bootstrap interval, sign test and
  position bias (seed 000, sec. 3.3);
* :mod:`.agreement`: Krippendorff's alpha (ordinal) for side-by-side and rating campaigns;
* :mod:`.quality`: Table 2, %GOOD+ / %MED+ / %BAD over the median rating of each caption (sec. 2.5);
* :mod:`.statistics`: Table 1, captions, replication and mean words / characters (sec. 2.4);
* :mod:`.controls`: side-by-side control items, when a judgment passes and pass rates per annotator;
* :func:`format_table` below renders any of them as aligned text, CSV or JSON.
"""

from __future__ import annotations

import csv
import io
import json
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from .agreement import krippendorff_alpha, rating_alpha, sxs_alpha
from .controls import ControlPassRow, control_pass_rates, control_passed
from .quality import QUALITY_COLUMNS, QualityRow, quality_table
from .statistics import STATISTICS_COLUMNS, CaptionStatsRow, caption_statistics
from .sxs import (
    SXS_COLUMNS,
    SXS_LABELS,
    SxsJudgment,
    SxsSummary,
    choice_to_score,
    score_to_choice,
    sxs_summary,
)

__all__ = [
    "QUALITY_COLUMNS",
    "STATISTICS_COLUMNS",
    "SXS_COLUMNS",
    "SXS_LABELS",
    "CaptionStatsRow",
    "ColumnSpec",
    "ControlPassRow",
    "QualityRow",
    "SxsJudgment",
    "SxsSummary",
    "caption_statistics",
    "choice_to_score",
    "control_pass_rates",
    "control_passed",
    "csv_safe",
    "format_table",
    "krippendorff_alpha",
    "quality_table",
    "rating_alpha",
    "score_to_choice",
    "sxs_alpha",
    "sxs_summary",
]

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
