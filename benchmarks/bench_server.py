"""Benchmark the evaluation server on an XM3600-size submission: time per stage on one worker, with
pycocoevalcap's time for the same captions in the same run.

    .venv/bin/python benchmarks/bench_server.py                       # 3,600 images x 36 languages
    .venv/bin/python benchmarks/bench_server.py --images 300 --languages 4   # a quick look

A synthetic submission (one caption per image and language, made-up words of a per-language vocabulary,
lowercase and space-separated, so both sides see the same tokens) and ``--references`` references per
image are generated with a fixed seed. Stages, as a scoring worker runs them (``challenges.scoring``):

1. validation: ``challenges.files.submission_parse`` on the JSON-lines file (every language, every image);
2. scoring, per metric: ``score_texts`` (the metric runs' scorers) per language on all images and on the
   public and private halves, as a test phase scores them, each on its split's 1,000 shared resamples
   (``challenges.statistics.split_resamples``: every corpus score recomputed on each); then the 95%
   intervals of every (language, split, metric) from those replicates;
3. leaderboard update: the paired bootstrap between ``--entries`` entries (their replicates), adjacent
   pairs, per language and metric, and the mean over languages.

Reference: pycocoevalcap's Bleu(4), Rouge and Cider (the COCO server's CIDEr-D) on the same tokens of
all images, per language (its scorers have no split or interval: one corpus call per language). METEOR
(Java) is left out of both sides unless ``--meteor``. The database (storing captions and scores) is not
in these figures.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from challenges.files import Limits, submission_parse  # noqa: E402
from challenges.statistics import interval, paired_p_value, public_images, split_resamples  # noqa: E402
from evaluation.metrics.text.scoring import score_texts  # noqa: E402

METRIC_GROUPS = {
    "BLEU-1..4": ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4"],
    "ROUGE-L": ["ROUGE-L"],
    "CIDEr-D": ["CIDEr-D"],
}


def synthesize(images: int, languages: int, references: int, entries: int, seed: int):
    rng = random.Random(seed)
    codes = [f"l{i:02d}" for i in range(languages)]
    image_keys = [str(100000 + i) for i in range(images)]
    refs, subs = {}, [{} for _ in range(entries)]
    for code in codes:
        vocab = [f"{code}w{n}" for n in range(800)]
        refs[code] = {}
        for key in image_keys:
            topic = rng.sample(vocab, 6)
            refs[code][key] = [
                " ".join(rng.choices(topic + vocab[:40], k=rng.randint(6, 12))) for _ in range(references)
            ]
            for e in range(entries):
                # Better entries take more of the image's topic words.
                own = topic[: 6 - e] + rng.sample(vocab, 2 + e)
                subs[e].setdefault(code, {})[key] = " ".join(rng.choices(own, k=rng.randint(6, 11)))
    return codes, image_keys, refs, subs


def jsonl(entry: dict) -> bytes:
    return "\n".join(
        json.dumps({"image_id": key, "language": code, "caption": text})
        for code, caps in entry.items()
        for key, text in caps.items()
    ).encode()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--images", type=int, default=3600)
    parser.add_argument("--languages", type=int, default=36)
    parser.add_argument("--references", type=int, default=2)
    parser.add_argument("--entries", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--meteor", action="store_true", help="Also METEOR (Java), on both sides.")
    args = parser.parse_args()
    codes, keys, refs, subs = synthesize(
        args.images, args.languages, args.references, args.entries, args.seed
    )
    data = jsonl(subs[0])
    print(
        f"Submission: {args.images} images x {args.languages} languages = {args.images * args.languages:,} captions, "
        f"{len(data) / 1e6:.1f} MB JSON lines; {args.references} references per image; {args.entries} entries."
    )

    start = time.perf_counter()
    parsed = submission_parse(
        data,
        filename="sub.jsonl",
        languages=codes,
        image_keys=keys,
        limits=Limits(max_bytes=10**9, max_unzipped_bytes=10**9),
    )
    t_validation = time.perf_counter() - start
    assert len(parsed.captions) == args.languages

    ids = list(range(len(keys)))
    index = {key: i for i, key in enumerate(keys)}
    public = public_images(ids, seed=args.seed, share=0.5)
    splits = {
        "all": ids,
        "public": [i for i in ids if i in public],
        "private": [i for i in ids if i not in public],
    }
    groups = dict(METRIC_GROUPS)
    if args.meteor:
        groups["METEOR"] = ["METEOR"]
    t_metric = dict.fromkeys(groups, 0.0)
    t_intervals = 0.0
    replicates: dict[tuple[int, str, str, str], object] = {}
    corpus: dict[tuple[int, str, str], float] = {}
    start = time.perf_counter()
    resamples = {split: split_resamples(split_ids, seed=args.seed) for split, split_ids in splits.items()}
    t_intervals += time.perf_counter() - start
    for e, entry in enumerate(subs):
        for code in codes:
            candidates = {index[k]: v for k, v in entry[code].items()}
            references = {index[k]: v for k, v in refs[code].items()}
            for group, metrics in groups.items():
                for split, split_ids in splits.items():
                    start = time.perf_counter()
                    report = score_texts(
                        {i: candidates[i] for i in split_ids},
                        {i: references[i] for i in split_ids},
                        scheme="whitespace",
                        metrics=metrics,
                        language="en" if group == "METEOR" else None,
                        resamples=resamples[split],
                    )
                    t_metric[group] += time.perf_counter() - start
                    for m in metrics:
                        replicates[(e, code, split, m)] = report.replicates[m]
                        if split == "all":
                            corpus[(e, code, m)] = report.corpus[m]
            if e == 0:  # intervals of the timed submission only
                start = time.perf_counter()
                for m in (m for ms in groups.values() for m in ms):
                    for split in splits:
                        interval(replicates[(e, code, split, m)])
                t_intervals += time.perf_counter() - start
    # Per-metric times of the first (timed) submission: the loop above scored all entries; divide.
    t_metric = {group: seconds / args.entries for group, seconds in t_metric.items()}

    start = time.perf_counter()
    for code in codes:
        for m in (m for ms in groups.values() for m in ms):
            order = sorted(range(args.entries), key=lambda e: -corpus[(e, code, m)])
            for a, b in zip(order, order[1:], strict=False):
                paired_p_value(
                    replicates[(a, code, "all", m)],
                    replicates[(b, code, "all", m)],
                    corpus[(a, code, m)] - corpus[(b, code, m)],
                )
    for e in range(args.entries):
        for m in (m for ms in groups.values() for m in ms):
            sum(corpus[(e, code, m)] for code in codes) / len(codes)
    t_board = time.perf_counter() - start

    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    reference_scorers = {"BLEU-1..4": Bleu(4), "ROUGE-L": Rouge(), "CIDEr-D": Cider()}
    if args.meteor:
        from pycocoevalcap.meteor.meteor import Meteor

        reference_scorers["METEOR"] = Meteor()
    t_ref = dict.fromkeys(reference_scorers, 0.0)
    for code in codes:
        gts = {k: refs[code][k] for k in keys}
        res = {k: [subs[0][code][k]] for k in keys}
        for group, scorer in reference_scorers.items():
            start = time.perf_counter()
            if group == "BLEU-1..4":
                scorer.compute_score(gts, res, verbose=0)
            else:
                scorer.compute_score(gts, res)
            t_ref[group] += time.perf_counter() - start

    print(f"\n{'stage':<34}{'ours (s)':>10}{'pycocoevalcap (s)':>20}")
    print(f"{'1. validation':<34}{t_validation:>10.2f}{'–':>20}")
    for group in groups:
        print(
            f"{'2. scoring: ' + group + ' (all+2 halves)':<34}{t_metric[group]:>10.2f}{t_ref[group]:>20.2f}  (reference: all images only)"
        )
    print(f"{'2. scoring: 95% intervals':<34}{t_intervals:>10.2f}{'–':>20}")
    print(f"{'3. leaderboard update':<34}{t_board:>10.2f}{'–':>20}")
    ours = t_validation + sum(t_metric.values()) + t_intervals + t_board
    print(f"{'total':<34}{ours:>10.2f}{sum(t_ref.values()):>20.2f}")
    same = sum(t_metric.values()) / 2  # the two halves together score as many captions as all images
    print(
        f"\nScoring all images once (half of stage 2's metric time: the halves add as many again): {same:.2f} s vs pycocoevalcap {sum(t_ref.values()):.2f} s "
        f"(ratio {sum(t_ref.values()) / same:.1f}x)."
    )


if __name__ == "__main__":
    main()
