"""Signatures of metric numbers: what a score depends on besides the data, in one comparable string.

In the style of sacrebleu's signatures: ``key:value`` fields joined by ``|``. Two numbers are
comparable exactly when their signatures are equal.

* Text metrics (BLEU, ROUGE-L, CIDEr, CIDEr-D) share one signature per run, built by
  :func:`evaluation.metrics.text.schemes.text_signature`:
  ``tok:<scheme>@<version>|case:<lc|mixed>|punct:<unicode|ptb>|df:<source>|impl:text-<n>``.
* CLIP metrics (CLIPScore, RefCLIPScore): :func:`clip_signature`,
  ``clip:<model>|weights:<pretrained tag|none>|ckpt:<sha256-16 hex|none|pending>|prompt:"<prefix>"|orient:<exif|stored>|impl:clip-<n>``.
  ``ckpt:pending`` is what a run started with a checkpoint file shows until a worker has loaded the
  file and hashed it.

Plain functions over plain data: no Django.
"""

from __future__ import annotations

import json
import re

__all__ = [
    "CLIP_IMPL_VERSION",
    "NOT_RECORDED",
    "clip_signature",
    "group_signatures",
]

# Shown instead of a signature for numbers computed before signatures were recorded.
NOT_RECORDED = "not recorded (computed before signatures)"

# Bump when a change to CLIPScore / RefCLIPScore or their image preprocessing changes any number.
CLIP_IMPL_VERSION = "1"

_CHECKPOINT_HASH = re.compile(r"sha256-([0-9a-f]{16})")


def clip_signature(
    *,
    model: str,
    pretrained: str = "",
    checkpoint: str = "",
    model_id: str = "",
    prompt_prefix: str = "",
    orientation: str,
    autocast: str = "",
    image_pipeline: str = "pil",
) -> str:
    """The signature of CLIPScore / RefCLIPScore numbers.

    ``model_id`` is the loaded model's id (``LoadedClip.model_id``, which carries the checkpoint's
    SHA-256); without it, a ``checkpoint`` path gives ``ckpt:pending``. ``orientation`` is how images
    were oriented before embedding (``exif`` or ``stored``, see ``evaluation.metrics.clip``). The prompt prefix is written
    as a JSON string (``|`` escaped), so any prefix, the empty one included, is unambiguous.
    ``autocast`` (``bf16``/``fp16``) adds ``|prec:<it>``; fp32 adds nothing, so signatures from
    before the setting existed still match. ``image_pipeline`` ``tensor`` (JPEGs decoded on the GPU,
    tensor resize; ``evaluation.metrics.clip.pixels``) adds ``|pixels:tensor``; ``pil`` adds nothing.
    """
    found = _CHECKPOINT_HASH.search(model_id or "")
    ckpt = f"sha256-{found.group(1)}" if found else "pending" if checkpoint else "none"
    prompt = json.dumps(prompt_prefix or "", ensure_ascii=False).replace("|", "\\u007c")
    return (
        f"clip:{model}|weights:{pretrained or 'none'}|ckpt:{ckpt}|prompt:{prompt}"
        f"|orient:{orientation}{f'|prec:{autocast}' if autocast else ''}"
        f"{f'|pixels:{image_pipeline}' if image_pipeline != 'pil' else ''}|impl:clip-{CLIP_IMPL_VERSION}"
    )


def group_signatures(metrics: list[str], signatures: dict[str, str] | None) -> list[tuple[list[str], str]]:
    """``[(metrics sharing a signature, signature), ...]`` in the order of ``metrics``, for display;
    a metric without one gets :data:`NOT_RECORDED`."""
    groups: dict[str, list[str]] = {}
    for metric in metrics:
        groups.setdefault((signatures or {}).get(metric) or NOT_RECORDED, []).append(metric)
    return [(names, signature) for signature, names in groups.items()]
