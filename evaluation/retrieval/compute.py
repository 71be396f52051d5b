"""Compute one chunk of a retrieval check and store it.

The job engine (:mod:`core.jobs.engine`) claims the chunk, beats for it while :func:`chunk_compute` runs
outside any transaction, and calls :func:`chunk_store` in one short transaction that locks the check
row then the chunk row; a chunk is never written twice once done.

* ``images``: embeds the chunk's images into the shared image cache (``ClipEmbedding``, keyed by
  model and orientation: the same vectors metric runs use).
* ``texts``: embeds one language's captions into the text cache that metric runs use
  (``ClipEmbedding`` rows of kind ``text`` under the model's embedding key and the sha256 of the
  caption as embedded). A killed check resumes with every embedding already stored, and a second check of the same model embeds no caption twice.
* ``recall``: reads one language's vectors from the caches (embedding only what went missing) and
  stores its recalls in ``RetrievalCheck.results``.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from django.core.files.storage import default_storage
from PIL import Image as PILImage

from annotation.models import Image
from core.jobs.engine import JobDataError, send_when_ready, timings_add
from core.jobs.kinds import JobKind, register
from evaluation.metrics.clip import ClipUnavailable, LoadedClip, embed_images_cached, embed_texts
from evaluation.metrics.clip.embedding import (
    DEFAULT_IMAGE_ORIENTATION,
    apply_prompt_prefix,
    embedding_cache_key,
)
from evaluation.metrics.clip.hashing import is_content_hash
from evaluation.metrics.clip.retrieval import RetrievalDataError, retrieval_recall
from evaluation.metrics.clip.texts import text_hash
from evaluation.metrics.clip.trust import clip_model_key
from evaluation.metrics.clip_models import clip_model_get
from evaluation.metrics.embeddings_cache import DbEmbeddingCache
from evaluation.models import (
    ChunkStatus,
    EmbeddingKind,
    RetrievalCheck,
    RetrievalChunk,
    RetrievalChunkKind,
)

log = logging.getLogger(__name__)
EMBEDDING_KINDS = (RetrievalChunkKind.IMAGES, RetrievalChunkKind.TEXTS)


def _loaded(check: RetrievalCheck) -> LoadedClip:
    params = check.params
    return clip_model_get(
        model=params["clip_model"],
        pretrained=params.get("clip_pretrained", ""),
        checkpoint=params.get("clip_checkpoint", ""),
        config=params.get("clip_model_config"),
    )


def _image_loader(name: str, key: str):
    def load() -> PILImage.Image:
        try:
            with default_storage.open(name, "rb") as fh:
                image = PILImage.open(io.BytesIO(fh.read()))
                image.load()
        except (OSError, PILImage.DecompressionBombError) as exc:
            raise JobDataError(f"the file of image “{key}” cannot be read as an image ({exc})") from exc
        return image

    return load


def _image_items(image_ids: Sequence[int]) -> list[tuple[str, object]]:
    files = {
        pk: (key, digest, name)
        for pk, key, digest, name in Image.objects.filter(pk__in=list(image_ids)).values_list(
            "pk", "key", "content_hash", "file"
        )
    }
    items = []
    for image_id in image_ids:
        key, digest, name = files.get(image_id, (str(image_id), None, ""))
        if not digest or not name or not is_content_hash(digest):
            raise JobDataError(f"image “{key}” has no stored file (deleted after the check was created?)")
        items.append((digest, _image_loader(name, key)))
    return items


class _Models:
    """The check's model, loaded only when a vector is missing from the caches."""

    def __init__(self, check: RetrievalCheck):
        self.check = check
        self._loaded: LoadedClip | None = None

    @property
    def loaded(self) -> LoadedClip:
        if self._loaded is None:
            self._loaded = _loaded(self.check)
        return self._loaded

    @property
    def model_id(self) -> str:
        return self.check.model_id or self.loaded.model_id


def _image_vectors(models: _Models, image_ids: Sequence[int], cache: DbEmbeddingCache) -> np.ndarray:
    orientation = models.check.params.get("image_orientation") or DEFAULT_IMAGE_ORIENTATION
    items = _image_items(image_ids)
    if models.check.model_id:
        key = embedding_cache_key(models.check.model_id, orientation)
        found = cache.get_many(key, [h for h, _ in items])
        if len(found) == len({h for h, _ in items}):
            return np.stack([found[h] for h, _ in items])
    return embed_images_cached(models.loaded, items, cache, orientation=orientation)


def _text_vectors(models: _Models, texts: Sequence[str], cache: DbEmbeddingCache) -> np.ndarray:
    """The captions' embeddings from the text cache that metric runs share (``kind=text``, keyed by
    the model's embedding key and the sha256 of the text as embedded, prefix included); the model is
    loaded only when one is missing."""
    prefix = models.check.params.get("clip_prompt_prefix", "")
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    if models.check.model_id:
        hashes = [text_hash(apply_prompt_prefix(text, prefix)) for text in texts]
        found = cache.get_many(models.check.model_id, hashes)
        if len(found) == len(set(hashes)):
            return np.stack([found[h] for h in hashes])
    return embed_texts(models.loaded, list(texts), prefix, cache=cache)


def _language_pairs(check: RetrievalCheck, language: str) -> list[tuple[int, str]]:
    chunks = check.chunks.filter(kind=RetrievalChunkKind.TEXTS, language=language).order_by("index")
    return [(int(image_id), text) for chunk in chunks for image_id, text in chunk.payload]


def embeddings_compute(check, chunk, *, images, texts, measure) -> dict:
    """A CLIP check's chunk computed: an image chunk embeds ``images(payload)`` (image ids), a text chunk
    ``texts(payload)``; the per-language chunk stores ``measure(models, image_cache, text_cache)`` as its
    result. The outcome: ``{"model_id", "stats", "result"?}``; raises JobDataError / ClipUnavailable."""
    models = _Models(check)
    image_cache, text_cache = DbEmbeddingCache(EmbeddingKind.IMAGE), DbEmbeddingCache(EmbeddingKind.TEXT)
    out: dict = {}
    if chunk.kind == EMBEDDING_KINDS[0]:
        _image_vectors(models, images(chunk.payload), image_cache)
    elif chunk.kind == EMBEDDING_KINDS[1]:
        _text_vectors(models, texts(chunk.payload), text_cache)
    else:
        out["result"] = measure(models, image_cache, text_cache)
    out["model_id"] = models.model_id
    out["stats"] = {
        "embeddings_computed": image_cache.stored + text_cache.stored,
        "embeddings_cached": image_cache.hits + text_cache.hits,
    }
    return out


def _recall(check: RetrievalCheck, language: str, models: _Models, image_cache, text_cache) -> dict:
    pairs = _language_pairs(check, language)
    image_ids = sorted({image_id for image_id, _ in pairs})
    row = {image_id: i for i, image_id in enumerate(image_ids)}
    images = _image_vectors(models, image_ids, image_cache)
    captions = _text_vectors(models, [text for _, text in pairs], text_cache)
    try:
        result = retrieval_recall(images, captions, [row[image_id] for image_id, _ in pairs])
    except RetrievalDataError as exc:
        raise JobDataError(f"{language}: {exc}") from exc
    return result.as_dict()


def chunk_compute(chunk: RetrievalChunk) -> dict:
    """The chunk's outcome: ``{"model_id", "stats", "result"?}``; raises JobDataError / ClipUnavailable."""
    check = chunk.retrieval_check
    return embeddings_compute(
        check,
        chunk,
        images=list,
        texts=lambda payload: [text for _, text in payload],
        measure=partial(_recall, check, chunk.language),
    )


# --- What the engine calls ------------------------------------------------------------------------


# The shape a retrieval check shares with zero-shot and foil checks: image and text embedding chunks,
# then one chunk per language (``last``) that reads their vectors. These helpers serve both kinds.


@dataclass(frozen=True)
class EmbeddingChunks:
    """The chunks of one such kind: ``model`` with its foreign key ``check_field`` to the check, the kind
    of its per-language chunk, ``last``, and what the engine calls for them: ``compute``, ``store`` and
    ``finalise`` (the kind's, see :class:`core.jobs.kinds.JobKind`)."""

    model: type
    check_field: str
    last: str
    compute: Callable[[Any], dict]
    store: Callable[[Any, Any, dict, float], None]
    finalise: Callable[[Any], None] | None = None

    def _embeddings_left(self, check_id: int):
        return self.model.objects.filter(
            **{f"{self.check_field}_id": check_id}, kind__in=EMBEDDING_KINDS
        ).exclude(status=ChunkStatus.DONE)

    def waiting(self, chunk) -> bool:
        """A ``last`` chunk waits until every embedding chunk of its check is done (it is sent then)."""
        check_id = getattr(chunk, f"{self.check_field}_id")
        return chunk.kind == self.last and self._embeddings_left(check_id).exists()

    def ready_ids(self, check_id: int) -> list[int]:
        """Pending chunks that may run: embedding chunks, and ``last`` chunks once no embedding chunk is
        left. Images first: every language's ``last`` chunk needs them, and metric runs share them."""
        pending = self.model.objects.filter(
            **{f"{self.check_field}_id": check_id}, status=ChunkStatus.PENDING
        )
        if self._embeddings_left(check_id).exists():
            pending = pending.filter(kind__in=EMBEDDING_KINDS)
        order = {EMBEDDING_KINDS[0]: 0, EMBEDDING_KINDS[1]: 1, self.last: 2}
        rows = sorted(
            pending.values_list("pk", "kind", "language", "index"), key=lambda r: (order[r[1]], r[2], r[3])
        )
        return [pk for pk, *_ in rows]

    def unsaved(
        self, check, *, images: list, texts: dict[str, list], size: int, languages: list[str] | None = None
    ) -> list:
        """The check's chunks, unsaved: the image chunks first (their embeddings are shared with metric
        runs), then each language's text chunks, then one ``last`` chunk per language of ``languages``
        (default: those of ``texts``), created now and sent once every embedding chunk is done."""
        field = {self.check_field: check}
        chunks = [
            self.model(**field, kind="images", index=i, payload=images[start : start + size])
            for i, start in enumerate(range(0, len(images), size))
        ]
        for code, rows in texts.items():
            chunks += [
                self.model(**field, kind="texts", language=code, index=i, payload=rows[start : start + size])
                for i, start in enumerate(range(0, len(rows), size))
            ]
        return chunks + [
            self.model(**field, kind=self.last, language=code, index=0)
            for code in (texts if languages is None else languages)
        ]

    def job_kind(self, *, name: str, **kind: Any) -> JobKind:
        """Register the job kind ``name`` of these chunks. ``kind``: how it is named (``label``,
        ``task_name``, ``resume_hint``); the check model is the one the chunks' foreign key names, and
        the rest is the same for every check: a ``last`` chunk waits for the embedding chunks and is
        sent when the last of them is stored."""
        return register(
            JobKind(
                name=name,
                job_model=self.model._meta.get_field(self.check_field).related_model,
                unit_model=self.model,
                job_field=self.check_field,
                compute=self.compute,
                store=self.store,
                finalise=self.finalise,
                ready=self.ready_ids,
                waiting=self.waiting,
                after_store=send_when_ready(name, last=self.last),
                unit_label=chunk_label,
                unit_noun="chunk",
                id_detail="check_id",
                data_errors=(ClipUnavailable,),
                select_related=(self.check_field,),
                **kind,
            )
        )


def chunk_label(chunk) -> str:
    return f"{chunk.kind} chunk {chunk.index}" + (f" ({chunk.language})" if chunk.language else "")


def model_id_store(check, outcome: dict) -> None:
    """Record the model id the chunk's worker loaded, and the model key it gives, on the check (rows
    locked). Raises JobDataError when the workers loaded different weights under the same settings."""
    if check.model_id and check.model_id != outcome["model_id"]:
        # Two workers loaded different weights under the same settings (a checkpoint replaced).
        raise JobDataError(
            f"the model changed during the check: {check.model_id} before, {outcome['model_id']} now; "
            "start a new check"
        )
    check.model_id = outcome["model_id"]
    params = check.params
    check.model_key = clip_model_key(
        model=params["clip_model"],
        pretrained=params.get("clip_pretrained", ""),
        checkpoint=params.get("clip_checkpoint", ""),
        model_id=check.model_id,
    )


def chunk_store(check: RetrievalCheck, chunk: RetrievalChunk, outcome: dict, seconds: float) -> None:
    """Record the chunk's outcome on the check (the kind's ``store``: check and chunk rows locked).
    Raises JobDataError when the workers loaded different weights under the same settings."""
    model_id_store(check, outcome)
    if "result" in outcome:
        check.results = {**(check.results or {}), chunk.language: outcome["result"]}
    timings_add(check, f"{chunk.kind}_seconds", seconds, outcome["stats"])


# A recall chunk waits for the embedding chunks.
RETRIEVAL_CHUNKS = EmbeddingChunks(
    RetrievalChunk, "retrieval_check", RetrievalChunkKind.RECALL, compute=chunk_compute, store=chunk_store
)
