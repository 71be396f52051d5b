"""Measure the caption checks on real short captions: where the defaults come from.

    .venv/bin/python benchmarks/bench_caption_checks.py

Inputs: the German demo captions (``annotation/services/demo.py``, 34 translations of the two
demo systems), the hand-written short captions of ``benchmarks/data/short_captions.json`` (30
each in German, Arabic and Japanese) and the COCO references of ``../shared/data/coco-fakecap``
(English, up to 5 human captions per image, lowercased, punctuation removed).

It prints, per language:

1. **language identification** (py3langid): for captions in the right language, the share a
   threshold would wrongly refuse (the most probable *other* language at or above it); for
   English COCO captions entered as that language, the share it catches (the script check
   catches every one of them for Arabic and Japanese anyway);
2. **near copies**: the similarity of independent captions of the same image (COCO: different
   people describing one photo; demo: a German translation against its English original), and
   of near copies of the prompt (one or two words of a COCO caption replaced by a synonym or
   an unrelated word, a word dropped);
3. **length**: how many right captions the default minimum would refuse.
"""

from __future__ import annotations

import json
import os
import random
import sys
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

import django  # noqa: E402

django.setup()

from annotation import caption_checks as cc  # noqa: E402
from annotation.services.demo import PHOTOS  # noqa: E402

COCO = (
    ROOT.parent / "shared" / "data" / "coco-fakecap" / "captions_val2014_fakecap_subset_refs_tokenized.json"
)
THRESHOLDS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.99)
PER_CHARACTER = {"ja"}
SWAPS = {
    "beside": "next to",
    "next to": "beside",
    "a": "the",
    "sitting": "sits",
    "standing": "stands",
    "man": "person",
    "woman": "lady",
    "on": "upon",
    "large": "big",
    "small": "little",
    "with": "and",
}


def coco_by_image() -> dict[int, list[str]]:
    data = json.loads(COCO.read_text())
    out: dict[int, list[str]] = {}
    for a in data["annotations"]:
        out.setdefault(a["image_id"], []).append(a["caption"])
    return out


def near_copy(text: str, rng: random.Random) -> str:
    words = text.split()
    edits = rng.choice((1, 2))
    for _ in range(edits):
        i = rng.randrange(len(words))
        kind = rng.random()
        if words[i] in SWAPS:
            words[i] = SWAPS[words[i]]
        elif kind < 0.5 and len(words) > 4:
            del words[i]
        else:
            words[i] = rng.choice(("big", "small", "red", "old", "two", "grey"))
    return " ".join(words)


def share(values, pred) -> str:
    values = list(values)
    return f"{sum(1 for v in values if pred(v))}/{len(values)}"


def main() -> None:
    own = json.loads((ROOT / "benchmarks" / "data" / "short_captions.json").read_text())
    demo_de = [p.good_de for p in PHOTOS if p.good_de] + [p.weak_de for p in PHOTOS if p.weak_de]
    coco = coco_by_image()
    english = [caps[0] for caps in list(coco.values())[:200]]
    samples = {"de": own["de"] + demo_de, "ar": own["ar"], "ja": own["ja"]}

    print("1. Language identification: most probable other language's probability")
    print(f"   thresholds: {THRESHOLDS}")
    for code, texts in samples.items():
        verdicts = [cc.language_verdict(t, code) for t in texts]
        wrong = [v[1] if v else 0.0 for v in verdicts]
        caught = [(cc.language_verdict(t, code) or ("", 0.0))[1] for t in english]
        print(f"   {code}: {len(texts)} right captions, max other-language probability {max(wrong):.3f}")
        print(
            "      wrongly refused: "
            + "  ".join(f"{t}: {share(wrong, lambda p, t=t: p >= t)}" for t in THRESHOLDS)
        )
        print(
            f"      {len(english)} English COCO captions caught: "
            + "  ".join(f"{t}: {share(caught, lambda p, t=t: p >= t)}" for t in THRESHOLDS)
        )
        worst = sorted(zip(wrong, texts, verdicts), reverse=True)[:3]
        for p, t, v in worst:
            print(f"      highest: {p:.3f} {v[0] if v else '-'} {t!r}")
    short_en = [c for caps in coco.values() for c in caps if len(c.split()) <= 8][:200]
    p_short = [(cc.language_verdict(t, "de") or ("", 0.0))[1] for t in short_en]
    print(
        f"   de: {len(short_en)} short English captions (<= 8 words) caught: "
        + "  ".join(f"{t}: {share(p_short, lambda p, t=t: p >= t)}" for t in THRESHOLDS)
    )

    print("\n2. Near copies: similarity (0 … 1) to the prompt caption")
    rng = random.Random(0)
    independent = [cc.similarity(a, b) for caps in coco.values() for a, b in combinations(caps[:5], 2)]
    translations = [cc.similarity(p.good_de, p.good) for p in PHOTOS if p.good_de] + [
        cc.similarity(p.weak_de, p.weak) for p in PHOTOS if p.weak_de
    ]
    copies = [cc.similarity(near_copy(c, rng), c) for c in english]
    for name, values in (
        ("independent English captions of one image (COCO pairs)", independent),
        ("German translation vs its English original (demo)", translations),
        ("near copies (1-2 words swapped/dropped)", copies),
    ):
        values = sorted(values)
        q = lambda f, v=values: v[min(len(v) - 1, int(f * len(v)))]  # noqa: E731
        print(
            f"   {name}: n={len(values)} median {q(0.5):.3f} p95 {q(0.95):.3f} p99 {q(0.99):.3f} "
            f"max {values[-1]:.3f} min {values[0]:.3f}"
        )
        print(
            "      >= threshold: "
            + "  ".join(f"{t}: {share(values, lambda s, t=t: s >= t)}" for t in (0.6, 0.65, 0.7, 0.75, 0.8))
        )

    print("\n3. Length: right captions under the default minimum")
    for code, texts in samples.items():
        per_char = code in PER_CHARACTER
        minimum = cc.default_min_length(code, per_character=per_char)
        lengths = [cc.length(t, per_character=per_char) for t in texts]
        unit = "characters" if per_char else "words"
        print(
            f"   {code}: minimum {minimum} {unit}; shortest {min(lengths)}, "
            f"refused {share(lengths, lambda n, m=minimum: n < m)}"
        )


if __name__ == "__main__":
    main()
