"""Compute one chunk of a metric run and store its scores; finalise the run after its last chunk.

A chunk is computed outside any transaction (CLIP inference can take minutes) and stored in
one short transaction that locks the run row, then the chunk row (always in that order,
here and in :func:`evaluation.metrics.runs.metric_run_resume`), deletes whatever rows an
earlier, interrupted attempt may have left and inserts the new ones. A chunk that is already
done is never written again, so a redelivered or duplicated task stores nothing twice.

While a worker computes a chunk, a thread of its own beats (``heartbeat_at``) every
``METRIC_CHUNK_HEARTBEAT_SECONDS``. A thread rather than checkpoints in the chunk loop, because
the long calls (CLIP inference of a batch, loading the model) are not ours to interrupt: a
beat between batches would leave a slow but live chunk silent. A worker killed with SIGKILL
takes the thread with it, so the beats stop exactly when the work does. A chunk is claimed
by one conditional UPDATE (pending, failed, or running but silent for
``METRIC_CHUNK_ORPHAN_SECONDS``), so two workers never compute the same live chunk.
"""

from __future__ import annotations

import io
import logging
import threading
import time
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.core.files.storage import default_storage
from django.db import DatabaseError, connection, transaction
from django.db.models import Avg, F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from PIL import Image as PILImage

from annotation.models import Image
from evaluation.metrics.clip import (
    DEFAULT_IMAGE_ORIENTATION,
    ClipUnavailable,
    clipscore,
    embed_images_cached,
    embed_texts,
    refclipscore,
)
from evaluation.metrics.clip.embedding import pixel_batches
from evaluation.metrics.clip.hashing import is_content_hash
from evaluation.metrics.clip_models import clip_autocast_verify, clip_model_get
from evaluation.metrics.embeddings_cache import DbEmbeddingCache
from evaluation.metrics.runs import CIDER_DF_REFSET, meteor_config, package_versions
from evaluation.metrics.selectors import reference_texts, system_captions
from evaluation.metrics.signatures import clip_signature
from evaluation.metrics.text.schemes import SchemeError, scheme_for_language
from evaluation.metrics.text.scoring import score_texts
from evaluation.models import (
    CLIP_METRICS,
    TEXT_METRICS,
    CaptionScore,
    ChunkKind,
    ChunkStatus,
    CorpusScore,
    EmbeddingKind,
    Metric,
    MetricChunk,
    MetricRun,
    RunStatus,
)

log = logging.getLogger(__name__)

BATCH = 2000


class ChunkDataError(Exception):
    """The data of a chunk cannot be scored: a caption, reference or file went missing or is unreadable.

    Raised only where the data is checked, before the scorers see it, so that an error of the
    scoring code itself (a ``ValueError`` included) is never reported as bad data.
    """


@dataclass
class ChunkResult:
    metrics: list[str]
    rows: list[tuple[int, str, float]]  # (image id, metric, value)
    corpus: dict[str, float] = field(default_factory=dict)  # stored as is (text metrics)
    not_computed: dict[str, str] = field(default_factory=dict)  # metric -> why (METEOR without Java)
    signatures: dict[str, str] = field(default_factory=dict)  # metric -> signature, as computed here
    seconds: float = 0.0
    stats: dict[str, int | str] = field(default_factory=dict)


# --- Computing ----------------------------------------------------------------------------------


def _candidates(chunk: MetricChunk) -> dict[int, str]:
    run = chunk.run
    found = system_captions(system_id=chunk.system_id, language_id=run.language_id, image_ids=chunk.image_ids)
    missing = [i for i in chunk.image_ids if i not in found]
    if missing:
        raise ChunkDataError(
            f"{len(missing)} {run.language.code} captions of “{chunk.system.name}” were deleted after the run "
            f"was created (image ids {missing[:5]})"
        )
    return {i: found[i] for i in chunk.image_ids}


def _references(chunk: MetricChunk) -> dict[int, list[str]]:
    references = reference_texts(chunk.run.reference_set, chunk.image_ids)
    lacking = [i for i in chunk.image_ids if not references.get(i)]
    if lacking:
        raise ChunkDataError(
            f"{len(lacking)} images lost their references in “{chunk.run.reference_set.name}” after the run "
            f"was created (image ids {lacking[:5]})"
        )
    return references


def _df_references(run: MetricRun) -> tuple[dict[int, list[str]] | None, str | None]:
    """The df corpus of the run's ``cider_df`` param: None (the scored images) or the whole reference set."""
    source = run.params.get("cider_df", "")
    if not source.startswith(f"{CIDER_DF_REFSET}:"):
        return None, None
    return reference_texts(run.reference_set), source


def _compute_text(chunk: MetricChunk) -> ChunkResult:
    run = chunk.run
    metrics = [m for m in run.metrics if m in TEXT_METRICS]
    # The scheme is checked (known, for this language, installed on this worker) before any caption
    # is read; a SchemeError fails the chunk with its message and stores nothing.
    scheme = scheme_for_language(run.language.code, run.params["tokenizer"])
    candidates = _candidates(chunk)
    df_references, df_name = _df_references(run)
    report = score_texts(
        candidates,
        _references(chunk),
        language=run.language.code,
        scheme=scheme,
        metrics=metrics,
        meteor=meteor_config(),
        df_references=df_references,
        df_name=df_name,
    )
    # A metric that could not be computed (METEOR without Java) is left out and its reason kept;
    # its old rows, if any, are still deleted by _store, so no stale score survives.
    rows = [
        (image_id, metric, float(value))
        for metric in report.metrics
        for image_id, value in report.per_caption[metric].items()
    ]
    return ChunkResult(
        metrics=metrics,
        rows=rows,
        corpus={m: float(report.corpus[m]) for m in report.metrics},
        not_computed=dict(report.not_computed),
        signatures={m: report.signature_of(m) for m in report.metrics},
    )


def _image_loader(name: str, key: str):
    def load() -> PILImage.Image:
        # Decoded here, so that an unreadable or corrupt file is reported as this image's data
        # problem; an error later, in the embedding code, is a bug and is reported as one.
        try:
            with default_storage.open(name, "rb") as fh:
                data = fh.read()
            image = PILImage.open(io.BytesIO(data))
            image.load()
        except (OSError, PILImage.DecompressionBombError) as exc:  # UnidentifiedImageError is an OSError
            raise ChunkDataError(f"the file of image “{key}” cannot be read as an image ({exc})") from exc
        return image

    return load


# Pairs of a chunk on which a worker checks, once, that autocast stays within its tolerance.
AUTOCAST_SAMPLE = 8


def _compute_clip(chunk: MetricChunk) -> ChunkResult:
    run = chunk.run
    params = run.params
    metrics = [m for m in run.metrics if m in CLIP_METRICS]
    # Runs from before the setting existed computed in fp32 (no "clip_autocast" param).
    autocast = params.get("clip_autocast", "")
    loaded = clip_model_get(
        model=params["clip_model"],
        pretrained=params.get("clip_pretrained", ""),
        checkpoint=params.get("clip_checkpoint", ""),
        config=params.get("clip_model_config"),
        autocast=autocast,
        threads=settings.CLIP_TORCH_THREADS,
    )
    candidates = _candidates(chunk)
    files = {
        pk: (key, content_hash, name)
        for pk, key, content_hash, name in Image.objects.filter(pk__in=chunk.image_ids).values_list(
            "pk", "key", "content_hash", "file"
        )
    }
    items = []
    for image_id in chunk.image_ids:
        key, content_hash, name = files.get(image_id, (str(image_id), None, ""))
        if not content_hash or not name:
            raise ChunkDataError(f"image “{key}” has no stored file")
        if not is_content_hash(content_hash):
            raise ChunkDataError(f"image “{key}” has a malformed content hash ({content_hash[:20]!r})")
        items.append((content_hash, _image_loader(name, key)))

    image_cache = DbEmbeddingCache(EmbeddingKind.IMAGE)
    text_cache = DbEmbeddingCache(EmbeddingKind.TEXT)
    prefix = params.get("clip_prompt_prefix", "")
    # Runs from before the setting existed were computed upright (EXIF applied).
    orientation = params.get("image_orientation") or DEFAULT_IMAGE_ORIENTATION
    if autocast:
        sample = list(range(min(AUTOCAST_SAMPLE, len(items))))
        _, pixels = next(
            pixel_batches(
                loaded, [items[i][1] for i in sample], len(sample), orientation=orientation, loader_threads=0
            )
        )
        clip_autocast_verify(
            loaded,
            [candidates[chunk.image_ids[i]] for i in sample],
            pixels,
            tolerance=settings.CLIP_AUTOCAST_TOLERANCE,
        )
    image_emb = embed_images_cached(
        loaded, items, image_cache, orientation=orientation, loader_threads=settings.CLIP_IMAGE_LOADER_THREADS
    )
    # Candidates and references in one call: a text that is both, or repeats, is embedded once, and
    # references another system's chunk already embedded come from the cache.
    texts = list(candidates.values())
    references = _references(chunk) if Metric.REFCLIPSCORE in metrics else None
    if references is not None:
        texts += [text for image_id in chunk.image_ids for text in references[image_id]]
    text_emb = embed_texts(loaded, texts, prefix, settings.CLIP_TEXT_BATCH_SIZE, cache=text_cache)
    cand_emb = text_emb[: len(candidates)]
    per_clip = clipscore(image_emb, cand_emb)
    columns = {Metric.CLIPSCORE.value: per_clip}
    if references is not None:
        ref_emb = text_emb[len(candidates) :]
        bounds = np.cumsum([0] + [len(references[image_id]) for image_id in chunk.image_ids])
        per_caption_refs = [ref_emb[bounds[i] : bounds[i + 1]] for i in range(len(chunk.image_ids))]
        columns[Metric.REFCLIPSCORE.value] = refclipscore(per_clip, cand_emb, per_caption_refs)
    rows = [
        (image_id, metric, float(columns[metric][i]))
        for metric in metrics
        for i, image_id in enumerate(chunk.image_ids)
    ]
    signature = clip_signature(
        model=params["clip_model"],
        pretrained=params.get("clip_pretrained", ""),
        checkpoint=params.get("clip_checkpoint", ""),
        model_id=loaded.model_id,
        prompt_prefix=prefix,
        orientation=orientation,
        autocast=autocast,
    )
    return ChunkResult(
        metrics=metrics,
        rows=rows,
        signatures=dict.fromkeys(metrics, signature),
        stats={
            "images_embedded": image_cache.stored,
            "images_cached": image_cache.hits,
            "texts_embedded": text_cache.stored,
            "texts_cached": text_cache.hits,
            "clip_model_id": loaded.model_id,
            "image_orientation": orientation,
        },
    )


# --- The service the task calls -----------------------------------------------------------------


def metric_chunk_compute(*, chunk_id: int) -> str:
    """Compute and store one chunk; finalise its run if it was the last. Returns what happened.

    Idempotent: a done chunk returns at once ("already done"); an interrupted attempt's rows
    are replaced, never duplicated. Bad data (:class:`ChunkDataError`) and an unavailable CLIP
    model mark the chunk and the run failed with the reason ("failed"); other chunks of the
    run go on, so text scores are stored even when CLIP fails. A tokenisation scheme that cannot
    run here (unknown, library missing on this worker, a caption the segmenter rejects) fails the
    chunk the same way, with the scheme and language named, and stores none of its scores. Every
    other error propagates:
    the task retries database errors and fails the chunk visibly, with a logged traceback,
    on anything else (a bug is not bad data).
    """
    chunk = (
        MetricChunk.objects.select_related("run", "run__language", "run__reference_set", "system")
        .filter(pk=chunk_id)
        .first()
    )
    if chunk is None:
        return "missing"
    if chunk.status == ChunkStatus.DONE:
        return "already done"
    attempt = metric_chunk_claim(chunk_id=chunk_id)
    if attempt is None:
        done = MetricChunk.objects.filter(pk=chunk_id, status=ChunkStatus.DONE).exists()
        return "already done" if done else "running elsewhere"
    now = timezone.now()
    MetricRun.objects.filter(pk=chunk.run_id, status__in=[RunStatus.PENDING, RunStatus.QUEUED]).update(
        status=RunStatus.RUNNING,
        started_at=Coalesce(F("started_at"), Value(now)),
        versions=package_versions(),
        updated_at=now,
    )
    started = time.perf_counter()
    try:
        with _Heartbeat(chunk_id=chunk_id, attempt=attempt):
            result = _compute_text(chunk) if chunk.kind == ChunkKind.TEXT else _compute_clip(chunk)
        result.seconds = time.perf_counter() - started
        return _store(chunk_id, result)
    except (ClipUnavailable, ChunkDataError, SchemeError) as exc:
        metric_chunk_fail(chunk_id=chunk_id, message=str(exc))
        return "failed"
    except DatabaseError:
        # The task retries it: give the chunk back, or the retry would find it "running elsewhere".
        _release(chunk_id, attempt)
        raise


def _release(chunk_id: int, attempt: int) -> None:
    try:
        MetricChunk.objects.filter(pk=chunk_id, status=ChunkStatus.RUNNING, attempts=attempt).update(
            status=ChunkStatus.PENDING, heartbeat_at=None, updated_at=timezone.now()
        )
    except DatabaseError:  # still down: the chunk goes silent and is orphaned, then queued again
        log.warning("metric chunk %s: could not be given back after a database error", chunk_id)


def metric_chunk_claim(*, chunk_id: int) -> int | None:
    """Take a chunk for this worker: returns the attempt number, or None when it is not to be computed.

    One conditional UPDATE (no lock held afterwards): the chunk must be pending, failed, or
    orphaned (running, silent for ``METRIC_CHUNK_ORPHAN_SECONDS``). PostgreSQL re-checks that
    condition on the row a concurrent claim just updated, so of two workers claiming together
    exactly one gets the chunk; a done chunk, or one whose worker is alive, is never claimed.
    """
    now = timezone.now()
    with transaction.atomic():
        claimed = (
            MetricChunk.objects.filter(pk=chunk_id)
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
        return MetricChunk.objects.values_list("attempts", flat=True).get(pk=chunk_id)


def metric_chunk_beat(*, chunk_id: int, attempt: int) -> bool:
    """Record that the worker of ``attempt`` is still computing the chunk. False: the chunk is no longer its own.

    Only the attempt that holds the chunk beats (the chunk is running and ``attempts`` is still
    this attempt): a worker that was thought dead and whose chunk was taken over, finished or
    failed changes nothing and stops beating. Its result, if it gets one, is still stored at most
    once (see :func:`_store`).
    """
    now = timezone.now()
    return bool(
        MetricChunk.objects.filter(pk=chunk_id, status=ChunkStatus.RUNNING, attempts=attempt).update(
            heartbeat_at=now, updated_at=now
        )
    )


class _Heartbeat:
    """Beats for a chunk from a daemon thread while the ``with`` block computes it."""

    def __init__(self, *, chunk_id: int, attempt: int):
        self.chunk_id, self.attempt = chunk_id, attempt
        self.interval = float(settings.METRIC_CHUNK_HEARTBEAT_SECONDS)
        self.stopped = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name=f"metric-chunk-{chunk_id}-heartbeat", daemon=True
        )

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
                    if not metric_chunk_beat(chunk_id=self.chunk_id, attempt=self.attempt):
                        return
                except DatabaseError:
                    # The database is away for a moment: beat again next time. Missing beats for
                    # the whole orphan timeout lets another worker take over, which is safe.
                    log.warning("metric chunk %s: heartbeat failed", self.chunk_id, exc_info=True)
        finally:
            connection.close()  # this thread's own connection


def _store(chunk_id: int, result: ChunkResult) -> str:
    with transaction.atomic():
        run_id = MetricChunk.objects.values_list("run_id", flat=True).get(pk=chunk_id)
        run = MetricRun.objects.select_for_update().get(pk=run_id)
        # of=self: lock the chunk row only, not the system row the join reads.
        chunk = MetricChunk.objects.select_for_update(of=("self",)).select_related("system").get(pk=chunk_id)
        if chunk.status == ChunkStatus.DONE:
            return "already done"
        old = CaptionScore.objects.filter(run_id=run.pk, system_id=chunk.system_id, metric__in=result.metrics)
        if chunk.kind == ChunkKind.TEXT:
            # The text chunk covers every image of the system: no need for an image filter.
            old.delete()
        else:
            for start in range(0, len(chunk.image_ids), BATCH):
                old.filter(image_id__in=chunk.image_ids[start : start + BATCH]).delete()
        CaptionScore.objects.bulk_create(
            [
                CaptionScore(
                    run_id=run.pk, system_id=chunk.system_id, image_id=image_id, metric=metric, value=value
                )
                for image_id, metric, value in result.rows
            ],
            batch_size=BATCH,
        )
        if result.corpus or result.not_computed:
            CorpusScore.objects.filter(
                run_id=run.pk, system_id=chunk.system_id, metric__in=[*result.corpus, *result.not_computed]
            ).delete()
            CorpusScore.objects.bulk_create(
                [
                    CorpusScore(run_id=run.pk, system_id=chunk.system_id, metric=metric, value=value)
                    for metric, value in result.corpus.items()
                ]
            )
        chunk.status = ChunkStatus.DONE
        chunk.finished_at = timezone.now()
        chunk.error = ""
        chunk.save(update_fields=["status", "finished_at", "error", "updated_at"])

        timings = dict(run.timings or {})
        key = f"{chunk.kind}_seconds"
        timings[key] = round(timings.get(key, 0.0) + result.seconds, 3)
        for name, value in result.stats.items():
            # Counts add up over chunks; names (the CLIP model id) are recorded as they are.
            timings[name] = timings.get(name, 0) + value if isinstance(value, int) else value
        run.timings = timings
        not_computed = {metric: dict(by_system) for metric, by_system in (run.not_computed or {}).items()}
        for metric in result.metrics:  # a recomputed chunk replaces its system's old notes
            not_computed.get(metric, {}).pop(chunk.system.name, None)
        for metric, reason in result.not_computed.items():
            not_computed.setdefault(metric, {})[chunk.system.name] = reason
            log.warning("metric run %s, %s: %s not computed: %s", run.pk, chunk.system.name, metric, reason)
        run.not_computed = {metric: by_system for metric, by_system in not_computed.items() if by_system}
        # What the worker computed with is the truth (its library versions, the checkpoint's hash).
        run.signatures = {**(run.signatures or {}), **result.signatures}
        run.chunks_done = run.chunks.filter(status=ChunkStatus.DONE).count()
        run.save(update_fields=["timings", "not_computed", "signatures", "chunks_done", "updated_at"])
        if run.chunks_done == run.chunks_total:
            metric_run_finalise(run)
    return "done"


def metric_chunk_fail(*, chunk_id: int, message: str) -> None:
    """Mark a chunk failed and its run failed (first error kept), unless the chunk got done meanwhile.

    Locks the run row, then the chunk row. The run can be resumed.
    """
    with transaction.atomic():
        run_id = MetricChunk.objects.filter(pk=chunk_id).values_list("run_id", flat=True).first()
        if run_id is None:
            return
        run = MetricRun.objects.select_for_update().get(pk=run_id)
        chunk = MetricChunk.objects.select_for_update().select_related("system").get(pk=chunk_id)
        if chunk.status == ChunkStatus.DONE:
            return
        now = timezone.now()
        chunk.status = ChunkStatus.FAILED
        chunk.error = message
        chunk.finished_at = now
        chunk.save(update_fields=["status", "error", "finished_at", "updated_at"])
        if run.status != RunStatus.SUCCEEDED:
            run.status = RunStatus.FAILED
            if not run.error:
                run.error = f"{chunk.system.name}, {chunk.kind} chunk {chunk.index}: {message}"
            run.finished_at = now
            run.save(update_fields=["status", "error", "finished_at", "updated_at"])
    log.warning("metric run %s, chunk %s failed: %s", run_id, chunk_id, message)


def metric_run_finalise(run: MetricRun) -> None:
    """Store the CLIP corpus scores (mean of the per-caption scores) and mark the run succeeded.

    Call with the run row locked, once every chunk is done. Idempotent.
    """
    clip = [m for m in run.metrics if m in CLIP_METRICS]
    if clip:
        means = (
            CaptionScore.objects.filter(run=run, metric__in=clip)
            .values("system_id", "metric")
            .annotate(mean=Avg("value"))
            .order_by()
        )
        CorpusScore.objects.filter(run=run, metric__in=clip).delete()
        CorpusScore.objects.bulk_create(
            [
                CorpusScore(run=run, system_id=row["system_id"], metric=row["metric"], value=row["mean"])
                for row in means
            ]
        )
    now = timezone.now()
    run.status = RunStatus.SUCCEEDED
    run.error = ""
    run.finished_at = now
    timings = dict(run.timings or {})
    if run.started_at:
        timings["wall_seconds"] = round((now - run.started_at).total_seconds(), 3)
    if run.queued_at and run.started_at:
        timings["queue_wait_seconds"] = round(max(0.0, (run.started_at - run.queued_at).total_seconds()), 3)
    run.timings = timings
    run.save(update_fields=["status", "error", "finished_at", "timings", "updated_at"])
