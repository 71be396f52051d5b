"""A sliding-window rate limit kept in the shared cache (Redis in production), for login and for
refused submission files.

A limit of N per W seconds lets through at most N counted hits in any W seconds, wherever the
minute turns: fixed windows (django-ratelimit's) let 2N through a burst that straddles a boundary.
The window is cut into 60 slots with one counter each; a hit increments its slot's counter
(``cache.incr``: Redis INCR, atomic across processes) and is let through when the counters of the
slots that cover the last W seconds add up to at most N. A hit that is refused takes its count back,
so an attacker's refused guesses do not stretch the lockout and the limit counts guesses that were
checked. Every hit sees its own increment and every earlier one, so concurrent hits cannot together
pass more than N. The slots cover between W and W + W/60 seconds: the limit errs on the strict side.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
import time
from dataclasses import dataclass

from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured

SLOTS = 60
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])\s*$")


@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int

    @classmethod
    def parse(cls, text: str) -> Rate:
        """``"10/m"``, ``"10/5m"``, ``"100/h"``, ``"1000/d"`` (as django-ratelimit wrote them)."""
        match = _RATE.match(text or "")
        if not match or int(match.group(1)) < 1 or match.group(2) == "0":
            raise ImproperlyConfigured(
                f"Rate {text!r} is not a rate: write a count and a period, e.g. 10/m, 10/5m, 100/h."
            )
        count, multiplier, unit = match.groups()
        return cls(int(count), int(multiplier or 1) * _UNITS[unit])


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: int  # seconds until a hit would be let through again; 0 when allowed


def _prefix(scope: str, key: str, rate: Rate) -> str:
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"rl:{scope}:{rate.count}/{rate.seconds}:{digest}:"


def hit(scope: str, key: str, rate: Rate) -> Decision:
    """Count one hit of ``key`` (hashed: no user name is stored) under ``scope`` and say whether it
    is within ``rate``. Writes only the current slot's counter; safe to call from any process."""
    slot_seconds = rate.seconds / SLOTS
    now = time.time()
    current = math.floor(now / slot_seconds)
    prefix = _prefix(scope, key, rate)
    slot_key = f"{prefix}{current}"
    # Two slots longer than the window, so a slot outlives every window that counts it.
    ttl = math.ceil(rate.seconds + 2 * slot_seconds) + 1
    for _ in range(3):
        cache.add(slot_key, 0, timeout=ttl)
        try:
            cache.incr(slot_key)
            break
        except ValueError:  # expired between add and incr (only at the very end of its life)
            continue
    # The slots covering [now - W, now]: SLOTS + 1 of them.
    slots = range(current - SLOTS, current + 1)
    counts = cache.get_many([f"{prefix}{s}" for s in slots])
    per_slot = [int(counts.get(f"{prefix}{s}", 0)) for s in slots]
    if sum(per_slot) <= rate.count:
        return Decision(True, 0)
    with contextlib.suppress(ValueError):  # the slot expired meanwhile: nothing to take back
        cache.decr(slot_key)
    per_slot[-1] = max(per_slot[-1] - 1, 0)
    return Decision(False, _retry_after(per_slot, slots, rate, slot_seconds, now))


def peek(scope: str, key: str, rate: Rate) -> Decision:
    """Whether one more hit of ``key`` would be within ``rate``, counting nothing: for limits on what
    went wrong (refused files), checked before the work and counted by :func:`hit` after it failed."""
    slot_seconds = rate.seconds / SLOTS
    now = time.time()
    current = math.floor(now / slot_seconds)
    prefix = _prefix(scope, key, rate)
    slots = range(current - SLOTS, current + 1)
    counts = cache.get_many([f"{prefix}{s}" for s in slots])
    per_slot = [int(counts.get(f"{prefix}{s}", 0)) for s in slots]
    if sum(per_slot) < rate.count:
        return Decision(True, 0)
    return Decision(False, _retry_after(per_slot, slots, rate, slot_seconds, now))


def _retry_after(per_slot: list[int], slots: range, rate: Rate, slot_seconds: float, now: float) -> int:
    """Seconds until enough of the oldest slots leave the window for one more hit to fit."""
    excess = sum(per_slot) - rate.count + 1
    for slot, count in zip(slots, per_slot, strict=True):
        excess -= count
        if excess <= 0:
            # ``slot`` leaves the counted slots when the current slot is ``slot + SLOTS + 1``.
            return max(1, math.ceil((slot + SLOTS + 1) * slot_seconds - now))
    return rate.seconds
