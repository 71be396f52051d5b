"""What a production configuration must not be: weak secrets, any host, no CSP, single-machine services.

Pure (no Django import), so that ``config.settings.production`` can refuse to start with these at import
and ``core.checks`` can report the same findings from ``manage.py check --deploy``: one rule, two places
that apply it. Each function returns the problem as a sentence naming the environment variable, or None.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Mapping
from functools import lru_cache
from urllib.parse import urlsplit

from publicsuffixlist import PublicSuffixList
from zxcvbn import zxcvbn

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
# Guessing effort, as the zxcvbn estimator (Dropbox's; dictionaries, keyboard walks, sequences, dates,
# repeats) puts it. A secret key is read by machines and never typed, so nothing but random characters
# has a reason to be in it: at least 10**40 guesses, and at least 0.8 decimal digits of guesses per
# character (random keys of Django's, secrets.token_urlsafe's or token_hex's alphabets score 0.93-1.0;
# English sentences 0.55-0.7 once their spaces are taken out, keyboard rows and counting under 0.4).
SECRET_KEY_MIN_GUESSES_LOG10 = 40
SECRET_KEY_MIN_GUESSES_LOG10_PER_CHARACTER = 0.8
ZXCVBN_MAX_LENGTH = 72  # the estimator refuses longer input; a key's first 72 characters are judged

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
CACHE_BACKENDS_SHARED = (
    "django.core.cache.backends.redis.RedisCache",
    "django_redis.cache.RedisCache",
)
# Script sources that cannot run injected code: the site itself, per-response nonces, hashes of known
# scripts, and named https hosts. Anything else ('unsafe-inline', 'unsafe-hashes', 'unsafe-eval',
# blob:, data:, schemes, wildcards such as *.com) lets an attacker's script in, which the policy is
# there to stop.
SAFE_SCRIPT_KEYWORDS = frozenset({"'self'", "'none'", "'strict-dynamic'", "'report-sample'"})
SAFE_SCRIPT_SOURCE = re.compile(
    r"'nonce-[A-Za-z0-9+/_=-]+'|'sha(256|384|512)-[A-Za-z0-9+/_=-]+'"
    r"|https://[a-z0-9-]+(\.[a-z0-9-]+)+(:\d+)?(/[^\s;,*]*)?",
    re.IGNORECASE,
)
SCRIPT_DIRECTIVES = ("script-src", "script-src-elem", "script-src-attr")
# Directives that must stay closed: plugins (object-src, which falls back to default-src) and the base URL
# every relative link and form resolves against (base-uri, which falls back to nothing: absent, any).
CLOSED_DIRECTIVES = {
    "object-src": frozenset({"'none'", "'self'"}),
    "base-uri": frozenset({"'none'", "'self'"}),
}


@lru_cache(maxsize=1)
def _public_suffixes() -> PublicSuffixList:
    # The Public Suffix List as the installed publicsuffixlist wheel ships it (ICANN and private sections:
    # co.uk as well as github.io); nothing is downloaded.
    return PublicSuffixList()


def is_public_suffix(domain: str) -> bool:
    """True for a domain under which anyone may register a site (``co.uk``, ``github.io``, ``com``)."""
    return _public_suffixes().is_public(domain.strip(".").lower())


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
    guesses = secret_key_guesses_log10(key)
    judged = min(len(key), ZXCVBN_MAX_LENGTH)
    if guesses < max(SECRET_KEY_MIN_GUESSES_LOG10, SECRET_KEY_MIN_GUESSES_LOG10_PER_CHARACTER * judged):
        return (
            f"DJANGO_SECRET_KEY is insecure: it could be guessed in about 10^{guesses:.0f} tries (words, "
            f"keyboard rows or sequences, as the zxcvbn estimator finds them); {advice}"
        )
    return None


def secret_key_guesses_log10(key: str) -> float:
    """zxcvbn's estimate of the guesses ``key`` takes (log10), the lower of the key as written and the
    key with its white space taken out (the estimator scores the gaps between words as random)."""
    candidates = {key[:ZXCVBN_MAX_LENGTH], re.sub(r"\s+", "", key)[:ZXCVBN_MAX_LENGTH]}
    return min(zxcvbn(candidate)["guesses_log10"] for candidate in candidates if candidate)


def allowed_hosts_problem(hosts: Iterable[str]) -> str | None:
    hosts = list(hosts)
    if not hosts or not all(host.strip() for host in hosts):
        return "DJANGO_ALLOWED_HOSTS names no host (or an empty one): list the site's host names, comma-separated."
    if any("*" in host for host in hosts):
        return (
            "DJANGO_ALLOWED_HOSTS must not contain '*' (any Host header, which poisons password-reset "
            "and absolute links): list the site's host names; '.example.org' allows its subdomains."
        )
    public = [host for host in hosts if host.startswith(".") and is_public_suffix(host)]
    if public:
        return (
            f"DJANGO_ALLOWED_HOSTS must not allow a public suffix ({', '.join(public)} matches every site "
            "anyone registers under it, by the Public Suffix List): name the site's own domain, e.g. "
            "'.example.org'."
        )
    return None


def csp_problem(directives: Mapping[str, object] | None) -> str | None:
    """``directives``: the policy as django-csp takes it (``CONTENT_SECURITY_POLICY["DIRECTIVES"]``)."""
    if not directives or not directives.get("default-src"):
        return (
            "CONTENT_SECURITY_POLICY has no default-src: no Content-Security-Policy header would be sent. "
            "Unset the variable for the default policy, or write a full one."
        )
    # Every directive a browser takes script sources from: each script directive present, and
    # default-src where script-src (the fallback of the other two) is absent.
    named = [name for name in SCRIPT_DIRECTIVES if name in directives]
    if "script-src" not in directives:
        named.append("default-src")
    unsafe = []
    for name in named:
        sources = directives.get(name) or ()
        for source in [sources] if isinstance(sources, str) else sources:
            text = str(source)
            if text.lower() not in SAFE_SCRIPT_KEYWORDS and not SAFE_SCRIPT_SOURCE.fullmatch(text):
                unsafe.append(f"{name} {text}")
    if unsafe:
        return (
            f"CONTENT_SECURITY_POLICY lets injected scripts run ({'; '.join(unsafe)}): script sources may "
            "only be 'self', nonces, hashes and named https:// hosts."
        )
    return _closed_directives_problem(directives)


def _sources(value: object) -> list[str]:
    return [str(s).lower() for s in ([value] if isinstance(value, str) else (value or ()))]


def _closed_directives_problem(directives: Mapping[str, object]) -> str | None:
    """object-src (or default-src, its fallback) and base-uri may name only 'none' or 'self': a plugin from
    anywhere runs script, and an injected <base href> sends every relative link and form elsewhere."""
    opened = []
    for name, allowed in CLOSED_DIRECTIVES.items():
        if name in directives:
            sources = _sources(directives[name])
        elif name == "object-src":
            name, sources = "default-src (object-src's fallback)", _sources(directives.get("default-src"))
        else:
            opened.append(f"{name} is missing (any base URL)")
            continue
        wide = [source for source in sources if source not in allowed]
        if wide or not sources:
            opened.append(f"{name} {' '.join(wide) or '(empty)'}")
    if opened:
        return (
            f"CONTENT_SECURITY_POLICY leaves open what must stay closed ({'; '.join(opened)}): write "
            "object-src 'none' and base-uri 'self' (or 'none')."
        )
    return None


def database_problem(engine: str) -> str | None:
    if "postgresql" not in engine:
        return (
            f"DATABASE_URL must point at PostgreSQL (postgres://user@host:5432/db), not {engine.rsplit('.', 1)[-1]}: "
            "the assignment locks and the job guarantees need it."
        )
    return None


def _hostless(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme != "unix" and not parts.hostname


def celery_problem(broker_url: str, always_eager: bool) -> str | None:
    if not broker_url:
        return (
            "CELERY_BROKER_URL is not set: jobs would run inside web requests. Set it (redis://host:6379/0)."
        )
    scheme = urlsplit(broker_url).scheme.lower()
    if scheme in {"memory", "cache", "filesystem", "sqla", "sqlalchemy", "django"} or scheme.startswith(
        "sqla+"
    ):
        return (
            f"CELERY_BROKER_URL {scheme}:// is not a broker workers on other machines can reach (queued jobs "
            "would never reach a worker): use redis://host:6379/0."
        )
    if _hostless(broker_url):
        return f"CELERY_BROKER_URL names no host ({broker_url!r}): write redis://host:6379/0."
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
    if any(_hostless(str(url)) for url in locations):
        return f"REDIS_URL names no host ({location!r}): write redis://host:6379/1."
    return None
