"""Production settings that would defeat their purpose are refused with a sentence naming the variable
(core.deploy is pure: the same rules run at production start-up and in ``check --deploy``)."""

from __future__ import annotations

import secrets

import pytest
from django.core.management.utils import get_random_secret_key

from core import deploy

WEAK_KEYS = {
    "counting": ("0123456789abcdef" * 4)[:50],
    "keyboard rows": "qwertyuiopasdfghjklzxcvbnm1234567890qwertyuiopasdfghjkl",
    "an English sentence": "the quick brown fox jumps over the lazy dog and then some more",
    "a quotation": "It was the best of times, it was the worst of times, it was the age",
    "a phrase of our own": "This is my very secret production key for the caption platform!",
}


@pytest.mark.parametrize("name", sorted(WEAK_KEYS))
def test_a_secret_key_with_words_rows_or_sequences_is_refused(name):
    problem = deploy.secret_key_problem(WEAK_KEYS[name])
    assert problem is not None and problem.startswith("DJANGO_SECRET_KEY is insecure")
    assert "secrets.token_urlsafe" in problem  # and how to make a good one


@pytest.mark.parametrize(
    "make", [get_random_secret_key, lambda: secrets.token_urlsafe(64), lambda: secrets.token_hex(32)]
)
def test_random_keys_of_the_usual_generators_pass(make):
    for _ in range(50):
        key = make()
        assert deploy.secret_key_problem(key) is None, key


@pytest.mark.parametrize(
    "policy",
    [
        {"default-src": ["'self'"], "script-src-attr": ["'unsafe-inline'"]},
        {"default-src": ["'self'"], "script-src": ["'self'", "*.com"]},
        {"default-src": ["'self'"], "script-src": ["'self'", "blob:"]},
        {"default-src": ["'self'"], "script-src": ["'self'", "'unsafe-hashes'", "'sha256-abc='"]},
        {"default-src": ["'self'", "https:"]},
        {"default-src": ["'self'"], "script-src-elem": ["https://*.example.org"]},
        {"default-src": ["'self'"], "script-src": ["'self'", "'unsafe-eval'"]},
    ],
)
def test_a_policy_that_lets_injected_scripts_run_is_refused(policy):
    problem = deploy.csp_problem(policy)
    assert problem is not None and "CONTENT_SECURITY_POLICY lets injected scripts run" in problem


def test_self_nonces_hashes_and_named_https_hosts_are_allowed():
    policy = {
        "default-src": ["'self'"],
        "script-src": ["'self'", "'nonce-r4nd0m'", "'sha384-AbC+/d='", "https://cdn.example.org/js/"],
        "script-src-attr": ["'none'"],
        "img-src": ["'self'", "data:", "blob:"],  # not a script source
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
    }
    assert deploy.csp_problem(policy) is None


@pytest.mark.parametrize(
    ("policy", "words"),
    [
        ({"default-src": ["'self'"], "object-src": ["*"], "base-uri": ["'self'"]}, "object-src *"),
        ({"default-src": ["'self'"], "object-src": ["'none'"], "base-uri": ["*"]}, "base-uri *"),
        ({"default-src": ["'self'"], "object-src": ["'none'"]}, "base-uri is missing"),
        ({"default-src": ["*"], "script-src": ["'self'"], "base-uri": ["'self'"]}, "object-src's fallback"),
        (
            {
                "default-src": ["'self'"],
                "object-src": ["https://plugins.example.org"],
                "base-uri": ["'self'"],
            },
            "object-src https://plugins.example.org",
        ),
    ],
)
def test_plugins_and_the_base_url_stay_closed(policy, words):
    problem = deploy.csp_problem(policy)
    assert problem is not None and "leaves open what must stay closed" in problem and words in problem


def test_the_default_policy_passes():
    from django.conf import settings

    assert deploy.csp_problem(settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]) is None


@pytest.mark.parametrize(
    ("broker", "words"),
    [
        ("memory://", "not a broker workers on other machines can reach"),
        ("redis://", "names no host"),
        ("redis:///0", "names no host"),
    ],
)
def test_in_memory_and_hostless_brokers_are_refused(broker, words):
    assert words in deploy.celery_problem(broker, always_eager=False)


def test_a_hostless_cache_url_is_refused_and_a_socket_is_not():
    cache = "django.core.cache.backends.redis.RedisCache"
    assert "names no host" in deploy.cache_problem(cache, "redis://")
    assert deploy.cache_problem(cache, "unix:///run/redis.sock") is None
    assert deploy.cache_problem(cache, "redis://127.0.0.1:6379/1") is None
    assert deploy.celery_problem("redis://127.0.0.1:6379/0", always_eager=False) is None


@pytest.mark.parametrize(
    "hosts",
    [[".org"], ["captions.example.org", ".com"], [".co.uk"], [".github.io"], [".CO.UK"], [".blogspot.com"]],
)
def test_a_public_suffix_is_refused(hosts):
    # The Public Suffix List decides: a top-level domain, a second-level registry (co.uk) and a host's
    # shared domain (github.io) all let anyone register a site under them.
    assert "public suffix" in deploy.allowed_hosts_problem(hosts)


def test_a_site_s_own_domain_and_its_subdomains_are_allowed():
    assert deploy.allowed_hosts_problem(["captions.example.org", ".example.org"]) is None
    assert deploy.allowed_hosts_problem([".bbc.co.uk", ".someone.github.io", "127.0.0.1"]) is None
