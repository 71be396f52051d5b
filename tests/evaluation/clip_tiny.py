"""A tiny, randomly initialised open_clip model for offline tests.

It is built from an architecture config with open_clip's built-in BPE tokenizer (its
vocabulary ships inside the open_clip package), saved as a plain state_dict and loaded back
through ``load_clip(..., checkpoint_path=...)``: the code path real weights take. Its scores
mean nothing; tests use it only to check that formulas and plumbing agree with an
independent computation.
"""

from __future__ import annotations

from pathlib import Path

TINY_MODEL_NAME = "captioneval-tiny-test-clip"
TINY_IMAGE_SIZE = 64
TINY_CONFIG = {
    "embed_dim": 32,
    "vision_cfg": {
        "image_size": TINY_IMAGE_SIZE,
        "layers": 2,
        "width": 64,
        "head_width": 32,
        "patch_size": 16,
    },
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 64, "heads": 2, "layers": 2},
}


def build_tiny_model(seed: int = 0):
    """A fresh ``open_clip.CLIP`` of :data:`TINY_CONFIG`, initialised under ``torch.manual_seed(seed)``."""
    import torch

    from evaluation.metrics.clip import ensure_torchvision_loadable

    ensure_torchvision_loadable()
    import open_clip

    torch.manual_seed(seed)
    return open_clip.CLIP(**TINY_CONFIG).eval()


def save_tiny_checkpoint(path: str | Path, seed: int = 0) -> Path:
    """Write the tiny model's state_dict to ``path`` (torch.save) and return the path."""
    import torch

    path = Path(path)
    torch.save(build_tiny_model(seed).state_dict(), path)
    return path
