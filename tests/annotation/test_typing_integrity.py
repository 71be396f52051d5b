"""Issue 14: integrity of the blind writing screen.

Screen 2 records per caption whether text was pasted and how it was typed; the server flags
captions pasted in whole or typed implausibly fast; flagged captions are kept, shown to the
manager, and leave exports and metric runs only when the manager excludes them.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import WrittenCaption
from annotation.quality.integrity import (
    DraftSaves,
    TypingFigures,
    TypingRules,
    caption_flags,
    draft_flags,
    typing_flags,
)
from annotation.quality.models import TypingRecord
from evaluation.human.selectors import caption_statistics_rows
from evaluation.models import ReferenceSet
from evaluation.research.exports import export_prepare
from evaluation.runs.selectors import reference_texts
from tests import factories as f
from tests.annotation.test_screens import open_writing, rate_all, start_batch

T0 = 1_763_900_000_000  # an epoch millisecond of November 2025

# --- The pure rules --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("figures", "flags"),
    [
        (TypingFigures(chars=40, keystrokes=45, seconds=12.0), []),
        (TypingFigures(chars=40, keystrokes=0, paste_count=1, pasted_chars=40, seconds=None), ["pasted"]),
        (TypingFigures(chars=40, keystrokes=30, paste_count=1, pasted_chars=10, seconds=10.0), []),
        (TypingFigures(chars=60, keystrokes=60, seconds=2.0), ["fast"]),
        (TypingFigures(chars=60, keystrokes=3, seconds=30.0), ["untyped"]),
        (TypingFigures(chars=10, keystrokes=1, seconds=0.2), []),  # short captions: only pasting counts
        (TypingFigures(chars=30, measured=False), ["unmeasured"]),
        (TypingFigures(chars=0), []),
    ],
)
def test_typing_flags(figures, flags):
    assert typing_flags(figures, TypingRules()) == flags


def typed_saves(text_length, chars_per_second=5.0, every_ms=1000, start=T0):
    """The saves screen2.js makes while a person types on: one a second, a few characters each."""
    saves, length, t = [], 0, start
    while length < text_length:
        t += every_ms
        length = min(text_length, length + round(chars_per_second * every_ms / 1000))
        saves.append((t, length))
    return tuple(saves)


HONEST = typed_saves(90)


@pytest.mark.parametrize(
    ("evidence", "chars", "flags"),
    [
        # Typed at 5 characters a second, saved every second, submitted 2 s after the last save.
        (DraftSaves(HONEST), 90, []),
        # A fast typist (12 a second) whose saves arrive unevenly (0.6 s .. 1.4 s apart).
        (
            DraftSaves(
                tuple((T0 + sum((600, 1400)[k % 2] for k in range(i + 1)), 12 * (i + 1)) for i in range(8))
            ),
            96,
            [],
        ),
        # Pasted: the whole caption in its first save.
        (DraftSaves(((T0, 90),)), 90, ["drafts_whole"]),
        # One character typed, a long wait, then the rest pasted: most of it in one save.
        (DraftSaves(((T0, 1), (T0 + 60_000, 90))), 90, ["drafts_whole"]),
        # Typed in part, the rest added by the submit itself.
        (DraftSaves(((T0, 5), (T0 + 1000, 10))), 90, ["drafts_whole", "drafts_fast"]),
        # Fed in pieces of 15 characters every 0.2 s: never 20 at once, but 75 a second.
        (DraftSaves(tuple((T0 + 200 * i, 15 * i) for i in range(1, 7))), 90, ["drafts_fast"]),
        # Short captions may be typed in one go.
        (DraftSaves(((T0, 12),)), 12, []),
        # No draft ever saved: the caption came with the submit only.
        (None, 90, ["drafts_none"]),
        (None, 0, []),
        # A draft stored before the server noted saves: nothing to judge.
        (DraftSaves((), known=False), 90, []),
        # The oldest saves dropped: the first kept one is not a jump from nothing.
        (DraftSaves(((T0, 80), (T0 + 2000, 90)), from_start=False), 90, []),
    ],
)
def test_draft_flags(evidence, chars, flags):
    last = evidence.saves[-1][0] if evidence and evidence.saves else T0
    assert draft_flags(evidence, chars=chars, submitted_ms=last + 2000, rules=TypingRules()) == flags


def test_either_source_flags_a_caption():
    forged = TypingFigures(chars=90, keystrokes=95, seconds=30.0)  # what a forged page record says
    assert typing_flags(forged) == []
    assert caption_flags(forged, DraftSaves(((T0, 90),)), submitted_ms=T0 + 500) == ["drafts_whole"]
    pasted = TypingFigures(chars=90, keystrokes=0, paste_count=1, pasted_chars=90)
    assert caption_flags(pasted, DraftSaves(HONEST), submitted_ms=HONEST[-1][0] + 500) == ["pasted"]


# --- Through the screen's endpoints ---------------------------------------------------------------------


def _on_screen2(client, campaign):
    batch = start_batch(client, campaign)
    rate_all(client, batch)
    open_writing(client, batch)
    return batch


def _draft(client, batch, assignment, text, typing=None, revision=0):
    body = {"assignment": assignment.pk, "text": text, "base_revision": revision}
    if typing is not None:
        body["typing"] = typing
    return client.post(
        reverse("annotation:api_draft", args=[batch.pk]), body, content_type="application/json"
    )


def _submit(client, batch, key="submit-key-1"):
    return client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        {"submit_key": key},
        content_type="application/json",
    )


TYPED = "Zwei Kinder spielen im Sand am Meer"


def typed(n, seconds):
    return {
        "keystrokes": n,
        "paste_count": 0,
        "pasted_chars": 0,
        "first_key_ms": T0,
        "last_key_ms": T0 + int(seconds * 1000),
    }


class Clock:
    """``timezone.now`` under the test's control: the server's time of each draft save."""

    def __init__(self):
        self.now = timezone.now()

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(timezone, "now", lambda: clock.now)
    return clock


def type_in(client, batch, assignment, text, clock, typing=None, chars_per_second=5):
    """Save ``text`` as screen 2 does while a person types it: a draft a second, a few characters
    more each time (the page's typing record, if any, sent with each)."""
    revision, length = 0, 0
    while length < len(text):
        clock.advance(1)
        length = min(len(text), length + chars_per_second)
        r = _draft(client, batch, assignment, text[:length], typing, revision=revision)
        assert r.status_code == 200, r.content
        revision = r.json()["revision"]
    return revision


def test_drafts_carry_the_typing_record_and_it_only_grows(annotator_client, campaign):
    batch = _on_screen2(annotator_client, campaign)
    a = batch.assignments.order_by("position").first()
    assert _draft(annotator_client, batch, a, TYPED[:10], typed(10, 3)).status_code == 200
    # A late, older save cannot lower the counters or narrow the span.
    assert (
        _draft(
            annotator_client, batch, a, TYPED, {**typed(5, 1), "first_key_ms": T0 + 500}, revision=1
        ).status_code
        == 200
    )
    record = TypingRecord.objects.get(assignment=a)
    assert (record.keystrokes, record.first_key_ms, record.last_key_ms) == (10, T0, T0 + 3000)
    # The page counts on from what is stored.
    page = annotator_client.get(reverse("annotation:screen2", args=[batch.pk])).content.decode()
    assert 'class="typing-keystrokes" value="10"' in page
    assert f'class="typing-first-key" value="{T0}"' in page
    assert "js/typing.js" in page


@pytest.mark.parametrize(
    "typing",
    [
        {"keystrokes": -1},
        {"keystrokes": "many"},
        {"first_key_ms": T0, "last_key_ms": T0 - 1},
        {"first_key_ms": T0},
        {"first_key_ms": 5, "last_key_ms": 6},
        {"keystrokes": 2**40},
    ],
)
def test_a_bad_typing_record_is_refused_and_nothing_changes(annotator_client, campaign, typing):
    batch = _on_screen2(annotator_client, campaign)
    a = batch.assignments.order_by("position").first()
    r = _draft(annotator_client, batch, a, TYPED, typing)
    assert r.status_code == 400
    assert not TypingRecord.objects.filter(assignment=a).exists()
    assert not hasattr(a, "draft") or a.draft is None


def test_submit_flags_pasted_and_fast_captions_and_keeps_them(annotator_client, campaign, clock):
    batch = _on_screen2(annotator_client, campaign)
    pasted, fast, fine = batch.assignments.order_by("position")
    _draft(
        annotator_client,
        batch,
        pasted,
        TYPED,
        {"keystrokes": 1, "paste_count": 1, "pasted_chars": len(TYPED)},
    )
    type_in(annotator_client, batch, fast, TYPED + " 2", clock, typed(len(TYPED) + 2, 0.8))
    type_in(annotator_client, batch, fine, TYPED + " 3", clock, typed(40, 14))
    clock.advance(5)
    assert _submit(annotator_client, batch).status_code == 200
    records = {r.assignment_id: r for r in TypingRecord.objects.filter(assignment__batch=batch)}
    # The page's record and the server's draft saves (the whole caption in one save) both tell.
    assert records[pasted.pk].flags == "pasted,drafts_whole" and records[pasted.pk].review == "pending"
    assert records[fast.pk].flags == "fast" and records[fast.pk].review == "pending"
    assert records[fine.pk].flags == "" and records[fine.pk].review == ""
    # Flagged captions are kept and counted until a manager decides.
    assert WrittenCaption.objects.counted().filter(assignment__batch=batch).count() == 3


def test_a_caption_sent_without_any_typing_record_is_flagged_unmeasured(annotator_client, campaign, clock):
    batch = _on_screen2(annotator_client, campaign)
    for i, a in enumerate(batch.assignments.order_by("position")):
        type_in(annotator_client, batch, a, f"{TYPED} {i}", clock)
    assert _submit(annotator_client, batch).status_code == 200
    assert set(TypingRecord.objects.filter(assignment__batch=batch).values_list("flags", flat=True)) == {
        "unmeasured"
    }


def test_typing_sent_with_the_submit_is_stored(annotator_client, campaign, clock):
    batch = _on_screen2(annotator_client, campaign)
    assignments = list(batch.assignments.order_by("position"))
    revisions = [
        type_in(annotator_client, batch, a, f"{TYPED} {i}", clock) for i, a in enumerate(assignments)
    ]
    captions = [
        {"assignment": a.pk, "text": f"{TYPED} {i}", "base_revision": revision, "typing": typed(40, 12)}
        for i, (a, revision) in enumerate(zip(assignments, revisions, strict=True))
    ]
    r = annotator_client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        {"submit_key": "submit-key-2", "captions": captions},
        content_type="application/json",
    )
    assert r.status_code == 200, r.content
    assert list(TypingRecord.objects.filter(assignment__batch=batch).values_list("flags", flat=True)) == [
        "",
        "",
        "",
    ]


# --- The server's own evidence: draft saves ------------------------------------------------------------

PASTED_90 = "Ein Mann mit rotem Hut verkauft auf einem belebten Markt frisches Obst und Gemüse an Kunden"


def test_a_pasted_caption_with_a_forged_typing_record_is_flagged_from_its_draft_saves(
    annotator_client, campaign, clock, manager_client
):
    batch = _on_screen2(annotator_client, campaign)
    pasted, *others = batch.assignments.order_by("position")
    # A script sends the 90 characters in one save, with a record of 90 keys over 30 seconds.
    forged = typed(len(PASTED_90), 30)
    assert _draft(annotator_client, batch, pasted, PASTED_90, forged).status_code == 200
    for i, a in enumerate(others):
        type_in(annotator_client, batch, a, f"{TYPED} {i}", clock, typed(40, 12))
    clock.advance(3)
    assert _submit(annotator_client, batch).status_code == 200
    record = TypingRecord.objects.get(assignment=pasted)
    assert (record.flags, record.review) == ("drafts_whole", "pending")
    assert set(TypingRecord.objects.filter(assignment__in=others).values_list("flags", flat=True)) == {""}
    # The manager sees it among the captions to review.
    assert WrittenCaption.objects.filter(assignment__typing__review="pending").get().text == PASTED_90
    page = manager_client.get(
        reverse("admin:annotation_typingrecord_changelist") + "?review__exact=pending"
    ).content.decode()
    assert "drafts_whole" in page and f"1 save, at most +{len(PASTED_90)} chars at once" in page


def test_an_honest_draft_sequence_is_not_flagged(annotator_client, campaign, clock):
    batch = _on_screen2(annotator_client, campaign)
    for a in batch.assignments.order_by("position"):
        type_in(annotator_client, batch, a, PASTED_90, clock, typed(len(PASTED_90), 20), chars_per_second=6)
        clock.advance(4)  # a pause, and the same text saved again (a retry): nothing noted
        _draft(annotator_client, batch, a, PASTED_90, revision=0)
    clock.advance(10)
    assert _submit(annotator_client, batch).status_code == 200
    assert (
        list(TypingRecord.objects.filter(assignment__batch=batch).values_list("flags", "review"))
        == [("", "")] * 3
    )
    draft = batch.assignments.order_by("position").first().draft
    assert len(draft.saves) == -(-len(PASTED_90) // 6) and draft.saves[-1][1] == len(PASTED_90)


def test_a_caption_submitted_without_any_draft_save_is_flagged_as_such(annotator_client, campaign):
    batch = _on_screen2(annotator_client, campaign)
    captions = [
        {"assignment": a.pk, "text": f"{TYPED} {i}", "base_revision": 0, "typing": typed(40, 12)}
        for i, a in enumerate(batch.assignments.order_by("position"))
    ]
    r = annotator_client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        {"submit_key": "submit-key-3", "captions": captions},
        content_type="application/json",
    )
    assert r.status_code == 200, r.content
    assert set(TypingRecord.objects.filter(assignment__batch=batch).values_list("flags", "review")) == {
        ("drafts_none", "pending")
    }


def test_the_submit_adding_most_of_the_caption_is_flagged(annotator_client, campaign, clock):
    batch = _on_screen2(annotator_client, campaign)
    assignments = list(batch.assignments.order_by("position"))
    revisions = [type_in(annotator_client, batch, a, "Ein Mann", clock) for a in assignments]
    clock.advance(2)
    captions = [
        {"assignment": a.pk, "text": PASTED_90, "base_revision": revision, "typing": typed(90, 30)}
        for a, revision in zip(assignments, revisions, strict=True)
    ]
    r = annotator_client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        {"submit_key": "submit-key-4", "captions": captions},
        content_type="application/json",
    )
    assert r.status_code == 200, r.content
    # Most of each caption came with the submit; the first caption's last save is old enough
    # that the growth, spread over it, is within a typist's speed.
    flags = dict(TypingRecord.objects.filter(assignment__batch=batch).values_list("assignment", "flags"))
    assert flags == {
        assignments[0].pk: "drafts_whole",
        assignments[1].pk: "drafts_whole,drafts_fast",
        assignments[2].pk: "drafts_whole,drafts_fast",
    }


def test_a_caption_saved_very_often_keeps_its_latest_saves(annotator_client, campaign, clock, settings):
    from annotation.quality import typing as typing_module

    batch = _on_screen2(annotator_client, campaign)
    a = batch.assignments.order_by("position").first()
    text = "Ein Hund"
    revision = type_in(annotator_client, batch, a, text, clock)
    for i in range(typing_module.SAVES_KEPT + 5):  # rewriting the last letter, over and over
        clock.advance(1)
        r = _draft(annotator_client, batch, a, text[:-1] + "Dd"[i % 2], revision=revision)
        revision = r.json()["revision"]
    a.draft.refresh_from_db()
    assert len(a.draft.saves) == typing_module.SAVES_KEPT and a.draft.saves_dropped == 7
    assert a.draft.saves[-1][1] == len(text)


# --- The manager's review -------------------------------------------------------------------------------


@pytest.fixture
def flagged(annotator_client, campaign):
    batch = _on_screen2(annotator_client, campaign)
    a, b, c = batch.assignments.order_by("position")
    _draft(
        annotator_client,
        batch,
        a,
        "Maschinell übersetzter Text über ein Bild",
        {"paste_count": 1, "pasted_chars": 41},
    )
    _draft(annotator_client, batch, b, TYPED + " b", typed(40, 12))
    _draft(annotator_client, batch, c, TYPED + " c", typed(40, 12))
    assert _submit(annotator_client, batch).status_code == 200
    return TypingRecord.objects.get(assignment=a)


@pytest.fixture
def manager_client(manager):
    """A client of its own: ``annotator_client`` (in ``flagged``) holds the shared one."""
    from django.test import Client

    client = Client()
    client.force_login(manager)
    return client


def test_the_manager_sees_flagged_captions_and_excludes_one(flagged, manager_client, campaign):
    pm_client = manager_client
    url = reverse("admin:annotation_typingrecord_changelist")
    page = pm_client.get(url + "?review__exact=pending").content.decode()
    assert "Maschinell übersetzter Text" in page and "pasted" in page
    r = pm_client.post(url, {"action": "exclude_captions", "_selected_action": [flagged.pk]})
    assert r.status_code == 302
    flagged.refresh_from_db()
    assert flagged.review == "excluded" and flagged.reviewed_by is not None
    # Gone from the caption exports, reference sets, Table 1; the other two stay.
    exported = "".join(export_prepare(kind="captions", fmt="xm3600", campaign_id=campaign.pk).chunks())
    assert "Maschinell" not in exported and TYPED in exported
    reference_set = ReferenceSet.objects.create(
        name="r", kind="campaign", campaign=campaign, language=campaign.language
    )
    texts = [t for ts in reference_texts(reference_set).values() for t in ts]
    assert len(texts) == 2 and not any("Maschinell" in t for t in texts)
    (row,) = caption_statistics_rows(campaign_id=campaign.pk)
    assert row.n_captions == 2
    # The caption itself is kept: the manager can change their mind.
    assert WrittenCaption.objects.filter(assignment=flagged.assignment).exists()
    pm_client.post(url, {"action": "keep_captions", "_selected_action": [flagged.pk]})
    assert WrittenCaption.objects.counted().filter(campaign=campaign).count() == 3


def test_researchers_see_the_review_but_cannot_decide(researcher_client, flagged):
    url = reverse("admin:annotation_typingrecord_changelist")
    assert researcher_client.get(url).status_code == 200
    r = researcher_client.post(url, {"action": "exclude_captions", "_selected_action": [flagged.pk]})
    flagged.refresh_from_db()
    assert flagged.review == "pending"
    assert r.status_code in (200, 302, 403)


def test_annotators_reach_no_review_page(annotator_client, flagged):
    r = annotator_client.get(reverse("admin:annotation_typingrecord_changelist"))
    assert r.status_code == 302 and "/login/" in r["Location"]


def test_unknown_decisions_are_refused(flagged):
    from annotation.quality.typing import typing_review
    from core.errors import ValidationFailed

    with pytest.raises(ValidationFailed):
        typing_review(record_ids=[flagged.pk], decision="delete", user=None)
    flagged.refresh_from_db()
    assert flagged.review == "pending"


def test_a_record_of_another_annotators_caption_is_not_reachable_by_id(client, flagged, other_annotator):
    # Typing figures travel only inside the owner's batch: another annotator's batch id is a 404.
    client.force_login(other_annotator.user)
    batch = flagged.assignment.batch
    r = client.post(
        reverse("annotation:api_draft", args=[batch.pk]),
        {"assignment": flagged.assignment_id, "text": "x", "base_revision": 0, "typing": {"keystrokes": 1}},
        content_type="application/json",
    )
    assert r.status_code == 404
    flagged.refresh_from_db()
    assert flagged.keystrokes == 0


def test_factories_still_work(db):
    assert f.LanguageFactory()


def test_the_typing_list_names_the_author_as_the_pilot_review_does(flagged, manager_client):
    author = flagged.assignment.annotator
    page = manager_client.get(reverse("admin:annotation_typingrecord_changelist")).content.decode()
    assert f">{author}</td>" in page and str(author) == author.user.username
    assert author.pseudonym not in page
