"""The session engine (``SESSION_ENGINE``): Django's database sessions, read with SQL built once.

Everything is Django's ``db`` backend: sessions live in the ``django_session`` table, a login makes a
new key, a logout deletes the row, an expired row is never read. Only the read every request makes
runs through :class:`core.compiled_reads.CompiledRead`, which saves the ORM building the same query on
each request (about 0.3 ms of CPU). Sessions were also tried in Redis (``cached_db``): no measurable
gain, since a Redis read and its decoding cost about what this primary-key read costs.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.contrib.sessions.backends import db
from django.contrib.sessions.models import Session
from django.core.exceptions import SuspiciousOperation
from django.utils import timezone

from core.compiled_reads import CompiledRead

_SESSION_READ = CompiledRead(
    Session,
    lambda key, now: Session.objects.filter(session_key=key, expire_date__gt=now),
    {"key": str, "now": datetime},
)


class SessionStore(db.SessionStore):
    def _get_session_from_db(self):
        """The session's row if it exists and has not expired, else None (and the key is dropped,
        so that a new session gets a new key), as Django's database backend does."""
        try:
            session = _SESSION_READ.read(key=self.session_key, now=timezone.now())
        except SuspiciousOperation as exc:
            logging.getLogger(f"django.security.{exc.__class__.__name__}").warning(str(exc))
            session = None
        if session is None:
            self._session_key = None
        return session
