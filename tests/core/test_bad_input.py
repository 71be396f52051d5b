"""Bad input to the JSON endpoints gets a clear 400 (or 413) and changes nothing (issue 9, item 14).

Every endpoint the annotator pages post to is enumerated from ``annotation.urls``, so a new one is
covered without being listed here; the research API's write and its id parameters are checked too.
"""

from __future__ import annotations

import json

import pytest
from django.urls import URLPattern, reverse

from annotation import urls as annotation_urls
from annotation.assignment.engine import batch_request
from annotation.models import CaptionDraft, Rating, SxsJudgment
from core.bounds import BIGINT_MAX, INT_MAX
from core.parsers import json_depth
from evaluation.models import MetricRun
from tests import factories as f

ANNOTATOR_POSTS = [
    p.name
    for p in annotation_urls.urlpatterns
    if isinstance(p, URLPattern) and hasattr(getattr(p.callback, "view_class", None), "post")
]


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def stored() -> tuple[int, ...]:
    return (Rating.objects.count(), CaptionDraft.objects.count(), SxsJudgment.objects.count())


@pytest.fixture
def batch(annotator_client, annotator):
    campaign = f.open_caption_campaign(language=annotator.skills.first().language)
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    return batch


def post(client, name, batch, body: str):
    url = reverse(f"annotation:{name}", args=[batch.pk])
    return client.post(url, body, content_type="application/json")


def test_every_annotator_endpoint_is_enumerated():
    assert set(ANNOTATOR_POSTS) >= {"api_rating", "api_draft", "api_submit", "api_sxs_judgment"}


@pytest.mark.parametrize("name", ANNOTATOR_POSTS)
def test_a_deeply_nested_body_is_a_400_on_every_endpoint(annotator_client, batch, name):
    before = stored()
    response = post(annotator_client, name, batch, deep(3000))
    assert response.status_code == 400, response.content
    assert "nested deeper than 32 levels" in response.json()["message"]
    assert stored() == before


@pytest.mark.parametrize("name", ANNOTATOR_POSTS)
def test_an_oversized_body_is_a_413_on_every_endpoint(annotator_client, batch, name):
    before = stored()
    body = json.dumps({"text": "x" * (300 * 1024)})
    response = post(annotator_client, name, batch, body)
    assert response.status_code == 413
    assert "larger than 262,144 bytes" in response.json()["message"]
    assert stored() == before


@pytest.mark.parametrize("name", ANNOTATOR_POSTS)
def test_nan_and_broken_json_are_400(annotator_client, batch, name):
    for body in ('{"seconds": NaN}', '{"seconds": Infinity}', "{oops", '{"a": "\\ud800"'):
        response = post(annotator_client, name, batch, body)
        assert response.status_code == 400, (body, response.content)
        assert response.json()["message"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("base_revision", 2**31, f"base_revision: Ensure this value is less than or equal to {INT_MAX}."),
        ("base_revision", 2**40, "base_revision: Ensure this value is less than or equal to"),
        ("base_revision", -1, "base_revision: Ensure this value is greater than or equal to 0."),
        ("seconds", 1e308, "seconds: Ensure this value is less than or equal to 604800."),
        ("seconds", -5, "seconds: Ensure this value is greater than or equal to 0."),
        ("assignment", 2**70, f"assignment: Ensure this value is less than or equal to {BIGINT_MAX}."),
        ("assignment", 0, "assignment: Ensure this value is greater than or equal to 1."),
    ],
)
def test_numbers_beyond_their_columns_are_400_and_nothing_is_written(
    annotator_client, batch, field, value, message
):
    """The issue's case: a draft with revision 2^31 answered 500 DataError on PostgreSQL."""
    assignment = batch.assignments.first()
    draft = {
        "assignment": assignment.pk,
        "text": "Ein Hund.",
        "base_revision": 0,
        "seconds": 3.0,
        field: value,
    }
    before = stored()
    response = post(annotator_client, "api_draft", batch, json.dumps(draft))
    assert response.status_code == 400, response.content
    assert message in response.json()["message"]
    assert stored() == before
    rating = {"assignment": assignment.pk, "value": "good", "seconds": 1.0}
    if field in rating:
        response = post(annotator_client, "api_rating", batch, json.dumps({**rating, field: value}))
        assert response.status_code == 400 and message in response.json()["message"]
        assert stored() == before


def test_a_normal_draft_still_saves(annotator_client, batch):
    for a in batch.assignments.all():
        post(annotator_client, "api_rating", batch, json.dumps({"assignment": a.pk, "value": "good"}))
    assert post(annotator_client, "api_open_writing", batch, json.dumps({})).status_code == 200
    assignment = batch.assignments.first()
    body = {"assignment": assignment.pk, "text": "Ein Hund.", "base_revision": 0, "seconds": 3.0}
    response = post(annotator_client, "api_draft", batch, json.dumps(body))
    assert response.status_code == 200, response.content
    assert CaptionDraft.objects.get(assignment=assignment).text == "Ein Hund."
    # The submit's per-image entries are bounded the same way.
    entries = [
        {"assignment": a.pk, "text": "Ein Hund.", "base_revision": 2**31} for a in batch.assignments.all()
    ]
    response = post(
        annotator_client, "api_submit", batch, json.dumps({"submit_key": "k" * 16, "captions": entries})
    )
    assert response.status_code == 400 and "base_revision" in response.json()["message"]


def test_research_api_bounds(researcher_client, db):
    before = MetricRun.objects.count()
    url = reverse("api:metric-run-list")
    response = researcher_client.post(url, deep(3000), content_type="application/json")
    assert response.status_code == 400 and "nested deeper" in response.json()["message"]
    payload = {"language": "de", "systems": ["a"], "reference_set": 2**70, "metrics": ["text"]}
    response = researcher_client.post(url, json.dumps(payload), content_type="application/json")
    assert response.status_code == 400 and "reference_set" in response.json()["message"]
    assert MetricRun.objects.count() == before
    huge = str(10**30)
    for path, params in [
        ("api:correlations", {"runs": huge}),
        ("api:caption-list", {"campaign": huge}),
        ("api:correlations", {"runs": "1", "seed": str(2**64)}),
    ]:
        response = researcher_client.get(reverse(path), params)
        assert response.status_code == 400, (path, params, response.content)


def test_json_depth_ignores_brackets_in_strings():
    assert json_depth(b'{"a": "[[[[{{{{", "b": [1, [2]]}') == 3
    assert json_depth(b'"\\"[[["') == 0
    assert json_depth(deep(5).encode()) == 5


def test_the_bracket_count_bound_lets_shallow_bodies_through_and_stops_deep_ones(settings):
    from core.parsers import BoundedJSONParser

    def parse(body: bytes):
        import io

        return BoundedJSONParser().parse(io.BytesIO(body))

    # More brackets than the limit, all inside a string: the scan runs and finds depth 1.
    assert parse(json.dumps({"text": "[" * 40}).encode()) == {"text": "[" * 40}
    # Exactly the limit deep (no scan needed) parses; one more level is refused.
    assert parse(deep(32).encode()) is not None
    with pytest.raises(Exception, match="nested deeper than 32 levels"):
        parse(deep(33).encode())
