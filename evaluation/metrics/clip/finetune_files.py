"""External data for fine-tuning, as plain functions: a ratings CSV (``image,caption,language,rating``).

Captions come in the XM3600 JSON-lines format the platform already imports
(:func:`evaluation.metrics.text.formats.read_xm3600_captions`). A rating is a point of the platform's
5-level scale, by label (``EXCELLENT`` … ``BAD``, ``NOT-ENOUGH-INFO``, any case) or by number
(4 = EXCELLENT … 1 = BAD); NOT-ENOUGH-INFO rows are read and left out, as on the platform.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass

from core.scales import RATING

__all__ = ["RATINGS_COLUMNS", "RatingsFileError", "RatingRow", "read_ratings_csv"]

RATINGS_COLUMNS = ("image", "caption", "language", "rating")
_VALUES = {point.value for point in RATING if point.value is not None}


class RatingsFileError(ValueError):
    """A ratings file that cannot be used; the message names the line and the reason."""


@dataclass(frozen=True)
class RatingRow:
    line: int
    image: str
    caption: str
    language: str
    rating: int | None  # None: NOT-ENOUGH-INFO


def _rating(cell: str, line: int) -> int | None:
    text = cell.strip()
    try:
        number = float(text)
    except ValueError:
        try:
            return RATING.point(text).value
        except (KeyError, ValueError):
            raise RatingsFileError(
                f"line {line}: rating {text!r} is neither a label of the scale (EXCELLENT, GOOD, MEDIUM, BAD, "
                "NOT-ENOUGH-INFO) nor a number 1-4"
            ) from None
    if number not in _VALUES:
        raise RatingsFileError(f"line {line}: rating {text!r} is not one of 1, 2, 3, 4 (BAD … EXCELLENT)")
    return int(number)


def read_ratings_csv(source: str | os.PathLike[str] | io.TextIOBase) -> list[RatingRow]:
    """Every row of a ratings CSV with a header ``image,caption,language,rating`` (extra columns refused).

    Raises :class:`RatingsFileError` naming the line for a missing or unknown column, an empty image,
    caption or language, or a rating off the scale; an unreadable or non-UTF-8 file says so.
    """
    try:
        if isinstance(source, io.TextIOBase):
            text = source.read()
        else:
            with open(source, encoding="utf-8-sig", newline="") as fh:
                text = fh.read()
    except UnicodeDecodeError as exc:
        raise RatingsFileError(f"the ratings file is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise RatingsFileError(f"the ratings file cannot be read ({exc.strerror or exc})") from None
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise RatingsFileError("the ratings file is empty: it needs the header image,caption,language,rating")
    names = [h.strip().lower() for h in header]
    missing = [c for c in RATINGS_COLUMNS if c not in names]
    unknown = [h for h in names if h not in RATINGS_COLUMNS]
    if missing or unknown:
        problems = []
        if missing:
            problems.append(f"missing column(s) {', '.join(missing)}")
        if unknown:
            problems.append(f"unknown column(s) {', '.join(unknown)}")
        raise RatingsFileError(f"line 1: {'; '.join(problems)}; the header is image,caption,language,rating")
    index = {name: names.index(name) for name in RATINGS_COLUMNS}
    rows = []
    for number, cells in enumerate(reader, start=2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(names):
            raise RatingsFileError(f"line {number}: {len(cells)} cells, the header has {len(names)}")
        image, caption, language = (cells[index[c]].strip() for c in ("image", "caption", "language"))
        for column, value in (("image", image), ("caption", caption), ("language", language)):
            if not value:
                raise RatingsFileError(f"line {number}: the {column} is empty")
        rows.append(RatingRow(number, image, caption, language, _rating(cells[index["rating"]], number)))
    return rows
