"""Research data are never stored by a browser or a proxy: every answer under /api/, /reports/ and
/exports/ (found from the URLconf, so a new endpoint is covered), for every kind of account, method
and status (200, 302 to the login page, 400, 401, 403, 404, 405), carries ``Cache-Control: private,
no-store`` (RELIABILITY 13, 15: nobody sees what is not theirs, not even from a shared cache). The
schema and docs are no exception: they are fetched once per visit and a cached copy would outlive a
deploy. Answers with real data: tests/evaluation/test_api.py and test_exports.py."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.core.test_access import WRITE_METHODS, research_urls
from tests.factories import AnnotatorFactory, LanguageFactory, UserFactory

NO_STORE = "private, no-store"


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["anonymous", "annotator", "superuser"])
def test_every_research_url_answers_private_no_store(who):
    client = APIClient()
    if who == "annotator":
        client.force_login(AnnotatorFactory(languages=[LanguageFactory(code="de", name="German")]).user)
    elif who == "superuser":
        client.force_login(UserFactory(is_staff=True, is_superuser=True))
    statuses = set()
    for url in research_urls():
        for method in ("get", *WRITE_METHODS):
            response = getattr(client, method)(url)
            statuses.add(response.status_code)
            assert response.get("Cache-Control") == NO_STORE, (who, method, url, response.status_code)
    assert statuses  # the loop ran
    # An unknown address under /api/ and a missing slash (CommonMiddleware's redirect) too.
    for url in ("/api/no-such-endpoint/", "/api/languages"):
        assert client.get(url).get("Cache-Control") == NO_STORE, url


@pytest.mark.django_db
def test_pages_outside_research_keep_their_own_cache_rules():
    """The rule is for research data only: the login page keeps Django's never_cache header."""
    response = APIClient().get("/accounts/login/")
    assert response.status_code == 200
    assert response["Cache-Control"] != NO_STORE
