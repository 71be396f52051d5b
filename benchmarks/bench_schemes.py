"""How much the tokenisation scheme moves CIDEr-D and BLEU-4 in Chinese, Japanese and Thai, and how fast each is.

    .venv/bin/python benchmarks/bench_schemes.py [--repeat 200]

On the same captions (benchmarks/data/schemes_sample.json: 40 photos per language, 3 references and
one caption from each of two systems, hand-written for this benchmark, small) it scores both systems
with every scheme that applies to the language: ``whitespace``, ``char``, the language's word
segmenter (jieba, mecab, newmm) and ``xm3600-ptb``. A scheme whose module or library is missing is
skipped with a printed note. It prints a Markdown table (CIDEr-D and BLEU-4 per system and scheme,
the signature's tok part) and the tokenising speed of each scheme in tokens per second: every
caption of the sample tokenised ``--repeat`` times, after one warm-up pass (which also loads the
dictionaries; the load time is printed separately).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.metrics.text.schemes import SchemeError, scheme_for_language, tokens_signature  # noqa: E402
from evaluation.metrics.text.scoring import score_texts  # noqa: E402

SAMPLE = ROOT / "benchmarks" / "data" / "schemes_sample.json"
SCHEMES = {
    "zh": ("whitespace", "char", "jieba", "xm3600-ptb"),
    "ja": ("whitespace", "char", "mecab", "xm3600-ptb"),
    "th": ("whitespace", "char", "newmm", "xm3600-ptb"),
}
SYSTEMS = ("sys-a", "sys-b")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--repeat", type=int, default=200, help="Tokenising passes over the sample for the speed."
    )
    args = parser.parse_args()
    sample = json.loads(SAMPLE.read_text(encoding="utf-8"))

    rows, speeds, notes = [], [], []
    for language, names in SCHEMES.items():
        items = sample[language]
        references = {i: item["refs"] for i, item in enumerate(items)}
        texts = [text for item in items for text in (*item["refs"], *(item[s] for s in SYSTEMS))]
        for name in names:
            try:
                started = time.perf_counter()
                chosen = scheme_for_language(language, name)
                for text in texts:  # warm-up: loads the dictionary
                    chosen.tokenize(text, language=language)
                loaded = time.perf_counter() - started
            except SchemeError as exc:
                notes.append(f"{language} {name}: skipped ({exc})")
                continue
            scores = {}
            for system in SYSTEMS:
                candidates = {i: item[system] for i, item in enumerate(items)}
                report = score_texts(
                    candidates, references, language=language, scheme=chosen, metrics=("BLEU-4", "CIDEr-D")
                )
                scores[system] = report.corpus
            tok = tokens_signature(chosen, language=language).split("|")[0]
            rows.append((language, name, scores, tok))
            n_tokens = 0
            started = time.perf_counter()
            for _ in range(args.repeat):
                for text in texts:
                    n_tokens += len(chosen.tokenize(text, language=language))
            seconds = time.perf_counter() - started
            speeds.append((language, name, n_tokens / seconds, n_tokens / args.repeat / len(texts), loaded))

    print(
        f"Sample: {SAMPLE.relative_to(ROOT)} (hand-written, 40 photos per language, 3 references, 2 systems)\n"
    )
    print("| language | scheme | CIDEr-D sys-a | CIDEr-D sys-b | BLEU-4 sys-a | BLEU-4 sys-b | tok |")
    print("|---|---|---:|---:|---:|---:|---|")
    for language, name, scores, tok in rows:
        a, b = scores["sys-a"], scores["sys-b"]
        print(
            f"| {language} | {name} | {a['CIDEr-D']:.3f} | {b['CIDEr-D']:.3f} | {a['BLEU-4']:.3f} | "
            f"{b['BLEU-4']:.3f} | `{tok}` |"
        )
    print(
        "\n| language | scheme | tokens/s | captions/s | tokens per caption | first use (load + one pass), s |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for language, name, rate, per_caption, loaded in speeds:
        print(
            f"| {language} | {name} | {rate:,.0f} | {rate / per_caption:,.0f} | {per_caption:.1f} | {loaded:.2f} |"
        )
    for note in notes:
        print(f"\nnote: {note}")


if __name__ == "__main__":
    main()
