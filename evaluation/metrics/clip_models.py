"""Loaded CLIP models, kept for the life of the process (one load per worker, not per chunk)."""

from __future__ import annotations

import os
import threading

from evaluation.metrics.clip import LoadedClip, load_clip

_models: dict[tuple, LoadedClip] = {}
_lock = threading.Lock()


def _checkpoint_stamp(checkpoint: str) -> tuple | None:
    # A checkpoint file replaced under the same name must not be served from the cache.
    try:
        stat = os.stat(checkpoint)
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns)


def clip_model_get(*, model: str, pretrained: str = "", checkpoint: str = "") -> LoadedClip:
    """The CLIP model of these settings, loaded on first use in this process.

    Raises :class:`evaluation.metrics.clip.ClipUnavailable` (not cached: the files may appear later).
    """
    key = (
        model,
        pretrained or None,
        checkpoint or None,
        _checkpoint_stamp(checkpoint) if checkpoint else None,
    )
    with _lock:
        loaded = _models.get(key)
        if loaded is None:
            loaded = load_clip(model, pretrained or None, checkpoint_path=checkpoint or None)
            _models[key] = loaded
        return loaded


def clip_models_clear() -> None:
    """Forget every loaded model (tests; a worker never needs it)."""
    with _lock:
        _models.clear()
