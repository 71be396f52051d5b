"""What is stored and served is only the picture, and validation stays within a memory budget
(issue 16, items 5b and 5c; RELIABILITY case 18)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from django.urls import reverse
from PIL import Image as PILImage
from PIL import ImageOps

from annotation.models import Image
from annotation.services.images import image_store, image_validate
from core.errors import ValidationFailed
from tests import factories as f

REPO_ROOT = Path(__file__).resolve().parents[2]
HTML = b"<html><body><script>alert(document.cookie)</script></body></html>\n"


def picture(fmt: str, size=(24, 16), **save) -> bytes:
    im = PILImage.linear_gradient("L").resize(size).convert("RGB")
    buf = io.BytesIO()
    im.save(buf, format=fmt, **save)
    return buf.getvalue()


def stored_bytes(image: Image) -> bytes:
    with image.file.open("rb") as fh:
        return fh.read()


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["GIF", "PNG", "JPEG", "WEBP"])
def test_html_appended_to_a_picture_is_neither_stored_nor_served(client, fmt):
    clean = picture(fmt)
    image, _ = image_store(key="k1", data=clean + HTML, name=f"photo.{fmt.lower()}")
    stored = stored_bytes(image)
    assert stored == clean
    assert image.content_hash == hashlib.sha256(clean).hexdigest()
    client.force_login(f.UserFactory(is_staff=True))
    response = client.get(reverse("annotation:image", args=[image.pk]))
    served = b"".join(response.streaming_content)
    assert b"<html" not in served and b"<script" not in served
    if fmt == "GIF":
        assert response["Content-Type"] == "image/gif"
        assert served.endswith(b"\x3b")  # the GIF trailer


@pytest.mark.django_db
def test_the_same_picture_with_and_without_junk_is_one_picture():
    clean = picture("GIF")
    image_store(key="clean", data=clean)
    with pytest.raises(ValidationFailed, match="already stored as image “clean”"):
        image_store(key="dirty", data=clean + HTML)
    # Storing the junk version under the same key again is the same picture: nothing changes.
    image, created = image_store(key="clean", data=clean + HTML)
    assert not created and stored_bytes(image) == clean


@pytest.mark.django_db
def test_exif_orientation_and_metadata_survive_the_trim():
    exif = PILImage.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    clean = picture("JPEG", size=(32, 16), exif=exif, quality=90)
    image, _ = image_store(key="rotated", data=clean + b"\xff\xd9" + HTML, name="rotated.jpg")
    stored = stored_bytes(image)
    assert stored == clean  # not re-encoded: byte for byte
    with PILImage.open(io.BytesIO(stored)) as im:
        assert im.getexif()[0x0112] == 6
        assert ImageOps.exif_transpose(im).size == (16, 32)


def test_a_picture_cut_before_its_end_marker_is_refused():
    gif = picture("GIF")
    with pytest.raises(ValidationFailed, match="truncated or corrupt"):
        image_validate(gif[:-1] + HTML, name="cut.gif")


# --- Memory budget (item 5c) ------------------------------------------------------------------


def test_a_picture_too_large_to_decode_within_the_budget_is_refused(settings):
    settings.IMAGE_DECODE_MAX_BYTES = 4 * 1024 * 1024
    data = picture("WEBP", size=(1024, 512))
    with pytest.raises(ValidationFailed) as exc:
        image_validate(data, name="wide.webp")
    assert exc.value.message == (
        "“wide.webp”: decoding this 1,024 × 512 WEBP image takes 8.0 MB of memory, above the "
        "budget of 4.0 MB (IMAGE_DECODE_MAX_BYTES): save it smaller or as PNG or JPEG."
    )


def test_png_and_jpeg_are_checked_without_decoding_them_whole(settings):
    settings.IMAGE_DECODE_MAX_BYTES = 1024 * 1024
    for fmt in ["PNG", "JPEG"]:
        assert image_validate(picture(fmt, size=(1024, 512))).width == 1024


MEASURE = textwrap.dedent(
    """
    import json, sys
    import django
    django.setup()
    from annotation.services.images import image_validate

    def status(field):
        for line in open("/proc/self/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1])  # kB

    data = open(sys.argv[1], "rb").read()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # resets the peak (VmHWM) to the current resident size
    before = status("VmRSS")
    result = image_validate(data, name="big.png")
    print(json.dumps({"before_kb": before, "peak_kb": status("VmHWM"), "width": result.width}))
    """
)


@pytest.mark.slow
def test_peak_memory_validating_a_7000_by_5700_png(tmp_path):
    """Prints the peak resident memory added by validating a 7000 × 5700 PNG (39.9 megapixels)."""
    im = PILImage.linear_gradient("L").resize((7000, 5700)).convert("RGB")
    path = tmp_path / "big.png"
    im.save(path, format="PNG")
    del im
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    added_mb = (figures["peak_kb"] - figures["before_kb"]) / 1024
    print(
        f"\n7000 × 5700 PNG ({path.stat().st_size / 2**20:.1f} MB file): validation added {added_mb:.1f} MB peak RSS"
    )
    assert figures["width"] == 7000
    # Before the streamed check this was 126.5 MB (a full decode, 4 bytes a pixel in Pillow).
    assert added_mb < 32
