"""Item 10 of issue 9: the importers the commands have, reachable from the admin: upload, dry run
with the importer's line-numbered report, then Import."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.models import CaptioningSystem, Image, SystemCaption
from tests import factories as f

IMAGES_URL = "/admin/annotation/image/import/"
CAPTIONS_URL = "/admin/annotation/systemcaption/import/"


def png(name: str, color) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, f.png_bytes(color=color), content_type="image/png")


def token_of(page: str) -> str:
    return re.search(r'name="token" value="([^"]+)"', page).group(1)


def test_the_lists_link_to_the_imports(pm_client):
    assert IMAGES_URL in pm_client.get("/admin/annotation/image/").content.decode()
    assert CAPTIONS_URL in pm_client.get("/admin/annotation/systemcaption/").content.decode()


def test_many_image_files_at_once_dry_run_then_import(pm_client):
    form = pm_client.get(IMAGES_URL).content.decode()
    assert re.search(r'<input type="file" name="files" multiple', form)
    files = [png("cat.png", (200, 10, 10)), png("dog.png", (10, 200, 10)), png("owl.png", (10, 10, 200))]
    metadata = SimpleUploadedFile("meta.csv", b"key,country,license\ncat,DE,CC-BY\ndog,JP,CC0\nowl,EG,CC0\n")
    page = pm_client.post(IMAGES_URL, {"files": files, "metadata": metadata}).content.decode()
    assert "3 images: 3 would be created, 0 would be updated, 0 unchanged; 3 files would be stored" in page
    assert "Dry run: nothing was written." in page and not Image.objects.exists()
    page = pm_client.post(IMAGES_URL, {"token": token_of(page), "_confirm": "Import"}).content.decode()
    assert "3 images: 3 created, 0 updated, 0 unchanged; 3 files stored" in page
    assert sorted(Image.objects.values_list("key", "country")) == [
        ("cat", "DE"),
        ("dog", "JP"),
        ("owl", "EG"),
    ]
    assert all(image.has_file for image in Image.objects.all())
    # The same upload again changes nothing.
    again = [png("cat.png", (200, 10, 10)), png("dog.png", (10, 200, 10)), png("owl.png", (10, 10, 200))]
    page = pm_client.post(IMAGES_URL, {"files": again}).content.decode()
    assert "3 images: 0 would be created, 0 would be updated, 3 unchanged" in page


def test_a_bad_file_or_line_imports_nothing_and_is_named(pm_client):
    metadata = SimpleUploadedFile("meta.csv", b"key,latitude\ncat,10\ndog,95\n")
    page = pm_client.post(IMAGES_URL, {"files": [png("cat.png", (200, 10, 10))], "metadata": metadata})
    page = page.content.decode()
    assert "Nothing was imported." in page and 'name="token"' not in page
    assert re.search(r"<li>meta.csv line 3: [^<]*latitude", page)
    files = [
        png("cat.png", (200, 10, 10)),
        SimpleUploadedFile("evil.jpg", b"<svg xmlns='http://www.w3.org/2000/svg'></svg>"),
    ]
    page = pm_client.post(IMAGES_URL, {"files": files}).content.decode()
    assert "Nothing was imported." in page and re.search(r"<li>[^<]*evil.jpg[^<]*</li>", page)
    assert not Image.objects.exists()


def test_a_token_from_another_session_imports_nothing(pm_client, manager):
    page = pm_client.post(IMAGES_URL, {"files": [png("cat.png", (1, 2, 3))]}).content.decode()
    token = token_of(page)
    other = f.RoleUserFactory(username="pm2", role="Project managers")
    client = Client()
    client.force_login(other)
    response = client.post(IMAGES_URL, {"token": token, "_confirm": "Import"}, follow=True)
    assert "no longer waiting" in response.content.decode() and not Image.objects.exists()
    # Cancel throws the staged files away.
    response = pm_client.post(IMAGES_URL, {"token": token, "_cancel": "Cancel"}, follow=True)
    assert "Import cancelled" in response.content.decode()
    response = pm_client.post(IMAGES_URL, {"token": token, "_confirm": "Import"}, follow=True)
    assert "no longer waiting" in response.content.decode() and not Image.objects.exists()


def test_system_captions_from_a_coco_results_file(pm_client, german):
    f.LanguageFactory(code="en", name="English")
    for key in ("101", "102"):
        f.ImageFactory(key=key)
    results = [{"image_id": 101, "caption": "A cat."}, {"image_id": 102, "caption": "A dog."}]
    upload = SimpleUploadedFile("results.json", json.dumps(results).encode())
    english = f.LanguageFactory._meta.model.objects.get(code="en")
    data = {"system": "pali", "language": english.pk, "file": upload}
    page = pm_client.post(CAPTIONS_URL, data).content.decode()
    assert "2 system captions: 2 would be created" in page and not SystemCaption.objects.exists()
    assert not CaptioningSystem.objects.filter(name="pali").exists()
    page = pm_client.post(CAPTIONS_URL, {"token": token_of(page), "_confirm": "Import"}).content.decode()
    assert "2 system captions: 2 created" in page
    assert sorted(SystemCaption.objects.values_list("image__key", "text")) == [
        ("101", "A cat."),
        ("102", "A dog."),
    ]


def test_system_captions_bad_line_names_it_and_imports_nothing(pm_client, german):
    f.ImageFactory(key="a1")
    lines = '{"image/key": "a1", "de": {"caption": ["Eine Katze."]}}\n{"image/key": "zz", "de": {"caption": [""]}}\n'
    upload = SimpleUploadedFile("captions.jsonl", lines.encode())
    page = pm_client.post(CAPTIONS_URL, {"system": "pali", "file": upload}).content.decode()
    assert "Nothing was imported." in page and "captions.jsonl line 2" in page
    assert not SystemCaption.objects.exists()


@pytest.mark.parametrize("url", [IMAGES_URL, CAPTIONS_URL])
def test_researchers_cannot_import(researcher_client, url):
    assert researcher_client.get(url).status_code == 403
