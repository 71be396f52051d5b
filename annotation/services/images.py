"""Image files: validation of untrusted bytes, and content-addressed storage.

Every picture that reaches storage went through ``image_validate``: size, pixel count
(from the header, before any decoding), format (as Pillow decodes it, never the file
name), the format's own end (anything appended after it is dropped), then a ``verify()``
and a decode of every pixel within a memory budget. A stored file is named after the sha256
of its bytes, never after what the uploader called it, and the same picture is stored once.
"""

from __future__ import annotations

import hashlib
import io
import math
import unicodedata
import warnings
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from PIL import Image as PILImage
from PIL import UnidentifiedImageError

from annotation.image_bytes import Malformed, image_end, png_pixels_check
from annotation.models import Image
from annotation.selection import geography
from core.errors import Conflict, ValidationFailed

KEY_MAX_LENGTH = Image._meta.get_field("key").max_length

# Pillow names camera JPEGs that carry a multi-picture index "MPO"; the file is a JPEG
# and every browser shows it as one.
FORMAT_ALIASES = {"MPO": "JPEG"}

TEXT_FIELDS = ("license", "author", "title", "country", "region", "continent")
URL_FIELDS = ("source_url",)
COORDINATE_FIELDS = {"latitude": 90.0, "longitude": 180.0}
# What an importer or a caller of image_store may set; the file's own fields
# (content_hash, format, width, height) come from the validated bytes.
METADATA_FIELDS = (*TEXT_FIELDS, *URL_FIELDS, *COORDINATE_FIELDS)

_url_validator = URLValidator(schemes=["http", "https"])


@dataclass(frozen=True)
class ValidatedImage:
    format: str
    width: int
    height: int
    # sha256 of the picture as stored: the bytes up to the format's end marker (image_payload).
    content_hash: str
    trailing_bytes: int = 0  # what was appended after the picture and dropped


def image_payload(data: bytes, fmt: str) -> bytes:
    """The picture in ``data``: the bytes up to its format's end marker (JPEG, PNG, GIF, WEBP).

    A GIF with an HTML page appended is still a GIF to Pillow and to browsers; stored whole, the
    page would be served with it. Cutting at the end marker rather than re-encoding keeps the
    picture byte for byte (no JPEG generation loss) with its EXIF orientation, ICC profile and
    other metadata. Other formats (when added to IMAGE_ALLOWED_FORMATS) are kept as given.
    Raises Malformed when the structure breaks before the end marker.
    """
    end = image_end(data, fmt)
    return data if end is None else data[:end]


# Bytes per pixel of Pillow's in-memory image (RGB is stored in 4 bytes, as RGBA).
_PIXEL_BYTES = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16B": 2, "I;16L": 2}
# Peak over that image while decoding, measured: WebP goes through libwebp's own RGBA buffer
# and a copy (4000 × 3000: 186.6 MB peak for a 45.8 MB image).
_DECODE_FACTOR = {"WEBP": 4}


def decode_bytes(fmt: str, mode: str, width: int, height: int) -> int:
    """Peak memory Pillow needs to decode a whole picture of this format, mode and size."""
    return width * height * _PIXEL_BYTES.get(mode, 4) * _DECODE_FACTOR.get(fmt, 1)


# --- Validation -----------------------------------------------------------------------------


def size_text(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _quoted(value: object, limit: int = 60) -> str:
    text = str(value)
    return f"'{text[:limit]}…'" if len(text) > limit else f"'{text}'"


def _has_control(text: str, *, categories: tuple[str, ...] = ("Cc", "Cs"), allow: str = "") -> bool:
    return any(unicodedata.category(ch) in categories and ch not in allow for ch in text)


def image_key_validate(key: object) -> str:
    """Return ``key`` if it is a safe image key, else raise ValidationFailed.

    Keys end up in URLs, exports and log lines, so path tricks are refused: separators,
    ``..``, a leading dot, control characters, surrounding spaces.
    """
    if not isinstance(key, str) or not key:
        raise ValidationFailed("An image key must be a non-empty text.")
    shown = _quoted(key)
    if len(key) > KEY_MAX_LENGTH:
        raise ValidationFailed(f"image key {shown} is {len(key)} characters; at most {KEY_MAX_LENGTH}.")
    if key != key.strip():
        raise ValidationFailed(f"image key {shown} starts or ends with spaces.")
    # Keys also refuse format characters (zero-width, bidi overrides): invisible in a key.
    if _has_control(key, categories=("Cc", "Cf", "Cs")):
        raise ValidationFailed(f"image key {ascii(key)} contains control characters.")
    if "/" in key or "\\" in key:
        raise ValidationFailed(f"image key {shown} contains a path separator.")
    if ".." in key or key.startswith("."):
        raise ValidationFailed(f"image key {shown} contains '..' or starts with a dot.")
    return key


def _not_an_image(data: bytes) -> str:
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith(b"<"):
        if b"<svg" in head:
            kind = "an SVG drawing (markup, which can carry scripts)"
        elif b"<html" in head or b"<!doctype html" in head or b"<script" in head:
            kind = "an HTML document"
        else:
            kind = "markup (XML/HTML)"
        return f"not an image: the file is {kind}."
    try:
        data[:4096].decode("utf-8")
    except UnicodeDecodeError:
        return "not an image: the format is not recognised."
    return "not an image: the file is text."


def image_validate(data: bytes, *, name: str = "") -> ValidatedImage:
    """Check untrusted bytes and describe the picture; raise ValidationFailed if refused.

    Refuses: empty or oversize files (settings.IMAGE_MAX_BYTES), anything Pillow cannot
    identify (text, SVG, HTML, whatever the file name says), formats outside
    settings.IMAGE_ALLOWED_FORMATS, pictures above settings.IMAGE_MAX_PIXELS (read from the
    header, before decoding: a decompression bomb is never decoded), and truncated or
    corrupt files (``verify()``, then every pixel decoded: see ``_pixels_check``). Bytes
    appended after the format's end marker are not part of the picture: the hash and the
    stored file cover the picture only (``image_payload``). Memory stays bounded by the
    limits and settings.IMAGE_DECODE_MAX_BYTES. Pure: writes nothing.
    """
    where = f"“{name}”: " if name else ""

    def refuse(reason: str) -> ValidationFailed:
        return ValidationFailed(f"{where}{reason}")

    if not data:
        raise refuse("the file is empty.")
    limit = settings.IMAGE_MAX_BYTES
    if len(data) > limit:
        raise refuse(f"the file is {size_text(len(data))}; the limit is {size_text(limit)}.")
    allowed = [f.upper() for f in settings.IMAGE_ALLOWED_FORMATS]
    max_pixels = settings.IMAGE_MAX_PIXELS
    with warnings.catch_warnings():
        # Pillow only warns between its own limit and twice that: a warning is a refusal here.
        warnings.simplefilter("error", PILImage.DecompressionBombWarning)
        try:
            with PILImage.open(io.BytesIO(data)) as im:
                decoded_format = im.format
                fmt = FORMAT_ALIASES.get(im.format, im.format)
                width, height = im.size
                if fmt not in allowed:
                    raise refuse(f"{fmt} images are not accepted (accepted: {', '.join(allowed)}).")
                if width <= 0 or height <= 0:
                    raise refuse("the image has no pixels.")
                if width * height > max_pixels:
                    raise refuse(
                        f"the image is {width:,} × {height:,} pixels, above the limit of {max_pixels:,} "
                        "pixels: refused as a possible decompression bomb."
                    )
                mode = im.mode
            try:
                payload = image_payload(data, fmt)
            except Malformed as exc:
                raise refuse(f"the file is truncated or corrupt ({exc}).") from None
            with PILImage.open(io.BytesIO(payload), formats=[decoded_format]) as im:
                im.verify()
            # verify() leaves the image unusable: open again and decode every pixel, which is
            # what catches a truncated JPEG, within a bounded memory (_pixels_check).
            _pixels_check(payload, decoded_format, fmt, mode, width, height, refuse)
        except ValidationFailed:
            raise
        except (PILImage.DecompressionBombError, PILImage.DecompressionBombWarning):
            raise refuse(
                "the image claims too many pixels: refused as a possible decompression bomb."
            ) from None
        except UnidentifiedImageError:
            raise refuse(_not_an_image(data)) from None
        except Exception as exc:
            # Pillow's decoders raise OSError, SyntaxError, ValueError, struct.error, EOFError...
            # on damaged input; every one of them means the same to the user.
            raise refuse(f"the file is truncated or corrupt ({exc}).") from None
    return ValidatedImage(
        format=fmt,
        width=width,
        height=height,
        content_hash=hashlib.sha256(payload).hexdigest(),
        trailing_bytes=len(data) - len(payload),
    )


def _pixels_check(payload: bytes, decoded_format: str, fmt: str, mode: str, width: int, height: int, refuse):
    """Decode every pixel of ``payload`` with memory bounded by settings.IMAGE_DECODE_MAX_BYTES.

    - PNG (not interlaced): its image data is inflated a slice at a time and checked scanline
      by scanline (annotation.image_bytes.png_pixels_check): about 1 MB whatever the size;
    - JPEG: decoded at 1/8 scale (``draft``), which still reads every coefficient of the file:
      width × height × 4 / 64 bytes;
    - others (GIF, WEBP, interlaced PNG): decoded whole, so width × height × bytes per pixel
      must fit the budget (decode_bytes, from the header, before decoding); above it they are
      refused.
    """
    if fmt == "PNG" and png_pixels_check(payload):
        return
    with PILImage.open(io.BytesIO(payload), formats=[decoded_format]) as im:
        if fmt == "JPEG":
            im.draft(None, ((width + 7) // 8, (height + 7) // 8))
        else:
            needed = decode_bytes(fmt, mode, width, height)
            budget = settings.IMAGE_DECODE_MAX_BYTES
            if needed > budget:
                raise refuse(
                    f"decoding this {width:,} × {height:,} {fmt} image takes {size_text(needed)} of memory, "
                    f"above the budget of {size_text(budget)} (IMAGE_DECODE_MAX_BYTES): save it smaller "
                    "or as PNG or JPEG."
                )
        im.load()


def image_metadata_clean(metadata: dict[str, object]) -> dict[str, object]:
    """Validate and normalise metadata fields; raise ValidationFailed naming the bad one.

    Text is stripped (None means blank); source_url must be http(s); latitude and
    longitude must be finite numbers in range (blank means unknown). Unknown fields are
    refused: importers filter (and report) them before calling this.
    """
    unknown = sorted(set(metadata) - set(METADATA_FIELDS))
    if unknown:
        raise ValidationFailed(f"unknown image field(s): {', '.join(unknown)}.")
    clean: dict[str, object] = {}
    for field, value in metadata.items():
        if field in COORDINATE_FIELDS:
            clean[field] = _coordinate(field, value)
            continue
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise ValidationFailed(f"{field} {_quoted(value)} is not text.")
        value = value.strip()
        max_length = Image._meta.get_field(field).max_length
        if len(value) > max_length:
            raise ValidationFailed(f"{field} is {len(value)} characters; at most {max_length}.")
        if _has_control(value, allow="\t"):
            raise ValidationFailed(f"{field} {ascii(value[:60])} contains control characters.")
        if field in URL_FIELDS and value:
            try:
                _url_validator(value)
            except ValidationError:
                raise ValidationFailed(f"{field} {_quoted(value)} is not an http(s) URL.") from None
        clean[field] = value
    return clean


def _coordinate(field: str, value: object) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValidationFailed(f"{field} {_quoted(value)} is not a number.")
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise ValidationFailed(f"{field} {_quoted(value)} is not a number.") from None
    if not math.isfinite(number):
        raise ValidationFailed(f"{field} {_quoted(value)} is not a number.")
    bound = COORDINATE_FIELDS[field]
    if not -bound <= number <= bound:
        raise ValidationFailed(f"{field} {number} is outside -{bound:g}..{bound:g}.")
    return number


# --- Storage --------------------------------------------------------------------------------


def image_file_write(*, image: Image, validated: ValidatedImage, data: bytes) -> None:
    """Write the validated picture (``data`` up to its end marker) to storage under its hash.

    Points ``image`` at the file.
    Does not save ``image``. The caller holds the transaction; a rollback leaves the file
    behind, which is harmless: the name is the hash, so the next attempt reuses it.
    """
    try:
        data = image_payload(data, validated.format)
    except Malformed:
        data = b""  # the file changed: it no longer has the structure that was checked
    if hashlib.sha256(data).hexdigest() != validated.content_hash:
        raise ValidationFailed(f"“{image.key}”: the file changed after it was checked.")
    image.content_hash = validated.content_hash
    image.format = validated.format
    field = Image._meta.get_field("file")
    storage = field.storage
    name = field.generate_filename(image, "image")
    if storage.exists(name) and storage.size(name) != len(data):
        storage.delete(name)  # a write cut short earlier; the name says what it must hold
    if not storage.exists(name):
        name = storage.save(name, ContentFile(data))
    image.file = name
    image.width, image.height = validated.width, validated.height


def image_place_derive(*, image: Image, data: bytes | None = None, given: set[str] = frozenset()) -> bool:
    """Fill where ``image`` was taken; return whether anything changed. Does not save.

    Coordinates: when the image has none, from the EXIF GPS of ``data`` (a position outside the
    valid ranges is ignored). With coordinates: the country code always, and the country, region and
    continent where they are empty and not in ``given`` (fields the caller set on purpose), from the
    offline geography (annotation.selection.geography).
    """
    changed = False
    if image.latitude is None and image.longitude is None and data is not None:
        gps = geography.exif_coordinates(data)
        if gps is not None and geography.coordinates_check(*gps) is None:
            image.latitude, image.longitude = gps
            changed = True
    if image.latitude is None or image.longitude is None:
        if image.country_code:
            image.country_code = ""
            changed = True
        return changed
    (place,) = geography.locate([(image.latitude, image.longitude)])
    if image.country_code != place.country_code:
        image.country_code = place.country_code
        changed = True
    for name in ("country", "region", "continent"):
        if not getattr(image, name) and name not in given and getattr(place, name):
            setattr(image, name, getattr(place, name))
            changed = True
    return changed


def image_store(*, key: str, data: bytes, name: str = "", **metadata) -> tuple[Image, bool]:
    """Validate and store one picture under ``key``; return (image, created).

    - same key, same picture: nothing is written again (metadata given is updated);
    - key known without a file (metadata imported first): the file is attached;
    - key known with a different picture: refused, the stored picture is never swapped
      under captions already collected for it;
    - the same picture already stored under another key: refused, naming that key.
    Locks the image rows involved. Idempotent. Raises ValidationFailed (see image_validate,
    image_key_validate, image_metadata_clean) and Conflict when the same key is being
    stored concurrently.
    """
    key = image_key_validate(key)
    fields = image_metadata_clean(metadata)
    validated = image_validate(data, name=name or key)
    try:
        with transaction.atomic():
            other = (
                Image.objects.select_for_update()
                .filter(content_hash=validated.content_hash)
                .exclude(key=key)
                .values_list("key", flat=True)
                .first()
            )
            if other is not None:
                raise ValidationFailed(
                    f"“{key}”: this picture is already stored as image “{other}”; "
                    "the same picture is never stored twice."
                )
            image = Image.objects.select_for_update().filter(key=key).first()
            created = image is None
            if created:
                image = Image(key=key)
            elif image.content_hash and image.content_hash not in (
                validated.content_hash,
                hashlib.sha256(data).hexdigest(),  # stored whole, trailing bytes included, before the trim
            ):
                raise ValidationFailed(f"image “{key}” already has a different picture stored.")
            changed = created
            if image.content_hash != validated.content_hash:
                image_file_write(image=image, validated=validated, data=data)
                changed = True
            for field, value in fields.items():
                if getattr(image, field) != value:
                    setattr(image, field, value)
                    changed = True
            given = {name for name, value in fields.items() if value not in (None, "")}
            changed = image_place_derive(image=image, data=data, given=given) or changed
            if changed:
                image.save()
            return image, created
    except IntegrityError:
        raise Conflict(
            f"image “{key}” was being stored by someone else at the same time; try again."
        ) from None
