"""The largest fine-tuning batch that fits a GPU's free memory (``--batch-size auto``).

A fine-tuning step's memory is a fixed part (weights, their gradients, AdamW's two moments) and a part
that grows with the batch (activations kept for the backward pass), linearly for these towers at a
fixed context and image size. :func:`probe_step_memory` measures both on the GPU: the peak memory of one
step (contrastive and Pearson batch, forward and backward, as :func:`.finetune.fine_tune` makes them) at
two small batch sizes; the difference is the per-sample cost, and AdamW's moments (not yet allocated in
a probe, which takes no optimizer step and leaves the weights untouched) are added to the fixed part.
:func:`batch_size_for_memory` is then plain arithmetic, unit-tested without a GPU.

The batch size is part of what a fine-tuned model depends on (it sets the contrastive loss's negatives),
so ``auto`` is resolved to a number before training and that number is what is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AUTO_BATCH_MULTIPLE",
    "AUTO_MAX_BATCH",
    "MEMORY_HEADROOM",
    "StepMemory",
    "auto_batch_size",
    "batch_size_for_memory",
    "probe_step_memory",
]

# Share of the free memory left unused: the allocator's fragmentation, cuDNN/cuBLAS workspaces, a
# longer caption batch than the probe's.
MEMORY_HEADROOM = 0.15
# Batches are rounded down to a multiple of 8 (tensor-core friendly shapes) and capped: beyond a few
# hundred pairs a contrastive batch is a different training recipe, not the same one faster.
AUTO_BATCH_MULTIPLE = 8
AUTO_MAX_BATCH = 512


@dataclass(frozen=True)
class StepMemory:
    """Bytes one fine-tuning step takes: ``fixed + per_sample * batch_size``."""

    fixed: int
    per_sample: int


def batch_size_for_memory(
    free: int,
    step: StepMemory,
    *,
    minimum: int = 3,
    maximum: int = AUTO_MAX_BATCH,
    multiple: int = AUTO_BATCH_MULTIPLE,
    headroom: float = MEMORY_HEADROOM,
) -> int:
    """The largest batch size in ``[minimum, maximum]`` whose step fits ``free`` bytes less the headroom,
    rounded down to ``multiple`` where that stays at or above ``minimum``.

    ValueError when not even ``minimum`` fits (the message says how much memory that would take), or for
    a non-positive per-sample cost, a headroom outside [0, 1) or ``maximum < minimum``."""
    if step.per_sample <= 0:
        raise ValueError(f"the per-sample memory must be positive, not {step.per_sample}")
    if not 0 <= headroom < 1:
        raise ValueError(f"the headroom must be in [0, 1), not {headroom}")
    if maximum < minimum:
        raise ValueError(f"the largest batch {maximum} is below the smallest {minimum}")
    usable = int(free * (1 - headroom)) - step.fixed
    fits = usable // step.per_sample if usable > 0 else 0
    if fits < minimum:
        need = (step.fixed + minimum * step.per_sample) / (1 - headroom)
        raise ValueError(
            f"a fine-tuning batch of {minimum} needs about {need / 2**30:.2f} GiB of GPU memory, "
            f"{free / 2**30:.2f} GiB are free"
        )
    size = min(int(fits), maximum)
    rounded = size - size % multiple if multiple > 1 else size
    return rounded if rounded >= minimum else size


def probe_step_memory(model, device, *, sizes: tuple[int, int] = (4, 8), autocast: str = "") -> StepMemory:
    """The memory of a fine-tuning step of ``model`` on the CUDA ``device``, from one forward and backward
    step at each of ``sizes`` (random pixels, full-context token rows of the model's tokenizer's width:
    the widest a caption batch can be). The weights are not changed (no optimizer step); gradients are
    cleared afterwards. ValueError on a device that is not CUDA."""
    import contextlib

    import torch

    from .device import device_type
    from .finetune import contrastive_loss, pearson_loss

    if device_type(device) != "cuda":
        raise ValueError("choosing the batch size from free memory needs a CUDA device")
    small, large = sizes
    image_size = getattr(getattr(model, "visual", None), "image_size", 224)
    image_size = image_size[0] if isinstance(image_size, (tuple, list)) else int(image_size)
    vocab = int(getattr(getattr(model, "token_embedding", None), "num_embeddings", 0) or 1000)
    context = int(getattr(model, "context_length", 77) or 77)
    cast = (
        torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        if autocast == "bf16"
        else contextlib.nullcontext()
    )
    was_training = model.training
    model.train()
    model.zero_grad(set_to_none=True)
    resident = torch.cuda.memory_allocated(device)  # the weights: already there, not in the free memory
    peaks = []
    try:
        for b in (small, large):
            model.zero_grad(set_to_none=True)
            torch.cuda.synchronize(device)
            torch.cuda.reset_peak_memory_stats(device)
            pixels = torch.randn(2 * b, 3, image_size, image_size, device=device)
            tokens = torch.randint(1, max(vocab - 1, 2), (2 * b, context), device=device)
            ratings = torch.arange(b, dtype=torch.float32, device=device)
            with cast:
                loss = contrastive_loss(
                    model.encode_image(pixels[:b]), model.encode_text(tokens[:b]), model.logit_scale.exp()
                )
            loss.backward()
            with cast:
                cos = torch.nn.functional.cosine_similarity(
                    model.encode_image(pixels[b:]).float(), model.encode_text(tokens[b:]).float()
                )
                loss = pearson_loss(cos, ratings)
            loss.backward()
            torch.cuda.synchronize(device)
            peaks.append(torch.cuda.max_memory_allocated(device))
    finally:
        model.zero_grad(set_to_none=True)
        model.train(was_training)
    per_sample = max(1, (peaks[1] - peaks[0]) // (large - small))
    moments = 2 * sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    fixed = max(0, peaks[0] - resident - per_sample * small) + moments
    return StepMemory(fixed=int(fixed), per_sample=int(per_sample))


def auto_batch_size(model, device, *, autocast: str = "", minimum: int = 3) -> tuple[int, StepMemory, int]:
    """``(batch size, step memory, free bytes)``: :func:`probe_step_memory` on ``model`` (on the CUDA
    ``device``), then :func:`batch_size_for_memory` of the memory free after it. ValueError off CUDA, or
    when not even ``minimum`` fits."""
    import torch

    step = probe_step_memory(model, device, autocast=autocast)
    torch.cuda.empty_cache()
    free, _total = torch.cuda.mem_get_info(device)
    return batch_size_for_memory(free, step, minimum=minimum), step, int(free)
