"""Loaded CLIP models, kept for the life of the process (one load per worker, not per chunk)."""

from __future__ import annotations

import os
import threading

from evaluation.metrics.clip import (
    AUTOCAST_TOLERANCE,
    AutocastCheck,
    ClipUnavailable,
    LoadedClip,
    autocast_check,
    load_clip,
    register_model_config,
    set_torch_threads,
)

_models: dict[tuple, LoadedClip] = {}
_checks: dict[tuple[str, float], AutocastCheck] = {}
_lock = threading.Lock()


def _checkpoint_stamp(checkpoint: str) -> tuple | None:
    # A checkpoint file replaced under the same name must not be served from the cache.
    try:
        stat = os.stat(checkpoint)
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns)


def clip_model_get(
    *,
    model: str,
    pretrained: str = "",
    checkpoint: str = "",
    autocast: str = "",
    threads: int = 0,
    config: dict | None = None,
) -> LoadedClip:
    """The CLIP model of these settings, loaded on first use in this process, computing in ``autocast``.

    ``threads``: torch's CPU threads for this process (0 leaves torch's default), applied on every
    call so a worker always runs with the current setting. Raises
    :class:`evaluation.metrics.clip.ClipUnavailable` (not cached: the files may appear later) and
    ValueError for an unknown autocast or a negative thread count. ``config``: an open_clip architecture
    config registered under ``model`` first (a registered ``ClipModel`` of an architecture open_clip does
    not ship, such as the demo's tiny model).
    """
    set_torch_threads(threads)
    if config:
        register_model_config(model, config)
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
    return loaded.with_autocast(autocast) if autocast else loaded


def clip_autocast_verify(
    loaded: LoadedClip, texts: list[str], image_pixels, *, tolerance: float = AUTOCAST_TOLERANCE
) -> AutocastCheck:
    """Check once per process and model that ``loaded``'s autocast keeps scores within ``tolerance`` of fp32.

    The first call measures on its sample (``texts[i]`` against image ``i``, see
    :func:`evaluation.metrics.clip.autocast_check`) and the verdict is kept for the process.
    Raises :class:`ClipUnavailable` with the measured difference when the check fails, so the
    chunk fails visibly instead of storing scores of unknown precision.
    """
    key = (loaded.embedding_key, float(tolerance))
    with _lock:
        check = _checks.get(key)
    if check is None:
        check = autocast_check(loaded, texts, image_pixels, tolerance=tolerance)
        with _lock:
            _checks.setdefault(key, check)
    if not check.ok:
        raise ClipUnavailable(
            f"CLIP autocast {check.autocast} moved a CLIPScore by {check.max_clipscore_diff:.4f} and a "
            f"caption-reference cosine by {check.max_text_cosine_diff:.4f} against fp32, more than the "
            f"tolerance {check.tolerance}; set CLIP_AUTOCAST to '' (fp32) and start the run again"
        )
    return check


def clip_models_clear() -> None:
    """Forget every loaded model and autocast verdict (tests; a worker never needs it)."""
    with _lock:
        _models.clear()
        _checks.clear()
