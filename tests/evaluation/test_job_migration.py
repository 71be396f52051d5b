"""Moving the three job kinds onto the engine loses and rewrites no data.

A database at the schema before the engine's migration holds a metric run, a retrieval check and a
fine-tuning run in every state, with their units in every state (an orphaned one among them). After
migrating forward every row reads the same, and resuming the unfinished jobs queues exactly the units
that are not done and have no live worker.
"""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from core.jobs.engine import job_resume
from evaluation.finetune.tasks import FINE_TUNE
from evaluation.models import ClipFineTune, MetricChunk, MetricRun, RetrievalCheck, RetrievalChunk, RunStatus
from evaluation.retrieval.tasks import RETRIEVAL_CHECK
from evaluation.runs.tasks import METRIC_RUN
from tests import factories as f

pytestmark = pytest.mark.django_db(transaction=True)

ENGINE_MIGRATION = "fine_tune_timings_for_the_job_engine"
JOB_STATES = ["pending", "queued", "running", "succeeded", "failed"]
UNIT_STATES = ["pending", "running", "done", "failed"]


def engine_migration(executor: MigrationExecutor) -> tuple[str, str]:
    (node,) = [
        n for n in executor.loader.graph.nodes if n[0] == "evaluation" and n[1].endswith(ENGINE_MIGRATION)
    ]
    return node


def migrate(executor: MigrationExecutor, targets):
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def before_engine():
    """The database at the schema just before the engine's migration; put back to the latest after."""
    executor = MigrationExecutor(connection)
    node = engine_migration(executor)
    (previous,) = [p for p in executor.loader.graph.node_map[node].parents if p.key[0] == "evaluation"]
    leaves = executor.loader.graph.leaf_nodes()
    apps = migrate(executor, [previous.key])
    try:
        yield executor, apps, leaves
    finally:
        migrate(MigrationExecutor(connection), leaves)


def test_runs_checks_and_fine_tunes_read_and_resume_the_same_after_the_engine(before_engine):
    executor, old_apps, leaves = before_engine
    german = f.LanguageFactory(code="de", name="German")
    system = f.SystemFactory(name="sys-a")
    images = [f.ImageFactory(with_file=False) for _ in range(2)]
    # The reference set through the models of that schema: later migrations add columns (e.g. a
    # language-check override) that the current models would write.
    OldReferenceSet = old_apps.get_model("evaluation", "ReferenceSet")
    OldReference = old_apps.get_model("evaluation", "Reference")
    references = OldReferenceSet.objects.create(name="refs", language_id=german.pk, kind="imported")
    for image, text in zip(images, ["ein hund", "eine katze"], strict=True):
        OldReference.objects.create(reference_set_id=references.pk, image_id=image.pk, position=0, text=text)

    OldRun = old_apps.get_model("evaluation", "MetricRun")
    OldChunk = old_apps.get_model("evaluation", "MetricChunk")
    OldCheck = old_apps.get_model("evaluation", "RetrievalCheck")
    OldRetrievalChunk = old_apps.get_model("evaluation", "RetrievalChunk")
    OldFineTune = old_apps.get_model("evaluation", "ClipFineTune")
    now = timezone.now()
    long_ago = now - timedelta(hours=1)
    before = {}
    for state in JOB_STATES:
        done = 4 if state == "succeeded" else 1
        run = OldRun.objects.create(
            name=f"run {state}",
            language_id=german.pk,
            reference_set_id=references.pk,
            metrics=["BLEU-4"],
            status=state,
            error="boom" if state == "failed" else "",
            chunks_done=done,
            chunks_total=4,
            queued_at=long_ago,
            started_at=long_ago if state in ("running", "succeeded", "failed") else None,
            finished_at=now if state in ("succeeded", "failed") else None,
            timings={"text_seconds": 1.5},
            versions={"platform": "old"},
        )
        for index, unit_state in enumerate(UNIT_STATES if state != "succeeded" else ["done"] * 4):
            OldChunk.objects.create(
                run_id=run.pk,
                system_id=system.pk,
                kind="clip",
                index=index,
                image_ids=[images[0].pk],
                status=unit_state,
                attempts=1 if unit_state != "pending" else 0,
                # The running chunk's worker died an hour ago: orphaned.
                started_at=long_ago if unit_state != "pending" else None,
                heartbeat_at=long_ago if unit_state == "running" else None,
                error="bad" if unit_state == "failed" else "",
            )
        check = OldCheck.objects.create(
            name=f"check {state}",
            source="reference_sets",
            languages=["de"],
            params={"clip_model": "m"},
            status=state,
            chunks_done=done,
            chunks_total=4,
            results={"de": {"t2i": {"1": 0.5}}} if state == "succeeded" else {},
            started_at=long_ago if state != "pending" else None,
        )
        for index, unit_state in enumerate(UNIT_STATES if state != "succeeded" else ["done"] * 4):
            OldRetrievalChunk.objects.create(
                retrieval_check_id=check.pk,
                kind="images",
                index=index,
                payload=[images[0].pk],
                status=unit_state,
                started_at=long_ago if unit_state != "pending" else None,
                heartbeat_at=long_ago if unit_state == "running" else None,
            )
        fine_tune = OldFineTune.objects.create(
            name=f"fine-tune {state}",
            register_as=f"ft-{state}",
            status=state,
            config={"epochs": 5},
            epoch=2,
            step=40,
            attempts=0 if state in ("pending", "queued") else 1,
            started_at=long_ago if state not in ("pending", "queued") else None,
            heartbeat_at=long_ago if state not in ("pending", "queued") else None,
            error="killed" if state == "failed" else "",
            checkpoint="/runs/state.pt",
        )
        before[state] = (run.pk, check.pk, fine_tune.pk)

    migrate(executor, leaves)

    for state, (run_id, check_id, fine_tune_id) in before.items():
        run = MetricRun.objects.get(pk=run_id)
        assert (run.status, run.chunks_done, run.chunks_total, run.timings, run.versions) == (
            state,
            4 if state == "succeeded" else 1,
            4,
            {"text_seconds": 1.5},
            {"platform": "old"},
        )
        assert run.is_finished == (state in ("succeeded", "failed"))
        check = RetrievalCheck.objects.get(pk=check_id)
        done = 4 if state == "succeeded" else 1
        assert (check.status, check.chunks_done, check.progress) == (state, done, done / 4)
        assert check.results == ({"de": {"t2i": {"1": 0.5}}} if state == "succeeded" else {})
        fine_tune = ClipFineTune.objects.get(pk=fine_tune_id)
        assert (fine_tune.status, fine_tune.epoch, fine_tune.step, fine_tune.checkpoint) == (
            state,
            2,
            40,
            "/runs/state.pt",
        )
        assert fine_tune.timings == {}  # the one new column, empty for old runs
    assert MetricChunk.objects.orphaned().count() == 4  # the running chunk of each unfinished run
    assert RetrievalChunk.objects.orphaned().count() == 4

    # Resume the unfinished ones: pending, failed and orphaned units go back to the workers.
    for kind, column in ((METRIC_RUN, 0), (RETRIEVAL_CHECK, 1)):
        for state in ("pending", "queued", "running", "failed"):
            job_id = before[state][column]
            with mock.patch.object(kind.task, "apply_async") as send:
                result = job_resume(kind, job_id=job_id)
            assert (result.requeued, result.running) == (3, 0), (kind.name, state)
            sent = [call.kwargs["args"][0] for call in send.call_args_list]
            units = kind.units_of(job_id)
            assert sorted(sent) == sorted(units.exclude(status="done").values_list("pk", flat=True))
            assert kind.job_model.objects.get(pk=job_id).status == RunStatus.QUEUED
        with mock.patch.object(kind.task, "apply_async") as send:
            assert job_resume(kind, job_id=before["succeeded"][column]).requeued == 0
        assert send.call_count == 0
    for state in ("pending", "queued", "running", "failed"):
        with mock.patch.object(FINE_TUNE.task, "apply_async") as send:
            result = job_resume(FINE_TUNE, job_id=before[state][2])
        assert (result.requeued, send.call_args.kwargs["args"]) == (1, [before[state][2]]), state
        fine_tune = ClipFineTune.objects.get(pk=before[state][2])
        assert (fine_tune.status, fine_tune.error, fine_tune.epoch) == (RunStatus.QUEUED, "", 2)
    assert ClipFineTune.objects.get(pk=before["succeeded"][2]).status == RunStatus.SUCCEEDED
