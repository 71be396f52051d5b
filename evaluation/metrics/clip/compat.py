"""Make ``torchvision`` importable where its compiled ops cannot load.

Why this exists
---------------
open_clip imports ``torchvision`` unconditionally, but only uses its pure-Python
image transforms (resize, crop, normalise). Some installations pair a CPU-only
``torch`` with a ``torchvision`` wheel built for CUDA (or for another torch
build). There ``torchvision/_C.so`` fails to load, which torchvision itself
tolerates (``torchvision.extension._has_ops()`` becomes False), but then
``torchvision/_meta_registrations.py`` unconditionally runs
``torch.library.register_fake("torchvision::nms")`` (and the same for
``torchvision::qnms``). Registering a fake kernel for an operator whose schema
was never defined raises::

    RuntimeError: operator torchvision::nms does not exist

so ``import torchvision``, and with it ``import open_clip``, fails before any
transform is reached. Every other registration in torchvision (the Meta
kernels, autograd and autocast) is guarded by ``_has_ops()``; ``nms`` and
``qnms`` are the only two it touches unguarded.

What :func:`ensure_torchvision_loadable` does
---------------------------------------------
1. It imports ``torchvision``. If that works (the normal case: matching torch
   and torchvision builds), it does nothing else: no schema is defined, no
   module is touched.
2. Only if the import fails with the "operator torchvision::<op> does not
   exist" error, it removes the half-imported ``torchvision`` modules from
   ``sys.modules``, defines placeholder *schemas* (no kernels) for
   ``torchvision::nms`` and ``torchvision::qnms`` in a ``torch.library``
   fragment, and imports ``torchvision`` again. The schemas are the ones
   torchvision's C++ extension would have defined, so the fake registrations
   succeed.

Nothing gains a working implementation: calling ``torchvision.ops.nms`` still
raises torchvision's own "Couldn't load custom C++ ops" error. CLIP scoring
never calls a compiled torchvision op. Any other import error is re-raised
unchanged. The function is idempotent and thread-safe; call it before
``import open_clip``.
"""

from __future__ import annotations

import re
import sys
import threading
from typing import Any

__all__ = ["ensure_torchvision_loadable"]

# Schemas exactly as torchvision's C++ extension declares them (torchvision/csrc/ops/nms.cpp).
_PLACEHOLDER_SCHEMAS = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}
_MISSING_OP = re.compile(r"operator torchvision::(\w+) does not exist")

_lock = threading.Lock()
_state: str | None = None  # None (not yet run), "native" or "patched"
# The Library must stay referenced: torch removes its definitions when it is garbage-collected.
_library: Any = None


def _import_torchvision() -> None:
    import torchvision  # noqa: F401


def _forget_partial_torchvision() -> None:
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]


def _define_placeholder_ops() -> None:
    global _library
    import torch

    library = torch.library.Library("torchvision", "FRAGMENT")
    for op, schema in _PLACEHOLDER_SCHEMAS.items():
        if not _op_exists(op):
            library.define(schema)
    _library = library


def _op_exists(op: str) -> bool:
    import torch

    try:
        getattr(torch.ops.torchvision, op)
    except (AttributeError, RuntimeError):
        return False
    return True


def ensure_torchvision_loadable() -> bool:
    """Import ``torchvision``, working around unloadable compiled ops if needed.

    Returns True when the placeholder schemas were needed (on this or an earlier
    call), False when torchvision imported normally and nothing was changed.
    Re-raises any import error other than the missing-operator one; raises
    RuntimeError with an explanation if the workaround does not suffice.
    """
    global _state
    with _lock:
        if _state is not None:
            return _state == "patched"
        try:
            _import_torchvision()
        except RuntimeError as exc:
            if not _MISSING_OP.search(str(exc)):
                raise
            _forget_partial_torchvision()
            _define_placeholder_ops()
            try:
                _import_torchvision()
            except RuntimeError as again:
                raise RuntimeError(
                    "torchvision cannot be imported: its compiled ops do not load with this torch "
                    f"({again}). Install a torchvision build that matches torch."
                ) from again
            _state = "patched"
        else:
            _state = "native"
        return _state == "patched"
