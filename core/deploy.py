"""What a production configuration must not be: weak secrets, any host, no CSP, single-machine services.

Pure (no Django import), so that ``config.settings.production`` can refuse to start with these at import
and ``core.checks`` can report the same findings from ``manage.py check --deploy``: one rule, two places
that apply it. Each function returns the problem as a sentence naming the environment variable, or None.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping

# Django's own check (security.W009) uses these numbers.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_UNIQUE_CHARACTERS = 5
# Pieces of the placeholders found in example files (ours: .env.example) and tutorials.
SECRET_KEY_PLACEHOLDERS = (
    "django-insecure",
    "change-me",
    "changeme",
    "change_me",
    "replace-me",
    "replace_me",
    "your-secret",
    "your_secret",
    "secret-key",
    "secret_key",
    "placeholder",
)
# A key that compresses below this share of its length is a repetition ("abcde" * 10, "Kx7#pQ2v" * 8):
# 50 random characters do not compress at all (zlib adds bytes), a repeated unit shrinks to its unit.
SECRET_KEY_MIN_COMPRESSED_RATIO = 0.75

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
CACHE_BACKENDS_SHARED = (
    "django.core.cache.backends.redis.RedisCache",
    "django_redis.cache.RedisCache",
)
# Sources that let any script run, which the policy exists to stop.
UNSAFE_SCRIPT_SOURCES = frozenset({"*", "'unsafe-inline'", "'unsafe-eval'", "data:", "http:", "https:"})


def secret_key_problem(key: str, *, insecure_default: str = "") -> str | None:
    if not key:
        return "DJANGO_SECRET_KEY is not set."
    advice = f"use at least {SECRET_KEY_MIN_LENGTH} random characters (python -c 'import secrets; print(secrets.token_urlsafe(64))')."
    lowered = key.lower()
    if key == insecure_default or any(piece in lowered for piece in SECRET_KEY_PLACEHOLDERS):
        return f"DJANGO_SECRET_KEY is insecure: it is a known placeholder; {advice}"
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return f"DJANGO_SECRET_KEY is insecure: it has {len(key)} characters; {advice}"
    if len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS:
        return f"DJANGO_SECRET_KEY is insecure: it has {len(set(key))} distinct characters; {advice}"
    if len(zlib.compress(key.encode("utf-8"), 9)) < SECRET_KEY_MIN_COMPRESSED_RATIO * len(key):
        return f"DJANGO_SECRET_KEY is insecure: it repeats itself (low entropy); {advice}"
    return None


def allowed_hosts_problem(hosts: Iterable[str]) -> str | None:
    hosts = list(hosts)
    if not hosts or not all(host.strip() for host in hosts):
        return "DJANGO_ALLOWED_HOSTS names no host (or an empty one): list the site's host names, comma-separated."
    if any("*" in host for host in hosts):
        return (
            "DJANGO_ALLOWED_HOSTS must not contain '*' (any Host header, which poisons password-reset "
            "and absolute links): list the site's host names; '.example.org' allows its subdomains."
        )
    return None


def csp_problem(directives: Mapping[str, object] | None) -> str | None:
    """``directives``: the policy as django-csp takes it (``CONTENT_SECURITY_POLICY["DIRECTIVES"]``)."""
    if not directives or not directives.get("default-src"):
        return (
            "CONTENT_SECURITY_POLICY has no default-src: no Content-Security-Policy header would be sent. "
            "Unset the variable for the default policy, or write a full one."
        )
    script = directives.get("script-src-elem") or directives.get("script-src") or directives["default-src"]
    unsafe = sorted(UNSAFE_SCRIPT_SOURCES.intersection(script if isinstance(script, list | tuple) else ()))
    if unsafe:
        return f"CONTENT_SECURITY_POLICY lets any script run ({' '.join(unsafe)} in its script sources)."
    return None


def database_problem(engine: str) -> str | None:
    if "postgresql" not in engine:
        return (
            f"DATABASE_URL must point at PostgreSQL (postgres://user@host:5432/db), not {engine.rsplit('.', 1)[-1]}: "
            "the assignment locks and the job guarantees need it."
        )
    return None


def celery_problem(broker_url: str, always_eager: bool) -> str | None:
    if not broker_url:
        return (
            "CELERY_BROKER_URL is not set: jobs would run inside web requests. Set it (redis://host:6379/0)."
        )
    if always_eager:
        return "CELERY_TASK_ALWAYS_EAGER is on: jobs would run inside web requests, not on the workers (CELERY_BROKER_URL)."
    return None


def cache_problem(backend: str, location: object = "") -> str | None:
    if backend not in CACHE_BACKENDS_SHARED:
        return (
            f"REDIS_URL must be set to a redis:// URL: the cache ({backend.rsplit('.', 1)[-1]}) is not shared "
            "between machines, so login rate limits could be sidestepped."
        )
    locations = location if isinstance(location, list | tuple) else [location]
    if not all(str(url).startswith(REDIS_SCHEMES) for url in locations):
        return f"REDIS_URL must be a redis://, rediss:// or unix:// URL, not {location!r}."
    return None
