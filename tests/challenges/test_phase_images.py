"""A phase's images for its teams (issue 35, item 1): the manifest (CSV, JSON, API), each image by its
address and all of them as one zip, for members of the benchmark's teams and hosts only."""

from __future__ import annotations

import csv
import hashlib
import io
import zipfile

import pytest
from django.test import Client
from django.urls import reverse

from challenges.images import safe_file_name
from tests import factories as f


@pytest.fixture
def member_client(bench):
    client = Client()
    client.force_login(bench["member"])
    return client


def _stored(image) -> bytes:
    with image.file.open("rb") as fh:
        return fh.read()


def test_the_manifest_lists_every_image_of_the_phase_with_its_file(bench, member_client):
    test = bench["test"]
    images = sorted(bench["test_images"], key=lambda image: image.key)
    response = member_client.get(reverse("challenges:images-json", args=[test.pk]))
    assert response.status_code == 200
    rows = response.json()["images"]
    assert [row["image_id"] for row in rows] == [image.key for image in images]
    for row, image in zip(rows, images, strict=True):
        data = _stored(image)
        assert row["sha256"] == hashlib.sha256(data).hexdigest() == image.content_hash
        assert row["bytes"] == len(data)
        assert (row["width"], row["height"]) == (image.width, image.height)
        assert row["file_name"] == f"{image.key}.png"
        # Each image by its address: the same bytes.
        one = member_client.get(row["url"])
        assert one.status_code == 200 and b"".join(one.streaming_content) == data

    table = member_client.get(reverse("challenges:images-csv", args=[test.pk])).content.decode()
    lines = list(csv.DictReader(io.StringIO(table)))
    assert [line["image_id"] for line in lines] == [image.key for image in images]
    assert lines[0]["sha256"] == rows[0]["sha256"]


def test_the_zip_holds_every_image_under_its_manifest_name(bench, member_client):
    test = bench["test"]
    response = member_client.get(reverse("challenges:images-zip", args=[test.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert archive.testzip() is None
    expected = {f"{image.key}.png": _stored(image) for image in bench["test_images"]}
    assert {name: archive.read(name) for name in archive.namelist()} == expected


def test_the_api_gives_the_manifest_and_the_zips_address(bench):
    from challenges.services import api_token_rotate

    client = Client(HTTP_AUTHORIZATION=f"Token {api_token_rotate(user=bench['member'])}")
    answer = client.get(reverse("challenges-api:images", args=[bench["test"].pk])).json()
    assert answer["count"] == len(bench["test_images"]) == len(answer["images"])
    assert answer["zip"].endswith(reverse("challenges:images-zip", args=[bench["test"].pk]))
    assert {"image_id", "file_name", "bytes", "sha256", "width", "height", "url"} <= set(answer["images"][0])
    # The addresses it gives work with the token alone (no session).
    first = client.get(answer["images"][0]["url"])
    assert first.status_code == 200
    assert hashlib.sha256(b"".join(first.streaming_content)).hexdigest() == answer["images"][0]["sha256"]
    archive = zipfile.ZipFile(io.BytesIO(b"".join(client.get(answer["zip"]).streaming_content)))
    assert sorted(archive.namelist()) == sorted(row["file_name"] for row in answer["images"])
    assert Client().get(answer["zip"]).status_code in (401, 403)


def test_only_the_benchmarks_teams_and_hosts_get_the_images(bench):
    test = bench["test"]
    image = bench["test_images"][0]
    urls = [
        reverse("challenges:images-csv", args=[test.pk]),
        reverse("challenges:images-json", args=[test.pk]),
        reverse("challenges:images-zip", args=[test.pk]),
        reverse("challenges:image", args=[test.pk, image.key]),
    ]
    anonymous = Client()
    for url in urls:
        response = anonymous.get(url)
        assert response.status_code == 302 and "/login" in response["Location"]
    outsider = Client()
    outsider.force_login(f.UserFactory(username="olga"))  # in no team of the benchmark
    for url in [*urls, reverse("challenges-api:images", args=[test.pk])]:
        assert outsider.get(url).status_code == 404, url
    host = Client()
    host.force_login(f.UserFactory(username="hal", is_staff=True, is_superuser=True))
    for url in urls:
        assert host.get(url).status_code == 200, url


def test_an_image_of_another_phase_is_not_served_by_this_ones_address(bench, member_client):
    other = f.ImageFactory(key="999999")
    response = member_client.get(reverse("challenges:image", args=[bench["test"].pk, other.key]))
    assert response.status_code == 404
    base = reverse("challenges:image", args=[bench["test"].pk, "x"])[: -len("x")]
    for path in ("..%2F..%2Fetc%2Fpasswd", "%2E%2E", "100%00", ".hidden"):
        assert member_client.get(base + path).status_code == 404, path


def test_the_benchmark_page_links_the_images_for_a_member_only(bench, member_client):
    page = member_client.get(reverse("challenges:benchmark", args=[bench["benchmark"].slug])).content.decode()
    assert reverse("challenges:images-zip", args=[bench["test"].pk]) in page
    assert reverse("challenges:images-csv", args=[bench["val"].pk]) in page


@pytest.mark.parametrize(
    ("key", "stored", "name"),
    [
        ("000411001ff7dd4f", "images/ab/cd.jpg", "000411001ff7dd4f.jpg"),
        ("../../evil", "x.png", "_.._evil.png"),
        ("a/b\\c:d", "x.JPEG", "a_b_c_d.jpeg"),
        ("ok", "noext", "ok"),
    ],
)
def test_file_names_in_the_zip_cannot_leave_their_folder(key, stored, name):
    assert safe_file_name(key, stored) == name
