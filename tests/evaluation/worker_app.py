"""Celery entry point of the real worker that tests/evaluation/test_jobs_redis.py starts (``-A`` this module).

The project's Celery app, plus what only those tests need: with ``METRIC_CHUNK_TEST_DELAY``
(seconds) in the environment, every chunk computation sleeps that long first, after the chunk
has been claimed (status running, one more attempt), so the test can kill the worker in the
middle of a chunk. Production code knows nothing of it.
"""

from __future__ import annotations

import functools
import os
import time

from celery import signals

from config.celery import app

__all__ = ["app"]

DELAY_VARIABLE = "METRIC_CHUNK_TEST_DELAY"


def _slowed(compute, delay: float):
    @functools.wraps(compute)
    def slow(chunk):
        time.sleep(delay)
        return compute(chunk)

    return slow


@signals.worker_process_init.connect
def slow_down_chunks(**_) -> None:
    # In each pool process, after Django is set up: the chunk module is importable then.
    delay = float(os.environ.get(DELAY_VARIABLE, "0") or 0)
    if delay <= 0:
        return
    from evaluation.runs import compute as chunks

    chunks._compute_text = _slowed(chunks._compute_text, delay)
    chunks._compute_clip = _slowed(chunks._compute_clip, delay)
    # The evaluation server's scoring kind: its compute is the kind's own reference.
    from challenges.scoring.tasks import SUBMISSION_SCORING

    SUBMISSION_SCORING.compute = _slowed(SUBMISSION_SCORING.compute, delay)
