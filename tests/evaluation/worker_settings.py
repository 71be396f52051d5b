"""Settings of the real Celery worker that tests/evaluation/test_jobs_redis.py starts.

The test settings, plus what only those tests need: a chunk that takes a while (so the worker
can be killed in the middle of it) and a short broker visibility timeout (so the message of a
killed worker is delivered again within seconds instead of the production hour).
"""

import os

from config.settings.test import *  # noqa: F403
from config.settings.test import CELERY_BROKER_TRANSPORT_OPTIONS

METRIC_CHUNK_TEST_DELAY = float(os.environ.get("METRIC_CHUNK_TEST_DELAY", "0"))
CELERY_BROKER_TRANSPORT_OPTIONS = {
    **CELERY_BROKER_TRANSPORT_OPTIONS,
    "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600")),
    # Look for abandoned messages every second (default: every 100 s).
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
}
