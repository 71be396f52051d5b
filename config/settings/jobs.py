"""Settings of the one job engine (``core.jobs``): heartbeats, the orphan rule, the sweep, time limits.

Every background job (metric runs, retrieval checks, fine-tuning) is governed by these ``JOB_*`` names.
The names they replace still work for one release, read from the environment when the new name is not
set (deprecated: ``METRIC_CHUNK_HEARTBEAT_SECONDS``, ``METRIC_CHUNK_ORPHAN_SECONDS``,
``METRIC_ORPHAN_SWEEP_SECONDS``, ``CLIP_FINETUNE_ORPHAN_SECONDS``), and the same values are also
published under the old names for code that reads them.

A worker computing a unit beats every ``JOB_HEARTBEAT_SECONDS``; a running unit silent for
``JOB_ORPHAN_SECONDS`` lost its worker (killed, machine gone) and is queued again by the sweep every
``JOB_SWEEP_SECONDS``, so a kill costs about two minutes, not the task time limit or the broker's
visibility timeout. The timeout must span several beats, or a live but busy worker's unit would be
taken over and computed twice. A kind may set a longer timeout of its own (fine-tuning:
``JOB_FINETUNE_ORPHAN_SECONDS``: a training step with a cold disk cache may keep a worker busy).
"""

from __future__ import annotations

import environ
from django.core.exceptions import ImproperlyConfigured

env = environ.Env()


def _seconds(name: str, old: str, default: float) -> float:
    """``name`` from the environment, else the deprecated ``old`` name, else ``default``."""
    return env.float(name, default=env.float(old, default=default))


JOB_HEARTBEAT_SECONDS = _seconds("JOB_HEARTBEAT_SECONDS", "METRIC_CHUNK_HEARTBEAT_SECONDS", 15)
JOB_ORPHAN_SECONDS = _seconds("JOB_ORPHAN_SECONDS", "METRIC_CHUNK_ORPHAN_SECONDS", 90)
JOB_SWEEP_SECONDS = _seconds("JOB_SWEEP_SECONDS", "METRIC_ORPHAN_SWEEP_SECONDS", 30)
JOB_FINETUNE_ORPHAN_SECONDS = _seconds("JOB_FINETUNE_ORPHAN_SECONDS", "CLIP_FINETUNE_ORPHAN_SECONDS", 900)

for _name, _timeout in (
    ("JOB_ORPHAN_SECONDS", JOB_ORPHAN_SECONDS),
    ("JOB_FINETUNE_ORPHAN_SECONDS", JOB_FINETUNE_ORPHAN_SECONDS),
):
    if not 0 < JOB_HEARTBEAT_SECONDS * 3 <= _timeout:
        raise ImproperlyConfigured(
            f"{_name} ({_timeout}) must be at least three heartbeats (JOB_HEARTBEAT_SECONDS = "
            f"{JOB_HEARTBEAT_SECONDS}, > 0): a shorter timeout would take live units away from their workers."
        )

# Deprecated aliases (read-only copies): use the JOB_* names.
METRIC_CHUNK_HEARTBEAT_SECONDS = JOB_HEARTBEAT_SECONDS
METRIC_CHUNK_ORPHAN_SECONDS = JOB_ORPHAN_SECONDS
METRIC_ORPHAN_SWEEP_SECONDS = JOB_SWEEP_SECONDS
CLIP_FINETUNE_ORPHAN_SECONDS = JOB_FINETUNE_ORPHAN_SECONDS

# The one beat schedule: the lease expiry of annotation, and one sweep over every registered job kind.
CELERY_BEAT_SCHEDULE = {
    "expire-stale-leases": {"task": "annotation.tasks.expire_leases", "schedule": 60.0},
    "sweep-orphaned-job-units": {"task": "core.jobs.sweep_orphans", "schedule": JOB_SWEEP_SECONDS},
}
