"""CLIP fine-tuning speed: training steps per second of the default architecture, fp32 against bf16.

    .venv/bin/python benchmarks/bench_finetune.py [--device cuda] [--batch-size 32] [--steps 20]
        [--warmup 3] [--trainable all|text|projections] [--autocast "" bf16]

The model is the real ``xlm-roberta-base-ViT-B-32`` architecture with random weights, built offline as in
``bench_clip.py`` (random weights change no timing); texts are random token ids with caption-like lengths.
One step is what ``evaluation.metrics.clip.finetune.fine_tune`` does per optimizer update: a contrastive
batch (eq. 1) and a Pearson batch (eq. 2) of ``--batch-size`` each, their gradients summed, one AdamW
step. bf16 runs the forward passes under ``torch.autocast`` (CUDA only; on a CPU it is skipped). Both
precisions run in the same process on the same inputs; the figure printed is steps/s after ``--warmup``
steps, with the device named. Nothing is written to disk.
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


def one_step(model, optimizer, cast, pixels, tokens, ratings, b: int) -> None:
    """One optimizer update as fine_tune makes it: a contrastive and a Pearson batch, gradients summed."""
    import torch

    from evaluation.metrics.clip.finetune import contrastive_loss, pearson_loss

    optimizer.zero_grad(set_to_none=True)
    with cast:
        loss_c = contrastive_loss(
            model.encode_image(pixels[:b]), model.encode_text(tokens[:b]), model.logit_scale.exp()
        )
    loss_c.backward()
    with cast:
        image, text = model.encode_image(pixels[b:]), model.encode_text(tokens[b:])
        cos = torch.nn.functional.cosine_similarity(image.float(), text.float())
        loss_p = pearson_loss(cos, ratings)
    loss_p.backward()
    optimizer.step()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda when there is one)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--trainable", default="all", choices=["all", "text", "projections"])
    parser.add_argument("--autocast", nargs="+", default=["", "bf16"])
    args = parser.parse_args()

    import torch
    from bench_clip import RandomIdTokenizer, build_model

    from evaluation.metrics.clip.finetune import select_trainable

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    name = (
        torch.cuda.get_device_name(0)
        if device.startswith("cuda")
        else f"CPU ({torch.get_num_threads()} threads)"
    )
    rng = np.random.default_rng(0)
    tokenizer = RandomIdTokenizer(median=18)
    texts = [f"t{i}" for i in range(args.batch_size * 2)]
    tokenizer.assign(texts, rng)
    tokens = tokenizer(texts).to(device)
    pixels = torch.randn(args.batch_size * 2, 3, 224, 224, device=device)
    ratings = torch.tensor(rng.integers(1, 5, args.batch_size), dtype=torch.float32, device=device)
    print(f"device: {name}; batch {args.batch_size} per loss, {args.steps} steps after {args.warmup} warm-up")

    results = {}
    for autocast in args.autocast:
        if autocast and not device.startswith("cuda"):
            print(f"autocast {autocast}: skipped (CUDA only)")
            continue
        model, _, _ = build_model(device)
        select_trainable(model, args.trainable)
        model.train()
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
        cast = (
            torch.autocast(device_type="cuda", dtype=torch.bfloat16)
            if autocast == "bf16"
            else contextlib.nullcontext()
        )

        def step(model, optimizer, cast):
            one_step(model, optimizer, cast, pixels, tokens, ratings, args.batch_size)

        for _ in range(args.warmup):
            step(model, optimizer, cast)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(args.steps):
            step(model, optimizer, cast)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        results[autocast or "fp32"] = args.steps / seconds
        print(
            f"{autocast or 'fp32'}: {results[autocast or 'fp32']:.2f} steps/s ({seconds / args.steps * 1000:.0f} ms/step)"
        )
        del model, optimizer
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    if "fp32" in results and "bf16" in results:
        print(f"bf16 / fp32: {results['bf16'] / results['fp32']:.2f}x on {name}")


if __name__ == "__main__":
    main()
