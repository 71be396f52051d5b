"""Fields several evaluation models declare the same way."""

from __future__ import annotations

from django.conf import settings
from django.db import models


def started_by(related_name: str) -> models.ForeignKey:
    """The account that started a job; deleting the account keeps the job, unattributed."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name=related_name
    )


def starter(user):
    """The value of a ``started_by`` field for whoever asked: None for a command, a task or an anonymous
    request, so a job is never attributed to nobody's account."""
    return user if getattr(user, "is_authenticated", False) else None


def clip_weights_label(params: dict | None) -> str:
    """A check's CLIP model as set in its ``params``: "name (pretrained tag) checkpoint file"."""
    params = params or {}
    label = params.get("clip_model", "")
    if params.get("clip_pretrained"):
        label += f" ({params['clip_pretrained']})"
    if params.get("clip_checkpoint"):
        label += f" checkpoint {params['clip_checkpoint']}"
    return label


def embedding_chunk_meta(check_field: str, kinds: type[models.Choices], prefix: str) -> type:
    """The ``Meta`` of a CLIP check's chunk model (retrieval, zero-shot and foil checks): ordered by check,
    kind, language and index; one chunk per check, kind, language and index; a known status and kind;
    indexed by check and status. Named ``<prefix>_unique|status|kind|check_status``."""
    from core.jobs.models import UnitStatus
    from core.models import one_of

    class Meta:
        ordering = [check_field, "kind", "language", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=[check_field, "kind", "language", "index"], name=f"{prefix}_unique"
            ),
            one_of("status", UnitStatus, f"{prefix}_status"),
            one_of("kind", kinds, f"{prefix}_kind"),
        ]
        indexes = [models.Index(fields=[check_field, "status"], name=f"{prefix}_check_status")]

    return Meta
