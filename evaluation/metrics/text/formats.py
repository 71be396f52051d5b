"""Readers for caption files: COCO results, COCO annotations, XM3600 JSON lines, plain caption lines.

Free of Django so that the importers, the Celery tasks and the command line share them. Every reader
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
    """XM3600 JSON lines -> {image/key: [captions in ``language``]}.

    Each line is ``{"image/key": ..., "image/locale": ..., "<lang>": {"caption": [...],
    "caption/tokenized": [...], "caption/tokenized/lowercase": [...]}, ...}``; ``field`` chooses one
    of those lists (default the raw captions, which the metrics preprocess themselves). A line without
    ``language`` (or with an empty list) is fine: the image goes to ``missing``. Blank lines are
    skipped; malformed lines raise with their line number.
    """
    name, text = _read_text(source)
    return _xm3600(text, name, language, field)


def read_references(source: Source, language: str | None = None, *, field: str = "caption") -> References:
    """Read a references file in either COCO annotations or XM3600 JSON-lines format, sniffed.

    ``language`` is required for XM3600 files (the error lists the languages of the first line).
    """
    name, text = _read_text(source)
    stripped = text.lstrip()
    if not stripped:
        raise FormatError("the file is empty", source=name)
    if stripped[0] == "[":
        raise FormatError(
            "a JSON array: this looks like a COCO results file (candidates), not references", source=name
        )
    if stripped[0] != "{":
        raise FormatError(
            "unknown structure: expected COCO annotations (a JSON object) or XM3600 JSON lines", source=name
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        if error.msg != "Extra data":
            raise FormatError(f"invalid JSON: {error.msg}", source=name, line=error.lineno) from None
        data = None  # several JSON values: JSON lines
    if isinstance(data, dict) and "annotations" in data:
        return _coco_annotations(data, name)
    if data is not None and not (isinstance(data, dict) and "image/key" in data):
        keys = ", ".join(sorted(data)[:8]) if isinstance(data, dict) else ""
        raise FormatError(
            "unknown structure: neither COCO annotations (no 'annotations' list) nor XM3600 lines "
            f"(no 'image/key'); top-level keys: {keys or 'none'}",
            source=name,
        )
    if language is None:
        first = json.loads(stripped.split("\n", 1)[0])
        languages = sorted(key for key, value in first.items() if isinstance(value, dict))
        raise FormatError(
            f"an XM3600 file: say which language to read (the first line has {', '.join(languages) or 'none'})",
            source=name,
        )
    return _xm3600(text, name, language, field)


def read_caption_lines(source: Source, *, allow_empty: bool = False) -> list[str]:
    """One caption per line -> list of captions, ends of lines and a BOM removed.

    A final newline does not add an empty caption. An empty (or all-whitespace) line inside the
    file raises, unless ``allow_empty``, because it usually means a caption went missing.
    """
    name, text = _read_text(source)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    captions = [line.removesuffix("\r") for line in lines]
    if not allow_empty:
        for number, caption in enumerate(captions, start=1):
            if not caption.strip():
                raise FormatError("empty caption", source=name, line=number)
    return captions


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


def _kind(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string"}.get(type(value), type(value).__name__)


def _valid_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, str) and value != ""
    )


def _id_and_caption(item: object, name: str, index: int) -> tuple[Hashable, str]:
    if not isinstance(item, dict):
        raise FormatError(f"expected an object, got {_kind(item)}", source=name, entry=index)
    for required in ("image_id", "caption"):
        if required not in item:
            raise FormatError(f"missing {required!r}", source=name, entry=index)
    image_id, caption = item["image_id"], item["caption"]
    if not _valid_id(image_id):
        raise FormatError(
            f"image_id must be an integer or a non-empty string, got {image_id!r}", source=name, entry=index
        )
    if not isinstance(caption, str):
        raise FormatError(
            f"caption of image_id {image_id!r} must be a string, got {_kind(caption)}",
            source=name,
            entry=index,
        )
    return image_id, caption


def _coco_annotations(data: object, name: str) -> References:
    if not isinstance(data, dict) or not isinstance(data.get("annotations"), list):
        hint = " (this looks like a COCO results file)" if isinstance(data, list) else ""
        raise FormatError(f"expected a JSON object with an 'annotations' array{hint}", source=name)
    captions: dict[Hashable, list[str]] = {}
    images = data.get("images")
    if images is not None:
        if not isinstance(images, list):
            raise FormatError(f"'images' must be an array, got {_kind(images)}", source=name)
        for index, image in enumerate(images):
            image_id = image.get("id") if isinstance(image, dict) else None
            if not _valid_id(image_id):
                raise FormatError(f"images[{index}]: missing or invalid 'id'", source=name)
            captions[image_id] = []
    for index, item in enumerate(data["annotations"]):
        image_id, caption = _id_and_caption(item, name, index)
        if images is None:
            captions.setdefault(image_id, []).append(caption)
        elif image_id in captions:
            captions[image_id].append(caption)
        else:
            raise FormatError(
                f"annotation for image_id {image_id!r}, which is not in 'images'", source=name, entry=index
            )
    missing = [image_id for image_id, texts in captions.items() if not texts]
    return References(
        ((image_id, texts) for image_id, texts in captions.items() if texts),
        file_format="coco",
        missing=missing,
    )


def _xm3600(text: str, name: str, language: str, field: str) -> References:
    captions: dict[Hashable, list[str]] = {}
    seen: dict[str, int] = {}
    missing: list[Hashable] = []

    def invalid(number: int, error: json.JSONDecodeError) -> FormatError:
        return FormatError(f"invalid JSON: {error.msg} (column {error.colno})", source=name, line=number)

    for number, record in json_lines(text.split("\n"), invalid):
        if not isinstance(record, dict):
            raise FormatError(f"expected a JSON object, got {_kind(record)}", source=name, line=number)
        key = record.get("image/key")
        if not isinstance(key, str) or not key:
            raise FormatError("missing or invalid 'image/key'", source=name, line=number)
        if key in seen:
            raise FormatError(
                f"duplicate image/key {key!r} (first on line {seen[key]})", source=name, line=number
            )
        seen[key] = number
        block = record.get(language)
        if block is None:
            missing.append(key)
            continue
        if not isinstance(block, dict):
            raise FormatError(
                f"{language!r} of {key!r} must be an object, got {_kind(block)}", source=name, line=number
            )
        texts = block.get(field)
        if texts is None:
            raise FormatError(f"{language!r} of {key!r} has no {field!r} list", source=name, line=number)
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise FormatError(
                f"{language}/{field} of {key!r} must be a list of strings", source=name, line=number
            )
        if texts:
            captions[key] = list(texts)
        else:
            missing.append(key)
    if not seen:
        raise FormatError("no XM3600 records (the file has no JSON lines)", source=name)
    return References(captions, file_format="xm3600", language=language, missing=missing)
