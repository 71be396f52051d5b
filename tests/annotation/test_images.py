"""Image validation and storage: what is refused, with which message, and that nothing is stored then."""

from __future__ import annotations

import hashlib
import io
import random
import struct
import zlib
from pathlib import Path

import pytest
from django.conf import settings
from PIL import Image as PILImage
from PIL import ImageFile

from annotation.models import Image
from annotation.services.images import image_key_validate, image_store, image_validate
from core.errors import ValidationFailed
from tests.factories import png_bytes


def encoded(fmt: str, size=(16, 12), noise: bool = False) -> bytes:
    if noise:
        im = PILImage.frombytes("RGB", size, random.Random(1).randbytes(size[0] * size[1] * 3))
    else:
        im = PILImage.new("RGB", size, (10, 200, 30))
    buf = io.BytesIO()
    im.save(buf, format=fmt)
    return buf.getvalue()


def png_claiming(width: int, height: int) -> bytes:
    """A few dozen bytes of valid PNG whose header claims ``width`` × ``height`` 1-bit pixels."""

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\0" * 64))
        + chunk(b"IEND", b"")
    )


def stored_files() -> set[str]:
    root = Path(settings.MEDIA_ROOT) / "images"
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()} if root.exists() else set()


SVG = b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect/></svg>'
HTML = b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>"


# --- Accepted -------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_allowed_formats_are_described(fmt):
    data = encoded(fmt)
    result = image_validate(data, name=f"x.{fmt.lower()}")
    assert (result.format, result.width, result.height) == (fmt, 16, 12)
    assert result.content_hash == hashlib.sha256(data).hexdigest()


def test_format_comes_from_the_bytes_not_the_name():
    assert image_validate(encoded("PNG"), name="photo.jpg").format == "PNG"


def test_a_format_added_to_the_allow_list_is_accepted(settings):
    settings.IMAGE_ALLOWED_FORMATS = ["PNG", "TIFF"]
    assert image_validate(encoded("TIFF")).format == "TIFF"


# --- Refused --------------------------------------------------------------------------------

REFUSED = {
    "text file": (b"just some words, not a picture\n", "photo.jpg", "not an image: the file is text"),
    "binary junk": (bytes(range(256)) * 4, "photo.jpg", "not an image: the format is not recognised"),
    "svg": (SVG, "drawing.svg", "not an image: the file is an SVG drawing"),
    "svg renamed .png": (SVG, "drawing.png", "not an image: the file is an SVG drawing"),
    "html renamed .jpg": (HTML, "photo.jpg", "not an image: the file is an HTML document"),
    "truncated jpeg": (encoded("JPEG", (64, 64), noise=True)[:1500], "photo.jpg", "truncated or corrupt"),
    "corrupt png": (encoded("PNG")[:-20] + b"\0" * 20, "photo.png", "truncated or corrupt"),
    "tiff": (encoded("TIFF"), "scan.tif", "TIFF images are not accepted (accepted: JPEG, PNG, WEBP, GIF)"),
    "bmp": (encoded("BMP"), "old.bmp", "BMP images are not accepted"),
    "empty": (b"", "photo.jpg", "the file is empty"),
    "bomb beyond Pillow's limit": (png_claiming(100_000, 100_000), "bomb.png", "decompression bomb"),
    "bomb beyond our limit": (
        png_claiming(8_000, 8_000),
        "bomb.png",
        "8,000 × 8,000 pixels, above the limit",
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", REFUSED)
def test_refused_with_a_clear_message_and_nothing_stored(case):
    data, name, message = REFUSED[case]
    before = stored_files()
    with pytest.raises(ValidationFailed) as exc:
        image_store(key="k1", data=data, name=name)
    assert exc.value.message.startswith(f"“{name}”: ")
    assert message in exc.value.message
    assert Image.objects.count() == 0
    assert stored_files() == before


@pytest.mark.django_db
def test_oversize_file_refused_before_decoding(settings):
    settings.IMAGE_MAX_BYTES = 1000
    data = encoded("PNG", (64, 64), noise=True)
    with pytest.raises(ValidationFailed, match=r"the file is [\d,]+ bytes; the limit is 1,000 bytes"):
        image_store(key="big", data=data, name="big.png")
    assert Image.objects.count() == 0


def test_pixel_limit_comes_from_settings(settings):
    settings.IMAGE_MAX_PIXELS = 100
    with pytest.raises(ValidationFailed, match="16 × 12 pixels, above the limit of 100 pixels"):
        image_validate(encoded("PNG"))


def test_pillow_bomb_warning_is_a_refusal(settings):
    # 10000 × 10000 is between Pillow's warning and error thresholds: Pillow only warns.
    settings.IMAGE_MAX_PIXELS = 10**12
    with pytest.raises(ValidationFailed, match="decompression bomb"):
        image_validate(png_claiming(10_000, 10_000))


@pytest.mark.parametrize("size", [(100_000, 100_000), (8_000, 8_000)])
def test_a_bomb_is_never_decoded(monkeypatch, size):
    decoded = []
    real_load = ImageFile.ImageFile.load
    monkeypatch.setattr(ImageFile.ImageFile, "load", lambda im: decoded.append(im.size) or real_load(im))
    with pytest.raises(ValidationFailed):
        image_validate(png_claiming(*size))
    assert decoded == []
    # The check itself does decode a picture that passes it (a PNG's pixels are inflated in
    # slices without Pillow, tests/annotation/test_image_payload.py).
    image_validate(encoded("GIF"))
    assert decoded == [(16, 12)]


# --- Keys -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("../etc/passwd", "path separator"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("..", "'..'"),
        ("a..b", "'..'"),
        (".hidden", "starts with a dot"),
        ("a\x00b", "control characters"),
        ("a\u202eb", "control characters"),
        (" a", "spaces"),
        ("", "non-empty"),
        ("x" * 201, "at most 200"),
    ],
)
@pytest.mark.django_db
def test_path_tricks_in_keys_are_refused(key, message):
    with pytest.raises(ValidationFailed, match=message):
        image_store(key=key, data=png_bytes())
    assert Image.objects.count() == 0


def test_ordinary_keys_pass():
    for key in ("d89a4889331ce042", "COCO_val2014_000000404464", "photo 1", "München-2"):
        assert image_key_validate(key) == key


# --- Storage --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_stored_under_its_hash_never_the_given_name():
    data = png_bytes(color=(1, 2, 3))
    image, created = image_store(
        key="k1", data=data, name="../../etc/evil.png", author="Ann", latitude="48.1"
    )
    digest = hashlib.sha256(data).hexdigest()
    assert created
    image.refresh_from_db()
    assert image.file.name == f"images/{digest[:2]}/{digest}.png"
    with image.file.storage.open(image.file.name, "rb") as fh:
        assert fh.read() == data
    assert (image.content_hash, image.format, image.width, image.height) == (digest, "PNG", 8, 8)
    assert (image.author, image.latitude) == ("Ann", 48.1)


@pytest.mark.django_db
def test_the_same_picture_is_stored_once():
    data = png_bytes(color=(4, 5, 6))
    first, created = image_store(key="k1", data=data)
    again, created_again = image_store(key="k1", data=data)
    assert created and not created_again
    assert again.pk == first.pk and again.file.name == first.file.name
    assert Image.objects.count() == 1
    with pytest.raises(ValidationFailed, match="already stored as image “k1”"):
        image_store(key="k2", data=data)
    assert list(Image.objects.values_list("key", flat=True)) == ["k1"]


@pytest.mark.django_db
def test_a_different_picture_never_replaces_the_stored_one():
    image_store(key="k1", data=png_bytes(color=(7, 7, 7)))
    with pytest.raises(ValidationFailed, match="“k1” already has a different picture"):
        image_store(key="k1", data=png_bytes(color=(8, 8, 8)))
    assert Image.objects.get().content_hash == hashlib.sha256(png_bytes(color=(7, 7, 7))).hexdigest()


@pytest.mark.django_db
def test_file_attached_to_an_image_imported_as_metadata_only():
    Image.objects.create(key="k1", title="A market", width=640, height=480)
    image, created = image_store(key="k1", data=encoded("JPEG"))
    assert not created
    image.refresh_from_db()
    assert image.has_file and image.title == "A market"
    assert (image.format, image.width, image.height) == ("JPEG", 16, 12)
    assert image.file.name.endswith(".jpg")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"latitude": "abc"}, "latitude 'abc' is not a number"),
        ({"latitude": "nan"}, "latitude 'nan' is not a number"),
        ({"longitude": 181}, "longitude 181.0 is outside -180..180"),
        ({"source_url": "javascript:alert(1)"}, "not an http(s) URL"),
        ({"title": "x" * 501}, "title is 501 characters; at most 500"),
        ({"colour": "red"}, "unknown image field(s): colour"),
    ],
)
def test_bad_metadata_refused_and_nothing_stored(metadata, message):
    before = stored_files()
    with pytest.raises(ValidationFailed) as exc:
        image_store(key="k1", data=png_bytes(color=(9, 9, 9)), **metadata)
    assert message in exc.value.message
    assert Image.objects.count() == 0
    assert stored_files() == before
