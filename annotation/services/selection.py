"""Geographically diverse image selection per language (seed 000, sec. 2.2): feed, run, store.

The pure algorithm (``annotation.selection.algorithm``) gets the pool's places and each language's
area; this module builds both from the database (CLDR countries via Babel plus the managers'
``LanguageArea`` overrides), runs it and stores the result as an ``ImageSelection`` with one image
set per language (``SelectedLanguage``), each image with the level it came from.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction

from annotation.importers.report import plural
from annotation.models import (
    Image,
    ImageSelection,
    Language,
    LanguageArea,
    SelectedImage,
    SelectedLanguage,
)
from annotation.selection import geography
from annotation.selection.algorithm import LEVELS, Area, Candidate, Selection, select_images
from core.errors import Conflict, ValidationFailed
from core.lookups import each_named

MAX_PER_LANGUAGE = 100_000
SEED_MAX = 2**63 - 1
CHUNK = 1000

POOL_HELP = (
    "Space-separated terms, all of which an image must meet: key:PREFIX (keys starting with it), "
    "country:CC[,CC] and continent:NAME (derived places), not-in:SELECTION (images not in that earlier "
    "selection; its name written without spaces), files:any (also images without a stored file; by default only images with one, as "
    "caption campaigns need). Empty: every image with a file."
)
_TERM = re.compile(r"^(key|country|continent|not-in|files):(.+)$")


# --- Inputs -----------------------------------------------------------------------------------


def languages_resolve(codes: list[str]) -> list[Language]:
    """The languages of ``codes`` (in order, each once); ValidationFailed naming every unknown code."""
    return each_named(
        Language.objects.all(),
        "code",
        codes,
        empty="Give at least one language code.",
        unknown=lambda missing: (
            f"{plural(len(missing), 'unknown language code')}: {', '.join(missing)} "
            "(add the language first; codes are as in the Languages list, e.g. 'de', 'te')."
        ),
    )


def language_area_validate(*, country_code: str, region: str = "", excluded: bool = False) -> tuple[str, str]:
    """Normalise and check an override; return (country code, region) or raise ValidationFailed."""
    code = (country_code or "").strip().upper()
    if not re.fullmatch(r"[A-Z]{2}", code) or not geography.country_name(code):
        raise ValidationFailed(
            f"“{country_code}” is not an ISO 3166-1 alpha-2 country code the geography knows."
        )
    region = (region or "").strip()
    if excluded and region:
        raise ValidationFailed("An exclusion is for a whole country: leave the region empty.")
    if region:
        known = geography.regions_of(code)
        if region not in known:
            close = sorted(r for r in known if r.lower().startswith(region[:3].lower()))[:5]
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise ValidationFailed(
                f"“{region}” is not a first-level region of {code} as GeoNames names it.{hint}"
            )
    return code, region


def language_areas(languages: list[Language], *, min_share: float) -> dict[str, Area]:
    """Each language's area: CLDR countries (official, at least ``min_share`` percent) and overrides."""
    overrides: dict[int, list[LanguageArea]] = {lang.pk: [] for lang in languages}
    for area in LanguageArea.objects.filter(language__in=languages):
        overrides[area.language_id].append(area)
    return {
        lang.code: geography.language_area(
            lang.code,
            min_share=min_share,
            regions=[(o.country_code, o.region) for o in overrides[lang.pk] if o.region and not o.excluded],
            whole_countries=[o.country_code for o in overrides[lang.pk] if not o.region and not o.excluded],
            excluded=[o.country_code for o in overrides[lang.pk] if o.excluded],
        )
        for lang in languages
    }


def pool_queryset(query: str):
    """The images a pool query names (see POOL_HELP); ValidationFailed for a term it does not know."""
    images = Image.objects.all()
    any_file = False
    for term in (query or "").split():
        match = _TERM.match(term)
        if not match:
            raise ValidationFailed(f"pool: “{term}” is not a term this query knows. {POOL_HELP}")
        name, value = match.groups()
        if name == "key":
            images = images.filter(key__startswith=value.rstrip("*"))
        elif name == "country":
            images = images.filter(country_code__in=[c.upper() for c in value.split(",") if c])
        elif name == "continent":
            countries = geography.countries_of_continent(value)
            if not countries:
                known = geography.continent_names()
                raise ValidationFailed(f"pool: no continent “{value}” (known: {', '.join(known)}).")
            images = images.filter(country_code__in=countries)
        elif name == "not-in":
            earlier = ImageSelection.objects.filter(name=value).first()
            if earlier is None:
                raise ValidationFailed(f"pool: there is no selection named “{value}”.")
            images = images.exclude(selections__selection=earlier)
        elif value != "any":
            raise ValidationFailed("pool: files: takes only “any”.")
        else:
            any_file = True
    if not any_file:
        images = images.exclude(file="")
    return images


def pool_candidates(query: str) -> list[Candidate]:
    """The pool's images as the algorithm sees them. Images with coordinates but no derived place
    (stored before places were derived) are located now, without being written."""
    rows = list(pool_queryset(query).values_list("pk", "latitude", "longitude", "country_code", "region"))
    to_locate = [
        i
        for i, (_, lat, lon, code, _) in enumerate(rows)
        if not code and lat is not None and lon is not None and not geography.coordinates_check(lat, lon)
    ]
    located = dict(zip(to_locate, geography.locate([(rows[i][1], rows[i][2]) for i in to_locate])))
    candidates = []
    for i, (pk, _, _, code, region) in enumerate(rows):
        if i in located:
            code, region = located[i].country_code, located[i].region
        candidates.append(
            Candidate(
                image_id=pk,
                country=code or None,
                region=(region or None) if code else None,
                continent=(geography.continent_of(code) or None) if code else None,
            )
        )
    return candidates


# --- The run ----------------------------------------------------------------------------------


# The inputs of a selection, which reproduce it.
SELECTION_INPUTS = ("name", "seed", "per_language", "pool_query", "pool_size", "min_share")


@dataclass
class SelectionReport:
    name: str
    seed: int
    per_language: int
    pool_query: str
    pool_size: int
    min_share: float
    dry_run: bool
    rows: list[dict] = field(default_factory=list)  # per language, in serving order
    warnings: list[str] = field(default_factory=list)
    selection_id: int | None = None

    @property
    def shortfall(self) -> int:
        return sum(r["shortfall"] for r in self.rows)

    def inputs(self) -> dict:
        """What the selection was made from: kept with it (ImageSelection's columns of these names)."""
        return {name: getattr(self, name) for name in SELECTION_INPUTS}

    def as_dict(self) -> dict:
        return {
            **self.inputs(),
            "dry_run": self.dry_run,
            "selection_id": self.selection_id,
            "languages": self.rows,
            "shortfall": self.shortfall,
            "warnings": self.warnings,
        }

    def lines(self) -> list[str]:
        head = (
            f"{'Dry run: would select' if self.dry_run else 'Selected'} “{self.name}”: "
            f"{len(self.rows)} languages × {self.per_language} from a pool of {self.pool_size:,} images, seed {self.seed}."
        )
        table = [
            f"{'order':>5}  {'lang':<8}{'pool':>8}"
            + "".join(f"{lv:>11}" for lv in LEVELS)
            + f"{'missing':>9}"
        ]
        for r in self.rows:
            table.append(
                f"{r['order']:>5}  {r['language']:<8}{r['pool']:>8}"
                + "".join(f"{r[lv]:>11}" for lv in LEVELS)
                + f"{r['shortfall']:>9}"
            )
        tail = []
        if self.shortfall:
            short = [f"{r['language']} {r['shortfall']}" for r in self.rows if r["shortfall"]]
            tail.append(
                f"Shortfall: {plural(self.shortfall, 'image')} missing ({', '.join(short)}): the pool has too few "
                "images for every language; the sets are kept as far as they go."
            )
        return [head, *table, *tail, *(f"Warning: {w}" for w in self.warnings)]


def _rows(result: Selection) -> list[dict]:
    rows = []
    for r in result.results:
        counts = r.counts
        rows.append(
            {
                "language": r.language,
                "order": r.order,
                "pool": r.pool,
                "target": r.target,
                **counts,
                "selected": len(r.picks),
                "shortfall": r.shortfall,
            }
        )
    return rows


def image_selection_run(
    *,
    name: str,
    language_codes: list[str],
    per_language: int,
    pool_query: str = "",
    seed: int | None = None,
    min_share: float = geography.MIN_SHARE,
    dry_run: bool = False,
) -> SelectionReport:
    """Select images for the languages and store the selection (unless ``dry_run``); return the report.

    Validates everything first (name free, languages known, target and seed in range, pool query,
    pool not empty); raises ValidationFailed naming what is wrong, and nothing is stored. A pool
    too small for every language is not an error: the sets go as far as the pool does and the
    report gives the shortfall per language. Writes the selection, its sets and images in one
    transaction; Conflict when the same name is being stored concurrently. Not idempotent by
    design: a second run needs another name (the first stays reproducible from its stored seed).
    """
    name = (name or "").strip()
    if not name:
        raise ValidationFailed("Give the selection a name.")
    if len(name) > ImageSelection._meta.get_field("name").max_length:
        raise ValidationFailed("The name is too long (at most 200 characters).")
    if ImageSelection.objects.filter(name=name).exists():
        raise ValidationFailed(f"A selection named “{name}” exists already: choose another name.")
    if (
        not isinstance(per_language, int)
        or isinstance(per_language, bool)
        or not 1 <= per_language <= MAX_PER_LANGUAGE
    ):
        raise ValidationFailed(f"Images per language: a whole number from 1 to {MAX_PER_LANGUAGE:,}.")
    if not 0 <= min_share <= 100:
        raise ValidationFailed("The minimum population share is a percentage from 0 to 100.")
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    if not 0 <= seed <= SEED_MAX:
        raise ValidationFailed(f"The seed is a whole number from 0 to {SEED_MAX}.")
    languages = languages_resolve(language_codes)
    candidates = pool_candidates(pool_query)
    if not candidates:
        raise ValidationFailed(
            f"The pool is empty: no image matches “{pool_query or '(every image with a file)'}”."
        )

    areas = language_areas(languages, min_share=min_share)
    result = select_images(candidates, areas, per_language=per_language, seed=seed)
    report = SelectionReport(
        name=name,
        seed=seed,
        per_language=per_language,
        pool_query=pool_query,
        pool_size=len(candidates),
        min_share=min_share,
        dry_run=dry_run,
        rows=_rows(result),
    )
    for code, area in areas.items():
        if not area.countries:
            report.warnings.append(
                f"{code}: no country known (CLDR lists none at {min_share:g}% or more and there is no override): "
                "its images can only come from anywhere."
            )
    unplaced = sum(1 for c in candidates if c.country is None)
    if unplaced:
        report.warnings.append(
            f"{plural(unplaced, 'image')} of the pool without coordinates: usable at the global level only."
        )
    if dry_run:
        return report
    try:
        with transaction.atomic():
            report.selection_id = _store(report, result, languages).pk
    except IntegrityError:
        raise Conflict(
            f"A selection named “{name}” was being stored at the same time: choose another name."
        ) from None
    return report


def _store(report: SelectionReport, result: Selection, languages: list[Language]) -> ImageSelection:
    selection = ImageSelection.objects.create(**report.inputs(), geography=geography.SOURCES)
    by_code = {lang.code: lang for lang in languages}
    images = []
    for r in result.results:
        counts = r.counts
        language_set = SelectedLanguage.objects.create(
            selection=selection,
            language=by_code[r.language],
            order=r.order,
            pool=r.pool,
            target=r.target,
            n_region=counts["region"],
            n_country=counts["country"],
            n_continent=counts["continent"],
            n_global=counts["global"],
        )
        images += [
            SelectedImage(
                selection=selection, language_set=language_set, image_id=image_id, level=level, rank=rank
            )
            for rank, (image_id, level) in enumerate(r.picks, start=1)
        ]
    SelectedImage.objects.bulk_create(images, batch_size=CHUNK)
    return selection
