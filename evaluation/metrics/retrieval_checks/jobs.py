"""Compute one chunk of a retrieval check and store it; finalise the check after its last chunk.

Chunks follow the metric chunks' rules (:mod:`evaluation.metrics.chunks`): claimed by one
conditional UPDATE, computed outside any transaction with a heartbeat thread, stored in one short
transaction that locks the check row then the chunk row, never written twice once done.

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
import threading
import time
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.core.files.storage import default_storage
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from PIL import Image as PILImage

from annotation.models import Image
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
from evaluation.metrics.runs import package_versions
from evaluation.models import (
    ChunkStatus,
    EmbeddingKind,
    RetrievalCheck,
    RetrievalChunk,
    RetrievalChunkKind,
    RunStatus,
)

log = logging.getLogger(__name__)


class CheckDataError(Exception):
    """The check's data cannot be used: an image file went missing or is unreadable, or a
    language's pool cannot give a recall. Marks the chunk and the check failed with the reason."""


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
            raise CheckDataError(f"the file of image “{key}” cannot be read as an image ({exc})") from exc
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
            raise CheckDataError(f"image “{key}” has no stored file (deleted after the check was created?)")
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


def _compute(chunk: RetrievalChunk) -> dict:
    """The chunk's outcome: ``{"model_id", "stats", "result"?}``; raises CheckDataError / ClipUnavailable."""
    check = chunk.retrieval_check
    models = _Models(check)
    image_cache, text_cache = DbEmbeddingCache(EmbeddingKind.IMAGE), DbEmbeddingCache(EmbeddingKind.TEXT)
    out: dict = {}
    if chunk.kind == RetrievalChunkKind.IMAGES:
        _image_vectors(models, chunk.payload, image_cache)
    elif chunk.kind == RetrievalChunkKind.TEXTS:
        _text_vectors(models, [text for _, text in chunk.payload], text_cache)
    else:
        pairs = _language_pairs(check, chunk.language)
        image_ids = sorted({image_id for image_id, _ in pairs})
        row = {image_id: i for i, image_id in enumerate(image_ids)}
        images = _image_vectors(models, image_ids, image_cache)
        captions = _text_vectors(models, [text for _, text in pairs], text_cache)
        try:
            result = retrieval_recall(images, captions, [row[image_id] for image_id, _ in pairs])
        except RetrievalDataError as exc:
            raise CheckDataError(f"{chunk.language}: {exc}") from exc
        out["result"] = result.as_dict()
    out["model_id"] = models.model_id
    out["stats"] = {
        "embeddings_computed": image_cache.stored + text_cache.stored,
        "embeddings_cached": image_cache.hits + text_cache.hits,
    }
    return out


# --- The service the task calls -----------------------------------------------------------------


def retrieval_chunk_compute(*, chunk_id: int, send_next: bool = True) -> str:
    """Compute and store one chunk; send the recall chunks after the last embedding chunk, finalise the
    check after the last chunk. Returns what happened.

    Idempotent: a done chunk returns at once; a recall chunk whose embeddings are not all done waits
    ("waiting": it is sent again when they are). ``send_next=False``: the caller runs the recall
    chunks itself (the ``clip_retrieval`` command computing in its own process). Bad data and an unavailable model mark the chunk and
    the check failed with the reason (resumable). Database errors give the chunk back and propagate
    (the task retries them); any other error propagates as a bug.
    """
    chunk = RetrievalChunk.objects.select_related("retrieval_check").filter(pk=chunk_id).first()
    if chunk is None:
        return "missing"
    if chunk.status == ChunkStatus.DONE:
        return "already done"
    if chunk.kind == RetrievalChunkKind.RECALL and (
        chunk.retrieval_check.chunks.filter(kind__in=[RetrievalChunkKind.IMAGES, RetrievalChunkKind.TEXTS])
        .exclude(status=ChunkStatus.DONE)
        .exists()
    ):
        return "waiting"
    attempt = retrieval_chunk_claim(chunk_id=chunk_id)
    if attempt is None:
        done = RetrievalChunk.objects.filter(pk=chunk_id, status=ChunkStatus.DONE).exists()
        return "already done" if done else "running elsewhere"
    now = timezone.now()
    RetrievalCheck.objects.filter(
        pk=chunk.retrieval_check_id, status__in=[RunStatus.PENDING, RunStatus.QUEUED]
    ).update(
        status=RunStatus.RUNNING,
        started_at=Coalesce(F("started_at"), Value(now)),
        versions=package_versions(),
        updated_at=now,
    )
    started = time.perf_counter()
    try:
        with _Heartbeat(chunk_id=chunk_id, attempt=attempt):
            outcome = _compute(chunk)
        return _store(chunk_id, outcome, time.perf_counter() - started, send_next=send_next)
    except (ClipUnavailable, CheckDataError) as exc:
        retrieval_chunk_fail(chunk_id=chunk_id, message=str(exc))
        return "failed"
    except DatabaseError:
        RetrievalChunk.objects.filter(pk=chunk_id, status=ChunkStatus.RUNNING, attempts=attempt).update(
            status=ChunkStatus.PENDING, heartbeat_at=None, updated_at=timezone.now()
        )
        raise


def retrieval_chunk_claim(*, chunk_id: int) -> int | None:
    """Take a chunk (pending, failed or orphaned) for this worker: the attempt number, or None."""
    now = timezone.now()
    with transaction.atomic():
        claimed = (
            RetrievalChunk.objects.filter(pk=chunk_id)
            .claimable(now=now)
            .update(
                status=ChunkStatus.RUNNING,
                attempts=F("attempts") + 1,
                started_at=now,
                heartbeat_at=now,
                error="",
                updated_at=now,
            )
        )
        if not claimed:
            return None
        return RetrievalChunk.objects.values_list("attempts", flat=True).get(pk=chunk_id)


class _Heartbeat:
    """Beats for a chunk from a daemon thread while the ``with`` block computes it (see chunks.py)."""

    def __init__(self, *, chunk_id: int, attempt: int):
        self.chunk_id, self.attempt = chunk_id, attempt
        self.interval = float(settings.METRIC_CHUNK_HEARTBEAT_SECONDS)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"retrieval-chunk-{chunk_id}", daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc_info):
        self.stopped.set()
        self.thread.join(timeout=self.interval + 5)

    def _run(self) -> None:
        try:
            while not self.stopped.wait(self.interval):
                try:
                    now = timezone.now()
                    alive = RetrievalChunk.objects.filter(
                        pk=self.chunk_id, status=ChunkStatus.RUNNING, attempts=self.attempt
                    ).update(heartbeat_at=now, updated_at=now)
                    if not alive:
                        return
                except DatabaseError:
                    log.warning("retrieval chunk %s: heartbeat failed", self.chunk_id, exc_info=True)
        finally:
            connection.close()


def _store(chunk_id: int, outcome: dict, seconds: float, *, send_next: bool = True) -> str:
    from evaluation.metrics.retrieval_checks.services import ready_chunk_ids, send_chunks

    with transaction.atomic():
        check_id = RetrievalChunk.objects.values_list("retrieval_check_id", flat=True).get(pk=chunk_id)
        check = RetrievalCheck.objects.select_for_update().get(pk=check_id)
        chunk = RetrievalChunk.objects.select_for_update().get(pk=chunk_id)
        if chunk.status == ChunkStatus.DONE:
            return "already done"
        if check.model_id and check.model_id != outcome["model_id"]:
            # Two workers loaded different weights under the same settings (a checkpoint replaced).
            message = (
                f"the model changed during the check: {check.model_id} before, {outcome['model_id']} now; "
                "start a new check"
            )
            _fail_locked(check, chunk, message)
            return "failed"
        check.model_id = outcome["model_id"]
        params = check.params
        check.model_key = clip_model_key(
            model=params["clip_model"],
            pretrained=params.get("clip_pretrained", ""),
            checkpoint=params.get("clip_checkpoint", ""),
            model_id=check.model_id,
        )
        if "result" in outcome:
            check.results = {**(check.results or {}), chunk.language: outcome["result"]}
        chunk.status = ChunkStatus.DONE
        chunk.finished_at = timezone.now()
        chunk.error = ""
        chunk.save(update_fields=["status", "finished_at", "error", "updated_at"])
        timings = dict(check.timings or {})
        key = f"{chunk.kind}_seconds"
        timings[key] = round(timings.get(key, 0.0) + seconds, 3)
        for name, value in outcome["stats"].items():
            timings[name] = timings.get(name, 0) + value
        check.timings = timings
        check.chunks_done = check.chunks.filter(status=ChunkStatus.DONE).count()
        check.save(update_fields=["model_id", "model_key", "results", "timings", "chunks_done", "updated_at"])
        if check.chunks_done == check.chunks_total:
            retrieval_check_finalise(check)
        elif send_next and chunk.kind != RetrievalChunkKind.RECALL:
            recall = [
                pk
                for pk in ready_chunk_ids(check.pk)
                if RetrievalChunk.objects.filter(pk=pk, kind=RetrievalChunkKind.RECALL).exists()
            ]
            if recall:
                transaction.on_commit(lambda: send_chunks(check_id, recall))
    return "done"


def _fail_locked(check: RetrievalCheck, chunk: RetrievalChunk, message: str) -> None:
    now = timezone.now()
    chunk.status = ChunkStatus.FAILED
    chunk.error = message
    chunk.finished_at = now
    chunk.save(update_fields=["status", "error", "finished_at", "updated_at"])
    if check.status != RunStatus.SUCCEEDED:
        check.status = RunStatus.FAILED
        if not check.error:
            label = f"{chunk.kind} chunk {chunk.index}" + (f" ({chunk.language})" if chunk.language else "")
            check.error = f"{label}: {message}"
        check.finished_at = now
        check.save(update_fields=["status", "error", "finished_at", "updated_at"])
    log.warning("retrieval check %s, chunk %s failed: %s", check.pk, chunk.pk, message)


def retrieval_chunk_fail(*, chunk_id: int, message: str) -> None:
    """Mark a chunk failed and its check failed (first error kept), unless the chunk got done meanwhile."""
    with transaction.atomic():
        check_id = (
            RetrievalChunk.objects.filter(pk=chunk_id).values_list("retrieval_check_id", flat=True).first()
        )
        if check_id is None:
            return
        check = RetrievalCheck.objects.select_for_update().get(pk=check_id)
        chunk = RetrievalChunk.objects.select_for_update().get(pk=chunk_id)
        if chunk.status != ChunkStatus.DONE:
            _fail_locked(check, chunk, message)


def retrieval_check_finalise(check: RetrievalCheck) -> None:
    """Mark the check succeeded with its wall time. Call with the check row locked, all chunks done."""
    now = timezone.now()
    check.status = RunStatus.SUCCEEDED
    check.error = ""
    check.finished_at = now
    timings = dict(check.timings or {})
    if check.started_at:
        timings["wall_seconds"] = round((now - check.started_at).total_seconds(), 3)
    check.timings = timings
    check.save(update_fields=["status", "error", "finished_at", "timings", "updated_at"])
