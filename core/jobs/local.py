"""The embedded default's local worker: long jobs run beside the web process, not inside a request.

With no broker (eager Celery), sending a unit used to compute it inside the request that started the
job (and a report page computed its report inside the request: 16 s of blank page on the demo): starting the demo fine-tune held the admin page for two minutes. When ``JOBS_LOCAL_RUNNER`` is on
(the embedded default) and Celery is eager, a unit sent while a web request is being answered is
handed to a small thread pool instead; the request returns at once and the job's page shows its
progress as the units finish. A unit the pool computes runs the kind's own task (``task.apply``),
so claiming, heartbeats, failure and the follow-up units are the engine's as with a real worker; a
follow-up unit sent from the pool is computed in the same thread, in order.

Outside requests (management commands, the shell, tests with the setting off) units are computed
where they are sent, as before, so a command still prints finished results. The pool lives as long
as the process: a process stopped mid-job leaves its unit running until the job is resumed (the job
admin's "resume" action), as a killed worker would.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connections

from core.jobs.kinds import JobKind

log = logging.getLogger(__name__)

_in_request: contextvars.ContextVar[bool] = contextvars.ContextVar("jobs_in_request", default=False)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def local_runner_enabled() -> bool:
    """Whether jobs started from pages run on the local pool: the setting on and Celery eager."""
    return bool(getattr(settings, "JOBS_LOCAL_RUNNER", False)) and bool(
        getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False)
    )


def local_runner_active() -> bool:
    """Whether a unit sent now goes to the local pool: enabled, and a request is being answered."""
    return local_runner_enabled() and _in_request.get()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            workers = max(1, int(getattr(settings, "JOBS_LOCAL_THREADS", 1)))
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="local-job")
        return _pool


def _run(kind: JobKind, unit_id: int) -> None:
    close_old_connections()
    try:
        # apply() runs the task here with its failure hook: a unit that raises is marked failed.
        kind.task.apply(args=[unit_id])
    except Exception:  # apply() stores errors on its result; this is a last guard for the thread
        log.exception("local %s %s %s failed", kind.label, kind.unit_noun, unit_id)
    finally:
        connections.close_all()


def local_submit(kind: JobKind, unit_id: int) -> Future:
    """Hand one unit to the local pool; returns its future (tests wait on it)."""
    return _executor().submit(_run, kind, unit_id)


def _call(function: Callable[..., Any], kwargs: dict) -> None:
    close_old_connections()
    try:
        function(**kwargs)
    except Exception:  # the function stores its own failure (a report row's error); this guards the thread
        log.exception("local call %s failed", getattr(function, "__name__", function))
    finally:
        connections.close_all()


def local_call(function: Callable[..., Any], **kwargs: Any) -> Future:
    """Run ``function(**kwargs)`` on the local pool, beside the request, as a worker would: for work that is
    not a job kind's unit (a report computed once per selection). Returns its future (tests wait on it)."""
    return _executor().submit(_call, function, kwargs)


def local_wait(timeout: float | None = None) -> None:
    """Wait until every unit handed to the pool so far is computed (tests and shutdown)."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True)


class LocalJobsMiddleware:
    """Marks the time a request is answered, so that units it sends go to the local pool."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = _in_request.set(True)
        try:
            return self.get_response(request)
        finally:
            _in_request.reset(token)
