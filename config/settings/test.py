"""Test settings: the base settings with fast hashing and eager Celery.

``DATABASE_URL`` still decides the database, so CI runs the suite on PostgreSQL.
"""

import tempfile

from .base import *  # noqa: F403
from .base import env

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=True)
MEDIA_ROOT = tempfile.mkdtemp(prefix="captioneval-test-media-")
STATIC_ROOT = tempfile.mkdtemp(prefix="captioneval-test-static-")
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
LOGIN_RATE_LIMIT = "1000/m"
