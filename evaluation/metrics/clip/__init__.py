"""CLIPScore / RefCLIPScore engine: model loading, embeddings with a cache, and the formulas.

Plain Python, numpy and torch; no Django. torch and open_clip are imported only when a model
is loaded or used, so importing this package is cheap.
"""

from .compat import ensure_torchvision_loadable
from .device import text_batch_size
from .embedding import (
    DEFAULT_IMAGE_ORIENTATION,
    IMAGE_LOADER_THREADS,
    IMAGE_ORIENTATIONS,
    DirectoryEmbeddingCache,
    EmbeddingCache,
    ImageEmbeddingCache,
    InMemoryEmbeddingCache,
    apply_prompt_prefix,
    embed_images,
    embed_images_cached,
    embedding_cache_key,
    image_orientation_check,
    image_rgb,
)
from .hashing import content_hash
from .loading import (
    DEFAULT_MODEL,
    DEFAULT_PRETRAINED,
    ClipUnavailable,
    LoadedClip,
    load_clip,
    register_model_config,
)
from .pixels import DEFAULT_IMAGE_PIPELINE, IMAGE_PIPELINES, image_pipeline_check
from .runtime import (
    AUTOCAST_CHOICES,
    AUTOCAST_TOLERANCE,
    AutocastCheck,
    autocast_check,
    autocast_choice_check,
    set_torch_threads,
)
from .scoring import (
    DEFAULT_PROMPT_PREFIX,
    DEFAULT_W,
    ClipScoreReport,
    clipscore,
    corpus_score,
    harmonic_mean,
    ref_similarity,
    refclipscore,
    score_clip,
)
from .texts import TEXT_BATCH_SIZE, embed_texts, text_hash, text_trimming

__all__ = [
    "AUTOCAST_CHOICES",
    "AUTOCAST_TOLERANCE",
    "AutocastCheck",
    "DEFAULT_IMAGE_ORIENTATION",
    "DEFAULT_IMAGE_PIPELINE",
    "DEFAULT_MODEL",
    "DEFAULT_PRETRAINED",
    "DEFAULT_PROMPT_PREFIX",
    "DEFAULT_W",
    "ClipScoreReport",
    "ClipUnavailable",
    "IMAGE_LOADER_THREADS",
    "IMAGE_ORIENTATIONS",
    "IMAGE_PIPELINES",
    "TEXT_BATCH_SIZE",
    "DirectoryEmbeddingCache",
    "EmbeddingCache",
    "ImageEmbeddingCache",
    "InMemoryEmbeddingCache",
    "LoadedClip",
    "apply_prompt_prefix",
    "autocast_check",
    "autocast_choice_check",
    "clipscore",
    "content_hash",
    "corpus_score",
    "embed_images",
    "embed_images_cached",
    "embed_texts",
    "embedding_cache_key",
    "ensure_torchvision_loadable",
    "harmonic_mean",
    "image_orientation_check",
    "image_pipeline_check",
    "image_rgb",
    "load_clip",
    "ref_similarity",
    "refclipscore",
    "register_model_config",
    "score_clip",
    "set_torch_threads",
    "text_batch_size",
    "text_hash",
    "text_trimming",
]
