"""The XM3600 image selection (seed 000, sec. 2.2) as a pure, seeded function (no Django).

Languages are served from the smallest candidate pool (images taken in the language's area) to the
largest. Each takes its target number of images not taken yet, level by level:

1. ``region``: the language's area: subnational regions listed for it, or whole countries where
   no region is listed;
2. ``country``: any country where it is spoken;
3. ``continent``: any continent of those countries;
4. ``global``: anywhere, images without coordinates included.

Within a level the images are drawn at random with one ``random.Random(seed)`` walked in language
order, so the same pool, areas and seed give the same selection. An image is never given to two
languages. When the pool runs out, the languages served last get fewer images and the result says
how many are missing: nothing raises half-way.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

REGION, COUNTRY, CONTINENT, GLOBAL = "region", "country", "continent", "global"
LEVELS = (REGION, COUNTRY, CONTINENT, GLOBAL)


@dataclass(frozen=True, slots=True)
class Candidate:
    """An image of the pool and where it was taken (None: not known)."""

    image_id: int
    country: str | None = None  # ISO 3166-1 alpha-2
    region: str | None = None  # first-level region (state, province), as the geography names it
    continent: str | None = None


@dataclass(frozen=True)
class Area:
    """Where a language is spoken.

    ``regions``: (country, region) pairs; ``whole_countries``: countries that count as in-region as a
    whole (no region listed for them); ``countries`` and ``continents``: the back-off levels.
    """

    regions: frozenset[tuple[str, str]] = frozenset()
    whole_countries: frozenset[str] = frozenset()
    countries: frozenset[str] = frozenset()
    continents: frozenset[str] = frozenset()

    def level_of(self, c: Candidate) -> str:
        """The best level at which ``c`` can serve this language."""
        if c.country is not None:
            if c.country in self.whole_countries or (c.country, c.region) in self.regions:
                return REGION
            if c.country in self.countries:
                return COUNTRY
        if c.continent is not None and c.continent in self.continents:
            return CONTINENT
        return GLOBAL


@dataclass
class LanguageResult:
    language: str
    target: int
    pool: int  # candidates in the language's area (the ordering key)
    order: int  # 1 = served first
    picks: list[tuple[int, str]] = field(default_factory=list)  # (image id, level), in drawing order

    @property
    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(LEVELS, 0)
        for _, level in self.picks:
            counts[level] += 1
        return counts

    @property
    def shortfall(self) -> int:
        return self.target - len(self.picks)


@dataclass
class Selection:
    seed: int
    results: list[LanguageResult]  # in serving order

    @property
    def shortfall(self) -> int:
        return sum(r.shortfall for r in self.results)

    def by_language(self) -> dict[str, LanguageResult]:
        return {r.language: r for r in self.results}


def select_images(
    candidates: Iterable[Candidate],
    areas: Mapping[str, Area],
    *,
    per_language: int | Mapping[str, int],
    seed: int,
) -> Selection:
    """Select images for every language of ``areas`` (see the module docstring).

    ``per_language``: one target for all, or a target per language. Languages with the same pool
    size are served in code order. Raises ValueError for a negative target or a candidate listed
    twice (a caller's bug, not a user's input).
    """
    pool = list(candidates)
    targets = {lang: per_language if isinstance(per_language, int) else per_language[lang] for lang in areas}
    if any(t < 0 for t in targets.values()):
        raise ValueError("a target number of images is negative")

    by_id: dict[int, Candidate] = {}
    by_country: dict[str, list[int]] = defaultdict(list)
    by_region: dict[tuple[str, str], list[int]] = defaultdict(list)
    by_continent: dict[str, list[int]] = defaultdict(list)
    for c in sorted(pool, key=lambda c: c.image_id):
        if c.image_id in by_id:
            raise ValueError(f"image {c.image_id} is listed twice")
        by_id[c.image_id] = c
        if c.country is not None:
            by_country[c.country].append(c.image_id)
            if c.region is not None:
                by_region[(c.country, c.region)].append(c.image_id)
        if c.continent is not None:
            by_continent[c.continent].append(c.image_id)
    all_ids = list(by_id)

    def in_area(area: Area) -> list[int]:
        ids: set[int] = set()
        for country in area.whole_countries:
            ids.update(by_country.get(country, ()))
        for key in area.regions:
            ids.update(by_region.get(key, ()))
        return sorted(ids)

    def in_countries(area: Area) -> list[int]:
        return sorted({i for country in area.countries for i in by_country.get(country, ())})

    def in_continents(area: Area) -> list[int]:
        return sorted({i for continent in area.continents for i in by_continent.get(continent, ())})

    area_ids = {lang: in_area(area) for lang, area in areas.items()}
    order = sorted(areas, key=lambda lang: (len(area_ids[lang]), lang))
    rng = random.Random(seed)
    taken: set[int] = set()
    results = []
    for position, lang in enumerate(order, start=1):
        area = areas[lang]
        result = LanguageResult(language=lang, target=targets[lang], pool=len(area_ids[lang]), order=position)
        levels = (
            (REGION, lambda a=area, lang=lang: area_ids[lang]),
            (COUNTRY, lambda a=area: in_countries(a)),
            (CONTINENT, lambda a=area: in_continents(a)),
            (GLOBAL, lambda: all_ids),
        )
        for level, ids_of in levels:
            need = result.shortfall
            if need <= 0:
                break
            free = [i for i in ids_of() if i not in taken]
            chosen = free if len(free) <= need else rng.sample(free, need)
            for image_id in chosen:
                taken.add(image_id)
                result.picks.append((image_id, level))
        results.append(result)
    return Selection(seed=seed, results=results)
