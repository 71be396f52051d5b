"""CLIPScore embedding speed: the platform's pipeline against a plain open_clip loop, same run, same inputs.

    .venv/bin/python benchmarks/bench_clip.py [--texts 384] [--images 96] [--repeat 2] [--device cpu|cuda]
        [--autocast bf16] [--realistic-images 32] [--threads 1 2] [--no-profile]
        [--text-batch 0] [--image-batch 0] [--image-pipeline pil|tensor] [--targets]

The model is the REAL architecture of the default ``xlm-roberta-base-ViT-B-32`` with random weights,
built offline: transformers' ``XLMRobertaConfig`` written by hand with xlm-roberta-base's dimensions
(vocab 250002, hidden 768, 12 layers, 12 heads, intermediate 3072, 514 positions, type vocab 1, pad
id 1) saved to a temporary folder, and open_clip's own ``xlm-roberta-base-ViT-B-32`` config pointed at
it with ``hf_model_pretrained=False``, so nothing is downloaded. Random weights change no timing.

Texts: where the xlm-roberta-base tokenizer files are in the local Hugging Face cache they are used on
generated captions; otherwise (the case here) each text gets token ids drawn at random, ``<s> ... </s>``
padded with id 1 to open_clip's context of 77, with a caption length in tokens drawn from a log-normal
distribution (median ``--median-tokens`` 18, sigma 0.45, 4..77 tokens: a 10-14 word caption with
XLM-R's ~1.3 pieces per word; the output says which was used). ``--long-median`` reruns our side
on longer captions, to show how the ratio depends on caption length.

Plain loop (the reference): batches of 64 in input order, padded to the full context, fp32, under
``torch.no_grad``, no reuse, no cache; images decoded and preprocessed serially, batches of 64.
Ours: ``evaluation.metrics.clip.embed_texts`` / ``embed_images`` (length-sorted batches trimmed to their
longest text, ``inference_mode``, each distinct text once, decoding threads a batch ahead), with the
device's defaults (docs/clip-on-gpu.md): text batches of 64 on a CPU and 1024 on CUDA (``--text-batch``
overrides), width buckets, pinned attention kernels and the bf16 weight copy on CUDA; images through
the PIL pipeline on a CPU and the tensor pipeline (GPU JPEG decoding) on CUDA (``--image-pipeline``),
in batches of 64 on a CPU and 256 on CUDA (``--image-batch``). On CUDA the run also compares the two
image pipelines on the same images (embedding cosine, CLIPScore) and profiles the GPU's busy time;
``--targets`` prints the issue's H100 targets beside the figures.
Both sides alternate ``--repeat`` times on the same inputs; the best (quietest) run of each side is
compared. CLIPScores (2.5 max(cos, 0), text i against image i mod n) must agree to 1e-5.

Realistic run: ``--realistic-images`` images, 4 systems, 2 references per image shared by all
systems, 10% of a system's captions identical to another system's caption of the same image. The plain
loop embeds each system's candidates and references (as one system's chunk did); ours runs one
``embed_texts`` call per system through one shared text cache, as the metric chunks do.

The projection is for an XM3600-scale run (3,600 images, 36 languages, 4 systems, 2 references per
image and language): 518,400 candidates and 259,200 references, i.e. the ~800,000 texts the issue
counts for the plain loop (which, per system, would in fact embed the references again: 1.55 M), and
the 3,600 images (both sides embed each image once: the image cache predates this work).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The shared data folder (../shared/data); BENCH_SHARED_DATA names a copy where ../shared is not beside the
# checkout (a GPU machine gets the checkout only: benchmarks/gpu_check.sh).
SHARED_DATA = Path(os.environ.get("BENCH_SHARED_DATA") or ROOT.parent / "shared" / "data")
SHAPES = SHARED_DATA / "xm3600-images" / "image_shapes.csv"

CONTEXT = 77
PAD, BOS, EOS = 1, 0, 2
XM_TEXTS_PLAIN = 3600 * 36 * 4 + 3600 * 36 * 2  # 777,600: candidates + references, as the issue counts
XM_CANDIDATES = 3600 * 36 * 4
XM_REFERENCES = 3600 * 36 * 2
XM_IMAGES = 3600


# --- the model, offline ---------------------------------------------------------------------------


def build_model(device: str):
    import torch
    from transformers import XLMRobertaConfig

    from evaluation.metrics.clip import ensure_torchvision_loadable

    ensure_torchvision_loadable()
    import open_clip

    config = XLMRobertaConfig(
        vocab_size=250002,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=514,
        type_vocab_size=1,
        pad_token_id=PAD,
        bos_token_id=BOS,
        eos_token_id=EOS,
        layer_norm_eps=1e-5,
    )
    folder = tempfile.mkdtemp(prefix="xlmr-config-")
    config.save_pretrained(folder)
    model_cfg = open_clip.get_model_config("xlm-roberta-base-ViT-B-32")
    text_cfg = dict(
        model_cfg["text_cfg"], hf_model_name=folder, hf_tokenizer_name=folder, hf_model_pretrained=False
    )
    torch.manual_seed(0)
    model = open_clip.CustomTextCLIP(
        embed_dim=model_cfg["embed_dim"], vision_cfg=model_cfg["vision_cfg"], text_cfg=text_cfg
    )
    model = model.to(device).eval()
    size = model_cfg["vision_cfg"]["image_size"]
    preprocess = open_clip.image_transform(size, is_train=False)
    return model, preprocess, model_cfg["embed_dim"]


class RandomIdTokenizer:
    """open_clip's HF tokenizer contract (list[str] -> (n, 77) LongTensor padded with 1), on token ids
    drawn at random per text: the same text always gets the same ids."""

    def __init__(self, median: float, seed: int = 0):
        self.median, self.seed = median, seed
        self.ids: dict[str, list[int]] = {}

    def assign(self, texts, rng: np.random.Generator) -> None:
        for text in texts:
            if text not in self.ids:
                length = int(np.clip(round(rng.lognormal(np.log(self.median), 0.45)), 4, CONTEXT))
                self.ids[text] = [BOS, *rng.integers(5, 250000, length - 2).tolist(), EOS]

    def __call__(self, texts):
        import torch

        out = torch.full((len(texts), CONTEXT), PAD, dtype=torch.long)
        for i, text in enumerate(texts):
            ids = self.ids[text]
            out[i, : len(ids)] = torch.tensor(ids)
        return out


def real_tokenizer():
    try:
        from open_clip.tokenizer import HFTokenizer

        return HFTokenizer("xlm-roberta-base", context_length=CONTEXT, local_files_only=True)
    except Exception:
        return None


# --- inputs ---------------------------------------------------------------------------------------


def make_images(n: int, rng: np.random.Generator) -> list[bytes]:
    from PIL import Image

    shapes = [(640, 480)]
    if SHAPES.is_file():
        rows = [line.split(",") for line in SHAPES.read_text().splitlines() if line.count(",") == 2]
        shapes = [(int(w), int(h)) for _, w, h in rows if w.isdigit() and h.isdigit()] or shapes
    images = []
    for i in range(n):
        w, h = shapes[i % len(shapes)]
        small = rng.integers(0, 255, (max(h // 16, 1), max(w // 16, 1), 3), dtype=np.uint8)
        image = Image.fromarray(small).resize((w, h), Image.BILINEAR)  # smooth, JPEG-sized like a photo
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=90)
        images.append(buffer.getvalue())
    return images


WORDS = [
    "a",
    "the",
    "man",
    "woman",
    "dog",
    "cat",
    "street",
    "red",
    "blue",
    "small",
    "large",
    "near",
    "under",
    "with",
    "two",
    "people",
    "car",
    "tree",
    "house",
]


def make_texts(n: int, rng: np.random.Generator, prefix: str) -> list[str]:
    return [f"{prefix}{i} " + " ".join(rng.choice(WORDS, int(rng.integers(6, 16)))) for i in range(n)]


# --- the two sides --------------------------------------------------------------------------------


def plain_texts(loaded, texts):
    import torch
    import torch.nn.functional as F

    out = []
    for start in range(0, len(texts), 64):
        tokens = loaded.tokenizer(texts[start : start + 64]).to(loaded.device)
        with torch.no_grad():
            out.append(F.normalize(loaded.model.encode_text(tokens).float(), dim=-1).cpu())
    return torch.cat(out).numpy()


def plain_images(loaded, images):
    import torch
    import torch.nn.functional as F
    from PIL import Image

    out = []
    for start in range(0, len(images), 64):
        pixels = torch.stack(
            [loaded.preprocess(Image.open(io.BytesIO(b)).convert("RGB")) for b in images[start : start + 64]]
        )
        with torch.no_grad():
            out.append(F.normalize(loaded.model.encode_image(pixels.to(loaded.device)).float(), dim=-1).cpu())
    return torch.cat(out).numpy()


SETTINGS = {"text_batch": None, "image_batch": 64, "image_pipeline": "pil"}


def ours_texts(loaded, texts, cache=None):
    from evaluation.metrics.clip import embed_texts

    return embed_texts(loaded, texts, batch_size=SETTINGS["text_batch"], cache=cache)


def ours_images(loaded, images, threads=2, pipeline=None):
    from evaluation.metrics.clip import embed_images

    return embed_images(
        loaded,
        images,
        batch_size=SETTINGS["image_batch"],
        orientation="stored",
        loader_threads=threads,
        pipeline=pipeline or SETTINGS["image_pipeline"],
    )


def real_photos() -> list[bytes]:
    """The repository's real photos (../shared/data/clipscore-example/images), for the pipeline comparison."""
    folder = SHARED_DATA / "clipscore-example" / "images"
    return [path.read_bytes() for path in sorted(folder.glob("*.jpg"))] if folder.is_dir() else []


def compare_pipelines(loaded, images, text_emb) -> None:
    """The tensor image pipeline against open_clip's PIL preprocessing on the same images: pixels (CPU decode
    + tensor resize against PIL, model-independent), embeddings and CLIPScores (this run's weights)."""
    from PIL import Image

    from evaluation.metrics.clip.pixels import preprocess_tensor, tensor_preprocess_spec, uint8_chw

    spec = tensor_preprocess_spec(loaded.preprocess)
    worst = 0.0
    for data in images:
        image = Image.open(io.BytesIO(data)).convert("RGB")
        tensor = preprocess_tensor([uint8_chw(image)], spec)[0]
        worst = max(worst, float((tensor - loaded.preprocess(image)).abs().max()))
    pil = ours_images(loaded, images, pipeline="pil")
    tensor = ours_images(loaded, images, pipeline="tensor")
    cosines = np.einsum("ij,ij->i", pil.astype(np.float64), tensor.astype(np.float64))
    texts = (
        text_emb[: len(images)]
        if len(text_emb) >= len(images)
        else text_emb[np.arange(len(images)) % len(text_emb)]
    )
    scores = np.abs(clipscores(texts, pil) - clipscores(texts, tensor))
    where = "GPU JPEG decoder" if str(loaded.device).startswith("cuda") else "PIL decoding"
    print(
        f"tensor pipeline ({where}) vs PIL on {len(images)} images: pixels (CPU decode) max |diff| {worst:.4f} "
        f"(one uint8 level = {1 / 255 / min(spec.std):.4f}); embedding 1 - cosine max {1 - cosines.min():.2e}, "
        f"mean {1 - cosines.mean():.2e}; max |CLIPScore diff| {scores.max():.2e} (random weights)"
    )


def gpu_profile(label, f) -> None:
    """GPU busy time against wall time, and the top CUDA kernels, of one call (torch.profiler)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    start = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        f()
        torch.cuda.synchronize()
    wall = time.perf_counter() - start
    events = prof.key_averages()
    # The GPU's own events (kernels, copies): summing the CPU ops' device time too would count twice.
    kernels = [e for e in events if str(getattr(e, "device_type", "")).endswith("CUDA")]
    device_time = sum(e.self_device_time_total for e in kernels) / 1e6
    top_cpu = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:4]
    top_gpu = sorted(kernels, key=lambda e: e.self_device_time_total, reverse=True)[:4]
    print(
        f"{label}: wall {wall:.3f} s (profiled), GPU kernels {device_time:.3f} s = {100 * device_time / wall:.0f}% busy; "
        f"CPU top: {', '.join(e.key[:40] for e in top_cpu)}; GPU top: {', '.join(e.key[:40] for e in top_gpu)}"
    )


def timed(f, *args, **kwargs):
    start = time.perf_counter()
    result = f(*args, **kwargs)
    return time.perf_counter() - start, result


def clipscores(text_emb, image_emb):
    images = image_emb[np.arange(len(text_emb)) % len(image_emb)].astype(np.float64)
    return 2.5 * np.maximum(np.einsum("ij,ij->i", text_emb.astype(np.float64), images), 0.0)


def sync(device):
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=384)
    parser.add_argument("--images", type=int, default=96)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--realistic-images", type=int, default=32)
    parser.add_argument("--median-tokens", type=float, default=18)
    parser.add_argument("--long-median", type=float, default=28)
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--workers", type=int, nargs="*", default=[2, 4, 8])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--autocast", default="", choices=["", "bf16", "fp16"])
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--text-batch", type=int, default=0, help="texts per pass (0: the device's default)")
    parser.add_argument("--image-batch", type=int, default=0, help="images per pass (0: 64 CPU, 256 CUDA)")
    parser.add_argument("--image-pipeline", default="", choices=["", "pil", "tensor"])
    parser.add_argument(
        "--targets", action="store_true", help="print the issue's H100 targets beside the figures"
    )
    args = parser.parse_args()
    cuda = args.device.startswith("cuda")
    SETTINGS["text_batch"] = args.text_batch or None
    SETTINGS["image_batch"] = args.image_batch or (256 if cuda else 64)
    SETTINGS["image_pipeline"] = args.image_pipeline or ("tensor" if cuda else "pil")

    import torch

    from evaluation.metrics.clip import InMemoryEmbeddingCache, LoadedClip, set_torch_threads, text_trimming

    rng = np.random.default_rng(0)
    print(f"machine: {platform.processor() or platform.machine()}, torch {torch.__version__}, ", end="")
    print(f"{torch.get_num_threads()} threads by default, device {args.device}", end="")
    print(f" ({torch.cuda.get_device_name(0)})" if cuda else "")
    build_s, (model, preprocess, dim) = timed(build_model, args.device)
    print(
        f"model: xlm-roberta-base-ViT-B-32 architecture, random weights, built offline in {build_s:.1f} s; ",
        end="",
    )
    print(f"text trimming: {text_trimming(model)}")
    tokenizer = real_tokenizer()
    if tokenizer is None:
        tokenizer = RandomIdTokenizer(args.median_tokens)
        print(
            f"tokenizer: xlm-roberta-base tokenizer files ABSENT: random token ids, caption lengths "
            f"log-normal median {args.median_tokens:g} tokens (sigma 0.45, 4..77)"
        )
    else:
        print("tokenizer: the real xlm-roberta-base tokenizer (local files) on generated captions")
    loaded = LoadedClip(
        model=model,
        preprocess=preprocess,
        tokenizer=tokenizer,
        device=args.device,
        model_id="bench:xlm-roberta-base-ViT-B-32:random",
        model_name="xlm-roberta-base-ViT-B-32",
        pretrained=None,
        checkpoint_path=None,
        embed_dim=dim,
    )
    fast = loaded.with_autocast(args.autocast) if args.autocast else loaded

    texts = make_texts(args.texts, rng, "d")
    if isinstance(tokenizer, RandomIdTokenizer):
        tokenizer.assign(texts, rng)
        lengths = [len(tokenizer.ids[t]) for t in texts]
        print(f"distinct texts: {len(texts)}, mean length {np.mean(lengths):.1f} tokens (max {max(lengths)})")
    images = make_images(args.images, rng)
    print(
        f"images: {len(images)} JPEGs of XM3600 sizes ({np.mean([len(b) for b in images]) / 1e3:.0f} kB mean)"
    )

    from evaluation.metrics.clip.device import text_batch_size

    print(
        f"ours: text batches of {text_batch_size(args.device, SETTINGS['text_batch'])}, image batches of "
        f"{SETTINGS['image_batch']}, image pipeline {SETTINGS['image_pipeline']}, "
        f"precision {args.autocast or 'fp32'}; plain loop: batches of 64 padded to 77, fp32"
    )
    # Warm-up (first-call allocations, lazy imports, the bf16 weight copy, each width bucket's kernels)
    # on both sides, outside the timings.
    plain_texts(loaded, texts[:64])
    ours_texts(fast, texts if cuda else texts[:8])
    plain_images(loaded, images[:4])
    ours_images(fast, images[: SETTINGS["image_batch"] if cuda else 4])
    sync(args.device)

    print("\n== distinct texts and images (alternating, best of each side) ==")
    t_plain, t_ours, i_plain, i_ours = [], [], [], []
    for r in range(args.repeat):
        dt, plain_emb = timed(plain_texts, loaded, texts)
        sync(args.device)
        t_plain.append(dt)
        dt, ours_emb = timed(ours_texts, fast, texts)
        sync(args.device)
        t_ours.append(dt)
        dt, plain_img = timed(plain_images, loaded, images)
        sync(args.device)
        i_plain.append(dt)
        dt, ours_img = timed(ours_images, fast, images)
        sync(args.device)
        i_ours.append(dt)
        print(
            f"round {r + 1}: texts plain {len(texts) / t_plain[-1]:.1f}/s, ours {len(texts) / t_ours[-1]:.1f}/s; "
            f"images plain {len(images) / i_plain[-1]:.1f}/s, ours {len(images) / i_ours[-1]:.1f}/s"
        )
    text_rate_plain, text_rate_ours = len(texts) / min(t_plain), len(texts) / min(t_ours)
    image_rate_plain, image_rate_ours = len(images) / min(i_plain), len(images) / min(i_ours)
    diff_scores = np.max(np.abs(clipscores(plain_emb, plain_img) - clipscores(ours_emb, ours_img)))
    diff_emb = max(np.max(np.abs(plain_emb - ours_emb)), np.max(np.abs(plain_img - ours_img)))
    print(
        f"captions/s: plain {text_rate_plain:.1f}, ours {text_rate_ours:.1f}  -> {text_rate_ours / text_rate_plain:.2f}x"
    )
    print(
        f"images/s:   plain {image_rate_plain:.1f}, ours {image_rate_ours:.1f}  -> {image_rate_ours / image_rate_plain:.2f}x"
    )
    tolerance = 1e-5 if not args.autocast else 1e-2
    if SETTINGS["image_pipeline"] == "tensor":
        # The tensor pipeline's pixels differ from PIL's (compared below): texts are held to the
        # tolerance on their own, CLIPScores with ours' texts against the plain loop's images.
        diff_scores = np.max(np.abs(clipscores(plain_emb, plain_img) - clipscores(ours_emb, plain_img)))
        diff_emb = np.max(np.abs(plain_emb - ours_emb))
    verdict = "OK" if diff_scores <= tolerance else "FAIL"
    print(
        f"max |CLIPScore ours - plain| = {diff_scores:.2e} (embeddings {diff_emb:.2e}): {verdict} at {tolerance:g}"
    )
    if cuda or args.image_pipeline == "tensor":
        compare_pipelines(loaded, real_photos() + images[:64], plain_emb)

    if isinstance(tokenizer, RandomIdTokenizer) and args.long_median:
        long_tok = RandomIdTokenizer(args.long_median, seed=1)
        long_loaded = dataclasses.replace(fast, tokenizer=long_tok)
        long_texts = make_texts(args.texts, rng, "l")
        long_tok.assign(long_texts, rng)
        mean_long = np.mean([len(long_tok.ids[t]) for t in long_texts])
        best = min(timed(ours_texts, long_loaded, long_texts)[0] for _ in range(args.repeat))
        print(
            f"longer captions (median {args.long_median:g}, mean {mean_long:.1f} tokens): ours {len(long_texts) / best:.1f}/s "
            f"-> {len(long_texts) / best / text_rate_plain:.2f}x the plain loop (whose rate does not depend on length)"
        )

    if args.device == "cpu" and args.threads:
        print("\n== CLIP_TORCH_THREADS (ours, distinct texts) ==")
        default = torch.get_num_threads()
        for threads in args.threads:
            set_torch_threads(threads)
            best = min(timed(ours_texts, fast, texts)[0] for _ in range(args.repeat))
            print(f"{threads} thread(s): {len(texts) / best:.1f} captions/s")
        set_torch_threads(default)
        i_serial = min(timed(ours_images, fast, images, 0)[0] for _ in range(args.repeat))
        print(f"images with loader_threads=0 (decoding in line): {len(images) / i_serial:.1f}/s")

    print("\n== realistic run: 4 systems, 2 shared references per image, 10% repeated captions ==")
    m = args.realistic_images
    refs = make_texts(2 * m, rng, "r")
    systems = []
    for s in range(4):
        captions = make_texts(m, rng, f"s{s}-")
        if s:
            for i in rng.choice(m, m // 10, replace=False):
                captions[i] = systems[0][i]
        systems.append(captions)
    if isinstance(tokenizer, RandomIdTokenizer):
        tokenizer.assign(refs + [c for captions in systems for c in captions], rng)
    chunks = [
        captions + refs for captions in systems
    ]  # one system's chunk: its candidates, then all references
    n_plain = sum(len(c) for c in chunks)
    p_best = o_best = float("inf")
    for _ in range(args.repeat):
        dt, plain_out = timed(lambda: [plain_texts(loaded, c) for c in chunks])
        p_best = min(p_best, dt)
        cache = InMemoryEmbeddingCache()
        dt, ours_out = timed(lambda cache=cache: [ours_texts(fast, c, cache=cache) for c in chunks])
        o_best = min(o_best, dt)
    distinct = len({t for c in chunks for t in c})
    diff = max(np.max(np.abs(p - o)) for p, o in zip(plain_out, ours_out))
    print(
        f"texts through the pipeline: {n_plain}, distinct {distinct}; plain {p_best:.1f} s, ours {o_best:.1f} s "
        f"-> {p_best / o_best:.2f}x (max embedding diff {diff:.1e})"
    )

    if not args.no_profile and cuda:
        print("\n== where the time goes on the GPU (torch.profiler) ==")
        sample = texts[:4096]
        gpu_profile(f"plain loop, {len(sample)} texts", lambda: plain_texts(loaded, sample))
        gpu_profile(f"ours, {len(sample)} texts", lambda: ours_texts(fast, sample))
        gpu_profile(f"ours, {min(len(images), 256)} images", lambda: ours_images(fast, images[:256]))
    elif not args.no_profile:
        from torch.profiler import ProfilerActivity, profile

        print("\n== where the time goes (torch.profiler, self CPU time, 128 distinct texts) ==")
        sample = texts[:128]
        for name, f in (
            ("plain", lambda: plain_texts(loaded, sample)),
            ("ours", lambda: ours_texts(fast, sample)),
        ):
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                f()
            events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
            total = sum(e.self_cpu_time_total for e in events) or 1
            top = ", ".join(f"{e.key} {100 * e.self_cpu_time_total / total:.0f}%" for e in events[:6])
            print(f"{name}: {total / 1e6:.2f} s; {top}")
        tok_s = timed(tokenizer, sample)[0]
        print(f"tokenising 128 texts: {tok_s * 1e3:.1f} ms (both sides)")

    print("\n== projected XM3600-scale run (3,600 images, 36 languages, 4 systems, 2 references) ==")
    plain_s = XM_TEXTS_PLAIN / text_rate_plain + XM_IMAGES / image_rate_plain
    # Ours: every reference once (shared by the systems, cached), 10% of the candidates repeated.
    ours_texts_n = XM_REFERENCES + XM_CANDIDATES * (1 - 0.10 * 3 / 4)
    ours_s = ours_texts_n / text_rate_ours + XM_IMAGES / image_rate_ours
    print(f"plain loop, 1 worker: {XM_TEXTS_PLAIN:,} texts + {XM_IMAGES:,} images = {hours(plain_s)}")
    print(f"ours, 1 worker: {int(ours_texts_n):,} distinct texts + {XM_IMAGES:,} images = {hours(ours_s)}")
    for n in args.workers:
        print(f"ours, {n} workers (one machine like this each, shared cache): {hours(ours_s / n)}")
    if args.targets:
        precision = args.autocast or "fp32"
        text_target = 60_000 if args.autocast == "bf16" else 10_000
        print("\n== the issue's targets (one H100, these inputs) ==")
        for label, value, target in (
            (f"captions/s ({precision})", text_rate_ours, text_target),
            ("images/s", image_rate_ours, 3_000),
        ):
            print(f"{label}: {value:,.0f} against >= {target:,}: {'met' if value >= target else 'NOT met'}")
        print(
            f"XM3600-scale projection, 1 worker: {ours_s:.1f} s against < 20 s: {'met' if ours_s < 20 else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
