"""Whether a base model's weights are on this machine, without loading them (for the start form)."""

from __future__ import annotations

import os

from evaluation.metrics.clip.compat import ensure_torchvision_loadable


def base_weights_problem(*, model_name: str, pretrained: str, checkpoint: str) -> str | None:
    """Why the weights of this model are not on this machine, or None when they are (or when this
    process cannot tell: open_clip or huggingface_hub missing). Reads caches only; downloads nothing."""
    if checkpoint:
        if os.path.isfile(checkpoint):
            return None
        return f"its checkpoint file {checkpoint} is not on this machine"
    if not pretrained:
        return "it names no weights (no pretrained tag, no checkpoint)"
    try:
        ensure_torchvision_loadable()
        from huggingface_hub import try_to_load_from_cache
        from open_clip import pretrained as oc_pretrained
        from open_clip.constants import HF_SAFE_WEIGHTS_NAME, HF_WEIGHTS_NAME
    except (ImportError, RuntimeError):
        return None
    cfg = oc_pretrained.get_pretrained_cfg(model_name, pretrained)
    if not cfg:
        return f"“{pretrained}” is not a pretrained tag of {model_name}"
    if cfg.get("file"):
        return (
            None if os.path.isfile(cfg["file"]) else f"its weights file {cfg['file']} is not on this machine"
        )
    hub = cfg.get("hf_hub", "")
    if hub:
        # open_clip's convention: "org/name/file" names a file, "org/name/" the default weights files.
        repo, filename = (hub[:-1], "") if hub.endswith("/") else os.path.split(hub)
        names = [filename] if filename else [HF_SAFE_WEIGHTS_NAME, HF_WEIGHTS_NAME]
        if any(isinstance(try_to_load_from_cache(repo, name), str) for name in names):
            return None
        return (
            f"its weights ({model_name}:{pretrained}, Hugging Face {repo}) are not in this machine's "
            "Hugging Face cache (HF_HOME)"
        )
    url = cfg.get("url", "")
    if url and os.path.isfile(os.path.join(os.path.expanduser("~/.cache/clip"), os.path.basename(url))):
        return None
    return f"its weights ({model_name}:{pretrained}) are not in this machine's caches"
