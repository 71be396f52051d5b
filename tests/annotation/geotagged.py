"""Photos with an EXIF GPS block, made with Pillow, for the geography and selection tests."""

from __future__ import annotations

import io

from PIL import Image as PILImage
from PIL import TiffImagePlugin

# Well-known places: (latitude, longitude), country, first-level region as GeoNames names it, continent.
HYDERABAD = ((17.385, 78.4867), "IN", "Telangana", "Asia")
KOLKATA = ((22.5726, 88.3639), "IN", "West Bengal", "Asia")
LUCKNOW = ((26.8467, 80.9462), "IN", "Uttar Pradesh", "Asia")
DHAKA = ((23.8103, 90.4125), "BD", "Dhaka Division", "Asia")
TOKYO = ((35.6762, 139.6503), "JP", "Tokyo", "Asia")
MUNICH = ((48.1351, 11.582), "DE", "Bavaria", "Europe")
SAO_PAULO = ((-23.5505, -46.6333), "BR", "São Paulo", "South America")
SYDNEY = ((-33.8688, 151.2093), "AU", "New South Wales", "Oceania")


def _dms(value: float) -> tuple:
    value = abs(value)
    degrees = int(value)
    minutes = int((value - degrees) * 60)
    seconds = round(((value - degrees) * 60 - minutes) * 60, 4)
    return tuple(TiffImagePlugin.IFDRational(v) for v in (degrees, minutes, seconds))


def geotagged_jpeg(latitude: float, longitude: float, *, color=(200, 100, 50), size=(16, 16)) -> bytes:
    """A JPEG whose EXIF GPS block says (latitude, longitude); out-of-range values are written as given."""
    image = PILImage.new("RGB", size, color)
    exif = PILImage.Exif()
    exif.get_ifd(0x8825).update(
        {
            1: "N" if latitude >= 0 else "S",
            2: _dms(latitude),
            3: "E" if longitude >= 0 else "W",
            4: _dms(longitude),
        }
    )
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif)
    return buffer.getvalue()


def plain_jpeg(*, color=(10, 20, 30)) -> bytes:
    buffer = io.BytesIO()
    PILImage.new("RGB", (16, 16), color).save(buffer, "JPEG")
    return buffer.getvalue()
