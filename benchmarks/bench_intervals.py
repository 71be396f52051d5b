"""What intervals of the statistic shown cost a scoring worker: one language of an XM3600-size submission
scored as a test phase scores it, with the intervals as they were and as they are, in the same run.

    .venv/bin/python benchmarks/bench_intervals.py                  # 3,600 images, 2 languages, METEOR
    .venv/bin/python benchmarks/bench_intervals.py --no-meteor --images 600   # a quick look

Per language, both sides score all images and the public and private halves with the phase's default
metrics (``challenges.models.DEFAULT_METRICS``: BLEU-1..4, ROUGE-L, CIDEr-D and METEOR; METEOR needs
Java) through ``score_texts``, the scorer of ``challenges.scoring.compute``:

- before: no resamples; then, as the scorer did until this change, a bootstrap of the mean of the whole
  phase's per-image values for every (split, metric) (``mean_interval`` of the previous
  ``challenges/statistics.py``, read from git at ``--before``, 1,000 resamples);
- after: the split's shared resamples (``split_resamples``, 1,000) passed to ``score_texts``, which
  recomputes every metric's corpus score on each (:mod:`evaluation.metrics.text.resampling`; METEOR's
  in the same JVM), and the percentile interval of those replicates.

The synthetic submission is that of ``bench_server.py`` (made-up words, lowercase, space-separated) with
``--references`` references per image; the same captions for both sides, ``--repeats`` runs of each,
alternating, the median printed. The database is not in these figures (storing a score's 1,000 replicates
is 8 KB a row).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
django.setup()

from challenges.models import DEFAULT_METRICS  # noqa: E402
from challenges.statistics import interval, public_images, split_resamples  # noqa: E402
from evaluation.metrics.text.scoring import score_texts  # noqa: E402


def previous_statistics(commit: str) -> types.ModuleType:
    """``challenges/statistics.py`` as it was at ``commit`` (the bootstrap of per-image means)."""
    source = subprocess.run(
        ["git", "show", f"{commit}:challenges/statistics.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("statistics_before")
    exec(compile(source, "statistics_before", "exec"), module.__dict__)  # noqa: S102 - our own file at a commit
    return module


def synthesize(images: int, languages: int, references: int, seed: int):
    rng = random.Random(seed)
    out = []
    for n in range(languages):
        vocab = [f"l{n}w{k}" for k in range(800)]
        refs, cands = {}, {}
        for i in range(images):
            topic = rng.sample(vocab, 6)
            refs[i] = [
                " ".join(rng.choices(topic + vocab[:40], k=rng.randint(6, 12))) for _ in range(references)
            ]
            cands[i] = " ".join(rng.choices(topic + vocab[:40], k=rng.randint(6, 12)))
        out.append((cands, refs))
    return out


def score_language(
    cands, refs, splits, metrics, *, after: bool, before_module, seed: int
) -> tuple[float, int]:
    """Seconds to score one language's three corpora with their intervals; the intervals made."""
    start = time.perf_counter()
    made = 0
    per_image = {}
    for split, ids in splits.items():
        resamples = split_resamples(ids, seed=seed) if after else None
        report = score_texts(
            {i: cands[i] for i in ids},
            {i: refs[i] for i in ids},
            scheme="whitespace",
            metrics=metrics,
            language="en",
            resamples=resamples,
        )
        if split == "all":
            per_image = report.per_caption
        for metric in report.corpus:
            if after:
                made += interval(report.replicates[metric]) is not None
            else:
                values = [per_image[metric][i] for i in ids]
                made += before_module.mean_interval(values, seed=seed, group=f"{split}|{metric}") is not None
    return time.perf_counter() - start, made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=3600)
    parser.add_argument("--languages", type=int, default=2)
    parser.add_argument("--references", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-meteor", action="store_true")
    parser.add_argument("--before", default="bff1909", help="a commit with the per-image-mean intervals")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    metrics = [m for m in DEFAULT_METRICS if not (args.no_meteor and m == "METEOR")]
    before_module = previous_statistics(args.before)
    data = synthesize(args.images, args.languages, args.references, args.seed)
    ids = list(range(args.images))
    public = public_images(ids, seed=args.seed, share=0.5)
    splits = {
        "all": ids,
        "public": [i for i in ids if i in public],
        "private": [i for i in ids if i not in public],
    }
    times = {"before": [], "after": []}
    made = {}
    for _ in range(args.repeats):
        for side in ("before", "after"):
            total = 0.0
            for cands, refs in data:
                seconds, made[side] = score_language(
                    cands,
                    refs,
                    splits,
                    metrics,
                    after=side == "after",
                    before_module=before_module,
                    seed=args.seed,
                )
                total += seconds
            times[side].append(total)
    before, after = statistics.median(times["before"]), statistics.median(times["after"])
    print(
        f"{args.images} images x {args.languages} languages, {args.references} references, metrics {', '.join(metrics)}; "
        f"all images and both halves; {args.repeats} run(s) of each side, median"
    )
    print(f"\n{'side':<62}{'seconds':>10}{'intervals':>11}")
    print(
        f"{'before: per-image-mean bootstrap (' + args.before + ')':<62}{before:>10.2f}{made['before'] * args.languages:>11}"
    )
    print(
        f"{'after: each corpus score recomputed on 1,000 resamples':<62}{after:>10.2f}{made['after'] * args.languages:>11}"
    )
    print(f"\nafter / before: {after / before:.2f} (the target: at most 1.20)")


if __name__ == "__main__":
    main()
