"""RELIABILITY cases 5-7: no annotator's work is ever lost.

Through the JSON endpoints and pages the annotator's browser uses: drafts kept on the
server, stale saves ignored, failed saves reported, submit idempotent and atomic, and the
submit refusing captions it cannot accept with a message per image.
"""

from __future__ import annotations

import json
import re
import threading
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.utils import timezone

from annotation import apis
from annotation.assignment.engine import batch_request, leases_expire
from annotation.models import (
    Assignment,
    AssignmentState,
    Batch,
    BatchStage,
    CaptionDraft,
    Item,
    WrittenCaption,
)

PASSWORD = "pw-for-tests-only"  # tests.factories.UserFactory


# --- helpers -------------------------------------------------------------------------------


def post_json(client, url, data):
    return client.post(url, data, content_type="application/json")


def api(batch_id: int, action: str) -> str:
    return f"/work/api/batch/{batch_id}/{action}/"


def start_batch(client, campaign) -> int:
    response = client.post(f"/work/campaign/{campaign.pk}/work/")
    assert response.status_code == 302
    return int(re.search(r"/work/batch/(\d+)/", response["Location"]).group(1))


def to_screen2(client, campaign) -> tuple[int, list[int]]:
    """Start a batch, rate every image and open screen 2, as the pages do. Returns the batch
    id and its assignment ids by position."""
    batch_id = start_batch(client, campaign)
    ids = list(Assignment.objects.filter(batch_id=batch_id).order_by("position").values_list("pk", flat=True))
    for pk in ids:
        assert (
            post_json(client, api(batch_id, "rating"), {"assignment": pk, "value": "good"}).status_code == 200
        )
    assert post_json(client, api(batch_id, "open-writing"), {"rating_seconds": 12.5}).status_code == 200
    return batch_id, ids


def save_draft(client, batch_id, assignment_id, text, base_revision):
    """Save a draft as the page does: ``base_revision`` is the stored revision its text grew from."""
    return post_json(
        client,
        api(batch_id, "draft"),
        {"assignment": assignment_id, "text": text, "base_revision": base_revision},
    )


def write_all(client, batch_id, ids) -> None:
    for pk in ids:
        assert save_draft(client, batch_id, pk, f"Ein Bild mit der Nummer {pk}", 0).status_code == 200


def submit(client, batch_id, key="submit-key-0001"):
    return post_json(client, api(batch_id, "submit"), {"submit_key": key, "writing_seconds": 42})


def screen2(client, batch_id):
    return client.get(f"/work/batch/{batch_id}/write/")


def login(client, username):
    response = client.post("/accounts/login/", {"username": username, "password": PASSWORD})
    assert response.status_code == 302, "login failed"


# --- Case 5: drafts live on the server ---------------------------------------------------------


@pytest.mark.django_db
def test_draft_survives_a_reload(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    assert save_draft(annotator_client, batch_id, ids[1], "Ein Hund", 0).json()["revision"] == 1
    assert (
        save_draft(annotator_client, batch_id, ids[1], "Ein Hund läuft am Strand", 1).json()["revision"] == 2
    )

    page = screen2(annotator_client, batch_id)

    assert page.status_code == 200
    html = page.content.decode()
    assert ">Ein Hund läuft am Strand</textarea>" in html
    # The page continues from the stored revision, so its next save is based on the newest text.
    assert f'data-assignment="{ids[1]}" data-revision="2"' in html


@pytest.mark.django_db
def test_draft_survives_logout_and_login(client, annotator, campaign):
    login(client, "anna")
    batch_id, ids = to_screen2(client, campaign)
    assert save_draft(client, batch_id, ids[0], "Zwei Katzen auf einem Sofa", 0).status_code == 200

    client.post("/accounts/logout/")
    assert screen2(client, batch_id).status_code == 302  # to the login page
    login(client, "anna")

    # The dashboard leads back to the batch, and the batch to screen 2 with the draft.
    assert f"/work/batch/{batch_id}/" in client.get("/work/").content.decode()
    page = client.get(f"/work/batch/{batch_id}/", follow=True)
    assert page.redirect_chain[-1][0] == f"/work/batch/{batch_id}/write/"
    assert "Zwei Katzen auf einem Sofa" in page.content.decode()
    # Asking for work again also leads back to this batch's screen 2, never to a new batch.
    again = client.post(f"/work/campaign/{campaign.pk}/work/", follow=True)
    assert again.redirect_chain[-1][0] == f"/work/batch/{batch_id}/write/"
    assert "Zwei Katzen auf einem Sofa" in again.content.decode()
    assert Batch.objects.count() == 1


@pytest.mark.django_db
def test_draft_survives_a_session_expiry_and_the_refused_save_is_reported(client, annotator, campaign):
    login(client, "anna")
    batch_id, ids = to_screen2(client, campaign)
    assert save_draft(client, batch_id, ids[2], "Ein roter Bus", 0).status_code == 200

    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))  # the session runs out

    refused = save_draft(client, batch_id, ids[2], "Ein roter Bus an der Haltestelle", 1)
    # Refused, visibly (the page shows "session has ended" and keeps the text), changing nothing.
    assert refused.status_code == 403
    assert CaptionDraft.objects.get(assignment_id=ids[2]).text == "Ein roter Bus"
    assert screen2(client, batch_id).status_code == 302

    login(client, "anna")
    assert "Ein roter Bus</textarea>" in screen2(client, batch_id).content.decode()
    # The page sends what it kept once the user is back.
    assert save_draft(client, batch_id, ids[2], "Ein roter Bus an der Haltestelle", 1).json()["revision"] == 2
    assert "Ein roter Bus an der Haltestelle</textarea>" in screen2(client, batch_id).content.decode()


@pytest.mark.django_db
def test_an_older_revision_never_overwrites_a_newer_one(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    assert save_draft(annotator_client, batch_id, ids[0], "Text", 0).json()["revision"] == 1
    newer = save_draft(annotator_client, batch_id, ids[0], "neuer Text", 1)
    assert newer.status_code == 200 and newer.json()["revision"] == 2

    # A save grown from revision 1 (a slow request overtaken, or another tab) is refused, visibly.
    older = save_draft(annotator_client, batch_id, ids[0], "alter Text", 1)

    assert older.status_code == 409
    assert older.json()["error"] == "edit_conflict"
    assert older.json()["details"] == {
        str(ids[0]): {
            "position": 1,
            "message": "Image 1 was changed in another tab or window. Choose which text to keep.",
            "mine": "alter Text",
            "theirs": "neuer Text",
            "revision": 2,
        }
    }
    assert CaptionDraft.objects.get(assignment_id=ids[0]).text == "neuer Text"
    assert "neuer Text</textarea>" in screen2(annotator_client, batch_id).content.decode()
    # The same save again (a retry after a lost answer) changes nothing and answers the revision.
    again = save_draft(annotator_client, batch_id, ids[0], "neuer Text", 1)
    assert again.status_code == 200 and again.json()["revision"] == 2
    assert CaptionDraft.objects.get(assignment_id=ids[0]).revision == 2


@pytest.mark.django_db
def test_a_failed_save_is_reported_and_changes_nothing(annotator_client, campaign, other_annotator):
    batch_id, ids = to_screen2(annotator_client, campaign)
    assert save_draft(annotator_client, batch_id, ids[0], "kurz", 0).status_code == 200

    too_long = save_draft(annotator_client, batch_id, ids[0], "x" * 1001, 1)

    assert too_long.status_code == 400
    assert "1000 characters" in json.dumps(too_long.json())
    assert CaptionDraft.objects.get(assignment_id=ids[0]).text == "kurz"

    others, _ = batch_request(annotator=other_annotator, campaign_id=campaign.pk)
    missing = save_draft(annotator_client, batch_id, others.assignments.first().pk, "x", 0)
    assert missing.status_code == 404 and missing.json()["message"] == "No such image in this batch."


@pytest.mark.django_db
def test_a_save_before_screen2_is_refused_with_a_message(annotator_client, campaign):
    batch_id = start_batch(annotator_client, campaign)
    pk = Assignment.objects.filter(batch_id=batch_id).first().pk
    response = save_draft(annotator_client, batch_id, pk, "zu früh", 0)
    assert response.status_code == 409
    assert response.json()["message"] == "Finish rating on screen 1 first."
    assert not CaptionDraft.objects.exists()


@pytest.mark.django_db
def test_work_after_the_lease_ran_out_is_kept(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    Batch.objects.filter(pk=batch_id).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    assert leases_expire() == 1
    page = screen2(annotator_client, batch_id).content.decode()
    assert "your work will be kept" in page

    write_all(annotator_client, batch_id, ids)
    response = submit(annotator_client, batch_id)

    assert response.status_code == 200 and response.json()["late"] is True
    assert WrittenCaption.objects.filter(assignment__batch_id=batch_id, is_late=True).count() == len(ids)


# --- Case 6: submit is idempotent ---------------------------------------------------------------


@pytest.mark.django_db
def test_double_submit_stores_once_and_answers_the_same(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    write_all(annotator_client, batch_id, ids)

    first = submit(annotator_client, batch_id)
    submitted_at = Batch.objects.get(pk=batch_id).submitted_at
    second = submit(annotator_client, batch_id)

    assert first.status_code == second.status_code == 200
    assert (
        first.json()
        == second.json()
        == {
            "batch": batch_id,
            "stage": "submitted",
            "late": False,
            "next": f"/work/batch/{batch_id}/",
        }
    )
    assert WrittenCaption.objects.filter(assignment__batch_id=batch_id).count() == len(ids)
    batch = Batch.objects.get(pk=batch_id)
    assert batch.submitted_at == submitted_at and batch.submit_key == "submit-key-0001"
    assert batch.writing_seconds == 42 and batch.rating_seconds == 12.5


@pytest.mark.django_db
def test_retry_after_a_lost_response_answers_the_same(annotator_client, campaign, monkeypatch):
    batch_id, ids = to_screen2(annotator_client, campaign)
    write_all(annotator_client, batch_id, ids)

    def lost(*args, **kwargs):
        raise ConnectionResetError("the answer never reached the browser")

    # The submit commits, then the connection drops before the answer is sent.
    with monkeypatch.context() as patch:
        patch.setattr(apis, "Response", lost)
        with pytest.raises(ConnectionResetError):
            submit(annotator_client, batch_id)
    assert WrittenCaption.objects.filter(assignment__batch_id=batch_id).count() == len(ids)

    retry = submit(annotator_client, batch_id)

    assert retry.status_code == 200
    assert retry.json() == {
        "batch": batch_id,
        "stage": "submitted",
        "late": False,
        "next": f"/work/batch/{batch_id}/",
    }
    assert WrittenCaption.objects.filter(assignment__batch_id=batch_id).count() == len(ids)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicate_submits_store_once(campaign, annotator):
    if connection.vendor != "postgresql":
        pytest.skip("concurrent transactions are proven on PostgreSQL (set DATABASE_URL)")
    client = Client()
    client.force_login(annotator.user)
    batch_id, ids = to_screen2(client, campaign)
    write_all(client, batch_id, ids)

    copies = 8
    barrier = threading.Barrier(copies, timeout=20)
    answers, errors = [], []
    lock = threading.Lock()

    def duplicate():
        try:
            own = Client()
            own.force_login(get_user_model().objects.get(pk=annotator.user_id))
            barrier.wait()
            response = submit(own, batch_id)
            with lock:
                answers.append((response.status_code, response.json()))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=duplicate) for _ in range(copies)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)

    assert not errors, repr(errors[0])
    assert len(answers) == copies
    assert {json.dumps(a, sort_keys=True) for a in answers} == {
        json.dumps(
            (
                200,
                {"batch": batch_id, "stage": "submitted", "late": False, "next": f"/work/batch/{batch_id}/"},
            ),
            sort_keys=True,
        )
    }
    assert WrittenCaption.objects.filter(assignment__batch_id=batch_id).count() == len(ids)
    assert sorted(Item.objects.values_list("active_count", flat=True)) == [0, 0, 0, 1, 1, 1]


# --- Case 7: submit is one transaction ----------------------------------------------------------


@pytest.mark.django_db
def test_a_failure_half_way_through_submit_stores_nothing(annotator_client, campaign, monkeypatch):
    batch_id, ids = to_screen2(annotator_client, campaign)
    write_all(annotator_client, batch_id, ids)
    real_bulk_create = WrittenCaption.objects.bulk_create
    written_before_failure = []

    def fails_half_way(objs, *args, **kwargs):
        objs = list(objs)
        real_bulk_create(objs[:1], *args, **kwargs)
        written_before_failure.append(WrittenCaption.objects.count())
        raise RuntimeError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr(WrittenCaption.objects, "bulk_create", fails_half_way)
        with pytest.raises(RuntimeError, match="disk full"):
            submit(annotator_client, batch_id)

    assert written_before_failure == [1]  # one row really was written ...
    assert not WrittenCaption.objects.exists()  # ... and rolled back
    batch = Batch.objects.get(pk=batch_id)
    assert batch.stage == BatchStage.WRITING and batch.submitted_at is None and batch.submit_key == ""
    assert set(Assignment.objects.filter(batch_id=batch_id).values_list("state", flat=True)) == {
        AssignmentState.LIVE
    }
    drafts = dict(CaptionDraft.objects.values_list("assignment_id", "text"))
    assert drafts == {pk: f"Ein Bild mit der Nummer {pk}" for pk in ids}
    assert (
        f"Ein Bild mit der Nummer {ids[0]}</textarea>" in screen2(annotator_client, batch_id).content.decode()
    )

    # The annotator (or the page's retry) submits again, and now it is stored once.
    assert submit(annotator_client, batch_id).status_code == 200
    assert WrittenCaption.objects.count() == len(ids)


@pytest.mark.django_db
def test_a_failure_at_the_end_of_a_late_submit_undoes_the_counters_too(
    annotator_client, campaign, monkeypatch
):
    batch_id, ids = to_screen2(annotator_client, campaign)
    write_all(annotator_client, batch_id, ids)
    Batch.objects.filter(pk=batch_id).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    leases_expire()
    counters = dict(Item.objects.values_list("pk", "active_count"))
    real_save = Batch.save

    def fails_last(self, *args, **kwargs):
        if "submitted_at" in (kwargs.get("update_fields") or ()):
            raise RuntimeError("connection lost")
        return real_save(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Batch, "save", fails_last)
        with pytest.raises(RuntimeError):
            submit(annotator_client, batch_id)

    assert not WrittenCaption.objects.exists()
    assert dict(Item.objects.values_list("pk", "active_count")) == counters
    assert set(Assignment.objects.filter(batch_id=batch_id).values_list("state", flat=True)) == {
        AssignmentState.EXPIRED
    }
    assert Batch.objects.get(pk=batch_id).stage == BatchStage.EXPIRED
    assert CaptionDraft.objects.filter(assignment__batch_id=batch_id).count() == len(ids)


# --- What a submit refuses, and how it says so ---------------------------------------------------


@pytest.mark.django_db
def test_a_caption_repeating_the_english_prompt_is_refused(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    write_all(annotator_client, batch_id, ids)
    copied = Assignment.objects.select_related("item__prompt_caption").get(pk=ids[1])
    prompt = copied.item.prompt_caption.text
    # Case, punctuation and spacing do not make a copy one's own words.
    assert save_draft(annotator_client, batch_id, ids[1], f"  {prompt.upper()}!! ", 1).status_code == 200

    response = submit(annotator_client, batch_id)

    assert response.status_code == 400
    body = response.json()
    assert body["message"] == "1 caption needs attention before you can submit."
    assert body["details"] == {
        str(ids[1]): {
            "position": 2,
            "message": "This repeats the English caption from screen 1. Describe the image in your own words.",
        }
    }
    assert not WrittenCaption.objects.exists()
    assert Batch.objects.get(pk=batch_id).stage == BatchStage.WRITING
    assert CaptionDraft.objects.get(assignment_id=ids[1]).text == f"  {prompt.upper()}!! "


@pytest.mark.django_db
def test_an_empty_caption_is_refused_with_its_position(annotator_client, campaign):
    batch_id, ids = to_screen2(annotator_client, campaign)
    assert save_draft(annotator_client, batch_id, ids[0], "Ein Boot auf dem See", 0).status_code == 200
    assert save_draft(annotator_client, batch_id, ids[2], "   \n ", 0).status_code == 200
    # Image 2 was never touched: no draft at all.

    response = submit(annotator_client, batch_id)

    assert response.status_code == 400
    details = response.json()["details"]
    assert details == {
        str(ids[1]): {"position": 2, "message": "Write a caption for this image."},
        str(ids[2]): {"position": 3, "message": "Write a caption for this image."},
    }
    assert not WrittenCaption.objects.exists()
    assert CaptionDraft.objects.get(assignment_id=ids[0]).text == "Ein Boot auf dem See"
