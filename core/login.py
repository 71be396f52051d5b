"""What login means by a user name, the limits that guard it, and its one retry of a dropped
database connection. ``LoginView`` (core/views.py) puts them together."""

from __future__ import annotations

import ipaddress
import logging
import unicodedata
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm, UsernameField
from django.db import InterfaceError, OperationalError, connection

from core import ratelimit

logger = logging.getLogger(__name__)
T = TypeVar("T")


def login_username(raw: object, *, max_length: int | None = 150) -> str:
    """The user name exactly as login authenticates it, and the one key of its rate limit.

    Django's login form strips surrounding whitespace (``CharField``, ``str.strip``: Unicode spaces
    too) and then NFKC-normalises (``UsernameField``; ``AbstractBaseUser.normalize_username`` stores
    names that way), so ``" p033"``, ``"ｐ033"`` and ``"p０33"`` all reach the account ``p033``. The
    login form's field calls this function, so the limit and the lookup cannot disagree. Like
    Django, a name longer than ``max_length`` is not normalised: the form refuses it unchecked.
    """
    if raw is None or raw == "":
        return ""
    value = str(raw).strip()
    if max_length is not None and len(value) > max_length:
        return value
    return unicodedata.normalize("NFKC", value)


class LoginUsernameField(UsernameField):
    def to_python(self, value):
        return login_username(value, max_length=self.max_length)


class LoginForm(AuthenticationForm):
    username = LoginUsernameField(widget=AuthenticationForm.base_fields["username"].widget)


def client_address(request) -> str:
    """The address a login counts against: ``REMOTE_ADDR`` (the proxy must set it to the client),
    an IPv6 address reduced to its /64, which one host usually owns whole."""
    raw = request.META.get("REMOTE_ADDR") or "unknown"
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return raw
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/64", strict=False).network_address) + "/64"
    return str(address)


def login_limit(request) -> ratelimit.Decision:
    """Count one login attempt against its address and against the user name it will be checked as
    (``settings.LOGIN_RATE_LIMIT`` each); refused when either is over. Nothing is authenticated here."""
    rate = ratelimit.Rate.parse(settings.LOGIN_RATE_LIMIT)
    decisions = [
        ratelimit.hit("login-address", client_address(request), rate),
        ratelimit.hit("login-user", login_username(request.POST.get("username", "")), rate),
    ]
    refused = [d for d in decisions if not d.allowed]
    if refused:
        return ratelimit.Decision(False, max(d.retry_after for d in refused))
    return ratelimit.Decision(True, 0)


def retry_if_connection_dropped(operation: Callable[[], T]) -> T:
    """Run ``operation``; if the database connection fails under it, close the connection and run it
    once more on a new one. Only for operations that are safe to repeat (a lookup, ``login()``, which
    writes the same session and ``last_login`` again) and never inside a transaction, whose work a
    new connection would not have. A second failure is raised."""
    try:
        return operation()
    except (OperationalError, InterfaceError) as error:
        if connection.in_atomic_block:
            raise
        logger.warning("Database connection failed during login (%s); retrying once.", error)
        try:
            connection.close()
        except Exception:  # noqa: BLE001 - a broken connection may fail to close; it is dropped anyway
            connection.connection = None
        return operation()
