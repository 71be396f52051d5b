"""Each language's part of a report, kept in the database (:class:`evaluation.models.ReportPiece`),
so that a new metric run or a closed campaign in one language recomputes that language and the
pooled column only (:mod:`evaluation.research.pieces` says what a piece holds and what it is keyed by).

A piece's key is a hash of its inputs, not of a selection: every report, API answer and command that
computes a trust table reads and adds the same pieces. Nothing goes stale (new data, new key); pieces
nobody reads any more are removed by :func:`report_pieces_prune`, which every computation runs first.
"""

from __future__ import annotations

import pickle
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from evaluation.models import ReportPiece

# A piece not read or written for this long is removed by report_pieces_prune.
PIECE_KEPT_FOR = timedelta(days=30)


class DatabasePieces:
    """A :class:`~evaluation.research.pieces.PieceStore` over :class:`~evaluation.models.ReportPiece`.

    Reads are one query per language; a read refreshes the row's ``updated_at`` (what pruning goes
    by). Writing a key another worker wrote first keeps theirs: the same key holds the same numbers."""

    def get(self, key: str, default: Any = None) -> Any:
        found = ReportPiece.objects.filter(key=key).values_list("pk", "payload").first()
        if found is None:
            return default
        ReportPiece.objects.filter(pk=found[0]).update(updated_at=timezone.now())
        return pickle.loads(bytes(found[1]))  # noqa: S301 — written only by __setitem__

    def __setitem__(self, key: str, value: Any) -> None:
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            with transaction.atomic():
                ReportPiece.objects.create(
                    key=key, language=getattr(value, "language", "")[:35], payload=payload
                )
        except IntegrityError:
            pass  # computed by a concurrent worker: same inputs, same numbers


def report_pieces() -> DatabasePieces:
    """The store every report computation reads its languages' pieces from; the pieces nobody read for
    :data:`PIECE_KEPT_FOR` are removed first (one query per computation, so the table never grows
    past what recent reports use)."""
    report_pieces_prune()
    return DatabasePieces()


def report_pieces_prune(*, older_than: timedelta = PIECE_KEPT_FOR) -> int:
    """Remove the pieces not read or written within ``older_than``; returns how many. Idempotent."""
    deleted, _ = ReportPiece.objects.filter(updated_at__lt=timezone.now() - older_than).delete()
    return deleted
