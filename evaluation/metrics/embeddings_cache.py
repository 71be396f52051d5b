"""CLIP embeddings (of image files and of texts) cached in the database, shared by every worker."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from evaluation.models import ClipEmbedding, EmbeddingKind

# Rows per query: keeps IN lists and INSERT statements well below every backend's limits.
BATCH = 500


class DbEmbeddingCache:
    """:class:`evaluation.metrics.clip.EmbeddingCache` on the ``ClipEmbedding`` table, for one ``kind``.

    Keyed by (``LoadedClip.embedding_key``, ``kind``, sha256 of the image file or of the text),
    so a re-run, another run or another worker only computes the embeddings nobody has stored
    yet. ``put_many`` is a bulk insert that ignores rows another worker stored meanwhile (their
    vectors are the same). ``stored`` counts the vectors this instance was asked to store (the
    ones it had to compute), ``hits`` those it found.
    """

    def __init__(self, kind: str = EmbeddingKind.IMAGE) -> None:
        self.kind = EmbeddingKind(kind)
        self.stored = 0
        self.hits = 0

    def get_many(self, model_id: str, content_hashes: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(content_hashes))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(wanted), BATCH):
            rows = ClipEmbedding.objects.filter(
                model_id=model_id, kind=self.kind, content_hash__in=wanted[start : start + BATCH]
            ).values_list("content_hash", "vector", "dim")
            for content_hash, vector, dim in rows:
                array = np.frombuffer(bytes(vector), dtype="<f4")
                if array.shape == (dim,):
                    found[content_hash] = array
        self.hits += len(found)
        return found

    def put_many(self, model_id: str, vectors: Mapping[str, np.ndarray]) -> None:
        rows = []
        # Sorted: two workers inserting overlapping keys take the index entries in the same order.
        for content_hash, vector in sorted(vectors.items()):
            array = np.asarray(vector, dtype="<f4")
            if array.ndim != 1:
                raise ValueError(f"an embedding must be a 1-D vector, got shape {array.shape}")
            rows.append(
                ClipEmbedding(
                    model_id=model_id,
                    kind=self.kind,
                    content_hash=content_hash,
                    vector=array.tobytes(),
                    dim=array.size,
                )
            )
        ClipEmbedding.objects.bulk_create(rows, batch_size=BATCH, ignore_conflicts=True)
        self.stored += len(rows)
