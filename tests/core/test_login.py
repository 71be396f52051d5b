"""Login: one limit per account whatever its spelling, a limit that slides, and a login that survives a
dropped database connection (RELIABILITY.md case 16; issue 16, items 1 and 6)."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import SESSION_KEY
from django.core.cache import cache
from django.db import OperationalError, connection
from django.test import Client, override_settings
from django.urls import reverse

from tests import factories as f

PASSWORD = "pw-for-tests-only"  # noqa: S105
WRONG = "wrong-guess"  # noqa: S105

# Twelve spellings that Django's login takes as the account ``anna``: its form strips whitespace
# (``str.strip``, Unicode-aware) and ModelBackend looks up the NFKC form (fullwidth letters fold).
VARIANTS = [
    " anna",
    "anna ",
    "\tanna",
    "anna\n",
    "\u3000anna",  # ideographic space
    "\xa0anna",  # no-break space
    "\u2003anna",  # em space
    "\uff41nna",  # fullwidth a
    "an\uff4ea",  # fullwidth n
    "\uff41\uff4e\uff4e\uff41",
    " \uff41nna ",
    "anna\r",
]


@pytest.fixture
def clock(monkeypatch):
    """A clock the test drives: every ``time.time()`` (the limiter's and the cache's) reads it."""
    now = [1_800_000_000.0]  # a multiple of 60: the fixed windows of the old limiter started here
    monkeypatch.setattr(time, "time", lambda: now[0])
    cache.clear()
    yield now
    cache.clear()


def post_login(username, password=WRONG, address="127.0.0.1", client=None):
    client = client or Client()
    response = client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )
    return client, response


def test_the_variants_name_one_account(annotator):
    """The premise: each spelling logs in as anna when nothing limits it."""
    from core.login import login_username

    for variant in VARIANTS:
        assert login_username(variant) == "anna", repr(variant)
    cache.clear()
    client, r = post_login(VARIANTS[7], PASSWORD)
    assert r.status_code == 302
    assert client.session[SESSION_KEY] == str(annotator.user.pk)


@override_settings(LOGIN_RATE_LIMIT="12/m")
def test_username_variants_share_one_limit(annotator, clock):
    # Twelve guesses, one per spelling and each from its own address: all are counted against anna.
    for i, variant in enumerate(VARIANTS):
        _, r = post_login(variant, address=f"10.0.0.{i + 1}")
        assert r.status_code == 200, repr(variant)
    # The right password, typed plainly or as yet another spelling from a fresh address, is refused.
    for username in ["anna", " anna", "\uff41nna"]:
        client, r = post_login(username, PASSWORD, address="10.0.1.1")
        assert r.status_code == 429, repr(username)
        assert int(r["Retry-After"]) > 0
        assert b"Too many login attempts" in r.content
        assert SESSION_KEY not in client.session
    # Another account is not affected by anna's limit.
    f.AnnotatorFactory(user__username="bert")
    _, r = post_login("bert", PASSWORD, address="10.0.1.2")
    assert r.status_code == 302


@override_settings(LOGIN_RATE_LIMIT="10/m")
def test_a_burst_across_a_window_boundary_gets_no_more_than_the_limit(annotator, clock):
    """20 guesses just before a minute turns and 20 just after: at most 10 are let through, and the
    refused ones give the time until a guess is allowed again."""
    start = clock[0]
    passed = []
    for at in (start + 30, start + 59.5, start + 60.5, start + 89):
        clock[0] = at
        for i in range(10):
            _, r = post_login("anna", address=f"10.1.{int(at - start)}.{i + 1}")
            assert r.status_code in (200, 429)
            if r.status_code == 200:
                passed.append(at)
            else:
                assert 0 < int(r["Retry-After"]) <= 61
    assert len(passed) == 10, f"{len(passed)} guesses let through: {passed}"
    # The window slides: once a minute has passed since the first counted guess, guesses count again.
    clock[0] = start + 30 + 61
    _, r = post_login("anna", PASSWORD, address="10.2.0.1")
    assert r.status_code == 302


@override_settings(LOGIN_RATE_LIMIT="5/m")
def test_the_per_address_limit_still_holds(annotator, clock):
    for i in range(5):
        _, r = post_login(f"nobody{i}", address="10.3.0.1")
        assert r.status_code == 200
    client, r = post_login("anna", PASSWORD, address="10.3.0.1")
    assert r.status_code == 429
    assert SESSION_KEY not in client.session
    # From another address anna logs in: the address, not the account, was limited.
    _, r = post_login("anna", PASSWORD, address="10.3.0.2")
    assert r.status_code == 302


@override_settings(LOGIN_RATE_LIMIT="5/m")
def test_the_per_address_limit_groups_an_ipv6_network(annotator, clock):
    """One IPv6 host has a whole /64: changing the last 64 bits is not a new address."""
    for i in range(5):
        _, r = post_login(f"nobody{i}", address=f"2001:db8::{i + 1}")
        assert r.status_code == 200
    _, r = post_login("anna", PASSWORD, address="2001:db8::ffff")
    assert r.status_code == 429


class DropOnce:
    """An execute wrapper that fails the first query matching ``needle`` as a killed connection does."""

    def __init__(self, needle):
        self.needle = needle
        self.dropped = 0

    def __call__(self, execute, sql, params, many, context):
        if self.needle in sql and not self.dropped:
            self.dropped += 1
            raise OperationalError("terminating connection due to administrator command")
        return execute(sql, params, many, context)


# Not inside the test's transaction: a retry on a new connection is only safe outside one.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "needle",
    [
        pytest.param('FROM "auth_user"', id="user-lookup"),
        pytest.param('UPDATE "auth_user"', id="last-login"),
        pytest.param('"django_session"', id="session"),
    ],
)
def test_login_survives_one_dropped_connection(annotator, clock, needle):
    dropper = DropOnce(needle)
    with connection.execute_wrapper(dropper):
        client, r = post_login("anna", PASSWORD)
    assert dropper.dropped == 1
    assert r.status_code == 302
    assert client.session[SESSION_KEY] == str(annotator.user.pk)


@pytest.mark.django_db(transaction=True)
def test_a_connection_that_stays_down_still_fails(annotator, clock):
    """One retry, not a loop: a database that is really gone gives the error."""

    def always(execute, sql, params, many, context):
        if 'FROM "auth_user"' in sql:
            raise OperationalError("server closed the connection unexpectedly")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(always), pytest.raises(OperationalError):
        post_login("anna", PASSWORD)


@pytest.mark.parametrize("text", ["ten a minute", "10", "0/m", "10/0m", "10/w", ""])
def test_a_mistyped_rate_setting_stops_the_start(text):
    from django.core.management import call_command
    from django.core.management.base import SystemCheckError

    with override_settings(LOGIN_RATE_LIMIT=text), pytest.raises(SystemCheckError, match="LOGIN_RATE_LIMIT"):
        call_command("check")


def test_rates_parse_as_django_ratelimit_wrote_them():
    from core.ratelimit import Rate

    assert Rate.parse("10/m") == Rate(10, 60)
    assert Rate.parse("10/5m") == Rate(10, 300)
    assert Rate.parse("100/h") == Rate(100, 3600)
    assert Rate.parse(" 3 / s ") == Rate(3, 1)


def test_peek_counts_nothing_and_refuses_once_hits_fill_the_window(clock):
    from core.ratelimit import Rate, hit, peek

    rate = Rate.parse("3/h")
    for _ in range(5):
        assert peek("test-peek", "k", rate).allowed  # looking is free
    for _ in range(3):
        assert hit("test-peek", "k", rate).allowed
    full = peek("test-peek", "k", rate)
    assert not full.allowed and full.retry_after == 3660  # the window's slots cover one slot more
    assert peek("test-peek", "other", rate).allowed
    clock[0] += 3659
    assert not peek("test-peek", "k", rate).allowed
    clock[0] += 1
    assert peek("test-peek", "k", rate).allowed


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_login_survives_its_connection_killed_during_the_password_check(annotator, clock, monkeypatch):
    """On PostgreSQL: another connection kills the request's backend (pg_terminate_backend) while the
    password is being checked, as the fault probe did every 2 s; the login still succeeds."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL)")
    import psycopg2
    from django.contrib.auth import base_user

    real_check = base_user.check_password
    killed = []

    def check_then_kill(*args, **kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        params = connection.get_connection_params()
        other = psycopg2.connect(**{k: v for k, v in params.items() if k != "cursor_factory"})
        try:
            with other.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
                killed.append(cursor.fetchone()[0])
        finally:
            other.close()
        return real_check(*args, **kwargs)

    monkeypatch.setattr(base_user, "check_password", check_then_kill)
    client, r = post_login("anna", PASSWORD)
    assert killed == [True]
    assert r.status_code == 302
    assert client.session[SESSION_KEY] == str(annotator.user.pk)
