"""A tiny open_clip architecture with random weights, built offline: the demo's model for trying the
fine-tuning workflow end to end on a laptop. Its scores mean nothing and are never results.

It uses open_clip's own BPE tokenizer (its vocabulary ships inside the package), so nothing is
downloaded; :func:`tiny_clip_checkpoint` writes its state_dict, loadable by ``load_clip`` like any
checkpoint once :data:`TINY_CLIP_CONFIG` is registered under :data:`TINY_CLIP_NAME`.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["TINY_CLIP_CONFIG", "TINY_CLIP_NAME", "build_tiny_clip", "tiny_clip_checkpoint"]

TINY_CLIP_NAME = "captioneval-demo-tiny-clip"
TINY_CLIP_CONFIG = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 64, "layers": 2, "width": 64, "head_width": 32, "patch_size": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 64, "heads": 2, "layers": 2},
}


def build_tiny_clip(seed: int = 0):
    """A fresh ``open_clip.CLIP`` of :data:`TINY_CLIP_CONFIG` under ``torch.manual_seed(seed)``, in eval mode."""
    import torch

    from .compat import ensure_torchvision_loadable

    ensure_torchvision_loadable()
    import open_clip

    torch.manual_seed(seed)
    return open_clip.CLIP(**TINY_CLIP_CONFIG).eval()


def tiny_clip_checkpoint(path: str | os.PathLike[str], seed: int = 0) -> Path:
    """Write the tiny model's random weights to ``path`` atomically (kept if already there) and return it."""
    from .finetune import atomic_torch_save

    path = Path(path)
    if not path.exists():
        atomic_torch_save(build_tiny_clip(seed).state_dict(), path)
    return path
