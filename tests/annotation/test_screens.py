"""The annotator screens as an annotator meets them: dashboard, screen 1, screen 2, submit."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.models import Batch, BatchStage, Rating, WrittenCaption
from tests import factories as f

pytestmark = pytest.mark.django_db


def start_batch(client, campaign) -> Batch:
    response = client.post(reverse("annotation:campaign_work", args=[campaign.pk]))
    assert response.status_code == 302
    return Batch.objects.get(pk=int(re.search(r"/batch/(\d+)/", response["Location"]).group(1)))


def rate_all(client, batch, value="good"):
    for a in batch.assignments.all():
        r = client.post(
            reverse("annotation:api_rating", args=[batch.pk]),
            {"assignment": a.pk, "value": value, "seconds": 2.5},
            content_type="application/json",
        )
        assert r.status_code == 200, r.content


def open_writing(client, batch):
    r = client.post(
        reverse("annotation:api_open_writing", args=[batch.pk]), {}, content_type="application/json"
    )
    assert r.status_code == 200, r.content
    return r


def write_all(client, batch, text="Ein Hund läuft am Strand entlang"):
    for i, a in enumerate(batch.assignments.order_by("position")):
        r = client.post(
            reverse("annotation:api_draft", args=[batch.pk]),
            {"assignment": a.pk, "text": f"{text} {i}", "revision": 1},
            content_type="application/json",
        )
        assert r.status_code == 200, r.content


def test_dashboard_lists_open_campaigns_in_my_languages(annotator_client, campaign):
    closed = f.open_caption_campaign(images=2, language=campaign.language)
    closed.state = "closed"
    closed.save()
    other_language = f.open_caption_campaign(images=2, language=f.LanguageFactory(code="fr", name="French"))
    page = annotator_client.get(reverse("annotation:dashboard")).content.decode()
    assert campaign.name in page
    assert closed.name not in page
    assert other_language.name not in page
    assert "Start a batch" in page


def test_screen1_shows_images_with_english_captions_and_scale(annotator_client, campaign):
    batch = start_batch(annotator_client, campaign)
    page = annotator_client.get(reverse("annotation:screen1", args=[batch.pk])).content.decode()
    for a in batch.assignments.select_related("item__prompt_caption"):
        assert a.item.prompt_caption.text in page
    for label in ["EXCELLENT", "GOOD", "MEDIUM", "BAD", "NOT-ENOUGH-INFO"]:
        assert label in page
    assert "How to rate" in page  # the guidelines are in the page, one click away
    assert f"0</span> / {campaign.batch_size} rated" in page


def test_going_on_needs_every_image_rated(annotator_client, campaign):
    batch = start_batch(annotator_client, campaign)
    first = batch.assignments.order_by("position").first()
    annotator_client.post(
        reverse("annotation:api_rating", args=[batch.pk]),
        {"assignment": first.pk, "value": "bad"},
        content_type="application/json",
    )
    r = annotator_client.post(
        reverse("annotation:api_open_writing", args=[batch.pk]), {}, content_type="application/json"
    )
    assert r.status_code == 400
    assert "still unrated: 2, 3" in r.json()["message"]
    batch.refresh_from_db()
    assert batch.stage == BatchStage.RATING


def test_screen2_has_no_english_caption_anywhere(annotator_client, campaign):
    batch = start_batch(annotator_client, campaign)
    rate_all(annotator_client, batch)
    open_writing(annotator_client, batch)
    page = annotator_client.get(reverse("annotation:screen2", args=[batch.pk])).content.decode()
    for a in batch.assignments.select_related("item__prompt_caption"):
        assert a.item.prompt_caption.text not in page
        assert a.item.prompt_caption.text.split(" number")[0] not in page
    assert 'lang="de"' in page and 'dir="ltr"' in page
    assert "How to write" in page


def test_rtl_language_sets_dir(client, db):
    arabic = f.LanguageFactory(code="ar", name="Arabic", direction="rtl")
    campaign = f.open_caption_campaign(images=3, language=arabic)
    annotator = f.AnnotatorFactory(languages=[arabic])
    client.force_login(annotator.user)
    batch = start_batch(client, campaign)
    rate_all(client, batch)
    open_writing(client, batch)
    page = client.get(reverse("annotation:screen2", args=[batch.pk])).content.decode()
    assert 'lang="ar" dir="rtl"' in page


def test_screen1_is_closed_once_screen2_opened(annotator_client, campaign):
    batch = start_batch(annotator_client, campaign)
    rate_all(annotator_client, batch, value="good")
    open_writing(annotator_client, batch)
    r = annotator_client.get(reverse("annotation:screen1", args=[batch.pk]))
    assert r.status_code == 302 and r["Location"].endswith(f"/batch/{batch.pk}/")
    a = batch.assignments.first()
    r = annotator_client.post(
        reverse("annotation:api_rating", args=[batch.pk]),
        {"assignment": a.pk, "value": "bad"},
        content_type="application/json",
    )
    assert r.status_code == 409
    assert "can no longer change" in r.json()["message"]
    assert Rating.objects.get(assignment=a).value == "good"


def test_full_batch_is_stored_with_timings(annotator_client, campaign, annotator):
    batch = start_batch(annotator_client, campaign)
    rate_all(annotator_client, batch)
    annotator_client.post(
        reverse("annotation:api_open_writing", args=[batch.pk]),
        {"rating_seconds": 41.5},
        content_type="application/json",
    )
    write_all(annotator_client, batch)
    r = annotator_client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        {"submit_key": "k" * 16, "writing_seconds": 120},
        content_type="application/json",
    )
    assert r.status_code == 200, r.content
    batch.refresh_from_db()
    assert batch.stage == BatchStage.SUBMITTED and not batch.is_late
    assert batch.rating_seconds == 41.5 and batch.writing_seconds == 120
    captions = WrittenCaption.objects.filter(assignment__batch=batch)
    assert captions.count() == campaign.batch_size
    assert {c.annotator_id for c in captions} == {annotator.pk}
    assert Rating.objects.filter(assignment__batch=batch, seconds=2.5).count() == campaign.batch_size
    page = annotator_client.get(reverse("annotation:batch", args=[batch.pk])).content.decode()
    assert "Batch submitted" in page


def test_empty_caption_and_copied_english_caption_are_refused(annotator_client, campaign):
    batch = start_batch(annotator_client, campaign)
    rate_all(annotator_client, batch)
    open_writing(annotator_client, batch)
    assignments = list(batch.assignments.select_related("item__prompt_caption").order_by("position"))
    english = assignments[0].item.prompt_caption.text
    texts = [f"  {english.upper()}!  ", "   ", "Ein Hund"]
    for a, text in zip(assignments, texts):
        annotator_client.post(
            reverse("annotation:api_draft", args=[batch.pk]),
            {"assignment": a.pk, "text": text, "revision": 1},
            content_type="application/json",
        )
    r = annotator_client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        {"submit_key": "x" * 16},
        content_type="application/json",
    )
    assert r.status_code == 400
    details = r.json()["details"]
    assert "repeats the English caption" in details[str(assignments[0].pk)]["message"]
    assert details[str(assignments[1].pk)] == {"position": 2, "message": "Write a caption for this image."}
    assert str(assignments[2].pk) not in details
    assert WrittenCaption.objects.count() == 0


def test_returning_annotator_gets_their_open_batch_back(annotator_client, campaign):
    first = start_batch(annotator_client, campaign)
    again = start_batch(annotator_client, campaign)
    assert first.pk == again.pk
    page = annotator_client.get(reverse("annotation:dashboard")).content.decode()
    assert "Continue your batch" in page
