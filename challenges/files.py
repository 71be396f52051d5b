"""Reading and checking a submission file before anything is counted (pure: no Django).

Three formats: the COCO results JSON of one language (``[{"image_id": int, "caption": str}]``),
XM3600-style JSON lines with a language field (``{"image_id": ..., "language": "de", "caption": ...}``
per line), and a zip of per-language files named ``<language>.json`` or ``<anything>.jsonl``.

Every problem is named with its position (entry, line, archive member), all of them are counted, the
first :data:`SHOWN_PROBLEMS` are kept; nothing about the references is read here, so no message can
reveal one. Sizes are bounded before and while reading: the raw file, every archive member as it is
inflated (a member that inflates past its declared size stops there), the member count, a caption's
length and the JSON nesting.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

SHOWN_PROBLEMS = 20
COCO = "coco"
JSONL = "jsonl"
ZIP = "zip"
ID_FIELDS = ("image_id", "image/key")
LANGUAGE_FIELDS = ("language", "image/locale")


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 50 * 1024 * 1024  # the uploaded file
    max_unzipped_bytes: int = 200 * 1024 * 1024  # all members of an archive, inflated
    max_members: int = 100
    max_caption_chars: int = 2000
    max_depth: int = 8


class Problems:
    """Every problem counted, the first ``SHOWN_PROBLEMS`` kept (bounded memory for a file of errors)."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.total = 0

    def add(self, where: str, message: str) -> None:
        self.total += 1
        if len(self.shown) < SHOWN_PROBLEMS:
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


def _depth(value: object, limit: int) -> bool:
    """True when ``value`` nests deeper than ``limit`` (iterative: no recursion on hostile input)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False


def _decode(data: bytes, name: str, problems: Problems) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problems.add(name, f"line {line}: not UTF-8 text (byte {exc.start})")
        return None
    return text.removeprefix("\ufeff")


def _loads(text: str, where: str, limits: Limits, problems: Problems):
    try:
        value = json.loads(text)
    except RecursionError:
        problems.add(where, f"JSON nested deeper than {limits.max_depth} levels")
        return None
    except json.JSONDecodeError as exc:
        problems.add(where, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})")
        return None
    if _depth(value, limits.max_depth):
        problems.add(where, f"JSON nested deeper than {limits.max_depth} levels")
        return None
    return value


def _image_key(value: object) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _entry(obj: object, where: str, problems: Problems, *, language_field: bool) -> _Entry | None:
    if not isinstance(obj, dict):
        problems.add(where, 'expected an object {"image_id": ..., "caption": ...}')
        return None
    ids = [k for k in ID_FIELDS if k in obj]
    if len(ids) != 1:
        problems.add(where, "needs exactly one of “image_id” or “image/key”")
        return None
    allowed = {ids[0], "caption", "id", "score", *(LANGUAGE_FIELDS if language_field else ())}
    unknown = sorted(k for k in obj if k not in allowed)
    if unknown:
        problems.add(where, f"unknown field(s) {', '.join(map(repr, unknown[:5]))}")
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


def _coco_entries(text: str, name: str, limits: Limits, problems: Problems) -> list[_Entry]:
    data = _loads(text, name, limits, problems)
    if data is None:
        return []
    if not isinstance(data, list):
        problems.add(name, 'expected a JSON list [{"image_id": ..., "caption": ...}, ...]')
        return []
    entries = []
    for index, obj in enumerate(data, start=1):
        entry = _entry(obj, f"{name} entry {index}", problems, language_field=False)
        if entry is not None:
            entries.append(entry)
    return entries


def _jsonl_entries(text: str, name: str, limits: Limits, problems: Problems) -> list[_Entry]:
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        obj = _loads(line, where, limits, problems)
        if obj is None:
            continue
        entry = _entry(obj, where, problems, language_field=True)
        if entry is not None:
            entries.append(entry)
    return entries


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


def _zip_members(data: bytes, name: str, limits: Limits, problems: Problems) -> list[tuple[str, bytes]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, NotImplementedError) as exc:
        problems.add(name, f"not a readable zip archive ({exc})")
        return []
    if len(infos) > limits.max_members:
        problems.add(name, f"{len(infos)} members; at most {limits.max_members} are allowed")
        return []
    if sum(info.file_size for info in infos) > limits.max_unzipped_bytes:
        problems.add(name, f"inflates to more than {limits.max_unzipped_bytes:,} bytes")
        return []
    members = []
    budget = limits.max_unzipped_bytes
    for info in infos:
        if not _member_name_ok(info, problems):
            continue
        try:
            with archive.open(info) as fh:
                # Never trust the declared size: read at most what is left of the budget, plus one byte.
                content = fh.read(min(budget, info.file_size) + 1)
        except (zipfile.BadZipFile, ValueError, NotImplementedError, OSError, EOFError) as exc:
            problems.add(f"archive member “{info.filename}”", f"cannot be read ({exc})")
            continue
        if len(content) > info.file_size or len(content) > budget:
            problems.add(f"archive member “{info.filename}”", "inflates past its declared size (refused)")
            return []
        budget -= len(content)
        members.append((info.filename, content))
    return members


def _check_captions(
    entries: Iterable[_Entry],
    *,
    default_language: str | None,
    languages: set[str],
    image_keys: set[str],
    limits: Limits,
    problems: Problems,
    captions: dict[str, dict[str, str]],
    first_seen: dict[tuple[str, str], str],
) -> None:
    for entry in entries:
        language = entry.language or default_language
        if not language:
            problems.add(entry.where, "no language: choose the language of a COCO results file")
            continue
        if language not in languages:
            problems.add(entry.where, f"language “{language[:20]}” is not a language of this benchmark")
            continue
        if entry.image not in image_keys:
            problems.add(entry.where, f"unknown image id “{entry.image[:40]}” (not an image of this phase)")
            continue
        if not isinstance(entry.caption, str):
            problems.add(entry.where, "the caption must be a string")
            continue
        caption = entry.caption.strip()
        if not caption:
            problems.add(entry.where, f"empty caption for image “{entry.image}”")
            continue
        if len(caption) > limits.max_caption_chars:
            problems.add(
                entry.where, f"caption of {len(caption):,} characters; at most {limits.max_caption_chars:,}"
            )
            continue
        if "\x00" in caption:
            problems.add(entry.where, "the caption contains a NUL character")
            continue
        seen = first_seen.get((language, entry.image))
        if seen is not None:
            problems.add(entry.where, f"duplicate image id “{entry.image}” in {language} (first at {seen})")
            continue
        first_seen[(language, entry.image)] = entry.where
        captions.setdefault(language, {})[entry.image] = caption


def submission_parse(
    data: bytes,
    *,
    filename: str,
    languages: Iterable[str],
    image_keys: Iterable[str],
    language: str | None = None,
    limits: Limits | None = None,
) -> Parsed:
    """Read and check a submission file; raises :class:`SubmissionInvalid` naming every problem's place.

    ``languages``: the benchmark's language codes; ``image_keys``: the phase's image keys (a COCO
    integer ``image_id`` matches the key written as a number); ``language``: the language of a COCO
    results file (a zip's ``<code>.json`` members take theirs from the name). Every language that
    appears must have every image of the phase exactly once."""
    limits = limits or Limits()
    languages, image_keys = set(languages), set(image_keys)
    problems = Problems()
    if len(data) > limits.max_bytes:
        raise SubmissionInvalid(
            [f"the file is {len(data):,} bytes; at most {limits.max_bytes:,} are allowed"], 1
        )
    if not data:
        raise SubmissionInvalid(["the file is empty"], 1)
    suffix = PurePosixPath(filename.lower()).suffix
    name = PurePosixPath(filename.replace("\\", "/")).name[:80] or "file"
    parsed = Parsed()
    first_seen: dict[tuple[str, str], str] = {}
    check = {
        "languages": languages,
        "image_keys": image_keys,
        "limits": limits,
        "problems": problems,
        "captions": parsed.captions,
        "first_seen": first_seen,
    }
    if data[:4] == b"PK\x03\x04" or suffix == ".zip":
        parsed.format = ZIP
        members = _zip_members(data, name, limits, problems)
        if not members and not problems:
            problems.add(name, "the archive holds no files")
        for member, content in members:
            text = _decode(content, member, problems)
            if text is None:
                continue
            stem, member_suffix = PurePosixPath(member).stem, PurePosixPath(member).suffix.lower()
            if member_suffix == ".jsonl":
                _check_captions(
                    _jsonl_entries(text, member, limits, problems), default_language=None, **check
                )
            elif member_suffix == ".json":
                if stem not in languages:
                    problems.add(member, "name a COCO results member after its language, e.g. de.json")
                    continue
                _check_captions(_coco_entries(text, member, limits, problems), default_language=stem, **check)
            else:
                problems.add(member, "only .json and .jsonl members are read")
    else:
        text = _decode(data, name, problems)
        if text is not None:
            if suffix == ".jsonl" or (suffix != ".json" and not text.lstrip().startswith("[")):
                parsed.format = JSONL
                entries = _jsonl_entries(text, name, limits, problems)
                _check_captions(entries, default_language=None, **check)
            else:
                parsed.format = COCO
                if not language:
                    problems.add(name, "a COCO results file holds one language: say which")
                else:
                    _check_captions(
                        _coco_entries(text, name, limits, problems), default_language=language, **check
                    )
    for code in sorted(parsed.captions):
        missing = sorted(image_keys - parsed.captions[code].keys())
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
