"""A small benchmark: German and English, a validation phase (6 images) and a test phase (8 images),
three references per image that carry a secret marker, and a team with one member."""

from __future__ import annotations

import json

import pytest

from tests import factories as f

SECRET = "GEHEIMREF"


def make_benchmark(name="XM-mini", base=100):
    from challenges.models import Benchmark, BenchmarkLanguage, Phase, PhaseKind, Team

    de = f.LanguageFactory(code="de", name="German")
    en = f.LanguageFactory(code="en", name="English")
    val_images = [f.ImageFactory(key=str(base + i), with_file=False) for i in range(1, 7)]
    test_images = [f.ImageFactory(key=str(base + 100 + i)) for i in range(1, 9)]
    benchmark = Benchmark.objects.create(
        name=name, slug=name.lower().replace(" ", "-"), description="Caption every image."
    )
    words = ["hund", "katze", "strand", "haus", "baum", "auto", "berg", "see", "stadt"]
    for language in (de, en):
        images = val_images + test_images
        texts = [
            [f"ein {words[i % 9]} am {words[(i + k) % 9]} {SECRET}{i}x{k}" for k in range(3)]
            for i, _ in enumerate(images)
        ]
        refs = f.reference_set_with(images, texts, name=f"{name} {language.code}", language=language)
        BenchmarkLanguage.objects.create(benchmark=benchmark, language=language, reference_set=refs)
    val = Phase.objects.create(
        benchmark=benchmark,
        name="validation",
        kind=PhaseKind.VALIDATION,
        is_open=True,
        image_set=f.ImageSetFactory(name=f"{name} val", images=val_images),
        reference_counts=[0, 1],
        metrics=["BLEU-1", "BLEU-4", "ROUGE-L", "CIDEr-D"],
        max_per_day=10,
        max_total=20,
        max_concurrent=5,
    )
    test = Phase.objects.create(
        benchmark=benchmark,
        name="test",
        kind=PhaseKind.TEST,
        is_open=True,
        split_seed=7,
        image_set=f.ImageSetFactory(name=f"{name} test", images=test_images),
        reference_counts=[0],
        metrics=["BLEU-4", "ROUGE-L", "CIDEr-D"],
        max_per_day=3,
        max_total=3,
        max_concurrent=3,
    )
    team = Team.objects.create(name=f"{name} team")
    team.benchmarks.add(benchmark)
    return {
        "benchmark": benchmark,
        "val": val,
        "test": test,
        "team": team,
        "de": de,
        "en": en,
        "val_images": val_images,
        "test_images": test_images,
    }


@pytest.fixture(autouse=True)
def _empty_cache():
    # The refused-file counts live in the cache (core/ratelimit.py): each test starts with none.
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def bench(db):
    data = make_benchmark()
    member = f.UserFactory(username="tina")
    data["team"].members.add(member)
    data["member"] = member
    return data


def coco(images, text=lambda i, image: f"ein hund am strand {i}") -> bytes:
    return json.dumps(
        [{"image_id": int(image.key), "caption": text(i, image)} for i, image in enumerate(images)]
    ).encode()


def jsonl(images, languages=("de", "en"), caption=None) -> bytes:
    return "\n".join(
        json.dumps(
            {"image_id": int(image.key), "language": code, "caption": caption or f"ein haus am see {i}"}
        )
        for code in languages
        for i, image in enumerate(images)
    ).encode()


def submit(bench, phase="val", data=None, **kwargs):
    """The bench team's member submits ``data`` (default: a COCO file of the phase's images) to ``phase``."""
    from challenges.services import submission_create

    phase = bench[phase]
    images = bench["val_images"] if phase.kind == "validation" else bench["test_images"]
    return submission_create(
        phase_id=phase.pk,
        user=bench["member"],
        team_id=bench["team"].pk,
        data=data if data is not None else coco(images),
        filename=kwargs.pop("filename", "r.json"),
        language=kwargs.pop("language", "de"),
        method_name=kwargs.pop("method_name", "m"),
        **kwargs,
    )
