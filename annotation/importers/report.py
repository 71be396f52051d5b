"""What an import tells its user: counts, what it skipped, and every problem it found."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import ValidationFailed

# How many problems the error message spells out; all of them go into ``details``.
PROBLEMS_SHOWN = 20


@dataclass
class ImportReport:
    """The outcome of one import. ``dry_run``: the same counts, nothing written."""

    subject: str
    dry_run: bool = False
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    # Images: files written to storage, and images that still have no file.
    files_stored: int = 0
    without_file: int = 0
    # Images: coordinates read from the photos' EXIF GPS, and images placed (country, region,
    # continent) from their coordinates.
    from_exif: int = 0
    located: int = 0
    # Rows or files left out because their key is unknown.
    skipped: int = 0
    unknown_keys: list[str] = field(default_factory=list)
    # Columns or JSON keys that were read but not imported, as "file: a, b".
    unknown_fields: list[str] = field(default_factory=list)
    # Keys of the records that changed (updated), and of those created, in input order.
    changed_keys: list[str] = field(default_factory=list)
    created_keys: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged

    def summary(self) -> str:
        would = "would be " if self.dry_run else ""
        text = (
            f"{self.total} {self.subject}: {self.created} {would}created, {self.updated} {would}updated, "
            f"{self.unchanged} unchanged"
        )
        if self.subject == "images":
            text += f"; {plural(self.files_stored, 'file')} {would}stored, {self.without_file} without a file"
            if self.from_exif or self.located:
                text += f"; {self.from_exif} with coordinates from EXIF GPS, {self.located} {would}placed"
        if self.languages:
            text += f"; languages: {', '.join(self.languages)}"
        if self.skipped:
            text += f"; {self.skipped} skipped (unknown key)"
        text += "."
        if self.dry_run:
            text += " Dry run: nothing was written."
        return text

    def details(self, *, full: bool = False) -> list[str]:
        """What the user should read besides the summary; ``full`` lists every key."""
        limit = None if full else 10

        def keys(items: list[str]) -> str:
            shown = items if limit is None else items[:limit]
            return ", ".join(shown) + (f", … ({len(items)} in all)" if len(shown) < len(items) else "")

        lines = list(self.warnings)
        lines += [f"not imported (unknown columns or fields): {item}" for item in self.unknown_fields]
        if full and self.unknown_keys:
            lines.append(f"unknown keys: {keys(self.unknown_keys)}")
        if self.changed_keys:
            lines.append(f"{'would change' if self.dry_run else 'changed'}: {keys(self.changed_keys)}")
        return lines


class Problems:
    """Collects every problem of a parse, so the user fixes them all in one go."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, where: str, reason: str) -> None:
        self.items.append(f"{where}: {reason}" if where else reason)

    def raise_if_any(self) -> None:
        if not self.items:
            return
        if len(self.items) == 1:
            raise ValidationFailed(f"{self.items[0]} Nothing was imported.", details=self.items)
        shown = "\n".join(f"  {item}" for item in self.items[:PROBLEMS_SHOWN])
        more = len(self.items) - PROBLEMS_SHOWN
        if more > 0:
            shown += f"\n  … and {more} more"
        raise ValidationFailed(
            f"{len(self.items)} problems; nothing was imported:\n{shown}", details=self.items
        )


def input_file_check(path: Path, *, what: str) -> Path:
    """The path of an input file that exists and is a regular file, else ValidationFailed."""
    path = Path(path)
    if not path.exists():
        raise ValidationFailed(f"{what} {path}: no such file.")
    if not path.is_file():
        raise ValidationFailed(f"{what} {path}: not a regular file.")
    return path


def decoded_lines(path: Path, problems: Problems) -> Iterator[str]:
    """The lines of a UTF-8 file (a BOM is allowed), ends kept, as ``csv.reader`` wants them.

    Each line is decoded on its own so that a decoding error names its line; reading
    stops there.
    """
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                problems.add(f"{path.name} line {number}", "not UTF-8 text.")
                return
            yield line.removeprefix("\ufeff") if number == 1 else line


def text_lines(path: Path, problems: Problems) -> Iterator[tuple[int, str]]:
    """(line number, line without its end) of a UTF-8 file; see decoded_lines."""
    for number, line in enumerate(decoded_lines(path, problems), start=1):
        yield number, line.rstrip("\r\n")


def json_lines(path: Path, problems: Problems) -> Iterator[tuple[str, object]]:
    """(where, parsed value) of each non-empty line of a JSON-lines file, ``where`` naming the file and line;
    a line that is not JSON is recorded in ``problems`` and skipped."""
    for number, line in text_lines(path, problems):
        if not line.strip():
            continue
        where = f"{path.name} line {number}"
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(where, f"malformed JSON ({exc.msg} at column {exc.colno}).")


def header_records(path: Path, records, header: list[str], problems: Problems) -> Iterator[tuple[str, dict]]:
    """(where, {column: cell}) of each CSV record after the header, ``where`` naming the file and line; a
    record whose number of cells is not the header's is recorded in ``problems`` and skipped."""
    for start, cells in records:
        where = f"{path.name} line {start}"
        if len(cells) != len(header):
            problems.add(where, f"{len(cells)} cells, the header has {len(header)}.")
            continue
        yield where, dict(zip(header, cells))


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
