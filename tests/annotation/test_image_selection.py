"""Image selection through the platform: the service, the command, what is stored, and bad input."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import ImageSelection, LanguageArea, SelectedImage, SelectedLanguage
from annotation.selectors import selected_keys
from annotation.services.selection import image_selection_run, language_area_validate, language_areas
from core.errors import ValidationFailed
from tests.annotation.geotagged import DHAKA, HYDERABAD, KOLKATA, LUCKNOW, MUNICH
from tests.factories import ImageFactory, LanguageFactory

pytestmark = pytest.mark.django_db


def placed(n: int, place, *, prefix: str, **kwargs):
    (lat, lon), country, region, _ = place
    return [
        ImageFactory(
            key=f"{prefix}{i}", latitude=lat, longitude=lon, country_code=country, region=region, **kwargs
        )
        for i in range(n)
    ]


@pytest.fixture
def indic(db):
    """Bengali, Telugu and Hindi with their regions; 3 photos each in West Bengal and Telangana, 4 in
    Munich, 2 without coordinates."""
    bn = LanguageFactory(code="bn", name="Bengali")
    te = LanguageFactory(code="te", name="Telugu")
    hi = LanguageFactory(code="hi", name="Hindi")
    LanguageArea.objects.create(language=bn, country_code="IN", region="West Bengal")
    LanguageArea.objects.create(language=te, country_code="IN", region="Telangana")
    LanguageArea.objects.create(language=te, country_code="IN", region="Andhra Pradesh")
    for region in ("West Bengal", "Telangana", "Uttar Pradesh"):
        LanguageArea.objects.create(language=hi, country_code="IN", region=region)
    placed(3, KOLKATA, prefix="wb")
    placed(3, HYDERABAD, prefix="tg")
    placed(4, MUNICH, prefix="mu")
    ImageFactory(key="nowhere0")
    ImageFactory(key="nowhere1")
    return bn, te, hi


def test_areas_combine_cldr_countries_and_overrides(indic):
    bn, te, hi = indic
    areas = language_areas([bn, te, hi], min_share=5)
    assert areas["bn"].regions == {("IN", "West Bengal")}
    assert areas["bn"].whole_countries == {"BD"}  # CLDR: Bengali in Bangladesh, no region listed there
    assert areas["bn"].countries == {"IN", "BD"}
    assert areas["te"].whole_countries == frozenset()
    assert areas["hi"].continents == {"Asia"}
    LanguageArea.objects.create(language=bn, country_code="BD", excluded=True)
    assert language_areas([bn], min_share=5)["bn"].countries == {"IN"}


def test_the_hindi_case_stored_with_levels(indic):
    report = image_selection_run(name="indic", language_codes=["hi", "bn", "te"], per_language=3, seed=4)
    rows = {r["language"]: r for r in report.rows}
    assert [r["language"] for r in report.rows] == ["bn", "te", "hi"]
    assert rows["bn"]["region"] == 3 and rows["te"]["region"] == 3
    assert (rows["hi"]["region"], rows["hi"]["global"]) == (0, 3)
    selection = ImageSelection.objects.get(name="indic")
    assert (selection.seed, selection.per_language, selection.pool_size) == (4, 3, 12)
    sets = {s.language.code: s for s in SelectedLanguage.objects.filter(selection=selection)}
    assert (sets["hi"].n_global, sets["hi"].order, sets["hi"].pool) == (3, 3, 6)
    assert sorted(selected_keys(language_set_id=sets["bn"].pk)) == ["wb0", "wb1", "wb2"]
    assert set(SelectedImage.objects.filter(language_set=sets["te"]).values_list("level", flat=True)) == {
        "region"
    }
    assert SelectedImage.objects.filter(selection=selection).count() == 9
    assert report.warnings == ["2 images of the pool without coordinates: usable at the global level only."]


def test_same_seed_same_sets(indic):
    image_selection_run(name="a", language_codes=["hi", "bn", "te"], per_language=3, seed=9)
    image_selection_run(name="b", language_codes=["hi", "bn", "te"], per_language=3, seed=9)

    def picks(name):
        return list(
            SelectedImage.objects.filter(selection__name=name)
            .order_by("language_set__order", "rank")
            .values_list("language_set__language__code", "image__key", "level")
        )

    assert picks("a") == picks("b")


def test_a_pool_too_small_stores_what_it_can_and_reports_the_shortfall(indic):
    report = image_selection_run(name="short", language_codes=["hi", "bn", "te"], per_language=5)
    assert report.shortfall == 3  # 12 images, 15 asked for
    assert report.rows[-1]["shortfall"] == 3
    assert "Shortfall: 3 images missing (hi 3)" in "\n".join(report.lines())
    assert SelectedImage.objects.filter(selection__name="short").count() == 12


def test_images_placed_before_places_were_derived_are_located_on_the_fly(db):
    te = LanguageFactory(code="te", name="Telugu")
    LanguageArea.objects.create(language=te, country_code="IN", region="Telangana")
    (lat, lon), *_ = HYDERABAD
    ImageFactory(key="old", latitude=lat, longitude=lon)  # no country_code stored
    placed(2, LUCKNOW, prefix="up")
    report = image_selection_run(name="x", language_codes=["te"], per_language=2, seed=1)
    assert (report.rows[0]["region"], report.rows[0]["country"]) == (1, 1)


def test_the_pool_query_narrows_the_candidates(indic):
    report = image_selection_run(
        name="wb-only", language_codes=["te"], per_language=3, pool_query="key:wb country:IN", seed=1
    )
    assert report.pool_size == 3
    assert (report.rows[0]["region"], report.rows[0]["country"]) == (0, 3)
    later = image_selection_run(
        name="later", language_codes=["te"], per_language=20, pool_query="not-in:wb-only"
    )
    assert later.pool_size == 9


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"language_codes": ["te", "xx", "yy"]}, "2 unknown language codes: xx, yy"),
        ({"language_codes": []}, "at least one language"),
        ({"per_language": 0}, "from 1 to"),
        ({"seed": -1}, "The seed is a whole number"),
        ({"pool_query": "size:big"}, "“size:big” is not a term"),
        ({"pool_query": "continent:Atlantis"}, "no continent “Atlantis”"),
        ({"pool_query": "not-in:nothing"}, "no selection named “nothing”"),
        ({"pool_query": "key:zzz"}, "The pool is empty"),
        ({"name": " "}, "Give the selection a name"),
        ({"min_share": 120}, "percentage from 0 to 100"),
    ],
)
def test_bad_input_is_refused_with_a_message_and_nothing_stored(indic, kwargs, message):
    arguments = {"name": "s", "language_codes": ["te"], "per_language": 3, **kwargs}
    with pytest.raises(ValidationFailed, match=message):
        image_selection_run(**arguments)
    assert not ImageSelection.objects.exists()
    assert not SelectedImage.objects.exists()


def test_a_taken_name_is_refused(indic):
    image_selection_run(name="s", language_codes=["te"], per_language=1)
    with pytest.raises(ValidationFailed, match="exists already"):
        image_selection_run(name="s", language_codes=["bn"], per_language=1)
    assert ImageSelection.objects.count() == 1


def test_dry_run_stores_nothing(indic):
    report = image_selection_run(name="d", language_codes=["te"], per_language=3, dry_run=True)
    assert report.rows[0]["region"] == 3
    assert report.selection_id is None
    assert not ImageSelection.objects.exists()


def test_overrides_are_checked_against_the_geography():
    assert language_area_validate(country_code=" in ", region="Telangana") == ("IN", "Telangana")
    with pytest.raises(ValidationFailed, match="not an ISO 3166-1 alpha-2"):
        language_area_validate(country_code="XX")
    with pytest.raises(ValidationFailed, match="“Telengana” is not a first-level region of IN.*Telangana"):
        language_area_validate(country_code="IN", region="Telengana")
    with pytest.raises(ValidationFailed, match="whole country"):
        language_area_validate(country_code="IN", region="Telangana", excluded=True)


# --- The command ------------------------------------------------------------------------------


def run(*args) -> str:
    import io

    out = io.StringIO()
    call_command("select_images", *args, stdout=out)
    return out.getvalue()


def test_command_prints_the_level_table(indic):
    out = run("--languages", "hi,bn,te", "--per-language", "3", "--seed", "4", "--name", "cmd")
    lines = out.splitlines()
    assert lines[0] == "Selected “cmd”: 3 languages × 3 from a pool of 12 images, seed 4."
    assert lines[1].split() == [
        "order",
        "lang",
        "pool",
        "region",
        "country",
        "continent",
        "global",
        "missing",
    ]
    assert lines[2].split() == ["1", "bn", "3", "3", "0", "0", "0", "0"]
    assert lines[4].split() == ["3", "hi", "6", "0", "0", "0", "3", "0"]
    assert ImageSelection.objects.filter(name="cmd").exists()


def test_command_json_and_dry_run(indic):
    data = json.loads(
        run("--languages", "te bn", "--per-language", "2", "--seed", "1", "--dry-run", "--format", "json")
    )
    assert data["dry_run"] is True and data["name"] == "selection-1"
    assert [r["language"] for r in data["languages"]] == ["bn", "te"]
    assert data["languages"][0]["region"] == 2
    assert not ImageSelection.objects.exists()


def test_command_refuses_unknown_codes_with_the_message(indic):
    with pytest.raises(CommandError, match="unknown language code: zz"):
        run("--languages", "te,zz", "--per-language", "2")
    assert not ImageSelection.objects.exists()


def test_bangladesh_counts_for_bengali_from_cldr(db):
    LanguageFactory(code="bn", name="Bengali")
    placed(2, DHAKA, prefix="dh")
    report = image_selection_run(name="bd", language_codes=["bn"], per_language=2, seed=0)
    assert report.rows[0]["region"] == 2


def test_a_failure_while_storing_leaves_nothing_half_written(indic, monkeypatch):
    from annotation.models import SelectedImage as Model

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(Model.objects, "bulk_create", broken)
    with pytest.raises(RuntimeError):
        image_selection_run(name="half", language_codes=["hi", "bn", "te"], per_language=3)
    assert not ImageSelection.objects.exists()
    assert not SelectedLanguage.objects.exists()


# --- The map ------------------------------------------------------------------------------------


def test_the_map_draws_every_placed_image_and_counts_the_others():
    from annotation.selection.figures import Point, selection_map

    points = [
        Point("te", "region", 17.4, 78.5),
        Point("hi", "global", 48.1, 11.6),
        Point("hi", "global", None, None),
    ]
    svg = selection_map(points, title="t", fmt="svg").decode()
    assert "3 images, 2 languages; 1 without coordinates not drawn" in svg
    assert svg == selection_map(points, title="t", fmt="svg").decode()  # deterministic
    assert selection_map(points, title="t", fmt="png").startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="format 'gif'"):
        selection_map(points, title="t", fmt="gif")


def test_a_single_upload_reads_its_exif_gps_too(db):
    from annotation.services.images import image_store
    from tests.annotation.geotagged import geotagged_jpeg

    image, created = image_store(key="one", data=geotagged_jpeg(*HYDERABAD[0]))
    assert created
    assert (image.country_code, image.region, image.continent) == ("IN", "Telangana", "Asia")
    assert image.latitude == pytest.approx(HYDERABAD[0][0])
