"""The demo's benchmark, so the evaluation server has a filled leaderboard at first login.

On top of ``load_demo`` and ``load_demo_results`` (the 17 photographs, German, Arabic and Japanese, the
hand-written demo references and the simulated systems' captions): the benchmark “Demo benchmark
(simulated)” with a validation phase (5 photos) and a test phase (12 photos, public/private split),
both open; three simulated teams whose entries are the captions of sim-a, sim-b and sim-d, uploaded
through the submission service as a team would; sim-c as the hosts' baseline; the human row of the test
phase; and the team account ``team-demo`` (password ``DEMO_PASSWORD``) in “Demo team”, which can
submit. Idempotent: an existing demo benchmark is left as it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model

from annotation.models import Image, Language, SystemCaption
from annotation.services.demo import DEMO_PASSWORD
from challenges.models import Benchmark, BenchmarkLanguage, Phase, PhaseKind, Team, Visibility
from challenges.services import human_row_create, submission_create
from core.errors import ValidationFailed
from evaluation.demo.captions import CAPTIONS
from evaluation.demo.services import reference_set_name
from evaluation.models import ImageSet, ReferenceSet

DEMO_BENCHMARK = "Demo benchmark (simulated)"
DEMO_SLUG = "demo"
DEMO_TEAM = "Demo team"
DEMO_TEAM_USER = "team-demo"
VALIDATION_PHOTOS = 5
SIMULATED_TEAMS = (
    ("sim-a", "Simulated team A"),
    ("sim-b", "Simulated team B"),
    ("sim-d", "Simulated team D"),
)
BASELINE = "sim-c"
METRICS = ["BLEU-1", "BLEU-4", "ROUGE-L", "CIDEr-D"]


@dataclass
class DemoBenchmarkSummary:
    created: bool = False
    benchmark_slug: str = DEMO_SLUG
    submissions: list[int] = field(default_factory=list)


def _results_file(system: str, image_ids: list[int]) -> bytes:
    rows = SystemCaption.objects.filter(system__name=system, image_id__in=image_ids).values_list(
        "image__key", "language__code", "text"
    )
    return "\n".join(
        json.dumps({"image_id": key, "language": code, "caption": text}, ensure_ascii=False)
        for key, code, text in sorted(rows)
    ).encode("utf-8")


def _participant(username: str, *, password: str | None):
    user, _ = get_user_model().objects.get_or_create(username=username)
    if password:
        user.set_password(password)
    else:
        user.set_unusable_password()
    user.save()
    return user


def demo_benchmark_load() -> DemoBenchmarkSummary:
    """Load the demo benchmark (see the module docstring). Runs in the caller's transaction; the entries
    are scored when it commits. Raises ValidationFailed, storing nothing, when ``load_demo`` or
    ``load_demo_results`` has not run."""
    summary = DemoBenchmarkSummary()
    if Benchmark.objects.filter(slug=DEMO_SLUG).exists():
        return summary
    keys = sorted({key for photos in CAPTIONS.values() for key in photos})
    images = dict(Image.objects.filter(key__in=keys).exclude(file="").values_list("key", "pk"))
    languages = {lang.code: lang for lang in Language.objects.filter(code__in=CAPTIONS)}
    reference_sets = {
        code: ReferenceSet.objects.filter(name=reference_set_name(lang)).first()
        for code, lang in languages.items()
    }
    captions = SystemCaption.objects.filter(
        system__name__in=[s for s, _ in SIMULATED_TEAMS] + [BASELINE]
    ).count()
    if (
        len(images) < len(keys)
        or len(languages) < len(CAPTIONS)
        or not all(reference_sets.values())
        or not captions
    ):
        raise ValidationFailed(
            "The demo's photographs, references or simulated systems are missing: run `manage.py load_demo` and "
            "`manage.py load_demo_results` first. Nothing was stored."
        )
    summary.created = True
    benchmark = Benchmark.objects.create(
        name=DEMO_BENCHMARK,
        slug=DEMO_SLUG,
        description=(
            "A small benchmark on the demo's 17 photographs in German, Arabic and Japanese. Caption every image "
            "of a phase in the languages you submit. The validation phase's references can be downloaded and "
            "its scores come per image; the test phase's references stay on the server. The other teams' "
            "entries are simulated systems."
        ),
    )
    for code, language in sorted(languages.items()):
        BenchmarkLanguage.objects.create(
            benchmark=benchmark, language=language, reference_set=reference_sets[code]
        )
    ordered = [images[key] for key in keys]
    split = {PhaseKind.VALIDATION: ordered[:VALIDATION_PHOTOS], PhaseKind.TEST: ordered[VALIDATION_PHOTOS:]}
    phases = {}
    for kind, ids in split.items():
        image_set, _ = ImageSet.objects.get_or_create(name=f"{DEMO_BENCHMARK}: {kind}")
        image_set.images.set(ids)
        phases[kind] = Phase.objects.create(
            benchmark=benchmark,
            name=str(kind),
            kind=kind,
            image_set=image_set,
            is_open=True,
            metrics=METRICS,
            ranking_metric="CIDEr-D",
            reference_counts=[0, 1],
            split_seed=2026,
            visibility=Visibility.PARTICIPANTS,
            max_per_day=10,
            max_total=50,
            max_concurrent=2,
        )
    for system, team_name in SIMULATED_TEAMS:
        team, _ = Team.objects.get_or_create(name=team_name)
        team.benchmarks.add(benchmark)
        member = _participant(f"{system}-team", password=None)
        team.members.add(member)
        for kind, phase in phases.items():
            submission = submission_create(
                phase_id=phase.pk,
                user=member,
                team_id=team.pk,
                data=_results_file(system, split[kind]),
                filename=f"{system}.jsonl",
                method_name=f"{system} (simulated)",
                description="Captions of a simulated system of the demo.",
            )
            summary.submissions.append(submission.pk)
    for kind, phase in phases.items():
        baseline = submission_create(
            phase_id=phase.pk,
            user=None,
            team_id=None,
            data=_results_file(BASELINE, split[kind]),
            filename=f"{BASELINE}.jsonl",
            method_name=f"{BASELINE} (simulated)",
            description="The hosts' baseline: captions of a simulated system of the demo.",
            baseline=True,
        )
        summary.submissions.append(baseline.pk)
    summary.submissions.append(human_row_create(phase_id=phases[PhaseKind.TEST].pk).pk)
    team, _ = Team.objects.get_or_create(name=DEMO_TEAM)
    team.benchmarks.add(benchmark)
    team.members.add(_participant(DEMO_TEAM_USER, password=DEMO_PASSWORD))
    return summary
