"""Import images: metadata files, then image files, in one all-or-nothing transaction.

Inputs (any combination, at least one):

- ``metadata``: the images to import. ``.txt``: one key per line (XM3600 ``image_ids.txt``);
  ``.csv`` with a header holding ``key`` and any of the metadata columns, or an Open Images
  attribution CSV (recognised by its ``ImageID`` column); ``.jsonl``: one object per line
  with the same names as the CSV columns.
- ``attributions``: an Open Images attribution CSV (XM3600 ``image_attributions.csv``):
  License, Author, Title and OriginalLandingURL become license, author, title and
  source_url; its other columns are reported as not imported.
- ``shapes``: ``key,width,height`` rows, header optional (XM3600 ``image_shapes.csv``):
  the size of images whose file is not here; a stored file's own size always wins.
- ``folder``: image files named ``<key>.<ext>``, matched to keys by file stem.

Where a photo was taken: latitude and longitude from the metadata or, when it gives none, from
the file's EXIF GPS block (a GPS position outside the valid ranges is reported and not used).
An image with coordinates gets its country code, and its country, region and continent where
those are empty, from ``annotation.selection.geography`` (offline); the image selection reads them.

Attributions and shapes only describe images: their rows for a key that neither the
metadata, the folder nor the database knows are reported and skipped. With metadata, a
file whose key is neither in it nor stored is reported and skipped; without metadata,
every file is an image. Everything is parsed and every file validated before anything is
written: one problem anywhere and nothing is imported, with every problem named by file
and line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.importers.metadata_files import Row, read_csv, read_metadata, read_shapes
from annotation.importers.report import (
    ImportReport,
    Problems,
    input_file_check,
    plural,
)
from annotation.models import Image
from annotation.selection import geography
from annotation.services.images import (
    METADATA_FIELDS,
    ValidatedImage,
    image_file_write,
    image_key_validate,
    image_validate,
    size_text,
)
from core.errors import Conflict, ValidationFailed

# Files in the folder with other names are not read (and are reported).
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".jpe", ".jfif", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff"}
DIMENSION_FIELDS = ("width", "height")
PLACE_FIELDS = ("country", "region", "continent")
UPDATE_FIELDS = [
    *METADATA_FIELDS,
    "country_code",
    "file",
    "content_hash",
    "format",
    *DIMENSION_FIELDS,
    "updated_at",
]
CHUNK = 500
KEYS_SHOWN = 10


@dataclass
class _File:
    key: str
    path: Path
    validated: ValidatedImage
    gps: tuple[float, float] | None = None


def _chunks(items: list, size: int = CHUNK) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _examples(keys: Iterable[str]) -> str:
    keys = list(keys)
    shown = ", ".join(keys[:KEYS_SHOWN])
    return shown + (", …" if len(keys) > KEYS_SHOWN else "")


def _scan_folder(folder: Path, problems: Problems, report: ImportReport) -> dict[str, Path]:
    folder = Path(folder)
    if not folder.is_dir():
        raise ValidationFailed(f"folder {folder}: no such folder.")
    files: dict[str, Path] = {}
    not_read = []
    for entry in sorted(folder.iterdir()):
        # is_file() follows a symbolic link and is false for devices and pipes.
        if entry.name.startswith(".") or entry.suffix.lower() not in IMAGE_SUFFIXES or not entry.is_file():
            not_read.append(entry.name)
            continue
        key = entry.stem
        try:
            image_key_validate(key)
        except ValidationFailed as exc:
            problems.add(entry.name, exc.message)
            continue
        if key in files:
            problems.add(entry.name, f"a second file for image “{key}” (also {files[key].name}).")
            continue
        files[key] = entry
    if not_read:
        report.warnings.append(
            f"{plural(len(not_read), 'entry')} in {folder} not read (not an image file name): {_examples(not_read)}"
        )
    return files


def _file_bytes(path: Path) -> bytes:
    """The bytes of an image file, never reading more than the size limit allows."""
    limit = settings.IMAGE_MAX_BYTES
    size = path.stat().st_size
    if size > limit:
        raise ValidationFailed(
            f"“{path.name}”: the file is {size_text(size)}; the limit is {size_text(limit)}."
        )
    with open(path, "rb") as fh:
        return fh.read(limit + 1)


def _existing_keys(keys: list[str]) -> set[str]:
    found: set[str] = set()
    for chunk in _chunks(keys):
        found.update(Image.objects.filter(key__in=chunk).values_list("key", flat=True))
    return found


# --- The import -----------------------------------------------------------------------------


def images_import(
    *,
    folder: Path | None = None,
    metadata: Path | None = None,
    attributions: Path | None = None,
    shapes: Path | None = None,
    dry_run: bool = False,
) -> ImportReport:
    """Import image metadata and files (see the module docstring); return the report.

    Validates everything before writing; writes in one transaction (bulk_create /
    bulk_update), locking the image rows it reads. Idempotent: a re-run reports every
    image unchanged. ``dry_run`` reports the same counts and writes nothing. Raises
    ValidationFailed listing every problem by file and line (nothing is imported then),
    and Conflict when the same new images are imported concurrently.
    """
    if not any((folder, metadata, attributions, shapes)):
        raise ValidationFailed("Nothing to import: give a folder of image files and/or metadata files.")
    report = ImportReport(subject="images", dry_run=dry_run)
    problems = Problems()

    defining: list[Row] = []
    if metadata:
        defining = read_metadata(input_file_check(metadata, what="metadata"), problems, report)
    supplements: list[Row] = []
    if attributions:
        supplements += read_csv(
            input_file_check(attributions, what="attributions"), problems, report, open_images=True
        )
    if shapes:
        supplements += read_shapes(input_file_check(shapes, what="shapes"), problems)
    files = _scan_folder(folder, problems, report) if folder else {}
    problems.raise_if_any()

    # Which keys this import is about, in input order.
    stored = _existing_keys(
        list(dict.fromkeys([*(r.key for r in defining), *(r.key for r in supplements), *files]))
    )
    keys = dict.fromkeys(r.key for r in defining)
    unknown_files = []
    for key in files:
        if not metadata or key in keys or key in stored:
            keys.setdefault(key)
        else:
            unknown_files.append(key)
    unknown_rows = [r for r in supplements if r.key not in keys and r.key not in stored]
    for key in unknown_files:
        files.pop(key)
    if unknown_files:
        report.warnings.append(
            f"{plural(len(unknown_files), 'file')} in {folder} for keys neither in the metadata nor stored, "
            f"skipped: {_examples(unknown_files)}"
        )
    if unknown_rows:
        report.warnings.append(
            f"{plural(len(unknown_rows), 'row')} for images neither in the metadata, the folder nor stored, "
            f"skipped: {_examples(f'{r.where} ({r.key})' for r in unknown_rows)}"
        )
    report.unknown_keys = list(dict.fromkeys([*unknown_files, *(r.key for r in unknown_rows)]))
    report.skipped = len(unknown_files) + len(unknown_rows)
    for row in supplements:
        if row.key not in keys and row.key in stored:
            keys.setdefault(row.key)

    # Merge what the files say about each key; two files disagreeing on a field is a problem.
    merged: dict[str, dict[str, tuple[object, str]]] = {key: {} for key in keys}
    for row in [*defining, *supplements]:
        if row.key not in merged:
            continue
        for name, value in row.fields.items():
            if name in merged[row.key] and merged[row.key][name][0] != value:
                problems.add(row.where, f"{name} of “{row.key}” differs from {merged[row.key][name][1]}.")
            merged[row.key].setdefault(name, (value, row.where))

    # Validate every file now, before the transaction; the bytes are read again to be written.
    checked: dict[str, _File] = {}
    bad_gps = []
    for key, path in files.items():
        try:
            data = _file_bytes(path)
            checked[key] = _File(key=key, path=path, validated=image_validate(data, name=path.name))
        except ValidationFailed as exc:
            problems.add("", exc.message)
            continue
        if (
            merged[key].get("latitude", (None,))[0] is None
            and merged[key].get("longitude", (None,))[0] is None
        ):
            gps = geography.exif_coordinates(data)
            if gps is not None:
                reason = geography.coordinates_check(*gps)
                if reason:
                    bad_gps.append(f"{path.name} ({reason})")
                else:
                    checked[key].gps = gps
    if bad_gps:
        report.warnings.append(
            f"{plural(len(bad_gps), 'file')} with an EXIF GPS position outside the valid ranges, imported "
            f"without coordinates: {_examples(bad_gps)}"
        )
    by_hash: dict[str, _File] = {}
    for entry in checked.values():
        twin = by_hash.setdefault(entry.validated.content_hash, entry)
        if twin is not entry:
            problems.add(
                f"“{entry.path.name}”",
                f"the same picture as “{twin.path.name}”; it is stored once, under one key.",
            )
    problems.raise_if_any()

    try:
        with transaction.atomic():
            _apply(list(keys), merged, checked, report, problems)
            if dry_run:
                transaction.set_rollback(True)
    except IntegrityError:
        raise Conflict(
            "The same images were being imported by someone else at the same time; "
            "run the import again (it is idempotent)."
        ) from None
    return report


def _apply(
    keys: list[str],
    merged: dict[str, dict[str, tuple[object, str]]],
    files: dict[str, _File],
    report: ImportReport,
    problems: Problems,
) -> None:
    existing: dict[str, Image] = {}
    for chunk in _chunks(keys):
        existing.update(
            (image.key, image) for image in Image.objects.select_for_update().filter(key__in=chunk)
        )

    hashes = {entry.validated.content_hash: entry for entry in files.values()}
    for chunk in _chunks(list(hashes)):
        for content_hash, key in Image.objects.filter(content_hash__in=chunk).values_list(
            "content_hash", "key"
        ):
            entry = hashes[content_hash]
            if key != entry.key:
                problems.add(f"“{entry.path.name}”", f"the same picture is already stored as image “{key}”.")
    for entry in files.values():
        image = existing.get(entry.key)
        if image is not None and image.content_hash and image.content_hash != entry.validated.content_hash:
            problems.add(
                f"“{entry.path.name}”", f"image “{entry.key}” already has a different picture stored."
            )
    problems.raise_if_any()

    places = _places(keys, merged, files, existing, report)
    now = timezone.now()
    new, changed, size_mismatch = [], [], []
    for key in keys:
        image = existing.get(key)
        created = image is None
        if created:
            image = Image(key=key)
        fields = {name: value for name, (value, _) in merged[key].items()}
        dirty = False
        for name in METADATA_FIELDS:
            if name in fields and getattr(image, name) != fields[name]:
                setattr(image, name, fields[name])
                dirty = True
        entry = files.get(key)
        if entry and entry.gps is not None and image.latitude is None and image.longitude is None:
            image.latitude, image.longitude = entry.gps
            dirty = True
        if key in places:
            place = places[key]
            if image.country_code != place.country_code:
                image.country_code = place.country_code
                dirty = True
            for name in PLACE_FIELDS:
                if not getattr(image, name) and name not in fields and getattr(place, name):
                    setattr(image, name, getattr(place, name))
                    dirty = True
        if entry and image.content_hash != entry.validated.content_hash:
            if not report.dry_run:
                image_file_write(image=image, validated=entry.validated, data=_file_bytes(entry.path))
            else:
                image.content_hash = entry.validated.content_hash
                image.width, image.height = entry.validated.width, entry.validated.height
            report.files_stored += 1
            dirty = True
        shape = tuple(fields.get(name) for name in DIMENSION_FIELDS)
        if image.content_hash:
            if shape[0] is not None and shape != (image.width, image.height):
                size_mismatch.append(key)
        else:
            report.without_file += 1
            if shape[0] is not None and shape != (image.width, image.height):
                image.width, image.height = shape
                dirty = True
        if created:
            new.append(image)
            report.created += 1
        elif dirty:
            image.updated_at = now
            changed.append(image)
            report.updated += 1
            report.changed_keys.append(key)
        else:
            report.unchanged += 1
    if size_mismatch:
        report.warnings.append(
            f"{plural(len(size_mismatch), 'image')} whose stored file's size differs from the shapes file; "
            f"the file's size is kept: {_examples(size_mismatch)}"
        )
    if not report.dry_run:
        Image.objects.bulk_create(new, batch_size=CHUNK)
        Image.objects.bulk_update(changed, UPDATE_FIELDS, batch_size=CHUNK)


def _places(
    keys: list[str],
    merged: dict[str, dict[str, tuple[object, str]]],
    files: dict[str, _File],
    existing: dict[str, Image],
    report: ImportReport,
) -> dict[str, geography.Place]:
    """The place of every image of this import that has coordinates, from the metadata, the file's
    EXIF GPS or what is stored, located in one batch (offline)."""
    points: dict[str, tuple[float, float]] = {}
    for key in keys:
        fields, stored, entry = merged[key], existing.get(key), files.get(key)
        latitude = fields["latitude"][0] if "latitude" in fields else getattr(stored, "latitude", None)
        longitude = fields["longitude"][0] if "longitude" in fields else getattr(stored, "longitude", None)
        if (latitude is None or longitude is None) and entry is not None and entry.gps is not None:
            latitude, longitude = entry.gps
            report.from_exif += 1
        if latitude is not None and longitude is not None:
            points[key] = (latitude, longitude)
    report.located = len(points)
    return dict(zip(points, geography.locate(list(points.values()))))
