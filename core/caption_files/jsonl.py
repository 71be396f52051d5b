"""JSON lines (``"jsonl"``): one object per line, in either of two shapes, decided line by line (pure).

- The XM3600 shape, the dataset's own: ``{"image/key": "x", "image/locale": "de", "de": {"caption":
  ["..."], "caption/tokenized": [...], "caption/tokenized/lowercase": [...]}, "fr": {...}}``. Every
  key whose value is an object is a language's block; ``image/locale`` is where the image was taken,
  not a caption's language. A line holds the captions of one image in every language it has.
- The flat shape: ``{"image_id" | "image/key": ..., "language" | "image/locale": "de", "caption":
  "..."}``, one caption (or a list of them) of one image in one language; the language may be left
  out where the consumer gives one. A line is flat when it has a top-level ``caption``.

Either shape takes ``image_id`` or ``image/key`` (exactly one). The same reader serves candidates and
references: references keep every caption of a block (and an image may have several flat lines in a
language), while candidates take one caption per image and language through :func:`one_caption`,
whose ``several`` says what a block of more than one means: ``"refuse"`` (the evaluation server: a
submission must not be ambiguous) or ``"first"`` (a system's outputs imported from an XM3600-shaped
file, where the first caption is the one to show)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from core.caption_files.entries import Entry, Record, ShapeError, image_id, kind
from core.caption_files.messages import Message, Text, gettext_noop
from core.caption_files.streaming import (
    CHUNK,
    JsonStream,
    Reading,
    Stop,
    StopAll,
    line_where,
    pieces,
)

NAME = "jsonl"
FLAT = "flat"
XM3600 = "xm3600"
LANGUAGE_FIELDS = ("language", "image/locale")
FLAT_KNOWN = frozenset({"caption", "id", "score", *LANGUAGE_FIELDS})
XM3600_KNOWN = frozenset({"image/locale"})
XM3600_FIELDS = ("caption", "caption/tokenized", "caption/tokenized/lowercase")
NO_ID = gettext_noop("missing or invalid 'image/key' (or 'image_id')")


def sniff(head: bytes) -> bool:
    return head[:1] == b"{"


def line(value: object, *, where: Text, language: str | None = None, field: str = "caption") -> Entry:
    """One line's entry, of either shape; ShapeError naming what is wrong with it.

    ``language``: only that language's captions are read (the others not even checked), and a line
    without any in it gives an entry with no records; ``field``: the list an XM3600 block's captions
    are read from (a flat line has only ``caption``)."""
    if not isinstance(value, dict):
        raise ShapeError(Message(gettext_noop("expected a JSON object, got %(kind)s"), kind=kind(value)))
    id_field, image = image_id(value, missing=Message(NO_ID))
    if "caption" in value:
        return _flat(value, where, id_field, image, language, field)
    return _xm3600(value, where, id_field, image, language, field)


def _flat(value: dict, where: Text, id_field: str, image, language: str | None, field: str) -> Entry:
    found = [name for name in LANGUAGE_FIELDS if name in value]
    if len(found) > 1:
        raise ShapeError(Message(gettext_noop("both 'language' and 'image/locale': give one")))
    code = None
    if found:
        code = value[found[0]]
        if not isinstance(code, str) or not code.strip():
            raise ShapeError(
                Message(
                    gettext_noop("'%(field)s' must be a language code, got %(kind)s"),
                    field=found[0],
                    kind=kind(code),
                )
            )
        code = code.strip()
    if field != "caption":
        raise ShapeError(
            Message(gettext_noop("a flat line has only 'caption', not %(field)s"), field=repr(field))
        )
    caption = value["caption"]
    if isinstance(caption, list) and all(isinstance(text, str) for text in caption):
        captions = tuple(caption)
    elif isinstance(caption, str):
        captions = (caption,)
    else:
        raise ShapeError(
            Message(
                gettext_noop("caption of %(field)s %(image)s must be a string, got %(kind)s"),
                field=id_field,
                image=repr(image),
                kind=kind(caption),
            )
        )
    unknown = tuple(sorted(str(k) for k in value if k != id_field and k not in FLAT_KNOWN))
    records: tuple[Record, ...] = ()
    if language is None or code is None or code == language:
        records = (Record(where, image, id_field, code or language, captions, FLAT),)
    return Entry(where, image, id_field, FLAT, records, unknown)


def _xm3600(value: dict, where: Text, id_field: str, image, language: str | None, field: str) -> Entry:
    blocks = {str(k): v for k, v in value.items() if isinstance(v, dict)}
    unknown = tuple(
        sorted(str(k) for k in value if k != id_field and k not in XM3600_KNOWN and str(k) not in blocks)
    )
    if language is not None:
        if language in value and not isinstance(value[language], dict):
            raise ShapeError(
                Message(
                    gettext_noop("%(language)s of %(image)s must be an object, got %(kind)s"),
                    language=repr(language),
                    image=repr(image),
                    kind=kind(value[language]),
                )
            )
        blocks = {language: blocks[language]} if language in blocks else {}
        unknown = tuple(k for k in unknown if k != language)
    elif not blocks:
        raise ShapeError(
            Message(
                gettext_noop(
                    'no caption: expected "<language>": {"caption": [...]} (XM3600) or "caption" (a flat line)'
                )
            )
        )
    records = []
    for code, block in blocks.items():
        texts = block.get(field)
        if texts is None:
            raise ShapeError(
                Message(
                    gettext_noop("%(language)s of %(image)s has no %(field)s list"),
                    language=repr(code),
                    image=repr(image),
                    field=repr(field),
                )
            )
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            raise ShapeError(
                Message(
                    gettext_noop("%(language)s/%(field)s of %(image)s must be a list of strings"),
                    language=code,
                    field=field,
                    image=repr(image),
                )
            )
        records.append(Record(where, image, id_field, code, tuple(texts), XM3600))
    return Entry(where, image, id_field, XM3600, tuple(records), unknown)


def one_caption(record: Record, *, several: str = "refuse") -> object:
    """The one caption of a candidates record; ShapeError where it has none, or (``several="refuse"``)
    more than one. ``several="first"`` takes the first."""
    if not record.captions:
        raise ShapeError(Message(gettext_noop("no caption for '%(language)s'"), language=record.language))
    if len(record.captions) > 1 and several != "first":
        raise ShapeError(
            Message(
                gettext_noop(
                    "%(count)s captions for '%(language)s' of %(image)s: give exactly one per image and language"
                ),
                count=len(record.captions),
                language=record.language,
                image=record.key,
            )
        )
    return record.captions[0]


def read_pieces(chunks: Iterator[bytes], *, name: str, reading: Reading) -> None:
    """Stream a JSON-lines file's lines to ``reading``, one entry per line (bounded: each line is one
    entry of the budget, its bytes and its keys and values limited)."""
    limit = reading.limits.max_entry_bytes
    number = 0
    carry: list[bytes] = []
    carried = 0
    try:
        for piece in chunks:
            start = 0
            while True:
                end = piece.find(b"\n", start)
                if end < 0:
                    break
                text = piece[start:end]
                if carry:
                    text = b"".join([*carry, text])
                    carry, carried = [], 0
                number += 1
                where = line_where(name, number)
                reading.take_entry(where, "lines")
                _read_line(text.removesuffix(b"\r"), where, name, reading)
                start = end + 1
            if start < len(piece):
                carry.append(piece[start:])
                carried += len(piece) - start
                if carried > limit:
                    raise Stop(
                        line_where(name, number + 1),
                        Message(
                            gettext_noop(
                                "longer than %(bytes)s bytes (a JSON line holds one image's captions); "
                                "nothing after this was read"
                            ),
                            bytes=f"{limit:,}",
                        ),
                    )
        if carry:
            number += 1
            where = line_where(name, number)
            reading.take_entry(where, "lines")
            _read_line(b"".join(carry).removesuffix(b"\r"), where, name, reading)
    except StopAll:
        raise
    except Stop as stop:
        reading.problems.add(stop.where, stop.message)


def _read_line(text: bytes, where: Text, name: str, reading: Reading) -> None:
    if not text.strip():
        return

    def on_entry(at: Text, value: object) -> None:
        reading.shaped(at, lambda: line(value, where=at))

    stream = JsonStream(
        limits=reading.limits,
        name=name,
        in_list=False,
        on_entry=on_entry,
        line_where=where,
        entry_values=reading.line_values(),
    )
    try:
        for start in range(0, len(text), CHUNK):
            stream.send(text[start : start + CHUNK])
        stream.close()
    except StopAll:
        raise
    except Stop as stop:
        reading.problems.add(stop.where, stop.message)


def read(stream: BinaryIO, *, name: str, size: int, reading: Reading, language: str | None) -> None:
    """The upload reader: lines of any of the file's languages (``language`` is not used: each line
    names its own)."""
    reading.budget(len(reading.languages))
    read_pieces(pieces(lambda: stream.read(CHUNK), name), name=name, reading=reading)
