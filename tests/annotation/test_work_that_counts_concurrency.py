"""Held crowd batches under concurrency (PostgreSQL, real parallel connections).

Crowd participants submit no-work batches (held: their items' counters go down), other annotators
submit real work at the same time, and a manager accepts and rejects held batches while they come
in (accepted: the counters go up again). No deadlock, no lost or doubled counter: every item's
counter equals its live, submitted and late assignments; held and rejected work is never counted."""

from __future__ import annotations

import threading
from collections import Counter, defaultdict

import pytest
from django.db.models import Count

from annotation.assignment.engine import batch_request
from annotation.models import Assignment, AssignmentState, BatchHold, Enrolment, HoldDecision, Item
from annotation.quality.reports import image_report
from annotation.services import work
from annotation.workforce.services import batch_hold_decide
from core.errors import NoWorkAvailable
from tests import factories as f
from tests.annotation.parallel import fail_on_db_errors, postgres_only, run_threads  # noqa: F401
from tests.annotation.workforce_helpers import link_for

pytestmark = pytest.mark.django_db(transaction=True)


def _work_until_none_left(annotator, campaign, *, no_work: bool) -> None:
    while True:
        try:
            batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
        except NoWorkAvailable:
            return
        assignments = list(batch.assignments.order_by("position"))
        for a in assignments:
            value = "nei" if no_work else "good"
            work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value=value)
        work.writing_open(annotator=annotator, batch_id=batch.pk)
        for a in assignments:
            if no_work:
                image_report(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, reason="broken")
            else:
                work.draft_save(
                    annotator=annotator,
                    batch_id=batch.pk,
                    assignment_id=a.pk,
                    text=f"Ein Hund spielt im Park {a.pk}",
                    base_revision=0,
                )
        work.batch_submit(annotator=annotator, batch_id=batch.pk, submit_key=f"key-{batch.pk:08d}")


def test_holds_and_reviews_racing_with_submits_keep_every_counter_right(german, manager, settings):
    settings.IMAGE_REPORT_THRESHOLD = 1000  # reports here must not withdraw the images
    campaign = f.open_caption_campaign(images=12, batch_size=3, replication=2, language=german)
    link = link_for(campaign)
    crowd = [f.AnnotatorFactory(languages=[german]) for _ in range(5)]
    for annotator in crowd:
        Enrolment.objects.create(link=link, campaign=campaign, annotator=annotator)
    team = [f.AnnotatorFactory(languages=[german]) for _ in range(5)]
    finished = threading.Event()
    remaining = Counter(workers=len(crowd) + len(team))
    lock = threading.Lock()
    decided = []

    def worker(annotator, no_work):
        def run():
            try:
                _work_until_none_left(annotator, campaign, no_work=no_work)
            finally:
                with lock:
                    remaining["workers"] -= 1
                    if remaining["workers"] == 0:
                        finished.set()

        return run

    def reviewer():
        # Accept every other held batch as it comes in, reject the rest.
        while True:
            done = finished.wait(0.05)
            for hold in BatchHold.objects.filter(decision=HoldDecision.HELD).order_by("pk"):
                accept = hold.pk % 2 == 1
                batch_hold_decide(hold_id=hold.pk, accept=accept, reviewer=manager)
                decided.append(accept)
            if done:
                return

    errors = run_threads(
        [worker(a, True) for a in crowd] + [worker(a, False) for a in team] + [reviewer], timeout=90
    )
    fail_on_db_errors(errors)

    holds = list(BatchHold.objects.select_related("batch"))
    assert holds and True in decided and False in decided, "the race proved nothing"
    by_state = defaultdict(Counter)
    for item_id, state in Assignment.objects.filter(item__campaign=campaign).values_list("item_id", "state"):
        by_state[item_id][state] += 1
    for item_id, active_count in Item.objects.filter(campaign=campaign).values_list("pk", "active_count"):
        states = by_state[item_id]
        counted = (
            states[AssignmentState.LIVE] + states[AssignmentState.SUBMITTED] + states[AssignmentState.LATE]
        )
        assert active_count == counted, f"item {item_id}: counter {active_count}, assignments {dict(states)}"
    for hold in holds:
        states = set(hold.batch.assignments.values_list("state", flat=True))
        expected = {
            HoldDecision.HELD: {AssignmentState.HELD},
            HoldDecision.ACCEPTED: {AssignmentState.SUBMITTED},
            HoldDecision.REJECTED: {AssignmentState.REJECTED},
        }[hold.decision]
        assert states == expected, (hold.decision, states)
    assert not Assignment.objects.values("item", "annotator").annotate(n=Count("pk")).filter(n__gt=1).exists()
