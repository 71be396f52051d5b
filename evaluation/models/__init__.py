"""The evaluation data model, one module per concern; every model is importable from here.

- ``metrics``: the metric names a run can compute;
- ``sets``: image sets and reference sets (what a run scores, and against which captions);
- ``runs``: metric runs as a chunked job, their chunks, caption and corpus scores, CLIP embeddings;
- ``retrieval``: CLIP retrieval checks as a chunked job;
- ``clip_checks``: CLIP zero-shot and foil checks as a chunked job;
- ``finetune``: registered CLIP models and fine-tuning runs;
- ``proxies``: admin pages without a table of their own;
- ``fields``: fields several models declare the same way (who started a job).
"""

from evaluation.models.clip_checks import ClipProbe, ClipProbeCheck, ClipProbeChunk, ClipProbeChunkKind
from evaluation.models.finetune import ClipFineTune, ClipModel, TrainableParameters
from evaluation.models.metrics import ALL_METRICS, CLIP_METRICS, TEXT_METRICS, Metric
from evaluation.models.proxies import AnnotatorHours, LanguageStatistics
from evaluation.models.reports import (
    ReportCache,
    ReportCacheState,
    ReportFigure,
    ReportPiece,
    SavedReportSelection,
)
from evaluation.models.retrieval import RetrievalCheck, RetrievalChunk, RetrievalChunkKind, RetrievalSource
from evaluation.models.runs import (
    FINISHED_RUN_STATUSES,
    CaptionScore,
    ChunkKind,
    ChunkStatus,
    ClipEmbedding,
    CorpusScore,
    EmbeddingKind,
    MetricChunk,
    MetricRun,
    RunStatus,
)
from evaluation.models.sets import ImageSet, Reference, ReferenceSet, ReferenceSetKind

__all__ = [
    "ClipProbe",
    "ClipProbeCheck",
    "ClipProbeChunk",
    "ClipProbeChunkKind",
    "ALL_METRICS",
    "CLIP_METRICS",
    "FINISHED_RUN_STATUSES",
    "TEXT_METRICS",
    "AnnotatorHours",
    "CaptionScore",
    "ChunkKind",
    "ChunkStatus",
    "ClipEmbedding",
    "ClipFineTune",
    "ClipModel",
    "CorpusScore",
    "EmbeddingKind",
    "ImageSet",
    "LanguageStatistics",
    "Metric",
    "MetricChunk",
    "MetricRun",
    "Reference",
    "ReferenceSet",
    "ReferenceSetKind",
    "ReportCache",
    "ReportCacheState",
    "ReportFigure",
    "ReportPiece",
    "RetrievalCheck",
    "RetrievalChunk",
    "RetrievalChunkKind",
    "RetrievalSource",
    "RunStatus",
    "SavedReportSelection",
    "TrainableParameters",
]
