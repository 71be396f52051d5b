"""Production settings: the base settings, hardened. Secrets have no defaults here.

Refuses to start, with a message naming the variable, on DEBUG on, a missing or weak secret key,
``*`` or no allowed host, an empty or script-permissive CSP, and a missing or single-machine
database, broker or cache (core.deploy holds the rules, core.checks reports them in
``check --deploy`` under any settings); passes
``manage.py check --deploy`` with no warnings (tests/test_settings.py runs it).
"""

from django.core.exceptions import ImproperlyConfigured

from core import deploy

from .base import *  # noqa: F403
from .base import INSECURE_DEFAULT_SECRET_KEY, env

DEBUG = env.bool("DJANGO_DEBUG", default=False)
if DEBUG:
    raise ImproperlyConfigured("DJANGO_DEBUG must be off in production.")

SECRET_KEY = env.str("DJANGO_SECRET_KEY")  # no default: a missing key stops the start
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS")

# The services a deployment runs on: without them production would quietly fall back to the
# embedded demo's SQLite, in-process jobs and a per-machine file cache.
for _name, _what in (
    ("DATABASE_URL", "PostgreSQL, e.g. postgres://user@host:5432/db"),
    ("CELERY_BROKER_URL", "the job broker, e.g. redis://host:6379/0"),
    ("REDIS_URL", "the shared cache (login rate limits), e.g. redis://host:6379/1"),
):
    if not env.str(_name, default=""):
        raise ImproperlyConfigured(f"{_name} is not set: production needs {_what}.")

# The same rules as the deploy checks of core.checks (core.deploy), applied before anything starts.
for _problem in (
    deploy.secret_key_problem(SECRET_KEY, insecure_default=INSECURE_DEFAULT_SECRET_KEY),
    deploy.allowed_hosts_problem(ALLOWED_HOSTS),
    deploy.csp_problem(CONTENT_SECURITY_POLICY["DIRECTIVES"]),  # noqa: F405
    deploy.database_problem(DATABASES["default"]["ENGINE"]),  # noqa: F405
    deploy.celery_problem(CELERY_BROKER_URL, CELERY_TASK_ALWAYS_EAGER),  # noqa: F405
    deploy.cache_problem(CACHES["default"]["BACKEND"], CACHES["default"].get("LOCATION", "")),  # noqa: F405
):
    if _problem:
        raise ImproperlyConfigured(_problem)

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_REFERRER_POLICY = "same-origin"

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
