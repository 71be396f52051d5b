"""Checkpoints of a fine-tuning run: written atomically, with every random generator's state, so a
killed run resumes where it stopped and draws what it would have drawn."""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["atomic_torch_save", "rng_restore", "rng_states"]


def atomic_torch_save(obj: Any, path: str | os.PathLike[str]) -> Path:
    """``torch.save`` to a temporary file beside ``path``, then rename: a reader (or a killed writer)
    never sees half a file."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as fh:
            torch.save(obj, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def rng_states() -> dict[str, Any]:
    import torch

    states = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def rng_restore(states: dict[str, Any]) -> None:
    import torch

    random.setstate(states["python"])
    np.random.set_state(states["numpy"])
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
