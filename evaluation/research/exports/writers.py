"""Streaming writers for the export formats: plain generators over plain rows, no Django.

Each writer takes an iterable of rows and yields ``str`` pieces; nothing is accumulated, so
memory stays constant whatever the number of rows (only one image's captions are held at a time
by the XM3600 writer). The caller counts what it feeds in through :class:`Counts`.

* XM3600 captions: one JSON object per line and image (:func:`xm3600_lines`).
* COCO annotations: ``{"info", "images", "annotations"}``, written element by element
  (:func:`coco_annotations_pieces`).
* COCO results: ``[{"image_id", "caption"}, ...]`` (:func:`coco_results_pieces`).
* CSV (RFC 4180: CRLF, minimal quoting, formula-like string cells neutralised) and JSON lines
  (:func:`csv_lines`, :func:`jsonl_lines`).

JSON is written with ``ensure_ascii=False`` (captions in any script stay byte-exact UTF-8) and
``allow_nan=False``.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import groupby
from typing import Any

from evaluation.metrics.text.schemes import Scheme, scheme_for_language
from evaluation.research.tables import csv_safe

__all__ = [
    "Counts",
    "buffered",
    "coco_annotations_pieces",
    "coco_image_id",
    "coco_results_pieces",
    "csv_cell",
    "csv_lines",
    "jsonl_lines",
    "tokenized_fields",
    "xm3600_lines",
]

Counts = Counter  # name -> rows written, filled while a stream is consumed


# Line separators that JSON leaves raw but some line readers split on (str.splitlines, JavaScript):
# escaped, so one record is always one line. They only occur inside strings, where the escape
# reads back as the same character.
_LINE_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False).translate(_LINE_BREAKS)


def buffered(pieces: Iterable[str], size: int = 64 * 1024) -> Iterator[str]:
    """Join small pieces into chunks of about ``size`` characters (fewer writes, same bytes)."""
    parts: list[str] = []
    length = 0
    for piece in pieces:
        parts.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(parts)
            parts, length = [], 0
    if parts:
        yield "".join(parts)


# --- Caption files -----------------------------------------------------------------------------


def coco_image_id(key: str) -> int | str:
    """The COCO ``image_id`` of an image key: an int when the key is a plain decimal number (COCO's
    own images, e.g. "404464"), else the key itself. Both COCO exports use the same rule, so a
    results file and an annotations file always match; the importers match either to the key."""
    if key.isascii() and key.isdigit() and str(int(key)) == key:
        return int(key)
    return key


def tokenized_fields(text: str, scheme: Scheme | str, *, language: str | None = None) -> tuple[str, str]:
    """``(caption/tokenized, caption/tokenized/lowercase)`` of one caption, tokens joined by spaces.

    The lowercase form is exactly what the metrics see (the tokenisation scheme's tokens: for the
    platform's schemes NFC, lowercase, punctuation removed, then split), so a metric run on the
    ``caption/tokenized/lowercase`` field with ``--pretokenized`` gives the same numbers as on
    ``caption``. The other is the same scheme with ``lowercase=False``: it keeps the case.
    """
    chosen = scheme if isinstance(scheme, Scheme) else scheme_for_language(language, scheme)
    cased = chosen.tokenize(text, lowercase=False, language=language)
    return " ".join(cased), " ".join(chosen.tokenize(text, language=language))


def xm3600_lines(
    rows: Iterable[tuple[str, str, str]], *, language: str, tokenizer: str, counts: Counts
) -> Iterator[str]:
    """XM3600 captions file lines from ``(image key, image locale, caption)`` rows SORTED by key.

    One line per image: ``{"image/key", "image/locale", "<language>": {"caption": [...],
    "caption/tokenized": [...], "caption/tokenized/lowercase": [...]}}``. Rows of the same image
    must be adjacent; only one image's captions are held at a time. Counts ``images`` and
    ``captions``. ``tokenizer`` is the language's tokenisation scheme (its name). Raises ValueError when
    a key comes back after another (rows not sorted), and SchemeError (a ValueError) when the scheme
    cannot tokenise (checked before the first line).
    """
    scheme = scheme_for_language(language, tokenizer)
    previous: str | None = None
    for key, group in groupby(rows, key=lambda row: row[0]):
        if previous is not None and key <= previous:
            raise ValueError(f"captions are not sorted by image key ({key!r} after {previous!r})")
        previous = key
        locale = ""
        captions, tokenized, lowercase = [], [], []
        for _, image_locale, text in group:
            locale = image_locale or locale
            captions.append(text)
            cased, lower = tokenized_fields(text, scheme, language=language)
            tokenized.append(cased)
            lowercase.append(lower)
        counts["images"] += 1
        counts["captions"] += len(captions)
        record = {
            "image/key": key,
            "image/locale": locale,
            language: {
                "caption": captions,
                "caption/tokenized": tokenized,
                "caption/tokenized/lowercase": lowercase,
            },
        }
        yield _json(record) + "\n"


def coco_annotations_pieces(
    info: Mapping[str, Any],
    images: Iterable[Mapping[str, Any]],
    annotations: Iterable[tuple[int, int | str, str]],
    *,
    counts: Counts,
) -> Iterator[str]:
    """A COCO annotations file, piece by piece: ``{"info": ..., "images": [...], "annotations":
    [{"id", "image_id", "caption"}, ...]}``. ``images`` are COCO image objects (with ``id``);
    ``annotations`` are ``(annotation id, image id, caption)``. The iterables are consumed one
    after the other, so two database passes can feed them. Counts ``images`` and ``annotations``."""
    yield '{"info": ' + _json(dict(info)) + ',\n"images": ['
    for index, image in enumerate(images):
        yield ("\n" if index == 0 else ",\n") + _json(dict(image))
        counts["images"] += 1
    yield '\n],\n"annotations": ['
    for index, (annotation_id, image_id, caption) in enumerate(annotations):
        piece = _json({"id": annotation_id, "image_id": image_id, "caption": caption})
        yield ("\n" if index == 0 else ",\n") + piece
        counts["annotations"] += 1
    yield "\n]}\n"


def coco_results_pieces(rows: Iterable[tuple[int | str, str]], *, counts: Counts) -> Iterator[str]:
    """A COCO results file ``[{"image_id", "caption"}, ...]`` from ``(image id, caption)`` rows.
    Counts ``captions``."""
    yield "["
    for index, (image_id, caption) in enumerate(rows):
        yield ("\n" if index == 0 else ",\n") + _json({"image_id": image_id, "caption": caption})
        counts["captions"] += 1
    yield "\n]\n"


# --- Tables ------------------------------------------------------------------------------------


def csv_cell(value: Any) -> Any:
    """A CSV cell: numbers stay numbers (negative ones too), ``None`` is empty, booleans are
    ``true``/``false``, and strings a spreadsheet would run as a formula (starting with = + - @,
    tab, CR or NUL) get a leading single quote (:func:`evaluation.research.tables.csv_safe`)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    return csv_safe(str(value))


class _Line:
    """A write-only 'file' that hands back what the csv writer writes: one row at a time."""

    def write(self, text: str) -> str:
        return text


def csv_lines(columns: Sequence[str], rows: Iterable[Mapping[str, Any]], *, counts: Counts) -> Iterator[str]:
    """RFC 4180 CSV: a header row, then one row per mapping (keys = ``columns``), CRLF line ends,
    fields quoted when they hold a comma, a quote, CR or LF (quotes doubled). Counts ``rows``."""
    writer = csv.writer(_Line(), lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    yield writer.writerow([csv_cell(column) for column in columns])
    for row in rows:
        yield writer.writerow([csv_cell(row[column]) for column in columns])
        counts["rows"] += 1


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def jsonl_lines(
    columns: Sequence[str], rows: Iterable[Mapping[str, Any]], *, counts: Counts
) -> Iterator[str]:
    """JSON lines: one object per row with the keys of ``columns`` in that order, numbers as
    numbers, ``null`` for missing. No header line: every line is a record. Counts ``rows``."""
    for row in rows:
        yield _json({column: _json_value(row[column]) for column in columns}) + "\n"
        counts["rows"] += 1
