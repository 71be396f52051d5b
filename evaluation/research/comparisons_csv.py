"""Comparisons (m1, m2, language, ΔS×S, Δmetric …) read from a CSV file, for data from elsewhere."""

from __future__ import annotations

import csv
import math
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from evaluation.research.correlation import ALL, Comparison


def data_rows(reader, error: Callable[[int, str], ValueError]) -> Iterator[tuple[int, list[str]]]:
    """``(line, cells)`` of each non-blank row a CSV reader gives after its header; a row that is not
    valid CSV raises ``error(line, reason)``. Shared by the comparisons and judgments files."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise error(reader.line_num, f"not valid CSV: {exc}") from None
        if any(cell.strip() for cell in row):
            yield reader.line_num, row


def pair_cells(
    line: int,
    row: list[str],
    *,
    width: int,
    index: dict[str, int],
    required: tuple[str, ...],
    error: Callable[[int, str], ValueError],
) -> list[str]:
    """The row's cells, stripped, once it has ``width`` cells, none of the ``required`` columns empty,
    a language that is not ``all`` and two different models; otherwise ``error(line, reason)``. The
    rules every row naming a compared pair (m1, m2, language) follows, in both file formats."""
    if len(row) != width:
        raise error(line, f"expected {width} cells, found {len(row)}")
    cells = [cell.strip() for cell in row]
    for column in required:
        if not cells[index[column]]:
            raise error(line, f"{column} is empty")
    if cells[index["language"]] == ALL:
        raise error(line, f"{ALL!r} is reserved for the pooled result, not a language")
    if cells[index["m1"]] == cells[index["m2"]]:
        raise error(line, f"m1 and m2 are the same model ({cells[index['m1']]})")
    return cells


class ComparisonsCsvError(ValueError):
    """A comparisons file that cannot be used; ``line`` is the 1-based line in the file."""

    def __init__(self, line: int, reason: str):
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}")


class ComparisonsCsvWarning(UserWarning):
    """Something in a comparisons file that is ignored (an unknown column)."""


REQUIRED_COLUMNS = ("m1", "m2", "language", "delta_sxs")
METRIC_PREFIX = "delta_"


def csv_number(
    text: str, column: str, line: int, error: Callable[[int, str], ValueError] = ComparisonsCsvError
) -> float:
    """The finite number in a cell; ``error(line, reason)`` is raised for an empty cell, text or a
    non-finite value (the comparisons file's error by default; the judgments file passes its own)."""
    if text == "":
        raise error(line, f"{column} is empty")
    try:
        value = float(text)
    except ValueError:
        raise error(line, f"{column} is not a number: {text!r}") from None
    if not math.isfinite(value):
        raise error(line, f"{column} is not a finite number: {text!r}")
    return value


def read_comparisons_csv(
    path: str | Path, *, on_warning: Callable[[str], None] | None = None
) -> list[Comparison]:
    """Comparisons from a CSV with columns m1, m2, language, delta_sxs and one delta_<metric> per metric.

    ΔS×S is positive when people prefer m2; each delta_<metric> is metric(m2) − metric(m1); the
    metric's name is the column's name without "delta_". Header names are matched after trimming
    spaces and lowercasing. Raises :class:`ComparisonsCsvError` naming the line and the reason: empty
    file, missing or repeated column, no metric column, a row with too few or too many cells, an
    empty name, a value that is not a finite number, m1 = m2, or the same (m1, m2, language) twice.
    Columns that are neither required nor delta_<metric> are ignored and reported through
    ``on_warning`` (default: ``warnings.warn`` with :class:`ComparisonsCsvWarning`).
    """
    warn = on_warning or (lambda message: warnings.warn(message, ComparisonsCsvWarning, stacklevel=3))
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
        except csv.Error as exc:
            raise ComparisonsCsvError(reader.line_num or 1, f"not valid CSV: {exc}") from None
        if header is None or not any(cell.strip() for cell in header):
            raise ComparisonsCsvError(
                1, "empty file: expected a header m1,m2,language,delta_sxs,delta_<metric>"
            )
        names = [cell.strip().lower() for cell in header]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ComparisonsCsvError(1, f"column {name!r} appears twice")
        missing = [name for name in REQUIRED_COLUMNS if name not in names]
        if missing:
            raise ComparisonsCsvError(
                1, f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
            )
        metric_columns = [n for n in names if n.startswith(METRIC_PREFIX) and n != "delta_sxs"]
        if not metric_columns or any(n == METRIC_PREFIX for n in metric_columns):
            raise ComparisonsCsvError(1, "expected at least one delta_<metric> column, e.g. delta_cider")
        unknown = [n for n in names if n not in REQUIRED_COLUMNS and n not in metric_columns]
        if unknown:
            warn(f"line 1: ignoring unknown column{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}")
        index = {name: i for i, name in enumerate(names)}

        comparisons: list[Comparison] = []
        first_line: dict[tuple[str, str, str], int] = {}
        for line, row in data_rows(reader, ComparisonsCsvError):
            cells = pair_cells(
                line,
                row,
                width=len(names),
                index=index,
                required=("m1", "m2", "language"),
                error=ComparisonsCsvError,
            )
            m1, m2, language = (cells[index[n]] for n in ("m1", "m2", "language"))
            key = (m1, m2, language)
            if key in first_line:
                raise ComparisonsCsvError(
                    line, f"{m2} vs {m1} in {language} is already on line {first_line[key]}"
                )
            first_line[key] = line
            comparisons.append(
                Comparison(
                    m1=m1,
                    m2=m2,
                    language=language,
                    delta_sxs=csv_number(cells[index["delta_sxs"]], "delta_sxs", line),
                    deltas={
                        name[len(METRIC_PREFIX) :]: csv_number(cells[index[name]], name, line)
                        for name in metric_columns
                    },
                )
            )
        if not comparisons:
            raise ComparisonsCsvError(reader.line_num or 1, "no comparisons after the header")
    return comparisons
