"""Create a benchmark from XM3600-format files (``manage.py create_benchmark``).

The XM3600 captions file is one JSON object per line, ``{"image/key": ..., "<lang>": {"caption": [...]}}``;
its references are imported per language by the platform's reference importer (one imported reference
set per language), the images must be stored already (``manage.py import_images``). The images are
split, by a seeded permutation, into a validation phase and a test phase; both start closed (the host
opens them in the admin).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.utils.text import slugify

from annotation.models import Image
from annotation.services.languages import language_ensure
from challenges.models import (
    Benchmark,
    BenchmarkLanguage,
    Phase,
    PhaseKind,
    default_metrics,
    phase_settings_problems,
)
from core.errors import ValidationFailed
from core.json_lines import json_lines
from evaluation.metrics.references import references_import
from evaluation.models import ImageSet

NOT_LANGUAGES = {"image/key", "image/locale"}


@dataclass
class BenchmarkCreated:
    benchmark: Benchmark | None
    languages: list[str] = field(default_factory=list)
    validation_images: int = 0
    test_images: int = 0
    references: int = 0
    dry_run: bool = False
    public_dataset: str = ""

    def summary(self) -> str:
        verb = "Would create" if self.dry_run else "Created"
        head = (
            f"{verb} benchmark with {len(self.languages)} language(s) ({', '.join(self.languages)}), "
            f"{self.validation_images} validation and {self.test_images} test images, {self.references} references."
        )
        if self.public_dataset:
            head += (
                f"\nIts references come from a public dataset ({self.public_dataset}): anyone may have trained on "
                "them, so its test phase hides nothing from a team that has the dataset. For a ranking no one "
                "could have trained for, add fresh references written on this platform (manage.py "
                "fresh_references; docs/evaluation-server.md, “A test phase nobody could have trained on”)."
            )
        else:
            head += (
                "\nIf the file is a public dataset (XM3600 is), say so with --public-dataset NAME: teams and hosts "
                "then see that its references may have been trained on."
            )
        if self.dry_run or self.benchmark is None:
            return head
        from django.urls import reverse

        slug, pk = self.benchmark.slug, self.benchmark.pk
        return "\n".join(
            [
                head,
                f"Its page (on this server's address): {reverse('challenges:benchmark', args=[slug])}",
                "Next steps:",
                "  1. Check the phases (both closed) and open them: "
                f"{reverse('admin:challenges_phase_changelist')}?benchmark__id__exact={pk} "
                "(action “Open for submissions”).",
                f"  2. Make a team and tick this benchmark: {reverse('admin:challenges_team_add')}",
                "  3. Send the team an invitation link: action “Create a one-use invitation link” on "
                f"{reverse('admin:challenges_team_changelist')}; its members invite the rest themselves.",
                f"  4. Add a baseline if you have one: {reverse('admin:challenges_submission_add')}",
            ]
        )


def _scan(path: Path) -> tuple[list[str], list[str]]:
    """The image keys and language codes of an XM3600 captions file; a malformed line names its number."""
    keys, languages = [], set()

    def invalid(number: int, exc: json.JSONDecodeError) -> ValidationFailed:
        return ValidationFailed(
            f"{path.name} line {number}: not valid JSON ({exc.msg}). Nothing was created."
        )

    with path.open(encoding="utf-8") as fh:
        for number, obj in json_lines(fh, invalid):
            if not isinstance(obj, dict) or not isinstance(obj.get("image/key"), str | int):
                raise ValidationFailed(f"{path.name} line {number}: no “image/key”. Nothing was created.")
            keys.append(str(obj["image/key"]))
            languages.update(k for k, v in obj.items() if k not in NOT_LANGUAGES and isinstance(v, dict))
    if not keys:
        raise ValidationFailed(f"{path.name}: no images. Nothing was created.")
    return keys, sorted(languages)


def benchmark_create(
    *,
    path: Path | str,
    name: str,
    languages: list[str] | None = None,
    validation_images: int = 100,
    seed: int = 0,
    reference_counts: list[int] | None = None,
    metrics: list[str] | None = None,
    ranking_metric: str = "CIDEr-D",
    dry_run: bool = False,
    accept_language_problems: str = "",
    public_dataset: str = "",
) -> BenchmarkCreated:
    """Create the benchmark ``name`` from an XM3600 captions file, all or nothing.

    ``languages``: the codes to include (default: every language of the file; each is created from
    CLDR if new). ``validation_images`` of the file's images (a seeded draw) form the validation phase,
    the rest the test phase, with the same seed for the test phase's public/private split.
    ``accept_language_problems``: why references that fail the language check belong here (they are
    refused otherwise, as by the reference importer). ``public_dataset``: the public dataset the file is
    (e.g. "XM3600, CC-BY 4.0"), recorded on every reference set and shown on the benchmark's pages.
    ``reference_counts``: e.g. [0, 5] for all references and c5; ``metrics`` (default: the phases' default
    set) and ``ranking_metric``, checked as every phase's are. Refuses an existing name, unknown image
    keys (import the images first), an empty split or metrics no scorer computes. Raises ValidationFailed."""
    metrics = list(metrics) if metrics else default_metrics()
    reference_counts = reference_counts or [0]
    problems = phase_settings_problems(metrics, ranking_metric, reference_counts)
    if problems:
        raise ValidationFailed(" ".join(str(p) for p in problems.values()) + " Nothing was created.")
    path = Path(path)
    if not path.is_file():
        raise ValidationFailed(f"{path}: no such file.")
    name = (name or "").strip()
    if not name:
        raise ValidationFailed("A benchmark needs a name.")
    slug = slugify(name)[:100]
    if Benchmark.objects.filter(name=name).exists() or Benchmark.objects.filter(slug=slug).exists():
        raise ValidationFailed(f"A benchmark “{name}” exists already. Nothing was created.")
    keys, found = _scan(path)
    codes = languages or found
    missing = [code for code in codes if code not in found]
    if missing:
        raise ValidationFailed(f"{path.name} has no captions in {', '.join(missing)}. Nothing was created.")
    stored = dict(Image.objects.filter(key__in=keys).values_list("key", "pk"))
    unknown = [key for key in keys if key not in stored]
    if unknown:
        raise ValidationFailed(
            f"{len(unknown)} image key(s) of {path.name} are not stored (e.g. {', '.join(unknown[:5])}); "
            "import the images first. Nothing was created."
        )
    order = sorted(keys)
    random.Random(seed).shuffle(order)
    if not 0 < validation_images < len(order):
        raise ValidationFailed(
            f"Choose between 1 and {len(order) - 1} validation images. Nothing was created."
        )
    val_keys, test_keys = order[:validation_images], order[validation_images:]
    report = BenchmarkCreated(
        benchmark=None,
        languages=list(codes),
        validation_images=len(val_keys),
        test_images=len(test_keys),
        dry_run=dry_run,
        public_dataset=public_dataset.strip(),
    )
    with transaction.atomic():
        benchmark = Benchmark.objects.create(
            name=name, slug=slug, description=f"Captions in {', '.join(codes)}."
        )
        for code in codes:
            language = language_ensure(code=code)
            imported = references_import(
                path=path,
                name=f"{name} · {code}",
                language_code=code,
                language_check_reason=accept_language_problems,
                public_dataset=public_dataset.strip(),
            )
            report.references += imported.created + imported.updated + imported.unchanged
            reference_set = language.reference_sets.get(name=f"{name} · {code}")
            BenchmarkLanguage.objects.create(
                benchmark=benchmark, language=language, reference_set=reference_set
            )
        for kind, phase_keys in ((PhaseKind.VALIDATION, val_keys), (PhaseKind.TEST, test_keys)):
            image_set = ImageSet.objects.create(name=f"{name} · {kind}", seed=seed)
            image_set.images.set([stored[key] for key in phase_keys])
            Phase.objects.create(
                benchmark=benchmark,
                name=str(kind),
                kind=kind,
                image_set=image_set,
                split_seed=seed,
                reference_counts=reference_counts,
                metrics=metrics,
                ranking_metric=ranking_metric,
            )
        report.benchmark = benchmark
        if dry_run:
            transaction.set_rollback(True)
    return report
