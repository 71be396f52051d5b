"""The text pass padded, packed and compiled: captions/s of each, in the same run on the same texts, and
how far each is from open_clip's own full-context ``encode_text``.

    .venv/bin/python benchmarks/bench_text_pass.py [--tower clip|xlmr] [--device cpu|cuda] [--autocast bf16]
        [--texts 4096] [--repeat 3] [--median-tokens 18] [--text-batch 0] [--compile compile reduce-overhead]

``--tower clip`` (default): open_clip's ``ViT-B-32`` architecture (the causal CLIP text tower: 12 layers,
width 512, context 77), texts of random token ids with CLIP's start and end tokens. ``--tower xlmr``: the
default model's architecture (``xlm-roberta-base-ViT-B-32``, built as bench_clip.py builds it), texts of
random XLM-R ids. Random weights, built offline; caption lengths log-normal (median ``--median-tokens``,
sigma 0.45, 4..77) as in bench_clip.py.

Variants (docs/clip-on-gpu.md), each ``embed_texts`` with the device's batch size:
``padded`` (``CLIP_TEXT_PACKING=off``: length-sorted batches trimmed to their longest text, width
buckets on CUDA), ``packed`` (``on``: the packed mask in fp32, variable-length flash attention in half
precision on CUDA, where ``packed, mask`` is the packed mask too), then each ``--compile`` mode
(``CLIP_COMPILE``; default on CUDA ``compile reduce-overhead``, none on a CPU) on the packed-mask layout
(one shape; ``--compile-padded`` adds the padded layout, a shape per bucket and row count), its compile
time printed. Also printed: the token positions each layout computes, and what ``auto`` chooses.
The eager variants alternate ``--repeat`` times; the best of each is compared with ``padded``. Embeddings must
agree with the full-context pass to 1e-5 in fp32 (1e-2 in bf16, the autocast tolerance).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONTEXT = 77
SOT, EOT = 49406, 49407


class ClipIdTokenizer:
    """open_clip's tokenizer contract (list[str] -> (n, 77) LongTensor, padded with 0) on random ids per text,
    ``<start> ids <end>``: the end token is the largest id, where the tower pools (argmax)."""

    def __init__(self, median: float, rng: np.random.Generator):
        self.median, self.rng, self.ids = median, rng, {}

    def assign(self, texts) -> None:
        for text in texts:
            length = int(np.clip(round(self.rng.lognormal(np.log(self.median), 0.45)), 4, CONTEXT))
            self.ids[text] = [SOT, *self.rng.integers(1, SOT, length - 2).tolist(), EOT]

    def __call__(self, texts):
        import torch

        out = torch.zeros((len(texts), CONTEXT), dtype=torch.long)
        for i, text in enumerate(texts):
            ids = self.ids[text]
            out[i, : len(ids)] = torch.tensor(ids)
        return out


def build(device: str):
    import torch

    from evaluation.metrics.clip import ensure_torchvision_loadable

    ensure_torchvision_loadable()
    import open_clip

    config = open_clip.get_model_config("ViT-B-32")
    torch.manual_seed(0)
    model = open_clip.CLIP(**config).to(device).eval()
    return model, config["embed_dim"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tower", default="clip", choices=["clip", "xlmr"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--autocast", default="", choices=["", "bf16", "fp16"])
    parser.add_argument("--texts", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--median-tokens", type=float, default=18)
    parser.add_argument("--text-batch", type=int, default=0, help="texts per pass (0: the device's default)")
    parser.add_argument("--compile", nargs="*", default=None, help="CLIP_COMPILE modes to measure")
    parser.add_argument(
        "--compile-padded",
        action="store_true",
        help="compile the padded layout too (a shape per width bucket and row count: slow to compile)",
    )
    args = parser.parse_args()
    cuda = args.device.startswith("cuda")
    modes = args.compile if args.compile is not None else (["compile", "reduce-overhead"] if cuda else [])

    import torch
    import torch.nn.functional as F

    from evaluation.metrics.clip import LoadedClip, embed_texts, text_trimming
    from evaluation.metrics.clip.device import text_batch_size, width_buckets
    from evaluation.metrics.clip.packing import packed_positions, packing_kind, padded_positions, use_packing
    from evaluation.metrics.clip.texts import _lengths

    rng = np.random.default_rng(0)
    texts = [f"t{i}" for i in range(args.texts)]
    if args.tower == "clip":
        model, dim = build(args.device)
        tokenizer = ClipIdTokenizer(args.median_tokens, rng)
        tokenizer.assign(texts)
        architecture = "ViT-B-32"
    else:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_clip import RandomIdTokenizer, build_model

        model, _, dim = build_model(args.device)
        tokenizer = RandomIdTokenizer(args.median_tokens)
        tokenizer.assign(texts, rng)
        architecture = "xlm-roberta-base-ViT-B-32"
    loaded = LoadedClip(
        model=model,
        preprocess=None,
        tokenizer=tokenizer,
        device=args.device,
        model_id=f"bench:{architecture}:random",
        model_name=architecture,
        pretrained=None,
        checkpoint_path=None,
        embed_dim=dim,
        autocast=args.autocast,
    )
    batch = text_batch_size(args.device, args.text_batch or None)
    name = torch.cuda.get_device_name(0) if cuda else f"CPU, {torch.get_num_threads()} threads"
    print(f"device {args.device} ({name}), torch {torch.__version__}, precision {args.autocast or 'fp32'}")
    trimming = text_trimming(model)
    kind = packing_kind(model, trimming)
    print(f"model: {architecture} architecture, random weights; text trimming {trimming}, packing {kind}")

    tokens = tokenizer(texts)
    lengths = _lengths(model, trimming, tokens).numpy()
    # Positions per slice, as embed_texts sees them (slices of 16 batches, each sorted within itself).
    step = batch * 16
    real = int(lengths.sum())
    padded = sum(
        padded_positions(lengths[s : s + step], batch, width_buckets(args.device), CONTEXT)
        for s in range(0, len(lengths), step)
    )
    packed = sum(packed_positions(lengths[s : s + step], CONTEXT) for s in range(0, len(lengths), step))
    auto = use_packing("auto", args.device, kind, lengths[:step], batch, CONTEXT)
    print(
        f"{len(texts)} texts, mean {lengths.mean():.1f} tokens, batch {batch}: positions computed: texts {real:,}, "
        f"padded {padded:,} (+{100 * (padded / real - 1):.0f}%), packed rows {packed:,} "
        f"(+{100 * (packed / real - 1):.0f}%), varlen {real:,}; packing removes {100 * (1 - packed / padded):.0f}% "
        f"of the padded positions; CLIP_TEXT_PACKING=auto packs here: {auto}"
    )

    with torch.no_grad():
        reference = torch.cat(
            [
                F.normalize(model.encode_text(tokens[s : s + 256].to(args.device)).float(), dim=-1).cpu()
                for s in range(0, len(texts), 256)
            ]
        ).numpy()

    from evaluation.metrics.clip import packing

    eager = {"padded": loaded.with_text_pass(packing="off"), "packed": loaded.with_text_pass(packing="on")}
    # In half precision on CUDA "packed" is the varlen kernel; "packed, mask" forces the packed-mask path.
    mask_too = cuda and bool(args.autocast) and kind == "clip"
    if mask_too:
        eager["packed, mask"] = eager["packed"]

    def run(label, variant):
        available = packing.varlen_available
        if label.startswith("packed, mask"):
            packing.varlen_available = lambda device, dtype: False
        try:
            out = embed_texts(variant, texts, batch_size=batch)
        finally:
            packing.varlen_available = available
        if cuda:
            torch.cuda.synchronize()
        return out

    tolerance = 1e-2 if args.autocast else 1e-5
    best, diffs = {}, {}

    def report(label):
        rate = len(texts) / best[label]
        ratio = best["padded"] / best[label]
        verdict = "OK" if diffs[label] <= tolerance else "FAIL"
        print(
            f"{label:32s} {rate:10,.0f} captions/s  {ratio:5.2f}x padded  "
            f"max |diff| vs full context {diffs[label]:.1e} ({verdict} at {tolerance:g})"
        )

    def measure(labels):
        for _ in range(args.repeat):
            for label, variant in labels.items():
                start = time.perf_counter()
                out = run(label, variant)
                best[label] = min(best.get(label, float("inf")), time.perf_counter() - start)
                diffs[label] = float(np.abs(out - reference).max())

    for label, variant in eager.items():  # warm-up: first-call allocations, the bf16 copy
        run(label, variant)
    measure(eager)
    print()
    for label in eager:
        report(label)
    # Each compiled variant on its own, printed as soon as it is measured: compiling takes a while.
    layouts = ["packed, mask" if mask_too else "packed"] + (["padded"] if args.compile_padded else [])
    for mode in modes:
        for layout in layouts:
            label = f"{layout}, {mode}"
            variant = loaded.with_text_pass(packing="off" if layout == "padded" else "on", compile=mode)
            start = time.perf_counter()
            try:
                run(label, variant)
            except Exception as exc:  # a compile failure is a finding too
                print(f"{label}: FAILED on the first call ({type(exc).__name__}: {str(exc)[:300]})")
                continue
            print(f"{label}: first call (compiling) {time.perf_counter() - start:.1f} s")
            measure({label: variant})
            report(label)


if __name__ == "__main__":
    main()
