"""Access and bad-input cases 13-16 and 20 of RELIABILITY.md for the annotator screens."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client, override_settings
from django.urls import reverse

from annotation.assignment.engine import batch_request
from annotation.models import Batch, BatchStage, CaptionDraft, Rating
from annotation.services import work
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def others_batch(campaign, other_annotator):
    """Otto's batch, on screen 2, with a draft: the thing Anna must not reach."""
    batch, _ = batch_request(annotator=other_annotator, campaign_id=campaign.pk)
    for a in batch.assignments.all():
        work.rating_save(annotator=other_annotator, batch_id=batch.pk, assignment_id=a.pk, value="good")
    work.writing_open(annotator=other_annotator, batch_id=batch.pk)
    a = batch.assignments.first()
    work.draft_save(
        annotator=other_annotator,
        batch_id=batch.pk,
        assignment_id=a.pk,
        text="Ottos Entwurf",
        base_revision=0,
    )
    return batch


def batch_urls(batch_id: int) -> list[tuple[str, str]]:
    return [
        ("get", reverse("annotation:batch", args=[batch_id])),
        ("get", reverse("annotation:screen1", args=[batch_id])),
        ("get", reverse("annotation:screen2", args=[batch_id])),
        ("get", reverse("annotation:api_state", args=[batch_id])),
        ("post", reverse("annotation:api_rating", args=[batch_id])),
        ("post", reverse("annotation:api_open_writing", args=[batch_id])),
        ("post", reverse("annotation:api_draft", args=[batch_id])),
        ("post", reverse("annotation:api_submit", args=[batch_id])),
    ]


def test_other_annotators_batch_is_404_everywhere_and_unchanged(annotator_client, others_batch):
    a = others_batch.assignments.first()
    payload = {
        "assignment": a.pk,
        "value": "bad",
        "text": "hijacked",
        "base_revision": 99,
        "submit_key": "z" * 16,
    }
    for method, url in batch_urls(others_batch.pk):
        if method == "get":
            response = annotator_client.get(url)
        else:
            response = annotator_client.post(url, payload, content_type="application/json")
        assert response.status_code == 404, url
        assert b"Ottos Entwurf" not in response.content
    others_batch.refresh_from_db()
    assert others_batch.stage == BatchStage.WRITING
    assert CaptionDraft.objects.get(assignment=a).text == "Ottos Entwurf"
    assert Rating.objects.get(assignment=a).value == "good"


def test_sequential_batch_id_probing_finds_nothing(annotator_client, others_batch):
    highest = Batch.objects.order_by("-pk").first().pk
    for batch_id in range(1, highest + 5):
        assert annotator_client.get(reverse("annotation:screen2", args=[batch_id])).status_code == 404


def test_other_annotators_assignment_inside_my_batch_url_is_404(
    annotator_client, annotator, campaign, others_batch
):
    mine, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    theirs = others_batch.assignments.first()
    r = annotator_client.post(
        reverse("annotation:api_rating", args=[mine.pk]),
        {"assignment": theirs.pk, "value": "bad"},
        content_type="application/json",
    )
    assert r.status_code == 404
    assert Rating.objects.get(assignment=theirs).value == "good"


def test_images_are_visible_only_to_staff_and_their_annotators(client, annotator, other_annotator, campaign):
    batch, _ = batch_request(annotator=other_annotator, campaign_id=campaign.pk)
    image_id = batch.assignments.first().item.image_id
    url = reverse("annotation:image", args=[image_id])
    client.force_login(annotator.user)
    assert client.get(url).status_code == 404
    client.force_login(other_annotator.user)
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    client.force_login(f.UserFactory(is_staff=True))
    assert client.get(url).status_code == 200


def test_client_cannot_set_annotator_state_or_item(annotator_client, annotator, other_annotator, campaign):
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    a = batch.assignments.first()
    r = annotator_client.post(
        reverse("annotation:api_rating", args=[batch.pk]),
        {
            "assignment": a.pk,
            "value": "good",
            "annotator": other_annotator.pk,
            "state": "submitted",
            "item": 1,
        },
        content_type="application/json",
    )
    assert r.status_code == 200
    a.refresh_from_db()
    assert a.annotator_id == annotator.pk and a.state == "live"
    batch.refresh_from_db()
    assert batch.stage == BatchStage.RATING


def test_non_annotators_reach_no_annotation_page(client, campaign):
    staff = f.UserFactory(is_staff=True)
    client.force_login(staff)
    assert client.get(reverse("annotation:dashboard")).status_code == 403
    assert client.post(reverse("annotation:campaign_work", args=[campaign.pk])).status_code == 403
    r = client.post(
        reverse("annotation:api_rating", args=[1]),
        {"assignment": 1, "value": "good"},
        content_type="application/json",
    )
    assert r.status_code == 403


def test_anonymous_is_sent_to_login(client, campaign):
    r = client.get(reverse("annotation:dashboard"))
    assert r.status_code == 302 and "/accounts/login/" in r["Location"]
    r = client.post(reverse("annotation:api_draft", args=[1]), {}, content_type="application/json")
    assert r.status_code == 403


def test_annotators_do_not_reach_the_admin(annotator_client):
    r = annotator_client.get("/admin/")
    assert r.status_code == 302 and "/admin/login/" in r["Location"]


def test_csrf_is_enforced_on_session_writes(annotator, campaign):
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator.user)
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    a = batch.assignments.first()
    r = client.post(
        reverse("annotation:api_rating", args=[batch.pk]),
        {"assignment": a.pk, "value": "bad"},
        content_type="application/json",
    )
    assert r.status_code == 403
    assert not Rating.objects.filter(assignment=a).exists()
    r = client.post(reverse("annotation:campaign_work", args=[campaign.pk]))
    assert r.status_code == 403


@override_settings(LOGIN_RATE_LIMIT="3/m")
def test_login_attempts_are_rate_limited(client, annotator):
    cache.clear()
    url = reverse("login")
    for _ in range(3):
        r = client.post(url, {"username": "anna", "password": "wrong"})
        assert r.status_code == 200
    r = client.post(url, {"username": "anna", "password": "pw-for-tests-only"})
    assert r.status_code == 429
    assert b"Too many login attempts" in r.content
    cache.clear()
    r = client.post(url, {"username": "anna", "password": "pw-for-tests-only"})
    assert r.status_code == 302


def test_markup_in_captions_is_escaped_and_csp_is_sent(client, german):
    campaign = f.open_caption_campaign(images=3, language=german)
    item = campaign.items.first()
    item.prompt_caption.text = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    item.prompt_caption.save()
    campaign.name = "<b>bold</b> campaign"
    campaign.save()
    annotator = f.AnnotatorFactory(languages=[german])
    client.force_login(annotator.user)
    dashboard = client.get(reverse("annotation:dashboard"))
    assert b"<b>bold</b>" not in dashboard.content and b"&lt;b&gt;bold&lt;/b&gt;" in dashboard.content
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    page = client.get(reverse("annotation:screen1", args=[batch.pk]))
    assert b"<script>alert" not in page.content
    assert b"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page.content
    csp = page["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp


def test_caption_drafts_with_markup_come_back_escaped(annotator_client, annotator, campaign):
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    for a in batch.assignments.all():
        work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="good")
    work.writing_open(annotator=annotator, batch_id=batch.pk)
    a = batch.assignments.first()
    work.draft_save(
        annotator=annotator,
        batch_id=batch.pk,
        assignment_id=a.pk,
        text="</textarea><script>x()</script>",
        base_revision=0,
    )
    page = annotator_client.get(reverse("annotation:screen2", args=[batch.pk])).content
    assert b"</textarea><script>" not in page
    assert b"&lt;/textarea&gt;&lt;script&gt;x()&lt;/script&gt;" in page
