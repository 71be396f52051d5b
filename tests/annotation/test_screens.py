"""The annotator screens as an annotator meets them: dashboard, screen 1, screen 2, submit."""

from __future__ import annotations

import re
from pathlib import Path

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
            {"assignment": a.pk, "text": f"{text} {i}", "base_revision": 0},
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
    assert f"0</span> / {campaign.batch_size}</bdi> rated" in page


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
            {"assignment": a.pk, "text": text, "base_revision": 0},
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


# --- The scale on the pages comes from core.scales ------------------------------------------------

BUTTON = re.compile(
    r'class="choice" data-value="([^"]*)" data-key="([^"]*)"[^>]*><kbd>([^<]*)</kbd> ([^<]*)</button>'
)


def first_item_buttons(page: str, n: int) -> list[tuple[str, str, str, str]]:
    return BUTTON.findall(page)[:n]


def test_screen1_buttons_and_keys_are_the_rating_scale_of_core_scales(annotator_client, campaign):
    from core.scales import RATING

    batch = start_batch(annotator_client, campaign)
    page = annotator_client.get(reverse("annotation:screen1", args=[batch.pk])).content.decode()
    assert len(BUTTON.findall(page)) == len(RATING) * campaign.batch_size
    assert first_item_buttons(page, len(RATING)) == [(p.code, p.key, p.key, p.label) for p in RATING]
    intro = re.search(r'<p class="intro">(.*?)</p>', page, re.S).group(1)
    assert ", ".join(f"<kbd>{p.key}</kbd> {p.label}" for p in RATING) in intro
    # One script drives every item list; the URLs it calls come from the page.
    assert 'src="/static/js/items.js"' in page
    assert f'data-save-url="{reverse("annotation:api_rating", args=[batch.pk])}"' in page
    assert f'data-submit-url="{reverse("annotation:api_open_writing", args=[batch.pk])}"' in page
    assert 'data-seconds-field="rating_seconds"' in page


def test_the_side_by_side_and_verification_buttons_are_the_scales_of_core_scales(annotator_client, german):
    from core.scales import SXS

    campaign = f.open_sxs_campaign(images=2, batch_size=2, replication=3, language=german)
    batch = start_batch(annotator_client, campaign)
    page = annotator_client.get(reverse("annotation:sxs", args=[batch.pk])).content.decode()
    assert first_item_buttons(page, len(SXS)) == [(p.code, p.key, p.key, p.label) for p in SXS]
    assert (
        "from <kbd>1</kbd> left much better through <kbd>4</kbd> similar to <kbd>7</kbd> right much better"
        in page
    )


def test_the_scripts_hold_no_copy_of_a_scale_and_no_url(client):
    """The keys, the stored values and the URLs reach the scripts through the page only."""
    from django.contrib.staticfiles import finders

    from core.scales import RATING, SXS

    for name in ("js/common.js", "js/frame.js", "js/items.js", "js/screen2.js"):
        source = Path(finders.find(name)).read_text(encoding="utf-8")
        for point in (*RATING, *SXS):
            assert f'"{point.code}"' not in source and f"'{point.code}'" not in source, (name, point.code)
            assert point.paper_label not in source, (name, point.paper_label)
        assert "/work/" not in source and "/api/" not in source, name
    assert finders.find("js/screen1.js") is None and finders.find("js/judge.js") is None


def test_the_next_urls_the_api_answers_are_the_named_routes(annotator_client, campaign):
    batch = start_batch(annotator_client, campaign)
    rate_all(annotator_client, batch)
    assert open_writing(annotator_client, batch).json()["next"] == reverse(
        "annotation:screen2", args=[batch.pk]
    )
    write_all(annotator_client, batch)
    r = annotator_client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        {"submit_key": "n" * 16},
        content_type="application/json",
    )
    assert r.status_code == 200 and r.json()["next"] == reverse("annotation:batch", args=[batch.pk])


def test_every_save_answers_the_lease_after_it_renewed_when_less_than_half_was_left(
    annotator_client, campaign
):
    """The page's countdown follows the server: each save answers the batch's lease expiry,
    renewed by the save once less than half of the lease was left."""
    from datetime import timedelta

    from django.utils import timezone
    from django.utils.dateparse import parse_datetime

    batch = start_batch(annotator_client, campaign)
    a = batch.assignments.order_by("position").first()
    page = annotator_client.get(reverse("annotation:screen1", args=[batch.pk])).content.decode()
    assert f'data-expires="{int(batch.lease_expires_at.timestamp())}"' in page
    assert f"These images are kept for you for {campaign.lease_minutes} minutes" in page

    def save():
        r = annotator_client.post(
            reverse("annotation:api_rating", args=[batch.pk]),
            {"assignment": a.pk, "value": "good"},
            content_type="application/json",
        )
        assert r.status_code == 200, r.content
        return parse_datetime(r.json()["lease_expires_at"])

    batch.refresh_from_db()
    assert abs(save() - batch.lease_expires_at) < timedelta(milliseconds=1)  # more than half left: kept
    soon = timezone.now() + timedelta(minutes=3)
    Batch.objects.filter(pk=batch.pk).update(lease_expires_at=soon)
    renewed = save()
    batch.refresh_from_db()
    assert abs(renewed - batch.lease_expires_at) < timedelta(milliseconds=1)
    assert renewed > soon + timedelta(minutes=campaign.lease_minutes - 4)
