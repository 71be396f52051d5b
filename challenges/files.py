"""Reading and checking a submission file before anything is counted (pure: no Django).

Three formats: the COCO results JSON of one language (``[{"image_id": int, "caption": str}]``),
XM3600-style JSON lines with a language field (``{"image_id": ..., "language": "de", "caption": ...}``
per line), and a zip of per-language files named ``<language>.json`` or ``<anything>.jsonl``.

Every problem is named with its position (entry, line, archive member), all of them are counted, the
first :data:`SHOWN_PROBLEMS` are kept, and so is the one that stopped the reading, if any; nothing
about the references is read here, so no message can reveal one.

What a file can make is bounded, not only its bytes. The file is read as a stream, :data:`CHUNK` bytes
at a time (an archive member as it inflates), checked as UTF-8 on the way and handed to a streaming JSON
parser; each entry is checked as soon as its last event arrives, and no list or object is built beyond
the one entry being read (a list or object nested inside an entry is walked, never built). Bounded while
reading (:class:`Limits`): the file's bytes; an archive's members (counted from its directory's end
record before the directory is read) and every member as it inflates (never past its declared size);
the entries (JSON lines) of the file, from the phase's size; the problems found; the JSON nesting; the
keys and values of one entry and its bytes; one JSON value's bytes (a caption, a number, a run of
blanks). A limit that makes the rest unreadable stops the reading there, as one problem named where it
was hit; the problems found before it are kept.
"""

from __future__ import annotations

import codecs
import io
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import BinaryIO

import ijson

try:
    # yajl2_c: ijson's C extension over yajl, which the pinned wheel ships; a few times the speed of the
    # others and the one the figures in benchmarks/bench_hostile_uploads.py are measured with.
    _JSON = ijson.get_backend("yajl2_c")
except (ImportError, ValueError):  # no binary wheel for this platform
    _JSON = ijson  # ijson's own default: the fastest backend that loads (yajl2_cffi, yajl2, python)
JSON_BACKEND = getattr(_JSON, "backend_name", ijson.backend)
# A number past Python's 4,300-digit limit for int() surfaces from yajl2_c as a SystemError.
_JSON_ERRORS = (ijson.JSONError, ValueError, SystemError)

SHOWN_PROBLEMS = 20
COCO = "coco"
JSONL = "jsonl"
ZIP = "zip"
ID_FIELDS = ("image_id", "image/key")
LANGUAGE_FIELDS = ("language", "image/locale")
CHUNK = 16 * 1024  # bytes handed to the parser at once: at most ~2 parser events per byte are held
ZIP_MAGIC = b"PK\x03\x04"
_BOM = codecs.BOM_UTF8
_EOCD = b"PK\x05\x06"  # a zip's end of central directory record
_DIRECTORY_BYTES_PER_MEMBER = 1024  # a member's entry in the directory: 46 bytes, its name and extras


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
    max_entry_values: int = 64  # keys and values of one entry (a valid one has at most 11)
    max_entry_bytes: int = 5 * 1024 * 1024  # one entry, one JSON line
    max_value_bytes: int = 4 * 1024 * 1024  # one string or number, or a run of blanks between values
    # Problems before the reading stops: a file this wrong is not worth reading on, and each wrong entry
    # costs as much as a right one (a zip of 60 MB of [] holds 20 million wrong entries).
    max_problems: int = 1000


class Problems:
    """Every problem counted, the first ``SHOWN_PROBLEMS`` kept (bounded memory for a file of errors),
    and the one that stopped the reading (``last=True``, at most one) kept whatever came before it."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.total = 0

    def add(self, where: str, message: str, *, last: bool = False) -> None:
        self.total += 1
        if len(self.shown) < SHOWN_PROBLEMS or last:
            self.shown.append(f"{where}: {message}" if where else message)

    def __bool__(self) -> bool:
        return self.total > 0


class SubmissionInvalid(ValueError):
    """The file is refused: ``problems`` (the first 20, with their position) and ``total``."""

    def __init__(self, problems: list[str], total: int):
        self.problems = problems
        self.total = total
        more = f" (and {total - len(problems)} more)" if total > len(problems) else ""
        super().__init__(f"{total} problem(s){more}: " + "; ".join(problems))


@dataclass
class Parsed:
    """language code -> image key -> caption, and the format read."""

    captions: dict[str, dict[str, str]] = field(default_factory=dict)
    format: str = ""


@dataclass
class _Entry:
    where: str
    image: str | None
    language: str | None
    caption: object


class _Nested:
    """A list or object given as a field's value: walked for its limits, never built."""

    def __repr__(self) -> str:
        return "<nested>"


NESTED = _Nested()


class _Stop(Exception):
    """The document (file, archive member, JSON line) cannot be read on: one problem, where it was hit."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


class _StopAll(_Stop):
    """Nothing more of the upload is read (the entry budget is spent, a member lies about its size)."""


def _image_key(value: object) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _entry(obj: dict, where: str, problems: Problems, *, language_field: bool) -> _Entry | None:
    ids = [k for k in ID_FIELDS if k in obj]
    if len(ids) != 1:
        problems.add(where, "needs exactly one of “image_id” or “image/key”")
        return None
    allowed = {ids[0], "caption", "id", "score", *(LANGUAGE_FIELDS if language_field else ())}
    unknown = sorted(str(k) for k in obj if k not in allowed)
    if unknown:
        problems.add(where, f"unknown field(s) {', '.join(repr(k[:40]) for k in unknown[:5])}")
        return None
    key = _image_key(obj[ids[0]])
    if key is None:
        problems.add(where, f"“{ids[0]}” must be an integer or a non-empty string")
        return None
    language = None
    if language_field:
        found = [k for k in LANGUAGE_FIELDS if k in obj]
        if len(found) != 1 or not isinstance(obj[found[0]], str):
            problems.add(where, "needs a “language” field with the language code")
            return None
        language = obj[found[0]].strip()
    if "caption" not in obj:
        problems.add(where, "has no “caption”")
        return None
    return _Entry(where, key, language, obj["caption"])


class _Reading:
    """What one upload's reading shares: its limits, problems, captions and budgets."""

    def __init__(self, limits: Limits, languages: set[str], image_keys: set[str], problems: Problems):
        self.limits = limits
        self.languages = languages
        self.image_keys = image_keys
        self.problems = problems
        self.captions: dict[str, dict[str, str]] = {}
        self.first_seen: dict[tuple[str, str], str] = {}
        self.entries = 0
        self.allowed_entries = 0
        self.needed_entries = 0

    def budget(self, languages: int) -> None:
        """The entries a file of ``languages`` language(s) may hold."""
        self.needed_entries = len(self.image_keys) * max(languages, 1)
        self.allowed_entries = self.limits.max_entries or 2 * self.needed_entries + self.limits.entry_slack

    def take_entry(self, where: str, unit: str) -> None:
        self.entries += 1
        if self.problems.total >= self.limits.max_problems:
            raise _StopAll(
                where, f"{self.problems.total:,} problems before this; nothing from here on was read"
            )
        if self.entries > self.allowed_entries:
            raise _StopAll(
                where,
                f"more than {self.allowed_entries:,} {unit} in the file (the phase needs "
                f"{self.needed_entries:,}: one caption per image and language); nothing after this was read",
            )

    def check(self, entry: _Entry, default_language: str | None) -> None:
        problems, limits = self.problems, self.limits
        language = entry.language or default_language
        if not language:
            problems.add(entry.where, "no language: choose the language of a COCO results file")
            return
        if language not in self.languages:
            problems.add(entry.where, f"language “{language[:20]}” is not a language of this benchmark")
            return
        if entry.image not in self.image_keys:
            problems.add(entry.where, f"unknown image id “{entry.image[:40]}” (not an image of this phase)")
            return
        if not isinstance(entry.caption, str):
            problems.add(entry.where, "the caption must be a string")
            return
        caption = entry.caption.strip()
        if not caption:
            problems.add(entry.where, f"empty caption for image “{entry.image}”")
            return
        if len(caption) > limits.max_caption_chars:
            problems.add(
                entry.where, f"caption of {len(caption):,} characters; at most {limits.max_caption_chars:,}"
            )
            return
        if "\x00" in caption:
            problems.add(entry.where, "the caption contains a NUL character")
            return
        seen = self.first_seen.get((language, entry.image))
        if seen is not None:
            problems.add(entry.where, f"duplicate image id “{entry.image}” in {language} (first at {seen})")
            return
        self.first_seen[(language, entry.image)] = entry.where
        self.captions.setdefault(language, {})[entry.image] = caption


def _json_reason(exc: Exception) -> str:
    if not isinstance(exc, ijson.JSONError):
        return "a number too long to read"
    text = exc.args[0] if exc.args else ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = str(text).strip().splitlines()
    return text[0].rstrip(".") if text else "cannot be parsed"


class _JsonReader:
    """One JSON text, fed in pieces to the streaming parser, its events turned into entries as they come:
    the elements of a list (``in_list``: a COCO results file) or the one value (a JSON line)."""

    def __init__(
        self,
        reading: _Reading,
        name: str,
        *,
        in_list: bool,
        default_language: str | None = None,
        line_where: str = "",
    ):
        self.reading = reading
        self.limits = reading.limits
        self.name = name
        self.in_list = in_list
        self.base = 1 if in_list else 0  # the depth at which an entry begins
        self.default_language = default_language
        self.line_where = line_where
        self.events = ijson.sendable_list()
        self.parser = _JSON.basic_parse_coro(self.events)
        self.fed = 0  # bytes sent to the parser
        self.quiet = 0  # bytes sent since the last event: a value (or blank run) still being read
        self.piece_start = 0
        self.depth = 0  # lists and objects open
        self.index = 0  # entries begun
        self.fields: dict | None = None  # the entry's fields, when it is an object
        self.key: str | None = None
        self.values = 0
        self.entry_start = 0

    def where(self) -> str:
        if not self.in_list:
            return self.line_where
        if self.depth > self.base:
            return f"{self.name} entry {self.index}"
        if self.depth == self.base and self.index:
            return f"{self.name} after entry {self.index}"
        return self.name

    def send(self, piece: bytes) -> None:
        self.piece_start = self.fed
        self.fed += len(piece)
        try:
            self.parser.send(piece)
        except _JSON_ERRORS as exc:
            self._take()  # the events before the error: their entries are checked
            raise _Stop(self.where(), f"not valid JSON ({_json_reason(exc)})") from None
        if self.events:
            self.quiet = 0
            self._take()
            return
        self.quiet += len(piece)
        if self.quiet > self.limits.max_value_bytes:
            raise _Stop(
                self.where(),
                f"a single JSON value (or run of blanks) of more than {self.limits.max_value_bytes:,} bytes; "
                f"a caption has at most {self.limits.max_caption_chars:,} characters",
            )

    def close(self) -> None:
        self.piece_start = self.fed
        try:
            self.parser.close()
        except _JSON_ERRORS as exc:
            self._take()
            raise _Stop(self.where(), f"not valid JSON ({_json_reason(exc)})") from None
        self._take()

    def _nested(self) -> _Stop:
        return _Stop(self.where(), f"JSON nested deeper than {self.limits.max_depth} levels")

    def _take(self) -> None:
        limits = self.limits
        max_depth, base = limits.max_depth, self.base
        for event, value in self.events:
            depth = self.depth
            if depth > base:  # inside an entry
                self.values += 1
                if self.values > limits.max_entry_values:
                    raise _Stop(
                        self.where(),
                        f"more than {limits.max_entry_values} keys and values in one entry; an entry is "
                        '{"image_id": ..., "caption": ...}',
                    )
                if self.fed - self.entry_start > limits.max_entry_bytes:
                    raise _Stop(self.where(), f"an entry of more than {limits.max_entry_bytes:,} bytes")
                if event == "end_map" or event == "end_array":
                    self.depth = depth - 1
                    if depth - 1 == base:
                        self._finish()
                elif event == "map_key":
                    if depth == base + 1:
                        self.key = value
                elif event == "start_map" or event == "start_array":
                    if depth + 1 > max_depth:
                        raise self._nested()
                    if depth == base + 1 and self.fields is not None:
                        self.fields[self.key] = NESTED
                    self.depth = depth + 1
                else:
                    if depth + 1 > max_depth:
                        raise self._nested()
                    if depth == base + 1 and self.fields is not None:
                        self.fields[self.key] = value
            elif depth == base:
                if event == "end_array":  # the end of the list of entries
                    self.depth = depth - 1
                    continue
                self._begin()
                if event == "start_map" or event == "start_array":
                    if depth + 1 > max_depth:
                        raise self._nested()
                    self.fields = {} if event == "start_map" else None
                    self.depth = depth + 1
                else:
                    self.fields = None
                    self._finish()
            elif event == "start_array":  # the top of a COCO results file
                if max_depth < 1:
                    raise self._nested()
                self.depth = 1
            else:
                raise _Stop(self.name, 'expected a JSON list [{"image_id": ..., "caption": ...}, ...]')
        del self.events[:]

    def _begin(self) -> None:
        self.index += 1
        if self.in_list:
            self.reading.take_entry(f"{self.name} entry {self.index}", "entries")
        self.values = 0
        self.key = None
        self.entry_start = self.piece_start

    def _finish(self) -> None:
        where = f"{self.name} entry {self.index}" if self.in_list else self.line_where
        fields, self.fields = self.fields, None
        if fields is None:
            self.reading.problems.add(where, 'expected an object {"image_id": ..., "caption": ...}')
            return
        entry = _entry(fields, where, self.reading.problems, language_field=not self.in_list)
        if entry is not None:
            self.reading.check(entry, self.default_language)


def _pieces(read: Callable[[], bytes], name: str, first: bytes = b"") -> Iterator[bytes]:
    """The bytes of ``read`` (a piece at a time, empty at the end) checked as UTF-8 on the way, with a
    leading byte order mark dropped. Not UTF-8: :class:`_Stop` naming the line and byte."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = lines = 0
    piece = first or read()
    while piece and len(piece) < len(_BOM):
        more = read()
        if not more:
            break
        piece += more
    if piece.startswith(_BOM):
        piece, offset = piece[len(_BOM) :], len(_BOM)
    final = False
    while True:
        if not piece:
            final = True
        pending = len(decoder.getstate()[0])
        try:
            decoder.decode(piece, final)
        except UnicodeDecodeError as exc:
            line = lines + piece[: max(0, exc.start - pending)].count(b"\n") + 1
            raise _Stop(name, f"line {line}: not UTF-8 text (byte {offset - pending + exc.start})") from None
        if final:
            return
        lines += piece.count(b"\n")
        offset += len(piece)
        yield piece
        piece = read()


def _read_coco(pieces: Iterator[bytes], name: str, language: str, reading: _Reading) -> None:
    reader = _JsonReader(reading, name, in_list=True, default_language=language)
    try:
        for piece in pieces:
            reader.send(piece)
        reader.close()
    except _StopAll:
        raise
    except _Stop as stop:
        reading.problems.add(stop.where, stop.message)


def _read_line(line: bytes, where: str, name: str, reading: _Reading) -> None:
    if not line.strip():
        return
    reader = _JsonReader(reading, name, in_list=False, line_where=where)
    try:
        for start in range(0, len(line), CHUNK):
            reader.send(line[start : start + CHUNK])
        reader.close()
    except _StopAll:
        raise
    except _Stop as stop:
        reading.problems.add(stop.where, stop.message)


def _read_jsonl(pieces: Iterator[bytes], name: str, reading: _Reading) -> None:
    limit = reading.limits.max_entry_bytes
    number = 0
    carry: list[bytes] = []
    carried = 0
    try:
        for piece in pieces:
            start = 0
            while True:
                end = piece.find(b"\n", start)
                if end < 0:
                    break
                line = piece[start:end]
                if carry:
                    line = b"".join([*carry, line])
                    carry, carried = [], 0
                number += 1
                where = f"{name} line {number}"
                reading.take_entry(where, "lines")
                _read_line(line.removesuffix(b"\r"), where, name, reading)
                start = end + 1
            if start < len(piece):
                carry.append(piece[start:])
                carried += len(piece) - start
                if carried > limit:
                    raise _Stop(
                        f"{name} line {number + 1}",
                        f"longer than {limit:,} bytes (a JSON line holds one caption); "
                        "nothing after this was read",
                    )
        if carry:
            number += 1
            where = f"{name} line {number}"
            reading.take_entry(where, "lines")
            _read_line(b"".join(carry).removesuffix(b"\r"), where, name, reading)
    except _StopAll:
        raise
    except _Stop as stop:
        reading.problems.add(stop.where, stop.message)


def _member_name_ok(info: zipfile.ZipInfo, problems: Problems) -> bool:
    name = info.filename
    if info.is_dir() or "/" in name or "\\" in name or name.startswith(".") or ".." in name or ":" in name:
        problems.add(
            f"archive member “{name[:80]}”", "folders and paths are not allowed: put the files at the top"
        )
        return False
    if info.flag_bits & 0x1:
        problems.add(f"archive member “{name[:80]}”", "encrypted members are not allowed")
        return False
    return True


def _directory_problem(stream: BinaryIO, size: int, limits: Limits) -> str | None:
    """What the archive's end record says that refuses it before its directory is read (zipfile builds an
    object per member listed there: a 50 MB directory lists a million)."""
    tail = min(size, 22 + 0xFFFF)
    stream.seek(size - tail)
    data = stream.read(tail)
    at = data.rfind(_EOCD)
    if at < 0 or len(data) - at < 22:
        return None  # not a zip: zipfile says so
    members = int.from_bytes(data[at + 10 : at + 12], "little")
    directory = int.from_bytes(data[at + 12 : at + 16], "little")
    if members > limits.max_members:
        return f"{members} members; at most {limits.max_members} are allowed"
    if directory > limits.max_members * _DIRECTORY_BYTES_PER_MEMBER:
        return (
            f"its list of members takes {directory:,} bytes, more than {limits.max_members} members take; "
            f"at most {limits.max_members} are allowed"
        )
    return None


_READ_ERRORS = (zipfile.BadZipFile, ValueError, NotImplementedError, OSError, EOFError, zlib.error)


def _member_reader(fh, info: zipfile.ZipInfo) -> Callable[[], bytes]:
    label = f"archive member “{info.filename}”"
    taken = 0

    def read() -> bytes:
        nonlocal taken
        try:
            piece = fh.read(CHUNK)
        except _READ_ERRORS as exc:
            raise _Stop(label, f"cannot be read ({exc})") from None
        taken += len(piece)
        # Never trust the declared size: a member that inflates past it stops everything.
        if taken > info.file_size:
            raise _StopAll(label, "inflates past its declared size (refused)")
        return piece

    return read


def _read_zip(stream: BinaryIO, size: int, name: str, reading: _Reading) -> None:
    limits, problems = reading.limits, reading.problems
    problem = _directory_problem(stream, size, limits)
    if problem:
        problems.add(name, problem)
        return
    stream.seek(0)
    try:
        archive = zipfile.ZipFile(stream)
        infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, NotImplementedError, OSError, EOFError) as exc:
        problems.add(name, f"not a readable zip archive ({exc})")
        return
    if len(infos) > limits.max_members:
        problems.add(name, f"{len(infos)} members; at most {limits.max_members} are allowed")
        return
    if sum(info.file_size for info in infos) > limits.max_unzipped_bytes:
        problems.add(name, f"inflates to more than {limits.max_unzipped_bytes:,} bytes")
        return
    if not infos:
        problems.add(name, "the archive holds no files")
        return
    reading.budget(len(reading.languages))
    for info in infos:
        if not _member_name_ok(info, problems):
            continue
        member = info.filename
        stem, suffix = PurePosixPath(member).stem, PurePosixPath(member).suffix.lower()
        if suffix not in (".json", ".jsonl"):
            problems.add(member, "only .json and .jsonl members are read")
            continue
        if suffix == ".json" and stem not in reading.languages:
            problems.add(member, "name a COCO results member after its language, e.g. de.json")
            continue
        try:
            fh = archive.open(info)
        except _READ_ERRORS as exc:
            problems.add(f"archive member “{member}”", f"cannot be read ({exc})")
            continue
        with fh:
            read = _member_reader(fh, info)
            try:
                head = read()
            except _StopAll:
                raise
            except _Stop as stop:
                problems.add(stop.where, stop.message)
                continue
            if head.startswith(ZIP_MAGIC):  # an archive inside the archive, whatever its name
                problems.add(member, "only .json and .jsonl members are read")
                continue
            try:
                pieces = _pieces(read, member, head)
                if suffix == ".jsonl":
                    _read_jsonl(pieces, member, reading)
                else:
                    _read_coco(pieces, member, stem, reading)
            except _StopAll:
                raise
            except _Stop as stop:  # raised before the first piece (its first bytes are not UTF-8)
                problems.add(stop.where, stop.message)


def _starts_with_list(stream: BinaryIO, limit: int) -> bool:
    """Whether the first non-blank byte (after a byte order mark) is ``[``; the stream is left at 0."""
    stream.seek(0)
    seen, first = 0, True
    while seen <= limit:
        piece = stream.read(CHUNK)
        if not piece:
            break
        if first:
            piece, first = piece.removeprefix(_BOM), False
        seen += len(piece)
        text = piece.lstrip(b" \t\r\n\f\v")
        if text:
            stream.seek(0)
            return text[:1] == b"["
    stream.seek(0)
    return False


def _size(stream: BinaryIO) -> int:
    stream.seek(0, io.SEEK_END)
    size = stream.tell()
    stream.seek(0)
    return size


def submission_parse(
    data: bytes | BinaryIO,
    *,
    filename: str,
    languages: Iterable[str],
    image_keys: Iterable[str],
    language: str | None = None,
    limits: Limits | None = None,
) -> Parsed:
    """Read and check a submission file; raises :class:`SubmissionInvalid` naming every problem's place.

    ``data``: the file's bytes or a seekable binary file (read as a stream, never whole);
    ``languages``: the benchmark's language codes; ``image_keys``: the phase's image keys (a COCO
    integer ``image_id`` matches the key written as a number); ``language``: the language of a COCO
    results file (a zip's ``<code>.json`` members take theirs from the name). Every language that
    appears must have every image of the phase exactly once."""
    limits = limits or Limits()
    stream: BinaryIO = io.BytesIO(data) if isinstance(data, bytes | bytearray | memoryview) else data
    problems = Problems()
    reading = _Reading(limits, set(languages), set(image_keys), problems)
    size = _size(stream)
    if size > limits.max_bytes:
        raise SubmissionInvalid([f"the file is {size:,} bytes; at most {limits.max_bytes:,} are allowed"], 1)
    if not size:
        raise SubmissionInvalid(["the file is empty"], 1)
    suffix = PurePosixPath(filename.lower()).suffix
    name = PurePosixPath(filename.replace("\\", "/")).name[:80] or "file"
    parsed = Parsed(captions=reading.captions)
    head = stream.read(len(ZIP_MAGIC))
    stream.seek(0)
    try:
        if head == ZIP_MAGIC or suffix == ".zip":
            parsed.format = ZIP
            _read_zip(stream, size, name, reading)
        else:
            pieces = _pieces(lambda: stream.read(CHUNK), name)
            if suffix == ".jsonl" or (
                suffix != ".json" and not _starts_with_list(stream, limits.max_value_bytes)
            ):
                parsed.format = JSONL
                reading.budget(len(reading.languages))
                _read_jsonl(pieces, name, reading)
            elif not language:
                parsed.format = COCO
                problems.add(name, "a COCO results file holds one language: say which")
            else:
                parsed.format = COCO
                reading.budget(1)
                _read_coco(pieces, name, language, reading)
    except _Stop as stop:  # the rest of the upload is not read
        problems.add(stop.where, stop.message, last=True)
    for code in sorted(parsed.captions):
        missing = sorted(reading.image_keys - parsed.captions[code].keys())
        if missing:
            problems.add(
                code,
                f"{len(missing)} image(s) of the phase have no caption (first: {', '.join(missing[:5])}); "
                "every image must have exactly one caption per language submitted",
            )
    if not problems and not parsed.captions:
        problems.add(name, "no captions found")
    if problems:
        raise SubmissionInvalid(problems.shown, problems.total)
    return parsed
