"""The research API's image selections: the per-language level table and every image with its level;
who may read them (RELIABILITY 13, 15)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import ImageSelection, LanguageArea
from annotation.services.selection import image_selection_run
from tests import factories as f
from tests.annotation.geotagged import HYDERABAD, MUNICH


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def selection(db):
    te = f.LanguageFactory(code="te", name="Telugu")
    f.LanguageFactory(code="de", name="German")
    LanguageArea.objects.create(language=te, country_code="IN", region="Telangana")
    for prefix, ((lat, lon), country, region, _) in (("tg", HYDERABAD), ("mu", MUNICH)):
        for i in range(3):
            f.ImageFactory(
                key=f"{prefix}{i}", latitude=lat, longitude=lon, country_code=country, region=region
            )
    f.ImageFactory(key="nowhere")
    report = image_selection_run(name="api-sel", language_codes=["te", "de"], per_language=3, seed=2)
    return ImageSelection.objects.get(pk=report.selection_id)


def urls(selection) -> list[str]:
    return [reverse("api:image-selection-list"), reverse("api:image-selection-detail", args=[selection.pk])]


def test_the_list_gives_the_level_table(selection, researcher):
    data = api(researcher).get(reverse("api:image-selection-list")).json()
    (row,) = data["results"]
    assert (row["name"], row["seed"], row["per_language"], row["pool_size"]) == ("api-sel", 2, 3, 7)
    assert row["languages"] == [
        {"language": "de", "order": 1, "pool": 3, "target": 3, "region": 3, "country": 0, "continent": 0, "global": 0, "missing": 0},
        {"language": "te", "order": 2, "pool": 3, "target": 3, "region": 3, "country": 0, "continent": 0, "global": 0, "missing": 0},
    ]  # fmt: skip


def test_the_detail_lists_every_image_with_its_level(selection, manager):
    data = api(manager).get(reverse("api:image-selection-detail", args=[selection.pk])).json()
    assert len(data["images"]) == 6
    telugu = [image for image in data["images"] if image["language"] == "te"]
    assert data["images"][0]["language"] == "de"  # equal pools: served in code order
    assert {image["level"] for image in telugu} == {"region"}
    assert sorted(image["key"] for image in telugu) == ["tg0", "tg1", "tg2"]
    assert (telugu[0]["country_code"], telugu[0]["region"]) == ("IN", "Telangana")


def test_filters_and_bad_parameters(selection, researcher):
    client = api(researcher)
    assert client.get(reverse("api:image-selection-list") + "?language=te").json()["count"] == 1
    assert client.get(reverse("api:image-selection-list") + "?language=fr").json()["count"] == 0
    assert client.get(reverse("api:image-selection-list") + "?colour=red").status_code == 400
    assert client.get(reverse("api:image-selection-detail", args=[selection.pk + 1])).status_code == 404


def test_who_may_read(selection, annotator):
    for url in urls(selection):
        assert api().get(url).status_code == 401, url
        assert api(annotator.user).get(url).status_code == 403, url
        for method in ("post", "put", "patch", "delete"):
            assert getattr(api(annotator.user), method)(url, {}, format="json").status_code == 403


def test_researchers_write_nothing(selection, researcher):
    for url in urls(selection):
        for method in ("post", "put", "patch", "delete"):
            assert getattr(api(researcher), method)(url, {}, format="json").status_code == 405, (method, url)
    assert ImageSelection.objects.count() == 1
