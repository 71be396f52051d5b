"""Production settings: the base settings, hardened. Secrets have no defaults here.

Refuses to start with DEBUG on or with a missing, default or short SECRET_KEY, and passes
``manage.py check --deploy`` with no warnings (tests/test_settings.py runs it).
"""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import INSECURE_DEFAULT_SECRET_KEY, env

DEBUG = env.bool("DJANGO_DEBUG", default=False)
if DEBUG:
    raise ImproperlyConfigured("DJANGO_DEBUG must be off in production.")

SECRET_KEY = env.str("DJANGO_SECRET_KEY")  # no default: a missing key stops the start
if (
    SECRET_KEY == INSECURE_DEFAULT_SECRET_KEY
    or SECRET_KEY.startswith("django-insecure")
    or len(SECRET_KEY) < 50
    or len(set(SECRET_KEY)) < 5
):
    raise ImproperlyConfigured("DJANGO_SECRET_KEY is insecure: use at least 50 random characters.")

ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS")

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
