"""Reports computed once per selection content and stored (:class:`evaluation.models.ReportCache`).

The expensive parts of a report (ΔS×S bootstrap, correlations with their intervals, the item level's
bootstrap and permutation tests, the figures) depend only on the selection (runs, campaigns, the
settings that change the numbers) and on the data behind it (when each run finished, each campaign's
state and judgments, the ratings, the retrieval checks and fine-tuning runs). :func:`content_key`
hashes both; :func:`selection_key` hashes the selection alone. A page asks :func:`report_lookup`:

* the row of the current content is done: the stored result, at once;
* it is not (new, queued or computing): the row is queued (:func:`report_enqueue`, on commit, a
  Celery task; in the embedded default, while a page is answered, the local runner's thread beside the
  request, :mod:`core.jobs.local`; computed on the spot where Celery runs eagerly outside a request, as
  in commands and the tests), and the page shows what is being computed and, when the same selection
  was computed from older data, that older result marked as such.

Nothing is invalidated by time: new data gives a new key. A row whose computation died (worker
killed) is queued again once it has not moved for :data:`STALE_AFTER`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.utils import timezone

from annotation.models import Campaign, CampaignKind, Rating, SxsJudgment
from core.errors import DomainError, ValidationFailed
from core.jobs.local import local_call, local_runner_active
from evaluation.models import (
    ClipFineTune,
    ClipProbeCheck,
    MetricRun,
    ReportCache,
    ReportCacheState,
    ReportFigure,
    RetrievalCheck,
)

log = logging.getLogger(__name__)

# Raise when what is stored changes shape or the computation changes its numbers: old rows then miss.
CACHE_VERSION = 1
STALE_AFTER = timedelta(minutes=15)
REPORT = "report"


def _hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def _fingerprint(queryset) -> list:
    found = queryset.aggregate(n=Count("pk"), latest=Max("updated_at"))
    return [found["n"], found["latest"]]


def selection_content(*, metric_run_ids: Sequence[int], campaign_ids: Sequence[int] | None) -> dict:
    """What the numbers of a selection are computed from, as plain values (a few aggregate queries):
    each run's status and finish time, each side-by-side campaign's state and its judgments (every
    such campaign when ``campaign_ids`` is None: the default takes the finished ones), the screen-1
    ratings, the retrieval checks, the zero-shot and foil checks of CLIP and the fine-tuning runs."""
    runs = sorted(
        MetricRun.objects.filter(pk__in=list(metric_run_ids)).values_list("pk", "status", "finished_at")
    )
    campaigns = Campaign.objects.filter(kind=CampaignKind.SIDE_BY_SIDE)
    if campaign_ids is not None:
        campaigns = campaigns.filter(pk__in=list(campaign_ids))
    judged = {
        row["assignment__item__campaign"]: (row["n"], row["latest"])
        for row in SxsJudgment.objects.filter(assignment__item__campaign__in=campaigns)
        .values("assignment__item__campaign")
        .annotate(n=Count("pk"), latest=Max("updated_at"))
    }
    return {
        "version": CACHE_VERSION,
        "runs": [list(run) for run in runs],
        "campaigns": [
            [pk, state, updated, *judged.get(pk, (0, None))]
            for pk, state, updated in campaigns.order_by("pk").values_list("pk", "state", "updated_at")
        ],
        "ratings": _fingerprint(Rating.objects.all()),
        "retrieval": _fingerprint(RetrievalCheck.objects.all()),
        "clip_probes": _fingerprint(ClipProbeCheck.objects.all()),
        "fine_tunes": _fingerprint(ClipFineTune.objects.all()),
    }


def selection_key(kind: str, selection: dict) -> str:
    """The hash of a selection alone (ids and settings), the same whatever the data behind it."""
    return _hash({"kind": kind, "version": CACHE_VERSION, "selection": selection})


def content_key(kind: str, selection: dict) -> str:
    """The hash of a selection and of the content it is computed from (:func:`selection_content`)."""
    content = selection_content(
        metric_run_ids=selection["metric_run_ids"], campaign_ids=selection.get("campaign_ids")
    )
    return _hash({"kind": kind, "selection": selection, "content": content})


# --- computing ----------------------------------------------------------------------------------------

# How a queued row reaches a worker: set by :mod:`.tasks` (the Celery task) when it is imported, which
# the app's ``ready`` does in every process; this module never imports the task (no import circle).
_SENDER: list[Callable[[int], None]] = []


def task_sender(send: Callable[[int], None]) -> None:
    """Register the function that sends a stored row's id to a worker."""
    _SENDER[:] = [send]


def _send(cache_id: int) -> None:
    if not _SENDER:
        raise RuntimeError("evaluation.research.reports.tasks was not imported: no task sends reports.")
    _SENDER[0](cache_id)


# kind -> function(selection, progress) -> the result to store; registered by the modules that own them.
_COMPUTERS: dict[str, Callable[[dict, Callable[[str], None]], Any]] = {}
# kind -> function(entry, result): what to prepare once the result is stored (e.g. the page's figures).
_AFTER: dict[str, Callable[[ReportCache, Any], None]] = {}


def computer(kind: str, *, after: Callable[[ReportCache, Any], None] | None = None):
    """Register the function that computes results of ``kind`` from a selection dict, and optionally
    what to render once its result is stored."""

    def register(function):
        _COMPUTERS[kind] = function
        if after is not None:
            _AFTER[kind] = after
        return function

    return register


def _progress_setter(pk: int) -> Callable[[str], None]:
    def progress(text: str) -> None:
        ReportCache.objects.filter(pk=pk).update(progress=text[:300], updated_at=timezone.now())

    return progress


def report_compute(*, cache_id: int) -> None:
    """Compute a queued row and store its result (or its error). Idempotent: a row already done is left
    alone; a row another worker is computing (moved within :data:`STALE_AFTER`) too. Locks the row
    only to claim it; the computation runs outside any transaction."""
    with transaction.atomic():
        entry = ReportCache.objects.select_for_update().filter(pk=cache_id).first()
        if entry is None or entry.state == ReportCacheState.DONE:
            return
        if entry.state == ReportCacheState.RUNNING and timezone.now() - entry.updated_at < STALE_AFTER:
            return
        entry.state = ReportCacheState.RUNNING
        entry.error = ""
        entry.save(update_fields=["state", "error", "updated_at"])
    started = time.perf_counter()
    try:
        result = _COMPUTERS[entry.kind](entry.selection, _progress_setter(entry.pk))
        payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except DomainError as exc:
        ReportCache.objects.filter(pk=entry.pk).update(
            state=ReportCacheState.FAILED, error=exc.message, progress="", updated_at=timezone.now()
        )
        return
    except Exception as exc:  # noqa: BLE001 — stored for the page, then re-raised for the logs
        ReportCache.objects.filter(pk=entry.pk).update(
            state=ReportCacheState.FAILED, error=f"{type(exc).__name__}: {exc}", updated_at=timezone.now()
        )
        raise
    ReportCache.objects.filter(pk=entry.pk).update(
        state=ReportCacheState.DONE,
        payload=payload,
        progress="",
        seconds=round(time.perf_counter() - started, 3),
        updated_at=timezone.now(),
    )
    # The same selection computed from older data is no longer shown once this one is done.
    ReportCache.objects.filter(
        selection_key=entry.selection_key, state__in=(ReportCacheState.DONE, ReportCacheState.FAILED)
    ).exclude(pk=entry.pk).delete()
    if entry.kind in _AFTER:
        _progress_setter(entry.pk)("drawing the figures")
        _AFTER[entry.kind](entry, result)
        ReportCache.objects.filter(pk=entry.pk).update(
            progress="", seconds=round(time.perf_counter() - started, 3)
        )


def eager() -> bool:
    return bool(getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False))


def report_enqueue(kind: str, selection: dict, *, key: str | None = None) -> ReportCache:
    """The row of this selection's current content, queued for computing unless done or under way.

    Where Celery runs eagerly the row is computed before this returns, except while a page is answered
    in the embedded default (``JOBS_LOCAL_RUNNER``): then the local runner computes it beside the request
    once the current transaction commits, as the Celery task is sent otherwise. Idempotent: two
    requests for the same content make one row.
    """
    key = key or content_key(kind, selection)
    try:
        with transaction.atomic():
            entry, created = ReportCache.objects.get_or_create(
                key=key,
                defaults={
                    "kind": kind,
                    "selection": selection,
                    "selection_key": selection_key(kind, selection),
                },
            )
    except IntegrityError:
        entry, created = ReportCache.objects.get(key=key), False
    moving = entry.state in (ReportCacheState.PENDING, ReportCacheState.RUNNING)
    stuck = moving and timezone.now() - entry.updated_at >= STALE_AFTER
    if created or stuck:
        if eager() and local_runner_active():
            # The embedded default answering a page: computed beside the request, as a worker would, so
            # that the page paints at once with what is being computed and reloads until it is done.
            entry_id = entry.pk
            transaction.on_commit(lambda: local_call(report_compute, cache_id=entry_id))
        elif eager():
            report_compute(cache_id=entry.pk)
            entry.refresh_from_db()
        else:
            entry_id = entry.pk
            transaction.on_commit(lambda: _send(entry_id))
    return entry


@dataclass
class Lookup:
    """What a page shows for a selection: ``result`` of the current content when done; otherwise
    ``entry`` (queued, computing or failed) and ``older``, the latest result of the same selection
    from older data (None if there is none), with when it was computed (``older_at``)."""

    entry: ReportCache
    result: Any = None
    older: Any = None
    older_at: Any = None

    @property
    def done(self) -> bool:
        return self.entry.state == ReportCacheState.DONE


def payload_load(entry: ReportCache) -> Any:
    return pickle.loads(bytes(entry.payload))  # noqa: S301 — written only by report_compute


def report_lookup(kind: str, selection: dict) -> Lookup:
    """The stored result of a selection, queueing its computation when missing (see the module docstring)."""
    entry = report_enqueue(kind, selection)
    if entry.state == ReportCacheState.DONE:
        return Lookup(entry, result=payload_load(entry))
    older = (
        ReportCache.objects.filter(selection_key=entry.selection_key, state=ReportCacheState.DONE, kind=kind)
        .exclude(pk=entry.pk)
        .order_by("-updated_at")
        .first()
    )
    if older is None:
        return Lookup(entry)
    return Lookup(entry, older=payload_load(older), older_at=older.updated_at)


def result_or_compute(kind: str, selection: dict) -> Any:
    """The stored result of a selection, computed now if missing (for the API, which answers with the
    numbers): computed once per content, then read. Raises the computation's DomainError."""
    key = content_key(kind, selection)
    entry = ReportCache.objects.filter(key=key, state=ReportCacheState.DONE).first()
    if entry is not None:
        return payload_load(entry)
    entry, _ = ReportCache.objects.get_or_create(
        key=key,
        defaults={"kind": kind, "selection": selection, "selection_key": selection_key(kind, selection)},
    )
    report_compute(cache_id=entry.pk)
    entry.refresh_from_db()
    if entry.state == ReportCacheState.DONE:
        return payload_load(entry)
    if entry.state == ReportCacheState.FAILED:
        raise ValidationFailed(entry.error)
    # Another worker is computing it: compute here as well rather than make the client wait on it.
    return _COMPUTERS[kind](selection, lambda text: None)


def figure_bytes(entry: ReportCache, name: str, render: Callable[[], bytes]) -> bytes:
    """A figure of a stored report, rendered the first time it is asked for and kept."""
    found = ReportFigure.objects.filter(cache=entry, name=name).values_list("data", flat=True).first()
    if found is not None:
        return bytes(found)
    data = render()
    try:
        with transaction.atomic():
            ReportFigure.objects.create(cache=entry, name=name, data=data)
    except IntegrityError:
        pass  # rendered by a concurrent request: same bytes
    return data
