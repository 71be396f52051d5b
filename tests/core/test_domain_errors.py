"""A domain error a page's view lets through becomes an error page (core.errors.DomainErrorMiddleware),
never a 500: a NotFound is the site's ordinary 404 page, anything else shows its message under its own
status; neither is cached."""

from __future__ import annotations

import pytest

from annotation.assignment.engine import batch_request

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.core.domain_error_urls")]


def test_a_conflict_shows_its_message_escaped_under_409(client):
    response = client.get("/test-conflict/")
    assert response.status_code == 409
    body = response.content.decode()
    assert "Not possible" in body
    assert "The campaign “Tiles &lt;b&gt;” is not open." in body
    assert "no-store" in response["Cache-Control"]


def test_not_found_is_the_ordinary_404_page_and_says_nothing_more(client):
    response = client.get("/test-missing/")
    assert response.status_code == 404
    body = response.content.decode()
    assert "Nothing here" in body
    assert "No such batch." not in body
    assert "no-store" in response["Cache-Control"]


def test_another_annotators_batch_is_the_same_404_page_as_no_batch(
    annotator_client, campaign, other_annotator
):
    batch, _ = batch_request(annotator=other_annotator, campaign_id=campaign.pk)
    theirs = annotator_client.get(f"/work/batch/{batch.pk}/")
    nobody = annotator_client.get(f"/work/batch/{batch.pk + 1000}/")
    assert theirs.status_code == nobody.status_code == 404
    assert "Nothing here" in theirs.content.decode()
    # The same page but for per-response tokens (CSP nonce): compare the error section itself.
    assert _error_section(theirs) == _error_section(nobody)


def _error_section(response) -> str:
    body = response.content.decode()
    return body[body.index('id="error-page"') : body.index("</section>")]
