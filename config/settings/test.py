"""Test settings: the base settings with fast hashing and eager Celery.

``DATABASE_URL`` still decides the database, so CI runs the suite on PostgreSQL.
"""

import tempfile

from .base import *  # noqa: F403
from .base import env

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=True)
# Jobs computed where they are sent, so that a test sees them finished (core/jobs/local.py).
JOBS_LOCAL_RUNNER = env.bool("JOBS_LOCAL_RUNNER", default=False)
MEDIA_ROOT = tempfile.mkdtemp(prefix="captioneval-test-media-")
STATIC_ROOT = tempfile.mkdtemp(prefix="captioneval-test-static-")
CLIP_FINETUNE_DIR = tempfile.mkdtemp(prefix="captioneval-test-finetune-")
IMPORT_STAGING_DIR = tempfile.mkdtemp(prefix="captioneval-test-staging-")
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
LOGIN_RATE_LIMIT = "1000/m"

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not SQLite's shared in-memory database: the live server's threads then wait for
    # the write lock (busy timeout) instead of failing with "database table is locked".
    DATABASES["default"]["TEST"] = {"NAME": tempfile.mktemp(prefix="captioneval-test-", suffix=".sqlite3")}  # noqa: F405, S306
