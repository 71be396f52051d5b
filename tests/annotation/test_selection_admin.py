"""Image selection in the admin: the Select images page (preview, store), the level table, the map and
the CSV exports, a caption campaign from a language's set, language areas; and who may reach what."""

from __future__ import annotations

import csv
import io

import pytest

from annotation.models import Campaign, ImageSelection, Item, LanguageArea, SelectedLanguage
from annotation.services.selection import image_selection_run
from tests import factories as f
from tests.annotation.geotagged import HYDERABAD, KOLKATA, MUNICH

ADD_URL = "/admin/annotation/imageselection/add/"


@pytest.fixture
def pool(db):
    """Telugu and Bengali with their regions; 3 photos in each region and 3 in Munich, each with a file
    and an English caption of the prompt system."""
    te = f.LanguageFactory(code="te", name="Telugu")
    bn = f.LanguageFactory(code="bn", name="Bengali")
    LanguageArea.objects.create(language=te, country_code="IN", region="Telangana")
    LanguageArea.objects.create(language=bn, country_code="IN", region="West Bengal")
    english = f.LanguageFactory(code="en", name="English")
    system = f.SystemFactory(name="prompt-sys")
    for prefix, ((lat, lon), country, region, _) in (("tg", HYDERABAD), ("wb", KOLKATA), ("mu", MUNICH)):
        for i in range(3):
            image = f.ImageFactory(
                key=f"{prefix}{i}", latitude=lat, longitude=lon, country_code=country, region=region
            )
            f.SystemCaptionFactory(system=system, language=english, image=image)
    return te, bn, system


def form(te, bn, **extra):
    return {
        "name": "indic-1",
        "languages": [te.pk, bn.pk],
        "per_language": 4,
        "seed": 3,
        "pool_query": "",
        "min_share": 5,
        **extra,
    }


@pytest.fixture
def stored(pool):
    report = image_selection_run(name="stored", language_codes=["te", "bn"], per_language=4, seed=3)
    return ImageSelection.objects.get(pk=report.selection_id)


def test_the_language_action_opens_the_select_page_with_those_languages(pm_client, pool):
    te, bn, _ = pool
    response = pm_client.post(
        "/admin/annotation/language/", {"action": "select_images", "_selected_action": [te.pk, bn.pk]}
    )
    assert response.status_code == 302
    assert response.url == f"{ADD_URL}?languages={bn.pk},{te.pk}"
    page = pm_client.get(response.url).content.decode()
    assert f'value="{te.pk}" id="id_languages_' in page
    assert page.count("checked") >= 2
    assert " style=" not in page and "<script>" not in page


def test_preview_shows_the_level_table_and_stores_nothing(pm_client, pool):
    te, bn, _ = pool
    response = pm_client.post(ADD_URL, form(te, bn, preview="on"))
    assert response.status_code == 200
    page = response.content.decode()
    assert "Preview: nothing stored" in page
    report = response.context["report"]
    assert [(r["language"], r["region"], r["country"]) for r in report.rows] == [
        ("bn", 3, 1),
        ("te", 2, 0),
    ]  # bn took a Telangana image at country level
    assert not ImageSelection.objects.exists()
    assert (
        response.context["form"].initial["seed"] == 3 and response.context["form"].initial["preview"] is False
    )


def test_selecting_stores_the_sets_and_shows_table_map_and_exports(pm_client, pool):
    te, bn, _ = pool
    response = pm_client.post(ADD_URL, form(te, bn), follow=True)
    selection = ImageSelection.objects.get(name="indic-1")
    assert response.redirect_chain[-1][0] == f"/admin/annotation/imageselection/{selection.pk}/change/"
    message = next(str(m) for m in response.context["messages"])
    assert message.startswith("Selected “indic-1”: 2 languages × 4 from a pool of 9 images, seed 3.")
    page = response.content.decode()
    assert '<table class="selection-levels">' in page
    assert "<td>Bengali (bn)</td><td>3</td><td>4</td><td>3</td><td>1</td>" in page
    assert f'src="/admin/annotation/imageselection/{selection.pk}/change/map/png/"' in page

    base = f"/admin/annotation/imageselection/{selection.pk}/change/"
    png = pm_client.get(base + "map/png/")
    assert png["Content-Type"] == "image/png" and png.content.startswith(b"\x89PNG")
    svg = pm_client.get(base + "map/svg/")
    assert svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content
    assert pm_client.get(base + "map/gif/").status_code == 404

    levels = list(csv.reader(io.StringIO(pm_client.get(base + "levels-csv/").content.decode())))
    assert levels[0] == [
        "order",
        "language",
        "pool",
        "target",
        "region",
        "country",
        "continent",
        "global",
        "missing",
        "seed",
    ]
    assert levels[1] == ["1", "bn", "3", "4", "3", "1", "0", "0", "0", "3"]
    images = list(csv.reader(io.StringIO(pm_client.get(base + "images-csv/").content.decode())))
    assert len(images) == 1 + 8
    assert sorted(row[3] for row in images[1:]) == ["country", "global", "global", *["region"] * 5]
    assert all(row[0] in ("bn", "te") for row in images[1:])


def test_bad_input_is_shown_on_the_page_and_nothing_stored(pm_client, pool):
    te, bn, _ = pool
    page = pm_client.post(ADD_URL, form(te, bn, pool_query="bogus")).content.decode()
    assert "“bogus” is not a term" in page
    page = pm_client.post(ADD_URL, form(te, bn, languages=[999999])).content.decode()
    assert "Select a valid choice" in page
    page = pm_client.post(ADD_URL, form(te, bn, per_language=0)).content.decode()
    assert "greater than or equal to 1" in page
    assert not ImageSelection.objects.exists()


def test_a_caption_campaign_from_a_languages_set(pm_client, pool, stored):
    _, _, system = pool
    telugu = SelectedLanguage.objects.get(selection=stored, language__code="te")
    page = pm_client.get(f"/admin/annotation/campaign/add/?from_selection={telugu.pk}")
    initial = page.context["form"].initial
    assert initial["name"] == "stored te" and initial["images"] == "keys"
    keys = initial["image_keys"].split("\n")
    assert sorted(keys) == sorted(telugu.images.values_list("image__key", flat=True))
    response = pm_client.post(
        "/admin/annotation/campaign/add/",
        {
            "name": initial["name"],
            "language": telugu.language.pk,
            "prompt_system": system.pk,
            "batch_size": 15,
            "replication": 2,
            "lease_minutes": 60,
            "images": "keys",
            "image_keys": initial["image_keys"],
            "images_of": "",
        },
    )
    assert response.status_code == 302
    campaign = Campaign.objects.get(name="stored te")
    assert campaign.fixed_images
    assert sorted(Item.objects.filter(campaign=campaign).values_list("image__key", flat=True)) == sorted(keys)


def test_language_areas_are_checked_against_the_geography(pm_client, pool):
    te, _, _ = pool
    url = "/admin/annotation/languagearea/add/"
    page = pm_client.post(
        url, {"language": te.pk, "country_code": "in", "region": "Telengana"}
    ).content.decode()
    assert "is not a first-level region of IN" in page and "Telangana" in page
    assert not LanguageArea.objects.filter(region="Telengana").exists()
    response = pm_client.post(url, {"language": te.pk, "country_code": "in", "region": "Andhra Pradesh"})
    assert response.status_code == 302
    assert LanguageArea.objects.filter(language=te, country_code="IN", region="Andhra Pradesh").exists()


# --- Access -------------------------------------------------------------------------------------


def selection_urls(selection) -> list[str]:
    base = f"/admin/annotation/imageselection/{selection.pk}/change/"
    return [base, base + "map/png/", base + "map/svg/", base + "images-csv/", base + "levels-csv/"]


def test_researchers_read_but_do_not_select(researcher_client, stored):
    for url in selection_urls(stored):
        assert researcher_client.get(url).status_code == 200, url
    assert researcher_client.get(ADD_URL).status_code == 403
    assert researcher_client.post(ADD_URL, {"name": "x"}).status_code == 403
    assert researcher_client.get("/admin/annotation/languagearea/add/").status_code == 403


def test_annotators_and_visitors_reach_nothing(client, annotator_client, stored):
    for url in [*selection_urls(stored), ADD_URL, "/admin/annotation/languagearea/"]:
        for who in (client, annotator_client):
            response = who.get(url)
            assert response.status_code in (302, 403), url
            if response.status_code == 302:
                assert "/login/" in response.url
            assert b"\x89PNG" not in response.content


def test_an_unknown_selection_is_404(pm_client, stored):
    assert (
        pm_client.get(f"/admin/annotation/imageselection/{stored.pk + 1}/change/map/png/").status_code == 404
    )
    assert (
        pm_client.get(f"/admin/annotation/imageselection/{stored.pk + 1}/change/levels-csv/").status_code
        == 404
    )
