"""What a job kind tells the engine, and the registry of kinds (filled by each kind's ``tasks`` module).

``core.jobs`` knows no app: a kind registers itself with the functions only it can write (compute a
unit, store its outcome, finalise the job) and the engine does the rest (claim, heartbeat, release,
fail, send, resume, the orphan sweep, the Celery task).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class JobKind:
    """A kind of background job.

    * ``compute(unit) -> outcome``: runs outside any transaction, with the heartbeat beating; raises
      :class:`core.jobs.engine.JobDataError` (or one of ``data_errors``) for data that cannot be used.
    * ``store(job, unit, outcome, seconds)``: runs in one transaction with the job row locked, then the
      unit row; writes the unit's results (replacing an interrupted attempt's) and may change the job's
      fields (the engine saves it); ``seconds``: the computation's time. The engine then marks the unit
      done. Raising JobDataError here rolls the store back and fails the unit.
    * ``finalise(job)`` (optional): with the job locked, once every unit is done, before it is marked
      succeeded (e.g. corpus means over the units).
    * ``ready(job_id) -> unit ids`` (optional): the pending units that may be sent now, in order (a unit
      may wait for others); default: every pending unit by id.
    * ``waiting(unit) -> bool`` (optional): True while a unit may not run yet (it is sent again later).
    * ``after_store(job, unit)`` (optional): in the store transaction, after the unit is done and the job
      is not; e.g. send the units that were waiting for this one (``transaction.on_commit``).
    * ``unit_label(unit) -> str``: how the job's error names the unit that failed.
    """

    name: str
    label: str  # "metric run", in messages
    job_model: type
    task_name: str  # the Celery task of one unit: queued messages keep it across deploys
    compute: Callable[[Any], Any]
    store: Callable[[Any, Any, Any, float], None]
    unit_model: type = None  # type: ignore[assignment]  # left out: the job is its own single unit
    job_field: str | None = None  # the unit's foreign key to its job; None for a single-unit job
    unit_noun: str = "unit"  # "chunk": in the admin's and the logs' messages
    id_detail: str = "job_id"  # the key that also names the job in JobsUnavailable.details (API clients)
    resume_hint: str = ""  # "manage.py metric_run resume {id}": how an operator resumes a job
    finalise: Callable[[Any], None] | None = None
    ready: Callable[[int], list[int]] | None = None
    waiting: Callable[[Any], bool] | None = None
    after_store: Callable[[Any, Any], None] | None = None
    unit_label: Callable[[Any], str] = lambda unit: f"unit {unit.pk}"
    data_errors: tuple[type[BaseException], ...] = ()
    select_related: tuple[str, ...] = ()  # what compute reads through the unit
    soft_time_limit: int = 25 * 60
    time_limit: int = 30 * 60
    soft_time_limit_hint: str = ""  # added to the "took longer than" message
    task: Any = field(default=None, repr=False)  # set by core.jobs.tasks.unit_task

    def __post_init__(self) -> None:
        if self.unit_model is None:
            self.unit_model = self.job_model

    @property
    def single(self) -> bool:
        return self.job_field is None

    def job_id_of(self, unit) -> int:
        return unit.pk if self.single else getattr(unit, f"{self.job_field}_id")

    def units_of(self, job_id: int):
        """The units of one job, as a queryset of the unit model."""
        if self.single:
            return self.unit_model.objects.filter(pk=job_id)
        return self.unit_model.objects.filter(**{f"{self.job_field}_id": job_id})


_KINDS: dict[str, JobKind] = {}


def register(kind: JobKind) -> JobKind:
    """Register a kind (idempotent by name: re-importing a module registers the same kind again)."""
    _KINDS[kind.name] = kind
    return kind


def kinds() -> list[JobKind]:
    return list(_KINDS.values())


def kind_get(name: str) -> JobKind:
    return _KINDS[name]


# Called as ``listener(kind_name, job_id)`` after the transaction that marks a job succeeded commits:
# how an app prepares what depends on finished jobs (e.g. stored reports) without the engine knowing it.
_SUCCEEDED_LISTENERS: list[Callable[[str, int], None]] = []


def on_job_succeeded(listener: Callable[[str, int], None]) -> None:
    """Register a listener of succeeded jobs (idempotent: the same function is registered once)."""
    if listener not in _SUCCEEDED_LISTENERS:
        _SUCCEEDED_LISTENERS.append(listener)


def succeeded_listeners() -> list[Callable[[str, int], None]]:
    return list(_SUCCEEDED_LISTENERS)
