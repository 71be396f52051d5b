"""The text tower's forward pass under ``torch.compile`` (``CLIP_COMPILE``): opt-in, for GPU workers.

A text pass is a few dozen small kernels per layer; on a GPU at batch 1024 the CPU that launches them
can be the bottleneck. ``torch.compile`` fuses them (``compile``); its ``reduce-overhead`` mode also
records the pass as a CUDA graph, replayed with one launch. Both need few shapes, compiled once each
(``dynamic=False``): the packed passes have one shape (:mod:`.packing`), the padded ones a width bucket
(:mod:`.device`) and a row count rounded up to :data:`ROW_BUCKETS` (:func:`compiled_rows`, the added
rows copies of the batch's last text, dropped after the pass). Under CUDA graphs a pass's output lives
until the next replay; each caller copies what it keeps (the pooled rows, the normalised features) first. Compiling a shape takes seconds to a
minute, once per worker process; the numbers are those of the eager pass to float rounding.

``off`` (default) runs the eager modules, as before. The compiled function is kept per model and mode
for the life of the worker (:func:`compiled`); a failure to compile falls back to the eager pass only
where torch says so (``torch._dynamo.config.suppress_errors``, off by default): a worker configured to
compile and unable to is a configuration error, and says so.

torch is imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

from .choices import choice_check

__all__ = ["COMPILE_CHOICES", "ROW_BUCKETS", "compile_choice_check", "compiled", "compiled_rows", "pad_rows"]

COMPILE_CHOICES = ("off", "compile", "reduce-overhead")
ROW_BUCKETS = (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)
# torch.compile's backend; tests set "eager" to check the wiring without generating code.
COMPILE_BACKEND = "inductor"


def compile_choice_check(value: object) -> str:
    """``value`` if it is ``"off"``, ``"compile"`` or ``"reduce-overhead"``; ValueError otherwise."""
    return choice_check(value, COMPILE_CHOICES, "CLIP compile mode", "off, compile or reduce-overhead")


def compiled_rows(rows: int, batch_size: int) -> int:
    """The row count a compiled padded pass of ``rows`` texts runs with: rounded up to :data:`ROW_BUCKETS`,
    or to ``batch_size`` when that is smaller; never below ``rows``."""
    from .device import bucket_widths

    return int(bucket_widths([rows], ROW_BUCKETS, max(rows, batch_size))[0])


_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def compiled(model, function: Callable, mode: str) -> Callable:
    """``function(model, *tensors)`` compiled for ``model`` in ``mode`` (``dynamic=False``), made on the first
    call per ``(model, function, mode)`` and kept while ``model`` lives; ``function`` itself for ``off``."""
    if compile_choice_check(mode) == "off":
        return function
    import torch

    with _lock:
        per_model = _compiled.setdefault(model, {})
        key = (function, mode, COMPILE_BACKEND)
        if key not in per_model:
            options = {"mode": mode} if mode != "compile" and COMPILE_BACKEND == "inductor" else {}
            compiled_function = torch.compile(function, dynamic=False, backend=COMPILE_BACKEND, **options)
            if mode == "reduce-overhead":
                compiled_function = _graph_steps(compiled_function)
            per_model[key] = compiled_function
        return per_model[key]


def _graph_steps(function: Callable) -> Callable:
    """``function`` with each call a new CUDA-graph step: a replay overwrites the previous call's outputs,
    which the callers have copied by then (a pooled gather, a normalisation) before the next pass."""
    import functools

    import torch

    @functools.wraps(function)
    def step(*args):
        torch.compiler.cudagraph_mark_step_begin()
        return function(*args)

    return step


def pad_rows(batch, rows: int):
    """``batch`` with its last row repeated up to ``rows`` rows (a compiled pass's fixed row count)."""
    import torch

    extra = rows - batch.shape[0]
    if extra <= 0:
        return batch
    return torch.cat([batch, batch[-1:].expand(extra, *batch.shape[1:])])
