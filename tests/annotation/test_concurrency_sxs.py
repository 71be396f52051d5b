"""RELIABILITY case 1 for a side-by-side campaign (K = 3), proven on PostgreSQL with real parallel
connections: the unchanged engine fills every pair exactly K times from K distinct annotators.

Same pattern as ``test_concurrency.py``: the test commits for real (``transaction=True``) and
runs threads; Django gives each thread its own connection, closed when the thread ends, with a
short ``lock_timeout`` / ``statement_timeout`` so a hang fails within seconds.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

import pytest
from django.db.models import Count

from annotation.assignment.engine import batch_request
from annotation.models import (
    OPEN_BATCH_STAGES,
    Annotator,
    Assignment,
    AssignmentState,
    Batch,
    BatchStage,
    Item,
    SxsChoice,
    SxsJudgment,
)
from annotation.services import work
from core.errors import NoWorkAvailable
from core.scales import choice_to_score
from tests import factories as f
from tests.annotation.parallel import fail_on_db_errors, postgres_only, run_threads  # noqa: F401

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_parallel_annotators_fill_a_side_by_side_campaign_exactly_three_times(german):
    replication, batch_size, workers = 3, 5, 24
    campaign = f.open_sxs_campaign(
        images=36,
        batch_size=batch_size,
        replication=replication,
        language=german,
        identical=3,
        controls_identical=2,
        controls_wrong_image=2,
        name="Stress",
    )
    items = campaign.items.count()
    assert items == 40
    people = [f.AnnotatorFactory(languages=[german], reads_english=False) for _ in range(workers)]
    barrier = threading.Barrier(workers)
    in_flight = {"now": 0, "max": 0}
    retried = Counter()
    guard = threading.Lock()

    def annotate(annotator_id: int):
        me = Annotator.objects.get(pk=annotator_id)
        rng = random.Random(annotator_id)
        barrier.wait()
        n = 0
        while True:
            with guard:
                in_flight["now"] += 1
                in_flight["max"] = max(in_flight["max"], in_flight["now"])
            try:
                batch, _ = batch_request(annotator=me, campaign_id=campaign.pk)
            except NoWorkAvailable:
                # Transient while others hold rows for a moment; final once nothing short of K
                # is left that this annotator has not had.
                left = (
                    Item.objects.filter(campaign=campaign, active_count__lt=replication)
                    .exclude(assignments__annotator=me)
                    .exists()
                )
                if left and retried[annotator_id] < 50:
                    retried[annotator_id] += 1
                    time.sleep(0.02)
                    continue
                return
            finally:
                with guard:
                    in_flight["now"] -= 1
            n += 1
            for pk in (
                Assignment.objects.filter(batch=batch).order_by("position").values_list("pk", flat=True)
            ):
                work.sxs_judgment_save(
                    annotator=me, batch_id=batch.pk, assignment_id=pk, choice=rng.choice(SxsChoice.values)
                )
            work.judgment_batch_submit(
                annotator=me, batch_id=batch.pk, submit_key=f"key-{annotator_id}-{n:04d}"
            )

    fail_on_db_errors(run_threads([lambda pk=a.pk: annotate(pk) for a in people], timeout=60.0))

    assert in_flight["max"] >= 2, "the requests never overlapped: the test proved nothing"
    per_item = (
        SxsJudgment.objects.filter(assignment__item__campaign=campaign)
        .values("assignment__item")
        .annotate(n=Count("pk"), people=Count("assignment__annotator", distinct=True))
    )
    assert len(per_item) == items  # every pair, the controls included
    assert {(row["n"], row["people"]) for row in per_item} == {(replication, replication)}
    assert set(Item.objects.filter(campaign=campaign).values_list("active_count", flat=True)) == {replication}
    assignments = Assignment.objects.filter(item__campaign=campaign)
    assert assignments.count() == items * replication
    assert set(assignments.values_list("state", flat=True)) == {AssignmentState.SUBMITTED}
    assert not assignments.values("item", "annotator").annotate(n=Count("pk")).filter(n__gt=1).exists()
    assert not Batch.objects.filter(stage__in=OPEN_BATCH_STAGES).exists()
    assert set(Batch.objects.values_list("stage", flat=True)) == {BatchStage.SUBMITTED}
    assert Batch.objects.values("annotator").distinct().count() > 5  # the work really was shared
    # Every assignment got a side on the server, both sides occur, and every stored score is the
    # one its choice and side give.
    sides = Counter(assignments.values_list("m2_side", flat=True))
    assert set(sides) == {"left", "right"}
    for choice, side, score in SxsJudgment.objects.values_list("choice", "assignment__m2_side", "score"):
        assert score == choice_to_score(choice, side)
