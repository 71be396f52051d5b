"""Fields several evaluation models declare the same way."""

from __future__ import annotations

from django.conf import settings
from django.db import models


def started_by(related_name: str) -> models.ForeignKey:
    """The account that started a job; deleting the account keeps the job, unattributed."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name=related_name
    )
