"""How fast the XM3600 image selection runs at XM3600's size: 36 languages × 100 images from a pool of
100,000 synthetic geotagged images.

    .venv/bin/python benchmarks/bench_select_images.py [--pool 100000] [--per-language 100] [--seed 0]

The pool: random GeoNames towns (the geocoder's own data, so the distribution leans towards Europe and
North America as photo collections do), each point moved up to 0.05° away, and 2% of the images without
coordinates. The languages are XM3600's 36 with their CLDR countries, plus the overrides a manager would
add (Telugu in Telangana and Andhra Pradesh, Bengali in West Bengal, Hindi in the Hindi-belt states,
Cusco Quechua and Maori in their countries). It prints the time to place the pool (reverse
geocoding, done once at import in the platform), the time of ``select_images`` against a reference in the
same run (a plain implementation that classifies every free image of the pool for every language), that
both give the same sets, and the per-language level table.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from annotation.selection import geography  # noqa: E402
from annotation.selection.algorithm import GLOBAL, LEVELS, Candidate, select_images  # noqa: E402

XM3600 = [
    "ar",
    "bn",
    "cs",
    "da",
    "de",
    "el",
    "en",
    "es",
    "fa",
    "fi",
    "fil",
    "fr",
    "he",
    "hi",
    "hr",
    "hu",
    "id",
    "it",
    "ja",
    "ko",
    "mi",
    "nl",
    "no",
    "pl",
    "pt",
    "quz",
    "ro",
    "ru",
    "sv",
    "sw",
    "te",
    "th",
    "tr",
    "uk",
    "vi",
    "zh",
]
HINDI_BELT = (
    "Uttar Pradesh",
    "Bihar",
    "Madhya Pradesh",
    "Rajasthan",
    "Haryana",
    "Delhi",
    "Jharkhand",
    "Chhattisgarh",
)
OVERRIDES = {
    "te": {"regions": [("IN", "Telangana"), ("IN", "Andhra Pradesh")]},
    "bn": {"regions": [("IN", "West Bengal")]},
    "hi": {"regions": [("IN", state) for state in HINDI_BELT]},
    "quz": {"whole_countries": ["PE"]},
    "mi": {"whole_countries": ["NZ"]},
}


def synthetic_pool(n: int, seed: int) -> tuple[list[Candidate], float]:
    rng = random.Random(seed)
    towns = geography._geocoder()._locations
    points, unplaced = [], 0
    for _ in range(n):
        if rng.random() < 0.02:
            unplaced += 1
            continue
        town = towns[rng.randrange(len(towns))]
        lat = max(-90.0, min(90.0, town["latitude"] + rng.uniform(-0.05, 0.05)))
        lon = max(-180.0, min(180.0, town["longitude"] + rng.uniform(-0.05, 0.05)))
        points.append((lat, lon))
    start = time.perf_counter()
    places = geography.locate(points)
    candidates = [
        Candidate(i, p.country_code or None, p.region or None, p.continent or None)
        for i, p in enumerate(places)
    ]
    located = time.perf_counter() - start
    candidates += [Candidate(len(points) + i) for i in range(unplaced)]
    return candidates, located


def reference(candidates, areas, *, per_language: int, seed: int):
    """The plain way: for every language, classify every free image of the pool, then draw level by level."""
    pool_size = {
        lang: sum(1 for c in candidates if area.level_of(c) == "region") for lang, area in areas.items()
    }
    order = sorted(areas, key=lambda lang: (pool_size[lang], lang))
    rng = random.Random(seed)
    taken: set[int] = set()
    out = {}
    for lang in order:
        by_level = defaultdict(list)
        for c in sorted(candidates, key=lambda c: c.image_id):
            if c.image_id not in taken:
                level = areas[lang].level_of(c)
                for lv in LEVELS[LEVELS.index(level) :]:
                    by_level[lv].append(c.image_id)
        picks = []
        for level in LEVELS:
            need = per_language - len(picks)
            if need <= 0:
                break
            chosen = [i for i in by_level[level] if i not in taken]
            chosen = chosen if len(chosen) <= need else rng.sample(chosen, need)
            taken.update(chosen)
            picks += [(i, level) for i in chosen]
        out[lang] = picks
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pool", type=int, default=100_000)
    parser.add_argument("--per-language", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    start = time.perf_counter()
    geography.locate([(0.0, 0.0)])
    geography.continent_of("DE")
    load = time.perf_counter() - start
    candidates, located = synthetic_pool(args.pool, args.seed)
    areas = {lang: geography.language_area(lang, **OVERRIDES.get(lang, {})) for lang in XM3600}

    start = time.perf_counter()
    result = select_images(candidates, areas, per_language=args.per_language, seed=args.seed)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    plain = reference(candidates, areas, per_language=args.per_language, seed=args.seed)
    theirs = time.perf_counter() - start
    same = all(plain[r.language] == r.picks for r in result.results)

    print(f"pool: {len(candidates):,} images, {len(areas)} languages × {args.per_language}, seed {args.seed}")
    print(f"geography data loaded in {load:.2f} s; pool placed (reverse geocoding) in {located:.2f} s")
    print(
        f"select_images: {ours:.3f} s; plain reference: {theirs:.2f} s ({theirs / ours:.1f}x); same sets: {same}"
    )
    print()
    print(f"| {'lang':<5} | {'order':>5} | {'pool':>6} | " + " | ".join(f"{lv:>9}" for lv in LEVELS) + " |")
    print("|" + "---|" * (3 + len(LEVELS)))
    for r in result.results:
        counts = r.counts
        print(
            f"| {r.language:<5} | {r.order:>5} | {r.pool:>6} | "
            + " | ".join(f"{counts[lv]:>9}" for lv in LEVELS)
            + " |"
        )
    full = sum(1 for r in result.results if r.counts["region"] == r.target)
    only_global = sum(1 for r in result.results if r.counts[GLOBAL] == r.target)
    print(
        f"\n{full} of {len(result.results)} languages entirely in-region; {only_global} entirely global; shortfall {result.shortfall}"
    )


if __name__ == "__main__":
    main()
