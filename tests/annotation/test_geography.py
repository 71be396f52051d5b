"""Where a photo was taken (EXIF GPS, offline reverse geocoding) and where a language is spoken (CLDR).

These tests need reverse-geocode and country-converter (requirements.txt): they fail, never skip,
when those are missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.importers import images_import
from annotation.models import Image
from annotation.selection import geography
from core.errors import ValidationFailed
from tests.annotation.geotagged import (
    DHAKA,
    HYDERABAD,
    KOLKATA,
    MUNICH,
    SAO_PAULO,
    SYDNEY,
    TOKYO,
    geotagged_jpeg,
    plain_jpeg,
)
from tests.factories import png_bytes

# --- Pure ---------------------------------------------------------------------------------------


def test_exif_gps_is_read_with_its_hemispheres():
    assert geography.exif_coordinates(geotagged_jpeg(17.385, 78.4867)) == pytest.approx((17.385, 78.4867))
    assert geography.exif_coordinates(geotagged_jpeg(-33.8688, -70.5)) == pytest.approx((-33.8688, -70.5))


def test_no_or_unreadable_gps_is_none():
    assert geography.exif_coordinates(plain_jpeg()) is None
    assert geography.exif_coordinates(png_bytes()) is None
    assert geography.exif_coordinates(b"not an image") is None


@pytest.mark.parametrize("place", [HYDERABAD, KOLKATA, DHAKA, TOKYO, MUNICH, SAO_PAULO, SYDNEY])
def test_coordinates_give_country_region_and_continent(place):
    (point, country, region, continent) = place
    (found,) = geography.locate([point])
    assert (found.country_code, found.region, found.continent) == (country, region, continent)


def test_invalid_coordinates_are_named():
    assert geography.coordinates_check(17.4, 78.5) is None
    assert geography.coordinates_check(91, 0) == "latitude 91 is outside -90..90"
    assert geography.coordinates_check(0, -180.5) == "longitude -180.5 is outside -180..180"
    assert geography.coordinates_check(float("nan"), 0) == "latitude nan is not a number"


def test_cldr_countries_of_a_language_with_the_minimum_share():
    assert set(geography.language_countries("bn")) == {"BD", "IN"}
    assert set(geography.language_countries("te")) == {"IN"}  # 7.2% of India, regionally official
    assert geography.language_countries("te", min_share=10) == {}
    assert {"IR", "AF"} <= set(geography.language_countries("fa"))
    # English is spoken by many Germans, but is not official in Germany.
    assert "DE" not in geography.language_countries("en")
    assert geography.language_countries("pt-BR") == geography.language_countries("pt")


def test_regions_known_per_country():
    assert {"Telangana", "Andhra Pradesh", "West Bengal"} <= geography.regions_of("IN")
    assert geography.regions_of("ZZ") == frozenset()
    assert geography.continent_of("NA") == "Africa"  # Namibia, not a missing value


# --- Import: a folder of geotagged photos -------------------------------------------------------


def folder_of(tmp_path: Path, photos: dict[str, bytes]) -> Path:
    folder = tmp_path / "photos"
    folder.mkdir()
    for name, data in photos.items():
        (folder / name).write_bytes(data)
    return folder


def test_import_reads_exif_gps_and_places_each_photo(db, tmp_path):
    folder = folder_of(
        tmp_path,
        {
            "hyd.jpg": geotagged_jpeg(*HYDERABAD[0], color=(1, 2, 3)),
            "kol.jpg": geotagged_jpeg(*KOLKATA[0], color=(4, 5, 6)),
            "nogps.jpg": plain_jpeg(),
        },
    )
    report = images_import(folder=folder)
    assert report.created == 3
    assert (report.from_exif, report.located) == (2, 2)
    assert "2 with coordinates from EXIF GPS, 2 placed" in report.summary()
    hyd = Image.objects.get(key="hyd")
    assert (hyd.latitude, hyd.longitude) == pytest.approx(HYDERABAD[0])
    assert (hyd.country_code, hyd.country, hyd.region, hyd.continent) == ("IN", "India", "Telangana", "Asia")
    assert Image.objects.get(key="kol").region == "West Bengal"
    nogps = Image.objects.get(key="nogps")
    assert (nogps.latitude, nogps.country_code, nogps.region) == (None, "", "")

    again = images_import(folder=folder)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 3)


def test_metadata_coordinates_win_over_exif_and_given_places_are_kept(db, tmp_path):
    folder = folder_of(tmp_path, {"p1.jpg": geotagged_jpeg(*HYDERABAD[0])})
    metadata = tmp_path / "meta.csv"
    metadata.write_text(f"key,latitude,longitude,country\np1,{MUNICH[0][0]},{MUNICH[0][1]},Bayern (DE)\n")
    report = images_import(folder=folder, metadata=metadata)
    assert report.from_exif == 0
    image = Image.objects.get(key="p1")
    assert image.latitude == pytest.approx(MUNICH[0][0])
    assert (image.country_code, image.country, image.region) == ("DE", "Bayern (DE)", "Bavaria")


def test_exif_gps_out_of_range_is_reported_and_not_used(db, tmp_path):
    folder = folder_of(tmp_path, {"bad.jpg": geotagged_jpeg(95.0, 10.0)})
    report = images_import(folder=folder)
    assert report.created == 1
    assert any(
        "outside the valid ranges" in w and "bad.jpg" in w and "latitude 95" in w for w in report.warnings
    )
    image = Image.objects.get(key="bad")
    assert (image.latitude, image.country_code) == (None, "")


def test_metadata_coordinates_out_of_range_import_nothing(db, tmp_path):
    metadata = tmp_path / "meta.csv"
    metadata.write_text("key,latitude,longitude\nok,17.4,78.5\nbad,12.0,200\n")
    with pytest.raises(ValidationFailed, match=r"meta.csv line 3.*longitude 200.0 is outside -180..180"):
        images_import(metadata=metadata)
    assert not Image.objects.exists()


def test_dry_run_places_nothing(db, tmp_path):
    folder = folder_of(tmp_path, {"hyd.jpg": geotagged_jpeg(*HYDERABAD[0])})
    report = images_import(folder=folder, dry_run=True)
    assert report.located == 1
    assert not Image.objects.exists()
