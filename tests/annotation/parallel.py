"""Helpers for the tests that prove concurrency claims with real parallel connections.

Each callable runs in its own thread; Django gives each thread its own database connection,
closed when the thread ends. Short lock and statement timeouts make a hang fail within
seconds; deadlock_timeout (1 s) stays below lock_timeout, so a deadlock is still reported as one.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection
from django.db.utils import OperationalError


@pytest.fixture(autouse=True)
def postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("row locks and parallel connections are only proven on PostgreSQL (set DATABASE_URL)")


def short_timeouts() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '5s'")
        cursor.execute("SET statement_timeout = '15s'")


def run_threads(targets: list, *, timeout: float = 40.0) -> list[BaseException]:
    """Run each callable in its own thread (own connection); return what they raised."""
    errors: list[BaseException] = []
    lock = threading.Lock()

    def wrap(target):
        try:
            short_timeouts()
            target()
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            with lock:
                errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=wrap, args=(t,), daemon=True) for t in targets]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), f"threads still running after {timeout}s: a hang"
    return errors


def fail_on_db_errors(errors: list[BaseException]) -> None:
    deadlocks = [e for e in errors if isinstance(e, OperationalError) and "deadlock" in str(e).lower()]
    assert not deadlocks, f"deadlock: {deadlocks[0]}"
    assert not errors, f"{len(errors)} thread(s) failed, first: {errors[0]!r}"
