"""Zero-shot and foil check speed: labels/s and pairs/s of the checks' pipeline against a plain loop,
same run, same inputs, on the default architecture with random weights (built offline as
``bench_clip.py`` builds it; nothing is downloaded; random weights change no timing, and the
accuracies they give are no result).

    .venv/bin/python benchmarks/bench_clip_checks.py [--labels 200] [--templates 2] [--images 32]
        [--pairs 200] [--repeat 2] [--threads 2] [--device cpu]

Zero-shot, per language: ``--labels`` class labels in ``--templates`` prompts each, and ``--images``
labelled images. Ours: what a check's chunks run, ``embed_texts`` (length-sorted, trimmed batches, each
distinct text once, through an in-memory text cache as the database cache would be), ``embed_images``
and :func:`evaluation.clip_checks.measures.zeroshot_measures` (class vectors, pessimistic top-1/top-5,
per-class accuracy). Plain loop: prompts in input order in batches of 64 padded to the full context,
images decoded and preprocessed serially, and a Python loop ranking each image's class.
labels/s = prompts embedded and classified against per second (images included in the time).

Foils: ``--pairs`` caption/foil pairs over ``--images`` images. Ours: ``embed_texts`` of captions and foils,
``embed_images``, :func:`foil_measures` (CLIPScores, ties, 1,000 bootstrap resamples). Plain loop: the
same embeddings the plain way and a Python loop comparing the two CLIPScores per pair (no interval).
Both sides must agree: the same top-1 per image, the same right/wrong per pair. One untimed warm-up pass
runs first; the sides alternate ``--repeat`` times and the best run of each is compared.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_clip import (  # noqa: E402
    RandomIdTokenizer,
    build_model,
    make_images,
    make_texts,
    plain_images,
    plain_texts,
    real_tokenizer,
)


def timed(f, *args, **kwargs):
    start = time.perf_counter()
    result = f(*args, **kwargs)
    return time.perf_counter() - start, result


def plain_zeroshot(loaded, prompts, prompt_class, images, image_class):
    text = plain_texts(loaded, prompts)
    image = plain_images(loaded, images)
    classes = sorted(set(prompt_class))
    vectors = []
    for c in classes:
        rows = [text[i] for i, k in enumerate(prompt_class) if k == c]
        mean = np.mean(rows, axis=0)
        vectors.append(mean / np.linalg.norm(mean))
    top1 = []
    for i in range(len(image)):
        scores = [float(np.dot(image[i], v)) for v in vectors]
        own = scores[classes.index(image_class[i])]
        top1.append(sum(s >= own - 1e-6 for s in scores) == 1)
    return top1


def ours_zeroshot(loaded, prompts, prompt_class, images, image_class):
    from evaluation.clip_checks.measures import class_vectors, zeroshot_measures
    from evaluation.metrics.clip import InMemoryEmbeddingCache, embed_images, embed_texts

    text = embed_texts(loaded, prompts, batch_size=64, cache=InMemoryEmbeddingCache())
    image = embed_images(loaded, images, batch_size=64, orientation="stored", loader_threads=2)
    classes, vectors = class_vectors(text, prompt_class)
    return zeroshot_measures(image, image_class, classes, vectors)


def plain_foils(loaded, captions, foils, images, pair_image):
    cap, foil, image = plain_texts(loaded, captions), plain_texts(loaded, foils), plain_images(loaded, images)
    right = []
    for i in range(len(captions)):
        a = 2.5 * max(float(np.dot(cap[i], image[pair_image[i]])), 0.0)
        b = 2.5 * max(float(np.dot(foil[i], image[pair_image[i]])), 0.0)
        right.append(a > b + 1e-6)
    return right


def ours_foils(loaded, captions, foils, images, pair_image):
    from evaluation.clip_checks.measures import foil_measures
    from evaluation.metrics.clip import InMemoryEmbeddingCache, embed_images, embed_texts

    cache = InMemoryEmbeddingCache()
    both = embed_texts(loaded, captions + foils, batch_size=64, cache=cache)
    image = embed_images(loaded, images, batch_size=64, orientation="stored", loader_threads=2)
    rows = image[pair_image]
    return foil_measures(
        rows,
        both[: len(captions)],
        both[len(captions) :],
        ["p"] * len(captions),
        [str(i) for i in range(len(captions))],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=int, default=200)
    parser.add_argument("--templates", type=int, default=2)
    parser.add_argument("--images", type=int, default=32)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--median-tokens", type=float, default=8, help="prompt/caption length in tokens")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    import torch

    from evaluation.metrics.clip import LoadedClip, set_torch_threads

    set_torch_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"machine: {platform.processor() or platform.machine()}, torch {torch.__version__}, ", end="")
    print(f"{torch.get_num_threads()} torch threads, device {args.device}")
    build_s, (model, preprocess, dim) = timed(build_model, args.device)
    print(
        f"model: xlm-roberta-base-ViT-B-32 architecture, RANDOM weights (no result), built offline in {build_s:.1f} s"
    )
    tokenizer = real_tokenizer() or RandomIdTokenizer(args.median_tokens)
    random_ids = isinstance(tokenizer, RandomIdTokenizer)
    print(
        "tokenizer: "
        + (
            f"xlm-roberta-base files absent: random token ids, median {args.median_tokens:g} tokens"
            if random_ids
            else "the real xlm-roberta-base tokenizer"
        )
    )
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

    images = make_images(args.images, rng)
    labels = make_texts(args.labels, rng, "class")
    forms = ["a photo of a {}.", "a picture of a {}.", "an image of a {}.", "{}"][: max(1, args.templates)]
    prompts = [form.format(label) for label in labels for form in forms]
    prompt_class = [c for c in range(args.labels) for _ in forms]
    image_class = [int(c) for c in rng.integers(0, args.labels, args.images)]
    captions = make_texts(args.pairs, rng, "caption")
    foils = [text.replace(" ", " not ", 1) for text in captions]
    pair_image = rng.integers(0, args.images, args.pairs)
    if random_ids:
        tokenizer.assign(prompts + captions + foils, rng)

    # Warm-up (torch's first passes allocate and pick kernels): not timed, so neither side pays it.
    plain_texts(loaded, prompts[:8])
    plain_images(loaded, images[:2])
    best: dict[str, float] = {}
    results: dict[str, object] = {}
    for _ in range(args.repeat):
        for name, fn, inputs in (
            ("plain zero-shot", plain_zeroshot, (prompts, prompt_class, images, image_class)),
            ("ours zero-shot", ours_zeroshot, (prompts, prompt_class, images, image_class)),
            ("plain foils", plain_foils, (captions, foils, images, pair_image)),
            ("ours foils", ours_foils, (captions, foils, images, pair_image)),
        ):
            seconds, out = timed(fn, loaded, *inputs)
            best[name] = min(best.get(name, float("inf")), seconds)
            results[name] = out

    ours_zs, plain_zs = results["ours zero-shot"], results["plain zero-shot"]
    agree_zs = abs(ours_zs["top1"] - float(np.mean(plain_zs))) < 1e-9
    ours_f, plain_f = results["ours foils"], results["plain foils"]
    agree_f = abs(ours_f["accuracy"] - float(np.mean(plain_f))) < 1e-9
    print(
        f"inputs: {args.labels} labels × {len(forms)} templates = {len(prompts)} prompts, {args.images} images, "
        f"{args.pairs} caption/foil pairs; best of {args.repeat}"
    )
    print(f"{'':18}{'plain loop':>14}{'ours':>14}{'speed-up':>10}")
    for what, plain, ours, n, unit in (
        ("zero-shot", best["plain zero-shot"], best["ours zero-shot"], len(prompts), "labels/s"),
        ("foils", best["plain foils"], best["ours foils"], args.pairs, "pairs/s"),
    ):
        print(f"{what + ' (' + unit + ')':18}{n / plain:>14.1f}{n / ours:>14.1f}{plain / ours:>9.2f}×")
        print(f"{'  seconds':18}{plain:>14.2f}{ours:>14.2f}")
    print(
        f"agreement: zero-shot top-1 {'same' if agree_zs else 'DIFFERS'} ({ours_zs['top1']:.3f}); "
        f"foil accuracy {'same' if agree_f else 'DIFFERS'} ({ours_f['accuracy']:.3f}) — random weights: not results"
    )


if __name__ == "__main__":
    main()
