"""Readers of image metadata files: rows of (key, fields, where), every problem collected.

Each reader checks keys and field values (``image_key_validate``, ``image_metadata_clean``)
and flags a key given twice in one file, naming both lines; it adds what is wrong to
``problems`` and goes on, so one run lists every problem of the file.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from annotation.importers.report import (
    ImportReport,
    Problems,
    decoded_lines,
    header_records,
    json_lines,
    text_lines,
)
from annotation.services.images import METADATA_FIELDS, image_key_validate, image_metadata_clean
from core.errors import ValidationFailed

OPEN_IMAGES_COLUMNS = {
    "License": "license",
    "Author": "author",
    "Title": "title",
    "OriginalLandingURL": "source_url",
}
# Far above any camera; below it a shape is plausible, above it a typo.
MAX_DIMENSION = 1_000_000


@dataclass
class Row:
    key: str
    fields: dict
    where: str


class _Seen:
    """Duplicate keys within one file are a problem naming both lines."""

    def __init__(self) -> None:
        self.lines: dict[str, str] = {}

    def first(self, key: str, where: str, problems: Problems) -> bool:
        if key in self.lines:
            problems.add(where, f"image “{key}” appears twice (also {self.lines[key]}).")
            return False
        self.lines[key] = where
        return True


def _row(key: object, raw: dict, where: str, seen: _Seen, problems: Problems) -> Row | None:
    try:
        key = image_key_validate(key.strip() if isinstance(key, str) else key)
        fields = image_metadata_clean(raw)
    except ValidationFailed as exc:
        problems.add(where, exc.message)
        return None
    if not seen.first(key, where, problems):
        return None
    return Row(key=key, fields=fields, where=where)


def read_ids(path: Path, problems: Problems) -> list[Row]:
    rows, seen = [], _Seen()
    for number, line in text_lines(path, problems):
        if line.strip():
            row = _row(line, {}, f"{path.name} line {number}", seen, problems)
            if row:
                rows.append(row)
    return rows


def csv_records(path: Path, problems: Problems) -> Iterator[tuple[int, list[str]]]:
    """(first line number, cells) of each CSV record, the header included; blank rows skipped."""
    reader = csv.reader(decoded_lines(path, problems), strict=True)
    end = 0
    while True:
        start = end + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problems.add(f"{path.name} line {reader.line_num}", f"malformed CSV ({exc}).")
            return
        end = reader.line_num
        if any(cell.strip() for cell in cells):
            yield start, cells


def read_csv(path: Path, problems: Problems, report: ImportReport, *, open_images: bool = False) -> list[Row]:
    records = csv_records(path, problems)
    first = next(records, None)
    if first is None:
        if not problems:
            problems.add(path.name, "the file is empty.")
        return []
    header = [cell.strip() for cell in first[1]]
    if "ImageID" in header:
        open_images = True
    if open_images:
        if "ImageID" not in header:
            problems.add(
                f"{path.name} line {first[0]}", "no ImageID column: not an Open Images attribution file."
            )
            return []
        key_column = "ImageID"
        names = {c: OPEN_IMAGES_COLUMNS.get(c) for c in header}
        if "OriginalLandingURL" not in header and "OriginalURL" in header:
            names["OriginalURL"] = "source_url"
    else:
        header = [cell.lower() for cell in header]
        if "key" not in header:
            problems.add(f"{path.name} line {first[0]}", "the header has no 'key' column.")
            return []
        key_column = "key"
        names = {c: c if c in METADATA_FIELDS else None for c in header}
    ignored = [c for c in header if c != key_column and names[c] is None]
    if ignored:
        report.unknown_fields.append(f"{path.name}: {', '.join(ignored)}")
    rows, seen = [], _Seen()
    for where, record in header_records(path, records, header, problems):
        raw = {names[c]: value for c, value in record.items() if names.get(c)}
        row = _row(record[key_column], raw, where, seen, problems)
        if row:
            rows.append(row)
    return rows


def read_jsonl(path: Path, problems: Problems, report: ImportReport) -> list[Row]:
    rows, seen, ignored = [], _Seen(), set()
    for where, obj in json_lines(path, problems):
        if not isinstance(obj, dict) or "key" not in obj:
            problems.add(where, "expected a JSON object with a 'key'.")
            continue
        ignored.update(name for name in obj if name != "key" and name not in METADATA_FIELDS)
        raw = {name: value for name, value in obj.items() if name in METADATA_FIELDS}
        row = _row(obj["key"], raw, where, seen, problems)
        if row:
            rows.append(row)
    if ignored:
        report.unknown_fields.append(f"{path.name}: {', '.join(sorted(ignored))}")
    return rows


def _dimension(value: str) -> int | None:
    value = value.strip()
    if not value.isascii() or not value.isdigit():
        return None
    number = int(value)
    return number if 0 < number <= MAX_DIMENSION else None


def read_shapes(path: Path, problems: Problems) -> list[Row]:
    rows, seen = [], _Seen()
    for start, cells in csv_records(path, problems):
        where = f"{path.name} line {start}"
        if start == 1 and len(cells) == 3 and cells[1].strip().lower() == "width":
            continue  # header
        if len(cells) != 3:
            problems.add(where, f"expected key,width,height; found {len(cells)} cells.")
            continue
        width, height = _dimension(cells[1]), _dimension(cells[2])
        bad = [
            (name, cell)
            for name, cell, n in (("width", cells[1], width), ("height", cells[2], height))
            if n is None
        ]
        if bad:
            name, cell = bad[0]
            problems.add(where, f"{name} '{cell.strip()[:30]}' is not a whole number of pixels.")
            continue
        row = _row(cells[0], {}, where, seen, problems)
        if row:
            row.fields = {"width": width, "height": height}
            rows.append(row)
    return rows


def read_metadata(path: Path, problems: Problems, report: ImportReport) -> list[Row]:
    suffix = path.suffix.lower()
    if suffix == ".txt":
        return read_ids(path, problems)
    if suffix == ".csv":
        return read_csv(path, problems, report)
    if suffix in (".jsonl", ".ndjson"):
        return read_jsonl(path, problems, report)
    raise ValidationFailed(f"metadata {path.name}: expected a .txt (one key per line), .csv or .jsonl file.")
