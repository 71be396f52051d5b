"""What CLIP inference does differently on a GPU: batch sizes, width buckets, the attention kernels,
the reduced-precision weight copy. Pure functions where the choice is logic; CUDA-only steps guarded.

Batch size (:func:`text_batch_size`)
    On a CPU a forward pass of 64 texts already keeps the cores busy, and larger batches only pad
    more (``CLIP_TEXT_BATCH_SIZE`` 64, as before). A GPU is busy only when a pass is large: at 64
    texts an H100 spent 59% of the wall time waiting for the CPU to launch the next kernels, so on
    CUDA the default is 1024. The setting overrides both.

Width buckets (:func:`bucket_widths`)
    Length-sorted batches are trimmed to their longest text, so almost every batch has a new width.
    On CUDA each new shape costs: the cuDNN attention path re-plans per sequence length (73% of the
    CPU time of a bf16 run in the issue's profile). On CUDA a batch's width is rounded up to one of
    :data:`CUDA_WIDTH_BUCKETS`: a dozen shapes in all. Rounding up only adds pad columns, which the
    towers that are trimmed never read (see :mod:`.texts`), so the embeddings do not change. On a CPU
    there is no planning to save and the extra columns would cost time: no buckets.

Attention kernels (:func:`attention_backends`)
    On CUDA the forward passes run under ``torch.nn.attention.sdpa_kernel`` pinned to the flash and
    memory-efficient kernels (the math kernel as the fallback for a mask neither takes): never the
    cuDNN path that re-plans per shape.

Reduced precision (:func:`reduced_precision_model`)
    Autocast alone casts every weight matrix to bf16 on every call (in the issue's profile those casts
    cost the GPU more than the matrix products). For an autocast run on CUDA the model is copied once,
    its floating weights cast to the autocast dtype, and kept beside the fp32 model for the life of
    the worker; the passes still run under autocast, so layer norms and softmax stay in fp32 as
    autocast computes them. The fp32 model is untouched and fp32 runs use it.

torch is imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

import contextlib
import copy
import threading
import weakref
from collections.abc import Iterator, Sequence

import numpy as np

__all__ = [
    "CUDA_WIDTH_BUCKETS",
    "TEXT_BATCH_SIZES",
    "attention_backends",
    "bucket_widths",
    "device_type",
    "reduced_precision_model",
    "text_batch_size",
    "width_buckets",
]

TEXT_BATCH_SIZES = {"cpu": 64, "cuda": 1024}
CUDA_WIDTH_BUCKETS = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)


def device_type(device: object) -> str:
    """``"cuda"`` for ``"cuda"``, ``"cuda:1"`` or a CUDA ``torch.device``; ``"cpu"``, ``"mps"``… likewise."""
    return str(getattr(device, "type", None) or str(device).split(":", 1)[0])


def text_batch_size(device: object, setting: int | None = None) -> int:
    """Texts per forward pass: ``setting`` when it is given and not 0, else the device's default
    (:data:`TEXT_BATCH_SIZES`; a device not listed gets the CPU's). ValueError for a negative setting."""
    if setting is not None and setting < 0:
        raise ValueError(f"the text batch size must be 0 (by device) or positive, not {setting}")
    if setting:
        return int(setting)
    return TEXT_BATCH_SIZES.get(device_type(device), TEXT_BATCH_SIZES["cpu"])


def width_buckets(device: object) -> tuple[int, ...] | None:
    """The widths batches are rounded up to on ``device``: :data:`CUDA_WIDTH_BUCKETS` on CUDA, None elsewhere."""
    return CUDA_WIDTH_BUCKETS if device_type(device) == "cuda" else None


def bucket_widths(lengths: Sequence[int] | np.ndarray, buckets: Sequence[int], context: int) -> np.ndarray:
    """Each length rounded up to the smallest bucket that holds it, or to ``context`` when none does or
    the bucket would be wider than the context; never below the length itself. Monotonic, so a
    longest-first order stays longest-first. ValueError for unsorted or non-positive buckets."""
    lengths = np.asarray(lengths, dtype=np.int64)
    edges = np.asarray(buckets, dtype=np.int64)
    if len(edges) == 0 or np.any(edges < 1) or np.any(np.diff(edges) <= 0):
        raise ValueError(f"buckets must be positive and increasing, not {list(buckets)}")
    index = np.searchsorted(edges, lengths, side="left")
    rounded = np.where(index < len(edges), edges[np.minimum(index, len(edges) - 1)], context)
    return np.maximum(np.minimum(rounded, context), lengths)


@contextlib.contextmanager
def attention_backends(device: object, *, pin: bool | None = None) -> Iterator[None]:
    """Scaled-dot-product attention limited to the flash, memory-efficient and math kernels.

    ``pin`` defaults to "on CUDA"; elsewhere nothing changes (tests pin it on a CPU to show the numbers
    do not move)."""
    if pin is None:
        pin = device_type(device) == "cuda"
    if not pin:
        yield
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
    with sdpa_kernel(backends):
        yield


_copies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_copies_lock = threading.Lock()


def reduced_precision_model(model, dtype):
    """A copy of ``model`` with its floating-point weights and buffers in ``dtype``, made on the first call
    per ``(model, dtype)`` and kept while ``model`` lives; ``model`` itself is not changed.

    The copy is of the weights as they are at that first call: a model whose weights are changed in
    place afterwards (training) must not be served by it. Inference models of a worker never are.
    """
    with _copies_lock:
        per_model = _copies.get(model)
        if per_model is None:
            per_model = _copies[model] = {}
        if dtype not in per_model:
            per_model[dtype] = copy.deepcopy(model).to(dtype).eval()
        return per_model[dtype]
