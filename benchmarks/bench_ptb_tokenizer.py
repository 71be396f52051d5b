"""Benchmark the pure-Python PTB tokenizer against the Java one as pycocoevalcap runs it.

    .venv/bin/python benchmarks/bench_ptb_tokenizer.py [--captions 20000] [--repeat 3]

On the same generated raw captions (tests/evaluation/ptb_captions.py) it prints captions per second
of ``ptb.tokenize_many`` and of pycocoevalcap 1.2's ``PTBTokenizer().tokenize`` (one JVM per call,
start-up included), the Java rate without start-up (from two sizes: the extra captions over the extra
time), and how many captions got identical tokens. Two caption sets: "caption-like" (COCO-style
captions, 70% plain, the rest with one or two clitics, numbers, quotes, abbreviations ...) and
"adversarial" (the test set: every kind of oddity, mostly mutated). Both sides run ``--repeat`` times
on the same captions (ours with an empty cache each time, Java with a new JVM each time, as
pycocoevalcap does) and each side's best run is printed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.metrics.text import ptb  # noqa: E402
from tests.evaluation import ptb_captions  # noqa: E402
from tests.evaluation.java_ptb import java_missing_reason, pycocoevalcap_tokens  # noqa: E402


def caption_like(n: int, seed: int = 0) -> list[str]:
    candidates, references = ptb_captions.images(n // 6 + 1, references=5, seed=seed, plain=0.7)
    texts = [text for key in candidates for text in (candidates[key], *references[key])]
    return texts[:n]


def ours(texts: list[str], repeat: int) -> tuple[list[list[str]], float]:
    best = float("inf")
    for _ in range(repeat):
        ptb.clear_cache()
        start = time.perf_counter()
        tokens = ptb.tokenize_many(texts)
        best = min(best, time.perf_counter() - start)
    return tokens, best


def java(texts: list[str], repeat: int) -> tuple[list[list[str]], float]:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        tokens = pycocoevalcap_tokens(texts)
        best = min(best, time.perf_counter() - start)
    return tokens, best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--captions", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per side, best printed (default 3)")
    args = parser.parse_args()
    missing = java_missing_reason()
    print(f"ptb {ptb.VERSION}; reference: pycocoevalcap 1.2 PTBTokenizer (CoreNLP 3.4.1 jar)")
    if missing:
        print(f"reference skipped: {missing}")
    header = f"{'set':<12} {'captions':>8} {'ours/s':>10} {'java/s':>9} {'java/s w/o JVM start':>21} {'ratio':>6} {'identical':>16}"
    print(header)
    for name, make in (("caption-like", caption_like), ("adversarial", ptb_captions.captions)):
        texts = make(args.captions, 0)
        our_tokens, our_time = ours(texts, args.repeat)
        row = f"{name:<12} {len(texts):>8} {len(texts) / our_time:>10,.0f}"
        if missing:
            print(row)
            continue
        java_tokens, java_time = java(texts, args.repeat)
        small = texts[: len(texts) // 10]
        _, small_time = java(small, args.repeat)
        marginal = (len(texts) - len(small)) / max(java_time - small_time, 1e-9)
        same = sum(a == b for a, b in zip(our_tokens, java_tokens))
        print(
            f"{row} {len(texts) / java_time:>9,.0f} {marginal:>21,.0f} {java_time / our_time:>5.1f}x"
            f" {same:>7}/{len(texts)}"
        )


if __name__ == "__main__":
    main()
