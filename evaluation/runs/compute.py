"""Compute one chunk of a metric run, and store its scores; finalise the run after its last chunk.

The job engine (:mod:`core.jobs.engine`) claims the chunk, beats for it while :func:`chunk_compute`
runs outside any transaction (CLIP inference can take minutes), then calls :func:`chunk_store` in one
short transaction with the run row and the chunk row locked: it deletes whatever rows an earlier,
interrupted attempt may have left and inserts the new ones. A chunk that is already done is never
written again, so a redelivered or duplicated task stores nothing twice.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.core.files.storage import default_storage
from django.db.models import Avg
from PIL import Image as PILImage

from annotation.models import Image
from core.jobs.engine import JobDataError, timings_add
from evaluation.metrics.clip import (
    DEFAULT_IMAGE_ORIENTATION,
    clipscore,
    embed_images_cached,
    embed_texts,
    refclipscore,
)
from evaluation.metrics.clip.embedding import pixel_batches
from evaluation.metrics.clip.hashing import is_content_hash
from evaluation.metrics.clip_models import clip_autocast_verify, clip_model_get
from evaluation.metrics.embeddings_cache import DbEmbeddingCache
from evaluation.metrics.signatures import clip_signature
from evaluation.metrics.text.cider import DF_FROM_TEST
from evaluation.metrics.text.meteor import MeteorConfig
from evaluation.metrics.text.schemes import scheme_for_language
from evaluation.metrics.text.scoring import score_texts
from evaluation.models import (
    CLIP_METRICS,
    TEXT_METRICS,
    CaptionScore,
    ChunkKind,
    CorpusScore,
    EmbeddingKind,
    Metric,
    MetricChunk,
    MetricRun,
)
from evaluation.runs.selectors import reference_texts, system_captions

log = logging.getLogger(__name__)

BATCH = 2000
# Where CIDEr's document frequencies come from: the scored images' references (the COCO server's
# behaviour, the default) or every image of the run's reference set, scored or not.
CIDER_DF_TEST = DF_FROM_TEST
CIDER_DF_REFSET = "refset"
CIDER_DF_CHOICES = {
    CIDER_DF_TEST: "the references of the scored images (the COCO server's behaviour)",
    CIDER_DF_REFSET: "the references of every image of the reference set",
}


def meteor_config() -> MeteorConfig:
    """The METEOR jar, Java and time limit from the settings (``METEOR_JAR``, ``METEOR_JAVA``, ...)."""
    return MeteorConfig(
        jar=settings.METEOR_JAR or None, java=settings.METEOR_JAVA, timeout=settings.METEOR_TIMEOUT_SECONDS
    )


@dataclass
class ChunkResult:
    metrics: list[str]
    rows: list[tuple[int, str, float]]  # (image id, metric, value)
    corpus: dict[str, float] = field(default_factory=dict)  # stored as is (text metrics)
    not_computed: dict[str, str] = field(default_factory=dict)  # metric -> why (METEOR without Java)
    signatures: dict[str, str] = field(default_factory=dict)  # metric -> signature, as computed here
    stats: dict[str, int | str] = field(default_factory=dict)


# --- Computing ----------------------------------------------------------------------------------


def _candidates(chunk: MetricChunk) -> dict[int, str]:
    run = chunk.run
    found = system_captions(system_id=chunk.system_id, language_id=run.language_id, image_ids=chunk.image_ids)
    missing = [i for i in chunk.image_ids if i not in found]
    if missing:
        raise JobDataError(
            f"{len(missing)} {run.language.code} captions of “{chunk.system.name}” were deleted after the run "
            f"was created (image ids {missing[:5]})"
        )
    return {i: found[i] for i in chunk.image_ids}


def _references(chunk: MetricChunk) -> dict[int, list[str]]:
    references = reference_texts(chunk.run.reference_set, chunk.image_ids)
    lacking = [i for i in chunk.image_ids if not references.get(i)]
    if lacking:
        raise JobDataError(
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
            raise JobDataError(f"the file of image “{key}” cannot be read as an image ({exc})") from exc
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
    # Runs from before the setting existed made their pixels with PIL.
    image_pipeline = params.get("clip_image_pipeline", "pil")
    loaded = loaded.with_image_pipeline(image_pipeline).with_text_pass(
        packing=settings.CLIP_TEXT_PACKING, compile=settings.CLIP_COMPILE
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
            raise JobDataError(f"image “{key}” has no stored file")
        if not is_content_hash(content_hash):
            raise JobDataError(f"image “{key}” has a malformed content hash ({content_hash[:20]!r})")
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
    text_emb = embed_texts(loaded, texts, prefix, settings.CLIP_TEXT_BATCH_SIZE or None, cache=text_cache)
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
        image_pipeline=image_pipeline,
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


# --- What the engine calls -------------------------------------------------------------------------


def chunk_compute(chunk: MetricChunk) -> ChunkResult:
    """The chunk's scores (the kind's ``compute``). Bad data raises :class:`JobDataError`, an unavailable
    CLIP model ``ClipUnavailable``, a tokenisation scheme that cannot run here (unknown, library missing
    on this worker, a caption the segmenter rejects) ``SchemeError``: each fails the chunk with its
    reason, and the run's other chunks go on, so text scores are stored even when CLIP fails."""
    return _compute_text(chunk) if chunk.kind == ChunkKind.TEXT else _compute_clip(chunk)


def chunk_label(chunk: MetricChunk) -> str:
    return f"{chunk.system.name}, {chunk.kind} chunk {chunk.index}"


def chunk_store(run: MetricRun, chunk: MetricChunk, result: ChunkResult, seconds: float) -> None:
    """Replace the chunk's scores with ``result`` (the kind's ``store``: run and chunk rows locked)."""
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
    timings_add(run, f"{chunk.kind}_seconds", seconds, result.stats)
    not_computed = {metric: dict(by_system) for metric, by_system in (run.not_computed or {}).items()}
    for metric in result.metrics:  # a recomputed chunk replaces its system's old notes
        not_computed.get(metric, {}).pop(chunk.system.name, None)
    for metric, reason in result.not_computed.items():
        not_computed.setdefault(metric, {})[chunk.system.name] = reason
        log.warning("metric run %s, %s: %s not computed: %s", run.pk, chunk.system.name, metric, reason)
    run.not_computed = {metric: by_system for metric, by_system in not_computed.items() if by_system}
    # What the worker computed with is the truth (its library versions, the checkpoint's hash).
    run.signatures = {**(run.signatures or {}), **result.signatures}


def metric_run_finalise(run: MetricRun) -> None:
    """Store the CLIP corpus scores (mean of the per-caption scores); the engine then marks the run
    succeeded. Called with the run row locked, once every chunk is done. Idempotent."""
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
