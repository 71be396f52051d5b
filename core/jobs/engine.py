"""The one job engine: claim, heartbeat, release, fail, store, finalise, send, resume, the orphan sweep.

Every function takes the :class:`~core.jobs.kinds.JobKind` it works for. The guarantees hold for every
kind alike:

* A unit is **claimed** by one conditional UPDATE (ready, or running but silent for the kind's orphan
  timeout); PostgreSQL re-checks the condition on a row a concurrent claim just updated, so of two
  workers exactly one gets the unit, and a unit with a live worker is never taken.
* While a worker **computes** a unit (outside any transaction), a thread of its own **beats**
  (``heartbeat_at``) every ``JOB_HEARTBEAT_SECONDS``: the long calls (CLIP inference, a training step)
  are not ours to interrupt, and a worker killed with SIGKILL takes the thread with it, so the beats stop
  exactly when the work does.
* The outcome is **stored** in one short transaction that locks the job row, then the unit row (always
  in that order, here, in :func:`unit_fail` and in :func:`job_resume`); a unit already done is never
  written again, so a redelivered or duplicated task stores nothing twice. The last unit **finalises**
  the job.
* Units are **sent** to the broker only once the transaction that made them commits. With the broker
  down, the job is marked failed ("could not be queued: ...") and :class:`core.errors.JobsUnavailable`
  is raised; the job is resumable once the broker is back.
* The **sweep** queues again every orphaned unit of a queued or running job, for every registered kind.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerOperationalError

from core.errors import JobsUnavailable, NotFound
from core.jobs.kinds import JobKind, kind_get, kinds, succeeded_listeners
from core.jobs.local import local_runner_active, local_submit
from core.jobs.models import JobStatus
from core.versions import package_versions

log = logging.getLogger(__name__)

# Publishing a unit: one retry, so a dead broker answers within seconds, not minutes.
PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}
BROKER_ERRORS = (BrokerOperationalError, ConnectionError, OSError)
ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)


class JobDataError(Exception):
    """The data of a unit cannot be used: a caption, reference or file went missing or is unreadable.

    Raised only where a kind checks its data, before its computation sees it, so that an error of the
    computing code itself (a ``ValueError`` included) is never reported as bad data. Marks the unit and
    its job failed with the message; the job can be resumed once the data is fixed."""


# --- claim, beat, release -------------------------------------------------------------------------


def unit_claim(kind: JobKind, *, unit_id: int) -> int | None:
    """Take a unit for this worker: returns the attempt number, or None when it is not to be computed.

    One conditional UPDATE (no lock held afterwards): the unit must be claimable (see
    ``UnitQuerySet.claimable``). A done unit, or one whose worker is alive, is never claimed."""
    model = kind.unit_model
    now = timezone.now()
    with transaction.atomic():
        claimed = (
            model.objects.filter(pk=unit_id)
            .claimable(now=now)
            .update(
                status=model.UNIT_RUNNING,
                attempts=F("attempts") + 1,
                started_at=now,
                heartbeat_at=now,
                error="",
                updated_at=now,
            )
        )
        if not claimed:
            return None
        return model.objects.values_list("attempts", flat=True).get(pk=unit_id)


def unit_beat(kind: JobKind, *, unit_id: int, attempt: int) -> bool:
    """Record that the worker of ``attempt`` still computes the unit. False: the unit is no longer its own
    (taken over, finished or failed); the caller stops beating."""
    model = kind.unit_model
    now = timezone.now()
    return bool(
        model.objects.filter(pk=unit_id, status=model.UNIT_RUNNING, attempts=attempt).update(
            heartbeat_at=now, updated_at=now
        )
    )


def unit_release(kind: JobKind, *, unit_id: int, attempt: int) -> None:
    """Give a unit back (ready again) after a transient error, so the task's retry can claim it."""
    model = kind.unit_model
    try:
        model.objects.filter(pk=unit_id, status=model.UNIT_RUNNING, attempts=attempt).update(
            status=model.UNIT_PENDING, heartbeat_at=None, updated_at=timezone.now()
        )
    except DatabaseError:  # still down: the unit goes silent and is orphaned, then queued again
        log.warning("%s unit %s: could not be given back after a database error", kind.name, unit_id)


class Heartbeat:
    """Beats for a unit from a daemon thread while the ``with`` block computes it."""

    def __init__(self, kind: JobKind, *, unit_id: int, attempt: int):
        from django.conf import settings

        self.kind, self.unit_id, self.attempt = kind, unit_id, attempt
        self.interval = float(settings.JOB_HEARTBEAT_SECONDS)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"{kind.name}-{unit_id}-heartbeat", daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc_info):
        self.stopped.set()
        self.thread.join(timeout=self.interval + 5)

    def _run(self) -> None:
        try:
            while not self.stopped.wait(self.interval):
                try:
                    if not unit_beat(self.kind, unit_id=self.unit_id, attempt=self.attempt):
                        return
                except DatabaseError:
                    # The database is away for a moment: beat again next time. Missing beats for the
                    # whole orphan timeout lets another worker take over, which is safe.
                    log.warning("%s unit %s: heartbeat failed", self.kind.name, self.unit_id, exc_info=True)
        finally:
            connection.close()  # this thread's own connection


# --- compute, store, fail, finalise ---------------------------------------------------------------


def unit_run(kind: JobKind, *, unit_id: int, send_next: bool = True) -> str:
    """Claim, compute and store one unit; finalise its job if it was the last. Returns what happened:
    ``done``, ``already done``, ``running elsewhere``, ``waiting``, ``failed`` or ``missing``.

    Idempotent: a done unit returns at once; an interrupted attempt's results are replaced, never
    duplicated. Bad data (:class:`JobDataError` or one of the kind's ``data_errors``) marks the unit and
    the job failed with the reason; other units go on. A database error gives the unit back and
    propagates (the task retries it); any other error propagates as a bug. ``send_next=False``: the
    caller runs waiting units itself (a command computing in its own process)."""
    model = kind.unit_model
    unit = model.objects.select_related(*kind.select_related).filter(pk=unit_id).first()
    if unit is None:
        return "missing"
    if unit.status == model.UNIT_DONE:
        return "already done"
    if kind.waiting is not None and kind.waiting(unit):
        return "waiting"
    attempt = unit_claim(kind, unit_id=unit_id)
    if attempt is None:
        done = model.objects.filter(pk=unit_id, status=model.UNIT_DONE).exists()
        return "already done" if done else "running elsewhere"
    job_id = kind.job_id_of(unit)
    now = timezone.now()
    jobs = kind.job_model.objects.filter(pk=job_id)
    if kind.single:
        jobs.update(versions=package_versions(), updated_at=now)
    else:
        jobs.filter(status__in=[JobStatus.PENDING, JobStatus.QUEUED]).update(
            status=JobStatus.RUNNING,
            started_at=Coalesce(F("started_at"), Value(now)),
            versions=package_versions(),
            updated_at=now,
        )
    started = time.perf_counter()
    try:
        with Heartbeat(kind, unit_id=unit_id, attempt=attempt):
            outcome = kind.compute(unit)
        return _store(kind, unit_id, outcome, time.perf_counter() - started, send_next=send_next)
    except (JobDataError, *kind.data_errors) as exc:
        unit_fail(kind, unit_id=unit_id, message=str(exc))
        return "failed"
    except DatabaseError:
        unit_release(kind, unit_id=unit_id, attempt=attempt)
        raise


def _locked(kind: JobKind, unit_id: int) -> tuple[Any, Any] | None:
    """The job row, then the unit row, locked in that order; None when the unit is gone."""
    if kind.single:
        job = kind.job_model.objects.select_for_update().filter(pk=unit_id).first()
        return (job, job) if job is not None else None
    job_id = kind.unit_model.objects.filter(pk=unit_id).values_list(f"{kind.job_field}_id", flat=True).first()
    if job_id is None:
        return None
    job = kind.job_model.objects.select_for_update().get(pk=job_id)
    return job, kind.unit_model.objects.select_for_update().get(pk=unit_id)


def _store(kind: JobKind, unit_id: int, outcome, seconds: float, *, send_next: bool) -> str:
    model = kind.unit_model
    with transaction.atomic():
        locked = _locked(kind, unit_id)
        if locked is None:
            return "missing"
        job, unit = locked
        if unit.status == model.UNIT_DONE:
            return "already done"
        kind.store(job, unit, outcome, seconds)
        if kind.single:
            job_finalise(kind, job)
            return "done"
        unit.status = model.UNIT_DONE
        unit.finished_at = timezone.now()
        unit.error = ""
        unit.save(update_fields=["status", "finished_at", "error", "updated_at"])
        job.chunks_done = kind.units_of(job.pk).filter(status=model.UNIT_DONE).count()
        job.save()
        if job.chunks_done == job.chunks_total:
            job_finalise(kind, job)
        elif send_next and kind.after_store is not None:
            kind.after_store(job, unit)
    return "done"


def timings_add(job, key: str, seconds: float, stats: dict | None = None) -> None:
    """Add a unit's seconds under ``key`` and its counts to the job's timings (names are recorded as
    they are: the last unit's CLIP model id, say). For a kind's ``store``."""
    timings = dict(job.timings or {})
    timings[key] = round(timings.get(key, 0.0) + seconds, 3)
    for name, value in (stats or {}).items():
        timings[name] = timings.get(name, 0) + value if isinstance(value, int) else value
    job.timings = timings


def unit_fail(kind: JobKind, *, unit_id: int, message: str) -> None:
    """Mark a unit failed and its job failed (first error kept), unless the unit got done meanwhile.

    Locks the job row, then the unit row. The job can be resumed."""
    with transaction.atomic():
        locked = _locked(kind, unit_id)
        if locked is None:
            return
        job, unit = locked
        if unit.status == kind.unit_model.UNIT_DONE:
            return
        _fail_locked(kind, job, unit, message)


def _fail_locked(kind: JobKind, job, unit, message: str) -> None:
    now = timezone.now()
    if not kind.single:
        unit.status = kind.unit_model.UNIT_FAILED
        unit.error = message
        unit.finished_at = now
        unit.save(update_fields=["status", "error", "finished_at", "updated_at"])
    if job.status != JobStatus.SUCCEEDED:
        job.status = JobStatus.FAILED
        if kind.single:
            job.error = message[:4000]
        elif not job.error:
            job.error = f"{kind.unit_label(unit)}: {message}"
        job.finished_at = now
        job.save(update_fields=["status", "error", "finished_at", "updated_at"])
    log.warning("%s %s, unit %s failed: %s", kind.label, job.pk, unit.pk, message)


def job_finalise(kind: JobKind, job) -> None:
    """Run the kind's finalise, then mark the job succeeded with its wall time and queue wait.

    Call with the job row locked, once every unit is done. Idempotent."""
    if kind.finalise is not None:
        kind.finalise(job)
    now = timezone.now()
    job.status = JobStatus.SUCCEEDED
    job.error = ""
    job.finished_at = now
    timings = dict(job.timings or {})
    if job.started_at:
        timings["wall_seconds"] = round((now - job.started_at).total_seconds(), 3)
    if job.queued_at and job.started_at:
        timings["queue_wait_seconds"] = round(max(0.0, (job.started_at - job.queued_at).total_seconds()), 3)
    job.timings = timings
    job.save()
    job_id = job.pk
    for listener in succeeded_listeners():
        transaction.on_commit(lambda listener=listener: listener(kind.name, job_id), robust=True)


# --- send, resume, sweep --------------------------------------------------------------------------


def job_enqueue(kind: JobKind, *, job) -> None:
    """Send the job's ready units to the workers once the current transaction commits (at once outside
    one). Nothing is sent if it rolls back. Raises :class:`JobsUnavailable` from the commit when the
    broker is unreachable (the job is then marked failed, resumable)."""
    job_id = job.pk
    transaction.on_commit(lambda: job_send(kind, job_id))


def job_units_store(kind: JobKind, *, job, units: list, enqueue: bool = True) -> None:
    """Store a new chunked job's units, count them on the job, and (``enqueue``) send them on commit
    (:func:`job_enqueue`). Runs in the caller's transaction, which the caller holds."""
    kind.unit_model.objects.bulk_create(units)
    job.chunks_total = len(units)
    job.save(update_fields=["chunks_total", "updated_at"])
    if enqueue:
        job_enqueue(kind, job=job)


def _ready(kind: JobKind, job_id: int) -> list[int]:
    if kind.ready is not None:
        return kind.ready(job_id)
    model = kind.unit_model
    return list(
        kind.units_of(job_id).filter(status=model.UNIT_PENDING).order_by("pk").values_list("pk", flat=True)
    )


def job_send(kind: JobKind, job_id: int) -> int:
    """Mark a pending job queued and send its ready units now; returns how many were sent."""
    now = timezone.now()
    kind.job_model.objects.filter(pk=job_id, status=JobStatus.PENDING).update(
        status=JobStatus.QUEUED, queued_at=now, updated_at=now
    )
    return units_send(kind, job_id, _ready(kind, job_id))


def units_send(kind: JobKind, job_id: int, unit_ids: list[int]) -> int:
    """Publish one task per unit, in the given order. With the broker unreachable, the job is marked
    failed (unless it succeeded meanwhile) and :class:`JobsUnavailable` is raised. In the embedded
    default (eager Celery, ``JOBS_LOCAL_RUNNER``), units sent while a request is answered go to the
    local worker thread instead (:mod:`core.jobs.local`), so the request returns at once."""
    if local_runner_active():
        for unit_id in unit_ids:
            local_submit(kind, unit_id)
        return len(unit_ids)
    for unit_id in unit_ids:
        try:
            kind.task.apply_async(args=[unit_id], retry=True, retry_policy=PUBLISH_RETRY_POLICY)
        except BROKER_ERRORS as exc:
            message = f"could not be queued: the job broker is unreachable ({exc})"
            log.error("%s %s %s", kind.label, job_id, message)
            now = timezone.now()
            kind.job_model.objects.filter(pk=job_id).exclude(status=JobStatus.SUCCEEDED).update(
                status=JobStatus.FAILED, error=message, finished_at=now, updated_at=now
            )
            hint = kind.resume_hint.format(id=job_id)
            raise JobsUnavailable(
                f"{kind.label[0].upper()}{kind.label[1:]} #{job_id} {message}. Annotation is not affected; "
                f"once the broker is back, resume it ({hint + ', or ' if hint else ''}the admin action).",
                details={"job_id": job_id, kind.id_detail: job_id, "kind": kind.name},
            ) from exc
    return len(unit_ids)


@dataclass(frozen=True)
class ResumeResult:
    job: Any
    requeued: int
    running: int


def send_when_ready(kind_name: str, *, last: str):
    """An ``after_store`` hook for a kind whose ``last`` units (``unit.kind``) wait for its other units.

    After one of the others is stored, the ``last`` units that stopped waiting go to the workers on
    commit; storing a ``last`` unit sends nothing.
    """

    def after_store(job, unit) -> None:
        if unit.kind == last:
            return
        kind = kind_get(kind_name)
        waiting = set(kind.units_of(job.pk).filter(kind=last).values_list("pk", flat=True))
        ready = [pk for pk in kind.ready(job.pk) if pk in waiting]
        if ready:
            job_id = job.pk
            transaction.on_commit(lambda: units_send(kind, job_id, ready))

    return after_store


def job_resume(kind: JobKind, *, job_id: int, enqueue: bool = True) -> ResumeResult:
    """Put every unit that is not done and has no live worker (pending, failed, orphaned) back to ready
    and send those that may run, on commit; units whose worker is alive are left to it.

    Locks the job row. Idempotent: a succeeded job is left as it is; a job whose units are all done is
    finalised. Raises NotFound, and JobsUnavailable from the commit."""
    model = kind.unit_model
    with transaction.atomic():
        job = kind.job_model.objects.select_for_update().filter(pk=job_id).first()
        if job is None:
            raise NotFound(f"There is no {kind.label} #{job_id}.")
        if job.status == JobStatus.SUCCEEDED:
            return ResumeResult(job=job, requeued=0, running=0)
        units = kind.units_of(job_id)
        now = timezone.now()
        not_done = {*model.UNIT_READY, model.UNIT_PENDING, model.UNIT_FAILED, JobStatus.PENDING}
        resumable = units.filter(Q(status__in=not_done) | Q(pk__in=units.orphaned().values("pk")))
        requeued = resumable.update(status=model.UNIT_PENDING, error="", updated_at=now)
        running = units.filter(status=model.UNIT_RUNNING).count()
        if requeued == 0 and running == 0:
            job_finalise(kind, job)
            return ResumeResult(job=job, requeued=0, running=0)
        if requeued:
            job.status = JobStatus.QUEUED
            job.queued_at = now
            job.error = ""
            job.finished_at = None
            job.save(update_fields=["status", "queued_at", "error", "finished_at", "updated_at"])
            if enqueue:
                job_enqueue(kind, job=job)
    return ResumeResult(job=job, requeued=requeued, running=running)


def orphans_requeue(kind: JobKind) -> int:
    """Queue again every orphaned unit of a queued or running job of ``kind``; returns how many.

    Per job, locks the job row, then puts back to ready only the units still orphaned at that moment
    (one conditional UPDATE: a unit that beat or was taken over meanwhile is left alone) and sends just
    those on commit. Failed and succeeded jobs are left to a person (resume). Idempotent. Raises
    JobsUnavailable like :func:`units_send`."""
    model = kind.unit_model
    orphaned = model.objects.orphaned()
    if kind.single:
        job_ids = orphaned.filter(status__in=ACTIVE).values_list("pk", flat=True)
    else:
        job_ids = orphaned.filter(**{f"{kind.job_field}__status__in": ACTIVE}).values_list(
            f"{kind.job_field}_id", flat=True
        )
    requeued = 0
    for job_id in sorted(set(job_ids)):
        with transaction.atomic():
            job = kind.job_model.objects.select_for_update().filter(pk=job_id, status__in=ACTIVE).first()
            if job is None:
                continue
            unit_ids = list(kind.units_of(job_id).orphaned().values_list("pk", flat=True))
            count = (
                model.objects.filter(pk__in=unit_ids)
                .orphaned()
                .update(status=model.UNIT_PENDING, error="", updated_at=timezone.now())
            )
            if not count:
                continue
            pending = set(
                model.objects.filter(pk__in=unit_ids, status=model.UNIT_PENDING).values_list("pk", flat=True)
            )
            ordered = [pk for pk in _ready(kind, job_id) if pk in pending]
            log.warning("%s %s: %s orphaned units queued again (%s)", kind.label, job_id, count, ordered)
            requeued += count
            transaction.on_commit(lambda job_id=job_id, ordered=ordered: units_send(kind, job_id, ordered))
    return requeued


def orphans_sweep() -> dict[str, int]:
    """The beat's sweep: :func:`orphans_requeue` over every registered kind; ``{kind: units requeued}``.

    A kind whose units cannot be queued (broker down) is logged and skipped; the next sweep carries on."""
    found: dict[str, int] = {}
    for kind in kinds():
        try:
            found[kind.name] = orphans_requeue(kind)
        except JobsUnavailable as exc:
            log.error("%s", exc.message)
            found[kind.name] = 0
    return found
