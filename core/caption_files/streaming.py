"""Bounded streaming reading of JSON caption files (pure: no Django), shared by every format that streams.

What a file can make is bounded, not only its bytes. A file is read :data:`CHUNK` bytes at a time (an
archive member as it inflates), checked as UTF-8 on the way (:func:`pieces`) and handed to a streaming
JSON parser (:class:`JsonStream`); each entry (a list element or a JSON line) is built as its events
arrive, within the limits of one entry (its keys and values, its bytes, its nesting), and handed on as
soon as it is complete: nothing beyond the one entry being read is ever built. Bounded while reading
(:class:`Limits`): the file's bytes; an archive's members and every member as it inflates; the entries of
the file (:class:`Reading`'s budget); the problems found; the JSON nesting; the keys and values of one
entry and its bytes; one JSON value's bytes. A limit that makes the rest unreadable stops the reading
there (:class:`Stop`, or :class:`StopAll` for the whole upload), as one problem named where it was hit.
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

import ijson

from core.caption_files.entries import Entry, ShapeError
from core.caption_files.messages import Message, Text, gettext_noop, located

try:
    # yajl2_c: ijson's C extension over yajl, which the pinned wheel ships; a few times the speed of the
    # others and the one the figures in benchmarks/bench_hostile_uploads.py are measured with.
    _JSON = ijson.get_backend("yajl2_c")
except (ImportError, ValueError):  # no binary wheel for this platform
    _JSON = ijson  # ijson's own default: the fastest backend that loads (yajl2_cffi, yajl2, python)
JSON_BACKEND = getattr(_JSON, "backend_name", ijson.backend)
# A number past Python's 4,300-digit limit for int() surfaces from yajl2_c as a SystemError.
JSON_ERRORS = (ijson.JSONError, ValueError, SystemError)

SHOWN_PROBLEMS = 20
CHUNK = 16 * 1024  # bytes handed to the parser at once: at most ~2 parser events per byte are held
BOM = codecs.BOM_UTF8
BLANKS = b" \t\r\n\f\v"


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 50 * 1024 * 1024  # the uploaded file
    max_unzipped_bytes: int = 200 * 1024 * 1024  # all members of an archive, inflated
    max_members: int = 100
    max_caption_chars: int = 2000
    max_depth: int = 8
    # Entries (COCO list elements; JSON lines, blank ones too) of one file: twice what the phase needs
    # (its images, times its languages where the file can hold several), plus ``entry_slack``; or
    # ``max_entries`` where set.
    entry_slack: int = 100
    max_entries: int | None = None
    max_entry_values: int = 64  # keys and values of one entry (a flat one has at most 11)
    # More for each language an XM3600 line may hold: a block {"caption": [c], "caption/tokenized": [t],
    # "caption/tokenized/lowercase": [l]} is 15 keys and values.
    max_block_values: int = 16
    max_entry_bytes: int = 5 * 1024 * 1024  # one entry, one JSON line
    max_value_bytes: int = 4 * 1024 * 1024  # one string or number, or a run of blanks between values
    # Problems before the reading stops: a file this wrong is not worth reading on, and each wrong entry
    # costs as much as a right one (a zip of 60 MB of [] holds 20 million wrong entries).
    max_problems: int = 1000


class Problems:
    """Every problem counted, the first ``SHOWN_PROBLEMS`` kept (bounded memory for a file of errors),
    and the one that stopped the reading (``last=True``, at most one) kept whatever came before it."""

    def __init__(self) -> None:
        self.shown: list[Message] = []
        self.total = 0

    def add(self, where: Text, message: Text, *, last: bool = False) -> None:
        self.total += 1
        if len(self.shown) < SHOWN_PROBLEMS or last:
            self.shown.append(located(where, message))

    def __bool__(self) -> bool:
        return self.total > 0


class Stop(Exception):
    """The document (file, archive member, JSON line) cannot be read on: one problem, where it was hit."""

    def __init__(self, where: Text, message: Text):
        super().__init__(str(located(where, message)))
        self.where = where
        self.message = message


class StopAll(Stop):
    """Nothing more of the upload is read (the entry budget is spent, a member lies about its size)."""


class Reading:
    """What one upload's reading shares: its limits, its problems and its budget of entries.

    ``images``: how many images one language needs (the budget is twice that per language, plus the
    slack); ``languages``: the codes a file may hold (a zip's ``<code>.json`` members are named after
    them). A consumer subclasses it and decides in :meth:`entry` what each entry means."""

    def __init__(self, limits: Limits, problems: Problems, *, images: int, languages: set[str]):
        self.limits = limits
        self.problems = problems
        self.images = images
        self.languages = languages
        self.entries = 0
        self.allowed_entries = 0
        self.needed_entries = 0

    def budget(self, languages: int) -> None:
        """The entries a file of ``languages`` language(s) may hold."""
        self.needed_entries = self.images * max(languages, 1)
        self.allowed_entries = self.limits.max_entries or 2 * self.needed_entries + self.limits.entry_slack

    def line_values(self) -> int:
        """The keys and values one JSON line may hold: an XM3600 line holds a block per language."""
        return self.limits.max_entry_values + self.limits.max_block_values * max(len(self.languages), 1)

    def take_entry(self, where: Text, unit: str) -> None:
        """One more entry (``unit``: ``"entries"`` of a list, ``"lines"`` of JSON lines)."""
        self.entries += 1
        if self.problems.total >= self.limits.max_problems:
            raise StopAll(
                where,
                Message(
                    gettext_noop("%(total)s problems before this; nothing from here on was read"),
                    total=f"{self.problems.total:,}",
                ),
            )
        if self.entries > self.allowed_entries:
            template = (
                gettext_noop(
                    "more than %(allowed)s lines in the file (the phase needs %(needed)s: one caption per "
                    "image and language); nothing after this was read"
                )
                if unit == "lines"
                else gettext_noop(
                    "more than %(allowed)s entries in the file (the phase needs %(needed)s: one caption per "
                    "image and language); nothing after this was read"
                )
            )
            raise StopAll(
                where,
                Message(template, allowed=f"{self.allowed_entries:,}", needed=f"{self.needed_entries:,}"),
            )

    def entry(self, entry: Entry) -> None:
        """One entry the format read (a problem goes to :attr:`problems`)."""
        raise NotImplementedError

    def shaped(self, where: Text, parse: Callable[[], Entry]) -> None:
        """The entry ``parse`` reads from a JSON value, to :meth:`entry`; its :class:`ShapeError` (a value
        that is not an entry of the format) to :attr:`problems`, at ``where``."""
        try:
            found = parse()
        except ShapeError as exc:
            self.problems.add(where, exc.text)
            return
        self.entry(found)


def entry_where(name: str, index: int) -> Message:
    """The position of a list's entry, ``r.json entry 3``."""
    return Message(gettext_noop("%(name)s entry %(index)s"), name=name, index=index)


def line_where(name: str, number: int) -> Message:
    """The position of a line, ``r.jsonl line 3``."""
    return Message(gettext_noop("%(name)s line %(number)s"), name=name, number=number)


def _not_json(exc: Exception) -> Message:
    return Message(gettext_noop("not valid JSON (%(reason)s)"), reason=json_reason(exc))


def json_reason(exc: Exception) -> str:
    if not isinstance(exc, ijson.JSONError):
        return "a number too long to read"
    text = exc.args[0] if exc.args else ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = str(text).strip().splitlines()
    return text[0].rstrip(".") if text else "cannot be parsed"


class JsonStream:
    """One JSON text, fed in pieces to the streaming parser, its entries built as their events come:
    the elements of a list (``in_list``: a COCO results file) or the one value (a JSON line).

    ``on_entry(where, value)`` gets each entry once complete (a dict, list or scalar, built within the
    entry's limits); ``on_begin(where)`` is called as a list element begins (the entry budget)."""

    def __init__(
        self,
        *,
        limits: Limits,
        name: str,
        in_list: bool,
        on_entry: Callable[[Text, object], None],
        on_begin: Callable[[Text], None] | None = None,
        line_where: Text = "",
        entry_values: int | None = None,
        expected: str = '[{"image_id": ..., "caption": ...}, ...]',
    ):
        self.limits = limits
        self.name = name
        self.in_list = in_list
        self.on_entry = on_entry
        self.on_begin = on_begin
        self.base = 1 if in_list else 0  # the depth at which an entry begins
        self.line_where = line_where
        self.entry_values = entry_values or limits.max_entry_values
        self.expected = expected
        self.events = ijson.sendable_list()
        self.parser = _JSON.basic_parse_coro(self.events)
        self.fed = 0  # bytes sent to the parser
        self.quiet = 0  # bytes sent since the last event: a value (or blank run) still being read
        self.piece_start = 0
        self.depth = 0  # lists and objects open
        self.index = 0  # entries begun
        self.stack: list[list | dict] = []  # the containers of the entry being built
        self.keys: list[str | None] = []  # the key pending in each object of the stack
        self.values = 0
        self.entry_start = 0

    def where(self) -> Text:
        if not self.in_list:
            return self.line_where
        if self.depth > self.base:
            return entry_where(self.name, self.index)
        if self.depth == self.base and self.index:
            return Message(gettext_noop("%(name)s after entry %(index)s"), name=self.name, index=self.index)
        return self.name

    def send(self, piece: bytes) -> None:
        self.piece_start = self.fed
        self.fed += len(piece)
        try:
            self.parser.send(piece)
        except JSON_ERRORS as exc:
            self._take()  # the events before the error: their entries are checked
            raise Stop(self.where(), _not_json(exc)) from None
        if self.events:
            self.quiet = 0
            self._take()
            return
        self.quiet += len(piece)
        if self.quiet > self.limits.max_value_bytes:
            raise Stop(
                self.where(),
                Message(
                    gettext_noop(
                        "a single JSON value (or run of blanks) of more than %(bytes)s bytes; a caption has "
                        "at most %(chars)s characters"
                    ),
                    bytes=f"{self.limits.max_value_bytes:,}",
                    chars=f"{self.limits.max_caption_chars:,}",
                ),
            )

    def close(self) -> None:
        self.piece_start = self.fed
        try:
            self.parser.close()
        except JSON_ERRORS as exc:
            self._take()
            raise Stop(self.where(), _not_json(exc)) from None
        self._take()

    def _nested(self) -> Stop:
        return Stop(
            self.where(),
            Message(gettext_noop("JSON nested deeper than %(depth)s levels"), depth=self.limits.max_depth),
        )

    def _put(self, value: object) -> None:
        """``value`` into the container open at the top of the stack."""
        top = self.stack[-1]
        if isinstance(top, dict):
            top[self.keys[-1]] = value
        else:
            top.append(value)

    def _take(self) -> None:
        limits = self.limits
        max_depth, base = limits.max_depth, self.base
        for event, value in self.events:
            depth = self.depth
            if depth > base:  # inside an entry
                self.values += 1
                if self.values > self.entry_values:
                    raise Stop(
                        self.where(),
                        Message(
                            gettext_noop(
                                'more than %(values)s keys and values in one entry; an entry is {"image_id": '
                                '..., "caption": ...}'
                            ),
                            values=self.entry_values,
                        ),
                    )
                if self.fed - self.entry_start > limits.max_entry_bytes:
                    raise Stop(
                        self.where(),
                        Message(
                            gettext_noop("an entry of more than %(bytes)s bytes"),
                            bytes=f"{limits.max_entry_bytes:,}",
                        ),
                    )
                if event == "end_map" or event == "end_array":
                    self.depth = depth - 1
                    done = self.stack.pop()
                    self.keys.pop()
                    if depth - 1 == base:
                        self._finish(done)
                    else:
                        self._put(done)
                elif event == "map_key":
                    self.keys[-1] = value
                elif event == "start_map" or event == "start_array":
                    if depth + 1 > max_depth:
                        raise self._nested()
                    self.stack.append({} if event == "start_map" else [])
                    self.keys.append(None)
                    self.depth = depth + 1
                else:
                    if depth + 1 > max_depth:
                        raise self._nested()
                    self._put(value)
            elif depth == base:
                if event == "end_array":  # the end of the list of entries
                    self.depth = depth - 1
                    continue
                self._begin()
                if event == "start_map" or event == "start_array":
                    if depth + 1 > max_depth:
                        raise self._nested()
                    self.stack = [{} if event == "start_map" else []]
                    self.keys = [None]
                    self.depth = depth + 1
                else:
                    self._finish(value)
            elif event == "start_array":  # the top of a list of entries
                if max_depth < 1:
                    raise self._nested()
                self.depth = 1
            else:
                raise Stop(
                    self.name,
                    Message(gettext_noop("expected a JSON list %(example)s"), example=self.expected),
                )
        del self.events[:]

    def _begin(self) -> None:
        self.index += 1
        if self.in_list and self.on_begin is not None:
            self.on_begin(entry_where(self.name, self.index))
        self.values = 0
        self.entry_start = self.piece_start

    def _finish(self, value: object) -> None:
        where = entry_where(self.name, self.index) if self.in_list else self.line_where
        self.stack, self.keys = [], []
        self.on_entry(where, value)


def pieces(read: Callable[[], bytes], name: str, first: bytes = b"") -> Iterator[bytes]:
    """The bytes of ``read`` (a piece at a time, empty at the end) checked as UTF-8 on the way, with a
    leading byte order mark dropped. Not UTF-8: :class:`Stop` naming the line and byte."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = lines = 0
    piece = first or read()
    while piece and len(piece) < len(BOM):
        more = read()
        if not more:
            break
        piece += more
    if piece.startswith(BOM):
        piece, offset = piece[len(BOM) :], len(BOM)
    final = False
    while True:
        if not piece:
            final = True
        pending = len(decoder.getstate()[0])
        try:
            decoder.decode(piece, final)
        except UnicodeDecodeError as exc:
            line = lines + piece[: max(0, exc.start - pending)].count(b"\n") + 1
            raise Stop(
                name,
                Message(
                    gettext_noop("line %(line)s: not UTF-8 text (byte %(byte)s)"),
                    line=line,
                    byte=offset - pending + exc.start,
                ),
            ) from None
        if final:
            return
        lines += piece.count(b"\n")
        offset += len(piece)
        yield piece
        piece = read()


def head(stream: BinaryIO, limit: int) -> bytes:
    """The first bytes after a byte order mark and leading blanks (up to :data:`CHUNK` of them; empty if
    the first ``limit`` bytes are all blank), for sniffing; the stream is left at 0."""
    stream.seek(0)
    seen, first = 0, True
    try:
        while seen <= limit:
            piece = stream.read(CHUNK)
            if not piece:
                break
            if first:
                piece, first = piece.removeprefix(BOM), False
            seen += len(piece)
            text = piece.lstrip(BLANKS)
            if text:
                return text
        return b""
    finally:
        stream.seek(0)


def size(stream: BinaryIO) -> int:
    stream.seek(0, io.SEEK_END)
    end = stream.tell()
    stream.seek(0)
    return end
