"""The abstract job and work-unit models every job kind inherits, and the one orphan rule.

A **job** (a metric run, a retrieval check, a fine-tuning run) is what a person starts and follows; a
**work unit** (a chunk) is what one worker takes, retries and resumes. A job may be its own single
unit (fine-tuning): :class:`SingleUnitJob` then carries the unit's fields on the job row.

The fields keep the column names the kinds had before the engine, so moving a kind onto it migrates
no data. Unit states are class attributes, so a single-unit job maps them onto its job states.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from core.models import TimeStamped, one_of


class JobStatus(models.TextChoices):
    PENDING = "pending", "pending"
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"


FINISHED_JOB_STATUSES = (JobStatus.SUCCEEDED, JobStatus.FAILED)


class UnitStatus(models.TextChoices):
    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


def _silent_since(cutoff: datetime) -> Q:
    # The last sign of life is the heartbeat, or the claim for a unit that never beat.
    return (
        Q(heartbeat_at__lt=cutoff)
        | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
        | Q(heartbeat_at__isnull=True, started_at__isnull=True)
    )


class UnitQuerySet(models.QuerySet):
    """The one rule for which units a worker may take and which lost their worker."""

    def orphaned(self, *, now: datetime | None = None):
        """Units 'running' with no sign of life for the kind's orphan timeout: their worker is gone."""
        model = self.model
        cutoff = (now or timezone.now()) - timedelta(seconds=model.orphan_seconds())
        return self.filter(Q(status=model.UNIT_RUNNING) & _silent_since(cutoff))

    def claimable(self, *, now: datetime | None = None):
        """Units a worker may take: ready (pending; failed for chunks) or orphaned. Never done, never
        running with a live worker."""
        model = self.model
        cutoff = (now or timezone.now()) - timedelta(seconds=model.orphan_seconds())
        return self.filter(
            Q(status__in=model.UNIT_READY) | Q(status=model.UNIT_RUNNING) & _silent_since(cutoff)
        )


class _UnitBehaviour:
    """Unit states and liveness, shared by :class:`WorkUnit` and :class:`SingleUnitJob`."""

    UNIT_PENDING = UnitStatus.PENDING
    UNIT_READY: tuple[str, ...] = (UnitStatus.PENDING, UnitStatus.FAILED)
    UNIT_RUNNING = UnitStatus.RUNNING
    UNIT_DONE = UnitStatus.DONE
    UNIT_FAILED = UnitStatus.FAILED

    @classmethod
    def orphan_seconds(cls) -> float:
        """How long a running unit may stay silent before it counts as orphaned (``JOB_ORPHAN_SECONDS``)."""
        return float(settings.JOB_ORPHAN_SECONDS)

    def silent_seconds(self, now: datetime | None = None) -> float | None:
        """Seconds since the last sign of life of a running unit (None when it is not running)."""
        last = self.heartbeat_at or self.started_at
        if self.status != self.UNIT_RUNNING or last is None:
            return None
        return ((now or timezone.now()) - last).total_seconds()

    def is_orphaned(self, now: datetime | None = None) -> bool:
        if self.status != self.UNIT_RUNNING:
            return False
        last = self.heartbeat_at or self.started_at
        return last is None or (now or timezone.now()) - last > timedelta(seconds=self.orphan_seconds())


class Job(TimeStamped):
    """What a person starts and follows: its state, timings, the workers' package versions, the error.

    Chunked kinds add ``chunks_done``/``chunks_total`` (see :class:`ChunkedJob`)."""

    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.PENDING)
    error = models.TextField(blank=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    timings = models.JSONField(default=dict, blank=True)
    # Package versions of the worker that computed the job.
    versions = models.JSONField(default=dict, blank=True)

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_JOB_STATUSES

    @property
    def progress(self) -> float:
        """Share of the work done, 0..1."""
        return 1.0 if self.status == JobStatus.SUCCEEDED else 0.0

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


class ChunkedJob(Job):
    """A job split into :class:`WorkUnit` rows, with a done counter kept by the engine."""

    chunks_done = models.PositiveIntegerField(default=0)
    chunks_total = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True

    @property
    def progress(self) -> float:
        return self.chunks_done / self.chunks_total if self.chunks_total else 0.0


def job_constraints(prefix: str) -> list[models.CheckConstraint]:
    """The constraint every concrete job declares: a known status. Named ``<prefix>_status``."""
    return [one_of("status", JobStatus, f"{prefix}_status")]


def chunked_job_constraints(prefix: str) -> list[models.CheckConstraint]:
    """The constraints every concrete :class:`ChunkedJob` declares: the done counter never passes the
    total, and a known status. Named ``<prefix>_progress`` and ``<prefix>_status``."""
    return [
        models.CheckConstraint(condition=Q(chunks_done__lte=F("chunks_total")), name=f"{prefix}_progress"),
        *job_constraints(prefix),
    ]


class WorkUnit(_UnitBehaviour, TimeStamped):
    """The unit a worker takes, retries and resumes. A concrete unit adds its foreign key to the job."""

    status = models.CharField(max_length=10, choices=UnitStatus.choices, default=UnitStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    # Set when a worker claims the unit and every JOB_HEARTBEAT_SECONDS while it computes.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    objects = UnitQuerySet.as_manager()

    class Meta:
        abstract = True


class SingleUnitJob(_UnitBehaviour, Job):
    """A job that is its own unit (one long computation, such as training): the unit's states are the
    job's (ready = queued, done = succeeded), its attempts and heartbeat live on the job row."""

    UNIT_PENDING = JobStatus.QUEUED
    UNIT_READY = (JobStatus.QUEUED,)
    UNIT_RUNNING = JobStatus.RUNNING
    UNIT_DONE = JobStatus.SUCCEEDED
    UNIT_FAILED = JobStatus.FAILED

    attempts = models.PositiveIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    objects = UnitQuerySet.as_manager()

    class Meta:
        abstract = True
