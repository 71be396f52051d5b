"""manage.py create_benchmark from an XM3600 captions file: all or nothing."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from challenges.models import Benchmark, Phase
from evaluation.models import Reference
from tests import factories as f


@pytest.fixture
def xm_file(db, tmp_path):
    for i in range(10):
        f.ImageFactory(key=f"k{i}", with_file=False)
    path = tmp_path / "captions.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(
                {
                    "image/key": f"k{i}",
                    "de": {"caption": [f"ein bild {i}", f"noch eins {i}"]},
                    "en": {"caption": [f"a picture {i}"]},
                }
            )
            for i in range(10)
        ),
        encoding="utf-8",
    )
    return path


def test_a_benchmark_from_an_xm3600_file(xm_file, capsys):
    call_command(
        "create_benchmark",
        str(xm_file),
        "--name",
        "XM mini",
        "--validation-images",
        "3",
        "--reference-counts",
        "0,1",
    )
    out = capsys.readouterr().out
    assert "2 language(s) (de, en), 3 validation and 7 test images, 30 references" in out
    # Where the benchmark is and what to do next.
    assert "/challenges/xm-mini/" in out and "Next steps:" in out
    assert "/admin/challenges/phase/?benchmark__id__exact=" in out and "/admin/challenges/team/add/" in out
    benchmark = Benchmark.objects.get(slug="xm-mini")
    phases = {p.kind: p for p in Phase.objects.filter(benchmark=benchmark)}
    assert phases["validation"].image_set.images.count() == 3 and phases["test"].image_set.images.count() == 7
    assert phases["test"].reference_counts == [0, 1] and not phases["test"].is_open
    assert Reference.objects.filter(reference_set__benchmarks__benchmark=benchmark).count() == 30
    with pytest.raises(CommandError, match="exists already"):
        call_command("create_benchmark", str(xm_file), "--name", "XM mini")


def test_unknown_images_create_nothing(xm_file):
    with xm_file.open("a", encoding="utf-8") as fh:
        fh.write("\n" + json.dumps({"image/key": "nope", "de": {"caption": ["x"]}}))
    with pytest.raises(CommandError, match="1 image key"):
        call_command("create_benchmark", str(xm_file), "--name", "Broken")
    assert not Benchmark.objects.exists() and not Reference.objects.exists()


def test_dry_run_writes_nothing(xm_file):
    call_command("create_benchmark", str(xm_file), "--name", "Dry", "--validation-images", "2", "--dry-run")
    assert not Benchmark.objects.exists()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--metrics", "BLEU-4,CLIPscore"], "Unknown metric(s) CLIPscore"),
        (["--metrics", "BLEU-4,ROUGE-L"], "The ranking metric CIDEr-D is not among"),
        (["--ranking-metric", "CIDEr"], "The ranking metric CIDEr is not among"),
        (["--reference-counts", "0,-1"], "distinct reference counts"),
    ],
)
def test_metrics_no_scorer_computes_create_nothing(xm_file, options, words):
    with pytest.raises(CommandError, match=words.replace("(", r"\(").replace(")", r"\)")):
        call_command("create_benchmark", str(xm_file), "--name", "Misspelt", *options)
    assert not Benchmark.objects.exists() and not Reference.objects.exists()


def test_the_phases_rank_by_the_metric_asked_for(xm_file):
    call_command(
        "create_benchmark",
        str(xm_file),
        "--name",
        "Ranked",
        "--validation-images",
        "3",
        "--metrics",
        "BLEU-4,ROUGE-L",
        "--ranking-metric",
        "ROUGE-L",
    )
    assert {(p.ranked_by, tuple(p.metrics)) for p in Phase.objects.all()} == {
        ("ROUGE-L", ("BLEU-4", "ROUGE-L"))
    }


def test_references_failing_the_language_check_are_refused_or_imported_with_a_reason(xm_file, capsys):
    # German references in Japanese script fail the language check; the command's own option imports them.
    lines = xm_file.read_text(encoding="utf-8").splitlines()
    lines[0] = json.dumps({"image/key": "k0", "de": {"caption": ["これは日本語です", "もう一つ"]}})
    xm_file.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(CommandError, match="--accept-language-problems REASON"):
        call_command("create_benchmark", str(xm_file), "--name", "XM lang", "--validation-images", "3")
    assert not Benchmark.objects.filter(name="XM lang").exists()
    call_command(
        "create_benchmark", str(xm_file), "--name", "XM lang", "--validation-images", "3",
        "--accept-language-problems", "the source's own captions",
    )  # fmt: skip
    assert Benchmark.objects.filter(name="XM lang").exists()
