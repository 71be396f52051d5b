"""A submission scored by a real Celery worker through a real Redis broker, and a worker killed in the
middle of a language: another worker scores it, once (RELIABILITY 10, 12, 28). Needs Redis and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from challenges.models import ScoringUnit, Submission, SubmissionScore
from challenges.scoring.tasks import SUBMISSION_SCORING
from challenges.services import submission_create
from core.jobs.engine import orphans_requeue
from tests import factories as f
from tests.challenges.conftest import coco, make_benchmark
from tests.evaluation.test_jobs_redis import broker_url, wait_for, workers  # noqa: F401  (fixtures)
from tests.evaluation.test_runs import celery_conf

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def test_a_real_worker_scores_a_submission_and_a_killed_one_loses_nothing(broker_url, workers):  # noqa: F811
    bench = make_benchmark("Redis bench", base=7000)
    member = f.UserFactory(username="redis-member")
    bench["team"].members.add(member)
    slow = workers.start(METRIC_CHUNK_TEST_DELAY="30")  # claims the first language, then sleeps
    with celery_conf(broker_url=broker_url, task_always_eager=False):
        submission = submission_create(
            phase_id=bench["test"].pk,
            user=member,
            team_id=bench["team"].pk,
            data=coco(bench["test_images"]),
            filename="r.json",
            language="de",
            method_name="redis",
        )
    wait_for(
        lambda: ScoringUnit.objects.filter(submission=submission, status="running").exists(),
        60,
        workers,
        "the slow worker to claim the unit",
    )
    workers.kill(slow)  # the unit stays "running"; its heartbeats stop: make them old at once
    long_ago = timezone.now() - timedelta(hours=1)
    ScoringUnit.objects.filter(submission=submission).update(heartbeat_at=long_ago, started_at=long_ago)
    workers.start()
    with celery_conf(broker_url=broker_url, task_always_eager=False):
        assert orphans_requeue(SUBMISSION_SCORING) == 1
    wait_for(
        lambda: Submission.objects.get(pk=submission.pk).status == "succeeded", 90, workers, "the scoring"
    )
    unit = ScoringUnit.objects.get(submission=submission)
    assert unit.status == "done" and unit.attempts == 2
    assert SubmissionScore.objects.filter(submission=submission, held_out=False, split="all").count() == 3
