"""The one job engine (core.jobs) under every kind: the failure hook, the tasks' time limits, the sweep.

The kinds' own behaviour through the engine (claim, heartbeat, resume, orphans, broker down) is tested
in test_runs.py, test_chunk_heartbeat.py, test_retrieval_checks.py and test_finetune_jobs.py; a real
``celery beat`` process is in test_jobs_redis.py.
"""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.db import OperationalError
from django.utils import timezone

from core.jobs.engine import orphans_sweep
from core.jobs.kinds import kinds
from evaluation.finetune import compute as finetune_compute
from evaluation.finetune.tasks import FINE_TUNE, train_clip
from evaluation.models import ClipFineTune, RunStatus
from tests.evaluation.test_runs import celery_conf

pytestmark = pytest.mark.django_db


def queued_fine_tune(**fields) -> ClipFineTune:
    fields = {
        "name": "ft",
        "register_as": "ft-model",
        "status": RunStatus.QUEUED,
        "config": {"epochs": 1},
    } | fields
    return ClipFineTune.objects.create(**fields)


def test_a_fine_tune_whose_database_retries_run_out_is_failed_not_left_running():
    """Before the engine the fine-tuning task had no failure hook: the retry found the run claimed
    ("running"), skipped it, and the run stayed "running" until the 15-minute sweep."""
    run = queued_fine_tune()
    lost = OperationalError("server closed the connection unexpectedly")
    # Eagerly, retries run one inside the other only when errors are not propagated.
    with (
        mock.patch.object(finetune_compute, "_train", side_effect=lost) as train,
        celery_conf(task_eager_propagates=False),
    ):
        result = train_clip.apply(args=[run.pk])
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert isinstance(result.result, OperationalError)  # the task failed for good, visibly
    assert run.error == "OperationalError: server closed the connection unexpectedly"
    assert run.finished_at is not None
    # Each retry claimed the run again (the engine gave it back after the database error).
    assert train.call_count == run.attempts == 1 + train_clip.max_retries


def test_every_job_task_has_a_soft_limit_within_its_hard_limit():
    """The worker refuses a task whose soft limit exceeds its hard limit ("SchedulingError:
    soft_time_limit must be less than or equal to time_limit"): the fine-tuning sweep set only
    ``time_limit=300`` under the global soft limit of 3,300 s and failed every minute."""
    from config.celery import app

    app.loader.import_default_modules()
    conf = app.conf
    limits = {}
    for name, task in app.tasks.items():
        if name.startswith("celery."):
            continue
        soft = task.soft_time_limit if task.soft_time_limit is not None else conf.task_soft_time_limit
        hard = task.time_limit if task.time_limit is not None else conf.task_time_limit
        limits[name] = (soft, hard)
    wanted = {
        "core.jobs.sweep_orphans",
        # Today's task names, kept so that messages queued before a deploy still run.
        "evaluation.tasks.compute_metric_chunk",
        "evaluation.tasks.compute_retrieval_chunk",
        "evaluation.tasks.train_clip",
        "evaluation.tasks.requeue_orphaned_chunks",
        "evaluation.tasks.requeue_orphaned_retrieval_chunks",
        "evaluation.tasks.requeue_orphaned_fine_tunes",
    }
    too_long = {name: pair for name, pair in limits.items() if None not in pair and pair[0] > pair[1]}
    assert too_long == {}
    assert wanted <= set(limits)
    assert limits["core.jobs.sweep_orphans"] == (240, 300)


def test_the_one_sweep_covers_every_kind_and_requeues_a_silent_fine_tune(django_capture_on_commit_callbacks):
    assert {kind.name for kind in kinds()} >= {"metric_run", "retrieval_check", "fine_tune"}
    long_ago = timezone.now() - timedelta(hours=2)
    silent = queued_fine_tune(started_at=long_ago, heartbeat_at=long_ago)
    ClipFineTune.objects.filter(pk=silent.pk).update(status=RunStatus.RUNNING, attempts=1)
    alive = queued_fine_tune(register_as="alive")
    ClipFineTune.objects.filter(pk=alive.pk).update(
        status=RunStatus.RUNNING, attempts=1, started_at=timezone.now(), heartbeat_at=timezone.now()
    )
    with (
        mock.patch.object(FINE_TUNE.task, "apply_async") as send,
        django_capture_on_commit_callbacks(execute=True),
    ):
        assert orphans_sweep()["fine_tune"] == 1
    assert [call.kwargs["args"] for call in send.call_args_list] == [[silent.pk]]
    assert ClipFineTune.objects.get(pk=silent.pk).status == RunStatus.QUEUED
    assert ClipFineTune.objects.get(pk=alive.pk).status == RunStatus.RUNNING
    with mock.patch.object(FINE_TUNE.task, "apply_async") as send:
        assert orphans_sweep()["fine_tune"] == 0  # idempotent
    assert send.call_count == 0


def test_a_fine_tune_is_orphaned_after_its_own_longer_timeout(settings):
    settings.JOB_ORPHAN_SECONDS = 90
    settings.JOB_FINETUNE_ORPHAN_SECONDS = 900
    run = queued_fine_tune()
    five_minutes_ago = timezone.now() - timedelta(minutes=5)
    ClipFineTune.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, started_at=five_minutes_ago, heartbeat_at=five_minutes_ago
    )
    run.refresh_from_db()
    assert not run.is_orphaned() and not ClipFineTune.objects.orphaned().exists()
    ClipFineTune.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=16))
    run.refresh_from_db()
    assert run.is_orphaned() and list(ClipFineTune.objects.orphaned()) == [run]
