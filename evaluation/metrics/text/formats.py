"""Readers for caption files: COCO results, COCO annotations, JSON lines (XM3600 or flat), caption lines.

The formats themselves, their shapes and their sniffing are :mod:`core.caption_files`'s (one reader per
format, shared with the evaluation server and the system-captions import); this module reads whole
files of them for the metrics, the importers, the Celery tasks and the command line, and turns what
the formats refuse into :class:`FormatError`. Every reader
takes a path (``str`` or ``os.PathLike``) or an open file (text or binary), decodes UTF-8 with or
without a byte-order mark, validates the structure, and raises :class:`FormatError` naming the file,
the line and/or the entry, and the reason. Image ids are kept as they are in the file (``int`` or
``str``); a results file and a references file must use the same type to match.
"""

from __future__ import annotations

import json
import os
from collections.abc import Hashable
from pathlib import Path
from typing import IO

from core import caption_files
from core.caption_files import caption_lines, coco, coco_annotations, jsonl
from core.caption_files.entries import ShapeError
from core.caption_files.entries import kind as _kind
from core.json_lines import json_lines

__all__ = [
    "FormatError",
    "References",
    "read_caption_lines",
    "read_coco_annotations",
    "read_coco_results",
    "read_references",
    "read_xm3600_captions",
]

Source = str | os.PathLike[str] | IO[str] | IO[bytes]


class FormatError(ValueError):
    """A caption file that cannot be read. ``line`` is 1-based, ``entry`` the 0-based array index."""

    def __init__(
        self, reason: str, *, source: str | None = None, line: int | None = None, entry: int | None = None
    ):
        self.reason = reason
        self.source = source
        self.line = line
        self.entry = entry
        where = [part for part in (source, f"line {line}" if line else None) if part]
        if entry is not None:
            where.append(f"entry {entry}")
        super().__init__(f"{': '.join(where)}: {reason}" if where else reason)


class References(dict):
    """Image key -> reference captions, as read, plus what the file held without captions.

    ``missing`` lists the image keys present in the file without any caption (in the requested
    language, for XM3600); ``file_format`` is ``"coco"`` or ``"xm3600"``.
    """

    def __init__(self, data=(), *, file_format: str, language: str | None = None, missing=()):
        super().__init__(data)
        self.file_format = file_format
        self.language = language
        self.missing: list[Hashable] = list(missing)

    @property
    def n_captions(self) -> int:
        return sum(len(captions) for captions in self.values())

    def summary(self) -> str:
        text = f"{len(self)} images with {self.n_captions} reference captions"
        if self.missing:
            what = f"a {self.language!r} caption" if self.language else "captions"
            shown = ", ".join(str(key) for key in self.missing[:5])
            more = ", ..." if len(self.missing) > 5 else ""
            text += f"; {len(self.missing)} images without {what} ({shown}{more})"
        return text


def read_coco_results(source: Source) -> dict[Hashable, str]:
    """COCO results format ``[{"image_id": ..., "caption": ...}, ...]`` -> {image_id: caption}.

    Extra fields are ignored. An image id must be an int or a non-empty string and appear once.
    """
    name, text = _read_text(source)
    data = _load_json(text, name)
    if not isinstance(data, list):
        hint = (
            " (this looks like a COCO annotations file)"
            if isinstance(data, dict) and "annotations" in data
            else ""
        )
        raise FormatError(
            f"expected a JSON array of {{image_id, caption}} objects, got {_kind(data)}{hint}", source=name
        )
    captions: dict[Hashable, str] = {}
    first_seen: dict[Hashable, int] = {}
    for index, item in enumerate(data):
        image_id, caption = _id_and_caption(item, name, index)
        if image_id in first_seen:
            raise FormatError(
                f"duplicate image_id {image_id!r} (first at entry {first_seen[image_id]})",
                source=name,
                entry=index,
            )
        first_seen[image_id] = index
        captions[image_id] = caption
    return captions


def read_coco_annotations(source: Source) -> References:
    """COCO annotations format ``{"images": [...], "annotations": [{"image_id", "caption"}, ...]}``.

    Returns {image_id: [captions]} in the order of ``images`` (or of first appearance without it).
    Images listed without any annotation go to ``missing``; an annotation for an image not listed in
    ``images`` is an error.
    """
    name, text = _read_text(source)
    return _coco_annotations(_load_json(text, name), name)


def read_xm3600_captions(source: Source, language: str, *, field: str = "caption") -> References:
    """JSON lines (:mod:`core.caption_files.jsonl`) -> {image key: [captions in ``language``]}.

    A line is of the XM3600 shape, ``{"image/key": ..., "image/locale": ..., "<lang>": {"caption":
    [...], "caption/tokenized": [...], "caption/tokenized/lowercase": [...]}, ...}``, whose ``field``
    chooses one of those lists (default the raw captions, which the metrics preprocess themselves), or
    flat, ``{"image/key" | "image_id": ..., "language" | "image/locale": ..., "caption": "..."}`` (its
    captions are added to the image's: a flat file may give several lines per image). An image without
    a caption in ``language`` (or with an empty list) is fine: it goes to ``missing``. Blank lines are
    skipped; malformed lines raise with their line number, and so does an image on two XM3600 lines.
    """
    name, text = _read_text(source)
    return _xm3600(text, name, language, field)


def read_references(source: Source, language: str | None = None, *, field: str = "caption") -> References:
    """Read a references file in either COCO annotations or JSON-lines format, sniffed
    (:func:`core.caption_files.sniff`).

    ``language`` is required for JSON lines (the error lists the languages of the first line).
    """
    name, text = _read_text(source)
    stripped = text.lstrip()
    if not stripped:
        raise FormatError("the file is empty", source=name)
    head = stripped[:4096].encode()
    spec = caption_files.sniff(head, among=(coco_annotations.NAME, jsonl.NAME))
    if spec is None:
        if caption_files.sniff(head, among=(coco.NAME,)):
            raise FormatError(
                "a JSON array: this looks like a COCO results file (candidates), not references", source=name
            )
        raise FormatError(
            "unknown structure: expected COCO annotations (a JSON object) or XM3600 JSON lines", source=name
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        if error.msg != "Extra data" or spec.name == coco_annotations.NAME:
            raise FormatError(f"invalid JSON: {error.msg}", source=name, line=error.lineno) from None
        data = None  # several JSON values: JSON lines
    if isinstance(data, dict) and "annotations" in data:
        return _coco_annotations(data, name)
    if data is not None and not (
        isinstance(data, dict) and any(k in data for k in ("image/key", "image_id"))
    ):
        keys = ", ".join(sorted(data)[:8]) if isinstance(data, dict) else ""
        raise FormatError(
            "unknown structure: neither COCO annotations (no 'annotations' list) nor XM3600 lines "
            f"(no 'image/key'); top-level keys: {keys or 'none'}",
            source=name,
        )
    if language is None:
        first = json.loads(stripped.split("\n", 1)[0])
        languages = sorted(key for key, value in first.items() if isinstance(value, dict))
        if not languages and isinstance(first.get("language", first.get("image/locale")), str):
            languages = [first.get("language", first.get("image/locale"))]
        raise FormatError(
            f"an XM3600 file: say which language to read (the first line has {', '.join(languages) or 'none'})",
            source=name,
        )
    return _xm3600(text, name, language, field)


def read_caption_lines(source: Source, *, allow_empty: bool = False) -> list[str]:
    """One caption per line -> list of captions, ends of lines and a BOM removed
    (:mod:`core.caption_files.caption_lines`).

    A final newline does not add an empty caption. An empty (or all-whitespace) line inside the
    file raises, unless ``allow_empty``, because it usually means a caption went missing.
    """
    name, text = _read_text(source)
    try:
        return caption_lines.captions(text, allow_empty=allow_empty)
    except ShapeError as error:
        raise FormatError(error.message, source=name, line=error.line) from None


# --------------------------------------------------------------------------------------------------


def _read_text(source: Source) -> tuple[str, str]:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        name = str(path)
        try:
            data: str | bytes = path.read_bytes()
        except OSError as error:
            raise FormatError(f"cannot read the file: {error.strerror or error}", source=name) from None
    else:
        name = str(getattr(source, "name", "<stream>"))
        data = source.read()
    if isinstance(data, bytes):
        try:
            return name, data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            line = data.count(b"\n", 0, error.start) + 1
            raise FormatError(f"not UTF-8 text ({error.reason})", source=name, line=line) from None
    return name, data.removeprefix("\ufeff")


def _load_json(text: str, name: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise FormatError(
            f"invalid JSON: {error.msg} (column {error.colno})", source=name, line=error.lineno
        ) from None


def _id_and_caption(item: object, name: str, index: int) -> tuple[Hashable, str]:
    try:
        entry = coco.entry(item, where=f"entry {index}")
    except ShapeError as error:
        raise FormatError(error.message, source=name, entry=index) from None
    return entry.image, entry.records[0].captions[0]


def _coco_annotations(data: object, name: str) -> References:
    try:
        captions, missing = coco_annotations.captions(data)
    except ShapeError as error:
        raise FormatError(error.message, source=name, entry=error.entry) from None
    return References(captions, file_format="coco", missing=missing)


def _xm3600(text: str, name: str, language: str, field: str) -> References:
    captions: dict[Hashable, list[str]] = {}
    seen: dict[Hashable, int] = {}  # image -> the line it was first on
    blocks: dict[Hashable, int] = {}  # image -> its XM3600 line: an image has one

    def invalid(number: int, error: json.JSONDecodeError) -> FormatError:
        return FormatError(f"invalid JSON: {error.msg} (column {error.colno})", source=name, line=number)

    for number, value in json_lines(text.split("\n"), invalid):
        try:
            entry = jsonl.line(value, where=f"line {number}", language=language, field=field)
        except ShapeError as error:
            raise FormatError(error.message, source=name, line=number) from None
        image = entry.image
        if entry.shape == jsonl.XM3600:
            if image in blocks or image in seen:
                first = blocks.get(image, seen.get(image))
                raise FormatError(
                    f"duplicate image/key {image!r} (first on line {first})", source=name, line=number
                )
            blocks[image] = number
        elif image in blocks:
            raise FormatError(
                f"image/key {image!r} is on an XM3600 line already (line {blocks[image]})",
                source=name,
                line=number,
            )
        seen.setdefault(image, number)
        for record in entry.records:
            if record.captions:
                captions.setdefault(image, []).extend(record.captions)
    if not seen:
        raise FormatError("no XM3600 records (the file has no JSON lines)", source=name)
    missing = [image for image in seen if image not in captions]
    return References(
        {image: captions[image] for image in seen if image in captions},
        file_format="xm3600",
        language=language,
        missing=missing,
    )
