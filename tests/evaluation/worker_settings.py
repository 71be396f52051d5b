"""Settings of the real Celery worker that tests/evaluation/test_jobs_redis.py starts.

The test settings, plus a short broker visibility timeout (so the message of a killed worker is
delivered again within seconds instead of the production hour). The slow chunk those tests also
need comes from tests/evaluation/worker_app.py, the worker's Celery entry point.
"""

import os

from config.settings.test import *  # noqa: F403
from config.settings.test import CELERY_BROKER_TRANSPORT_OPTIONS

CELERY_BROKER_TRANSPORT_OPTIONS = {
    **CELERY_BROKER_TRANSPORT_OPTIONS,
    "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600")),
    # Look for abandoned messages every second (default: every 100 s).
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
}
