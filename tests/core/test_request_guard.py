"""A query parameter with NUL is a clear 400 on every page (an admin list filter with one was a 500),
and every API error is JSON in the API's one shape, whatever the body's size or the path (a 50 MB body
to an annotator endpoint answered Django's HTML 400)."""

from __future__ import annotations

import json

import pytest
from django.contrib import admin
from django.test import Client

from tests import factories as f

pytestmark = pytest.mark.django_db

HOSTILE_QUERIES = ["key=%00", "state__exact=%00", "q=%00", "%00=1", "o=1%00", "p=%00"]


def changelists():
    return [f"/admin/{m._meta.app_label}/{m._meta.model_name}/" for m in admin.site._registry]


@pytest.mark.parametrize("role_client", ["pm_client", "researcher_client"])
def test_nul_in_any_query_parameter_of_any_admin_list_is_a_400(request, role_client):
    client = request.getfixturevalue(role_client)
    client.raise_request_exception = False
    answers = {}
    for url in changelists():
        for query in HOSTILE_QUERIES:
            answers[f"{url}?{query}"] = client.get(f"{url}?{query}").status_code
    assert answers and {url: s for url, s in answers.items() if s != 400} == {}
    page = client.get("/admin/annotation/image/?key=%00").content.decode()
    assert "A query parameter contains a NUL character; nothing was changed." in page


def test_nul_on_annotator_pages_and_the_api_is_a_400_in_their_own_shape(annotator_client, researcher_client):
    page = annotator_client.get("/work/?x=%00")
    assert page.status_code == 400 and "NUL character" in page.content.decode()
    api = researcher_client.get("/api/campaigns/?language=de%00")
    assert api.status_code == 400 and api.json() == {
        "error": "invalid",
        "message": "A query parameter contains a NUL character; nothing was changed.",
    }


@pytest.mark.parametrize("size", [300_000, 5_000_000, 50_000_000])
@pytest.mark.parametrize("content_type", ["application/json", "application/x-www-form-urlencoded"])
def test_an_over_large_body_to_an_annotator_endpoint_is_a_json_413(annotator, size, content_type):
    client = Client(enforce_csrf_checks=True)  # as a browser: the CSRF check reads form bodies
    client.force_login(annotator.user)
    client.get("/work/")
    token = client.cookies["csrftoken"].value
    body = b'{"text": "' + b"x" * size + b'"}'
    response = client.post(
        "/work/api/batch/1/draft/", data=body, content_type=content_type, HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 413 and response["Content-Type"] == "application/json"
    assert json.loads(response.content)["error"] == "too_large"


def test_an_unknown_api_path_is_a_json_404_and_an_unknown_page_the_site_s_404(researcher_client):
    api = researcher_client.get("/api/no-such-thing/")
    assert api.status_code == 404 and api.json() == {"error": "not_found", "message": "Not found."}
    page = researcher_client.get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


def test_a_body_over_django_s_upload_limit_on_a_page_keeps_the_site_s_400(pm_client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    pm_client.raise_request_exception = False
    response = pm_client.post("/admin/annotation/language/add/", {"code": "x" * 5000})
    assert response.status_code == 400 and response["Content-Type"].startswith("text/html")
    assert f.LanguageFactory._meta.model.objects.filter(code__startswith="xxx").count() == 0
