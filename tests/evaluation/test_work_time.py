"""Issue 14: time per batch and per item in the exports, and the per-annotator hours summary
(admin page and CSV) for paying people."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.assignment.engine import batch_request
from annotation.models import Batch
from annotation.quality.hours import annotator_hours
from annotation.services import work
from evaluation.research.exports import export_prepare
from tests import factories as f

pytestmark = pytest.mark.django_db


def _submitted(annotator, campaign, *, rating_seconds=60.0, writing_seconds=240.0, minutes=10):
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    assignments = list(batch.assignments.order_by("position"))
    for a in assignments:
        work.rating_save(
            annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="good", seconds=4.0
        )
    work.writing_open(annotator=annotator, batch_id=batch.pk, rating_seconds=rating_seconds)
    for a in assignments:
        work.draft_save(
            annotator=annotator,
            batch_id=batch.pk,
            assignment_id=a.pk,
            text=f"Ein Bild {a.pk}",
            base_revision=0,
            seconds=30.0,
        )
    work.batch_submit(
        annotator=annotator, batch_id=batch.pk, submit_key=uuid.uuid4().hex, writing_seconds=writing_seconds
    )
    Batch.objects.filter(pk=batch.pk).update(created_at=timezone.now() - timedelta(minutes=minutes))
    return batch


def test_hours_per_annotator_sum_screens_and_wall_time(campaign, annotator, other_annotator):
    _submitted(annotator, campaign, rating_seconds=60, writing_seconds=240, minutes=10)
    _submitted(annotator, campaign, rating_seconds=30, writing_seconds=90, minutes=5)
    _submitted(other_annotator, campaign, rating_seconds=None, writing_seconds=None, minutes=20)
    rows = {row.username: row for row in annotator_hours(campaign_id=campaign.pk)}
    anna = rows["anna"]
    assert (anna.batches, anna.items, anna.control_items) == (2, 6, 0)
    assert anna.screen_seconds == pytest.approx(420)
    assert anna.wall_seconds == pytest.approx(15 * 60, abs=5)
    otto = rows["otto"]
    assert (otto.unmeasured_batches, otto.screen_seconds) == (1, 0)
    # A period with nothing submitted in it has no row.
    assert annotator_hours(since=timezone.now() + timedelta(days=1)) == []


def test_work_time_export_has_each_item_and_its_batch(campaign, annotator):
    batch = _submitted(annotator, campaign)
    text = "".join(export_prepare(kind="work-time", fmt="csv", campaign_id=campaign.pk).chunks())
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == campaign.batch_size
    first = rows[0]
    assert first["batch_id"] == str(batch.pk) and first["position"] == "1"
    assert float(first["item_rating_seconds"]) == 4.0 and float(first["item_writing_seconds"]) == 30.0
    assert float(first["batch_screen_seconds"]) == 300.0
    assert float(first["batch_wall_seconds"]) == pytest.approx(600, abs=5)
    assert first["is_control"] == "false"
    # The services wrote these drafts without a typing record: flagged, waiting for review.
    assert (first["typing_flags"], first["typing_review"]) == ("unmeasured", "pending")
    assert "annotator_username" not in first  # pseudonyms only unless asked for


def test_hours_export_per_campaign(campaign, annotator):
    _submitted(annotator, campaign)
    stream = export_prepare(kind="hours", fmt="jsonl", campaign_id=campaign.pk, with_usernames=True)
    text = "".join(stream.chunks())
    assert '"annotator_username": "anna"' in text
    assert '"screen_hours": 0.0833' in text


def test_bad_export_requests_are_refused(campaign):
    from core.errors import NotFound, ValidationFailed

    with pytest.raises(ValidationFailed):
        export_prepare(kind="hours", fmt="xlsx", campaign_id=campaign.pk)
    with pytest.raises(NotFound):
        export_prepare(kind="work-time", fmt="csv", campaign_id=987654)


def test_the_hours_page_and_its_csv(pm_client, campaign, annotator):
    _submitted(annotator, campaign)
    url = reverse("admin:evaluation_annotatorhours_changelist")
    page = pm_client.get(url).content.decode()
    assert 'data-annotator="anna"' in page and "5 min 00 s" in page
    today = timezone.now().date().isoformat()
    response = pm_client.get(url, {"since": today, "until": today, "campaign": campaign.pk, "format": "csv"})
    body = b"".join(response.streaming_content).decode()
    assert body.startswith("annotator,annotator_username,batches,items")
    assert ",anna,1,3,0,0.0833," in body
    # An empty period, and a reversed one (said so, nothing shown).
    old = pm_client.get(url, {"until": "2001-01-01"}).content.decode()
    assert "No submitted batch in this period." in old
    reversed_ = pm_client.get(url, {"since": today, "until": "2001-01-01"}).content.decode()
    assert "The last day comes before the first day." in reversed_


def test_only_staff_with_the_view_permission_see_hours(researcher_client, annotator, campaign):
    url = reverse("admin:evaluation_annotatorhours_changelist")
    assert researcher_client.get(url).status_code == 200
    client = Client()
    client.force_login(annotator.user)
    r = client.get(url)
    assert r.status_code == 302 and "/login/" in r["Location"]
    plain = f.UserFactory(is_staff=True)
    client.force_login(plain)
    assert client.get(url).status_code == 403


def test_export_pages_list_the_new_exports(researcher_client, campaign, annotator):
    _submitted(annotator, campaign)
    url = reverse("exports:hours-csv", args=[campaign.pk])
    response = researcher_client.get(url)
    assert response.status_code == 200
    body = response.content if not response.streaming else b"".join(response.streaming_content)
    assert body.startswith(b"campaign_id,campaign,annotator,batches")
    page = researcher_client.get(reverse("exports:index")).content.decode()
    assert "work-time" in page and "hours" in page
