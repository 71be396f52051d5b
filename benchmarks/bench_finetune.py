"""CLIP fine-tuning speed: samples per second of the default architecture, fp32 and bf16, as fine-tuning ran
before issue 28 and as it runs now, in the same run on the same inputs.

    .venv/bin/python benchmarks/bench_finetune.py [--device cuda] [--batch-size 64 256 auto] [--steps 20]
        [--warmup 3] [--trainable all|text|projections] [--autocast "" bf16]

The model is the real ``xlm-roberta-base-ViT-B-32`` architecture with random weights, built offline as in
``bench_clip.py`` (random weights change no timing); texts are random token ids with caption-like lengths.
One step is what ``evaluation.metrics.clip.finetune.fine_tune`` does per optimizer update: a contrastive
batch (eq. 1) and a Pearson batch (eq. 2) of ``--batch-size`` each, their gradients summed, one AdamW
step; a step trains on ``2 x batch`` samples.

"before": AdamW with torch's default implementation and each loss read on the host after its backward
pass (``float(loss)``, as fine_tune did: the CPU waits for the GPU twice a step). "now": what fine_tune
does since: the losses stay on the device (read once per log interval), and on CUDA the fused AdamW.
bf16 runs the forward passes under ``torch.autocast`` (CUDA only; on a CPU it is skipped). Each line
gives steps/s and samples/s after ``--warmup`` steps, and on CUDA the peak GPU memory; a batch size that
does not fit says so. ``auto`` (CUDA only) is the batch size chosen from the GPU's free memory by a probe
step (``evaluation.metrics.clip.finetune_memory``), printed with the probe's figures and then measured
like the others: its peak memory shows how close the choice came. Nothing is written to disk.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def one_step(model, optimizer, cast, pixels, tokens, ratings, b: int, *, read_losses: bool):
    """One optimizer update as fine_tune makes it: a contrastive and a Pearson batch, gradients summed.
    ``read_losses``: read each loss on the host after its backward pass, as fine_tune did before."""
    import torch

    from evaluation.metrics.clip.finetune import contrastive_loss, pearson_loss

    optimizer.zero_grad(set_to_none=True)
    with cast:
        loss_c = contrastive_loss(
            model.encode_image(pixels[:b]), model.encode_text(tokens[:b]), model.logit_scale.exp()
        )
    loss_c.backward()
    if read_losses:
        float(loss_c.detach())
    with cast:
        image, text = model.encode_image(pixels[b:]), model.encode_text(tokens[b:])
        cos = torch.nn.functional.cosine_similarity(image.float(), text.float())
        loss_p = pearson_loss(cos, ratings)
    loss_p.backward()
    if read_losses:
        float(loss_p.detach())
    optimizer.step()


def measure(model, device, autocast, mode, batch, args, rng):
    """steps/s of one configuration, and the peak GPU memory in GiB (None on a CPU). The model is shared by
    all configurations (its weights move as it trains, which changes no timing); each gets a fresh optimizer."""
    import torch
    from bench_clip import RandomIdTokenizer

    tokenizer = RandomIdTokenizer(median=18)
    texts = [f"t{i}" for i in range(batch * 2)]
    tokenizer.assign(texts, rng)
    tokens = tokenizer(texts).to(device)
    pixels = torch.randn(batch * 2, 3, 224, 224, device=device)
    ratings = torch.tensor(rng.integers(1, 5, batch), dtype=torch.float32, device=device)
    cuda = device.startswith("cuda")
    fused = {"fused": True} if cuda and mode == "now" else {}
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5, **fused)
    cast = (
        torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        if autocast == "bf16"
        else contextlib.nullcontext()
    )
    read = mode == "before"
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    for _ in range(args.warmup):
        one_step(model, optimizer, cast, pixels, tokens, ratings, batch, read_losses=read)
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        one_step(model, optimizer, cast, pixels, tokens, ratings, batch, read_losses=read)
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else None
    del optimizer
    model.zero_grad(set_to_none=True)
    return args.steps / seconds, peak


def auto_size(model, device, autocast, precision):
    """The batch size ``--batch-size auto`` takes (evaluation.metrics.clip.finetune_memory), printed with
    the probe's figures; None off CUDA."""
    from evaluation.metrics.clip.finetune_memory import auto_batch_size

    if not device.startswith("cuda"):
        print(f"{precision}, batch auto: skipped (chosen from free GPU memory: CUDA only)")
        return None
    try:
        batch, step, free = auto_batch_size(model, device, autocast=autocast)
    except ValueError as exc:
        print(f"{precision}, batch auto: {exc}")
        return None
    print(
        f"{precision}, batch auto: {batch} (probe: {step.fixed / 2**30:.2f} GiB fixed incl. AdamW moments, "
        f"{step.per_sample / 2**20:.1f} MiB per sample; {free / 2**30:.1f} GiB free)"
    )
    return batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda when there is one)")
    parser.add_argument(
        "--batch-size",
        nargs="+",
        default=["64"],
        help="batch sizes; 'auto': the largest that fits the GPU's free memory (probed per precision)",
    )
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--trainable", default="all", choices=["all", "text", "projections"])
    parser.add_argument("--autocast", nargs="+", default=["", "bf16"])
    parser.add_argument("--modes", nargs="+", default=["before", "now"], choices=["before", "now"])
    args = parser.parse_args()
    sizes = [b if b == "auto" else int(b) for b in args.batch_size]
    numeric = [b for b in sizes if b != "auto"]

    import torch
    from bench_clip import build_model

    from evaluation.metrics.clip.finetune import select_trainable

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cuda = device.startswith("cuda")
    name = torch.cuda.get_device_name(0) if cuda else f"CPU ({torch.get_num_threads()} threads)"
    print(
        f"device: {name}; {args.steps} steps after {args.warmup} warm-up; a step trains on 2 x batch samples"
    )

    model, _, _ = build_model(device)
    select_trainable(model, args.trainable)
    model.train()
    results, chosen = {}, {}
    for autocast in args.autocast:
        if autocast and not cuda:
            print(f"autocast {autocast}: skipped (CUDA only)")
            continue
        precision = autocast or "fp32"
        for batch in sizes:
            if batch == "auto":
                batch = auto_size(model, device, autocast, precision)
                if batch is None:
                    continue
                chosen[precision] = batch
            for mode in args.modes:
                try:
                    rate, peak = measure(model, device, autocast, mode, batch, args, np.random.default_rng(0))
                except torch.OutOfMemoryError:
                    print(f"{precision}, batch {batch}, {mode}: out of GPU memory")
                    model.zero_grad(set_to_none=True)
                    rate = None
                finally:
                    if cuda:
                        torch.cuda.empty_cache()
                if rate is None:
                    continue
                results[precision, batch, mode] = rate
                memory = f", peak {peak:.1f} GiB" if peak is not None else ""
                print(
                    f"{precision}, batch {batch}, {mode}: {rate:.2f} steps/s, {rate * 2 * batch:,.0f} samples/s"
                    f" ({1000 / rate:.0f} ms/step{memory})"
                )
    print()
    for precision in ("fp32", "bf16"):
        for batch in [*numeric, *([chosen[precision]] if precision in chosen else [])]:
            now, before = results.get((precision, batch, "now")), results.get((precision, batch, "before"))
            if now and before:
                print(f"{precision}, batch {batch}: now / before = {now / before:.2f}x (same batch)")
    first = numeric[0] if numeric else chosen.get("fp32")
    base = results.get(("fp32", first, "before"))
    if base:
        best = max(
            (
                (rate * 2 * batch, precision, batch)
                for (precision, batch, mode), rate in results.items()
                if mode == "now"
            ),
            default=None,
        )
        if best:
            samples, precision, batch = best
            print(
                f"best now: {samples:,.0f} samples/s ({precision}, batch {batch}) = "
                f"{samples / (base * 2 * first):.2f}x fp32 before at batch {first} on {name}"
            )


if __name__ == "__main__":
    main()
