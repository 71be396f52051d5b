"""Metric runs and tokenisation schemes: the scheme a run uses (the language's or its own), the signature
stored with every metric, the errors that refuse a run before anything is stored, and a chunk whose
scheme fails mid-run storing nothing."""

from __future__ import annotations

import dataclasses
from io import StringIO

import pytest
from django.apps import apps as django_apps
from django.core.management import CommandError, call_command

from annotation.models import Language, SystemCaption
from core.errors import ValidationFailed
from evaluation.metrics.signatures import NOT_RECORDED
from evaluation.metrics.text import schemes
from evaluation.metrics.text.schemes import text_signature
from evaluation.metrics.text.scoring import score_texts
from evaluation.models import (
    TEXT_METRICS,
    CaptionScore,
    ChunkStatus,
    CorpusScore,
    MetricChunk,
    MetricRun,
    RunStatus,
)
from evaluation.runs.plan import metric_run_create
from tests import factories as f
from tests.evaluation import test_runs
from tests.evaluation.test_runs import CAPTIONS, create, run_now

# The fixtures of test_runs, shared here.
setup = test_runs.setup
tiny_checkpoint = test_runs.tiny_checkpoint
tiny_clip = test_runs.tiny_clip


def test_a_run_uses_the_language_scheme_and_stores_its_signature(setup, django_capture_on_commit_callbacks):
    run = run_now(setup, django_capture_on_commit_callbacks, metrics=["BLEU-4", "CIDEr-D"])
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.params["tokenizer"] == "whitespace" and run.params["tokenizer_from"] == "language"
    signature = text_signature("whitespace")
    assert run.signatures == {"BLEU-4": signature, "CIDEr-D": signature}
    assert signature.startswith("tok:whitespace@1+unicode-") and signature.endswith("|df:test|impl:text-1")
    assert run.signature("CIDEr-D") == signature
    assert run.signature("CLIPScore") == NOT_RECORDED


ZH_CAPTIONS = {
    "zh-a": ["一只黑狗在草地上奔跑", "两个孩子在海边玩沙子", "桌子上放着一碗面条"],
    "zh-b": ["草地上有一只狗", "孩子们在沙滩上", "一碗热汤面"],
}
ZH_REFERENCES = [
    ["一只黑色的狗在绿色的草地上奔跑", "草地上有一只狗在跑"],
    ["两个小孩在海滩上玩沙", "孩子们在海边堆沙堡"],
    ["木桌上有一碗热气腾腾的面条", "一碗牛肉面放在桌子上"],
]


@pytest.fixture
def chinese(db):
    language = f.LanguageFactory(code="zh", name="Chinese", tokenizer="char")
    images = [f.ImageFactory() for _ in ZH_REFERENCES]
    for name, texts in ZH_CAPTIONS.items():
        system = f.SystemFactory(name=name)
        for image, text in zip(images, texts):
            SystemCaption.objects.create(system=system, image=image, language=language, text=text)
    references = f.reference_set_with(images, ZH_REFERENCES, name="refs-zh", language=language)
    return {"images": images, "references": references}


def test_a_run_can_override_the_scheme_and_the_numbers_follow_it(chinese, django_capture_on_commit_callbacks):
    def start(**kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            run = metric_run_create(
                name="zh",
                language_code="zh",
                system_names=list(ZH_CAPTIONS),
                reference_set_id=chinese["references"].pk,
                metrics=["CIDEr-D"],
                **kwargs,
            )
        run.refresh_from_db()
        assert run.status == RunStatus.SUCCEEDED, run.error
        return run

    default, override = start(), start(scheme="whitespace")
    assert default.params == {"tokenizer": "char", "tokenizer_from": "language", "cider_df": "test"}
    assert override.params == {"tokenizer": "whitespace", "tokenizer_from": "run", "cider_df": "test"}
    assert default.signatures == {"CIDEr-D": text_signature("char")}
    assert override.signatures == {"CIDEr-D": text_signature("whitespace")}
    assert Language.objects.get(code="zh").tokenizer == "char"  # the language's setting is untouched
    candidates = {image.pk: text for image, text in zip(chinese["images"], ZH_CAPTIONS["zh-a"])}
    references = {image.pk: texts for image, texts in zip(chinese["images"], ZH_REFERENCES)}
    for run, scheme in ((default, "char"), (override, "whitespace")):
        stored = CorpusScore.objects.get(run=run, system__name="zh-a", metric="CIDEr-D").value
        computed = score_texts(candidates, references, language="zh", scheme=scheme, metrics=["CIDEr-D"])
        assert stored == pytest.approx(computed.corpus["CIDEr-D"], abs=1e-12)
    by_char = CorpusScore.objects.get(run=default, system__name="zh-a", metric="CIDEr-D").value
    by_space = CorpusScore.objects.get(run=override, system__name="zh-a", metric="CIDEr-D").value
    assert by_char > 0.3 and by_space == 0.0  # a whole Chinese caption is one token: nothing matches


@pytest.mark.parametrize(
    ("scheme", "message"),
    [
        ("words", "unknown tokenisation scheme 'words' for language “de”"),
        ("newmm", "the tokenisation scheme “newmm” is for th, not for language “de”"),
    ],
)
def test_a_run_with_a_scheme_that_cannot_run_is_refused_and_nothing_stored(setup, scheme, message):
    with pytest.raises(ValidationFailed, match=message) as raised:
        create(setup, scheme=scheme)
    assert raised.value.message.startswith("Cannot score German (de) text: ")
    assert not MetricRun.objects.exists() and not MetricChunk.objects.exists()


def test_a_scheme_whose_library_is_missing_refuses_the_run(setup, german, monkeypatch):
    def not_installed(name):
        raise schemes.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(schemes.metadata, "version", not_installed)
    german.code, german.tokenizer = "zh", "jieba"  # the same captions, now a Chinese language set to jieba
    german.save()
    with pytest.raises(ValidationFailed, match=r"“jieba” needs jieba, which is not installed.*language “zh”"):
        create(setup, language_code="zh")
    assert not MetricRun.objects.exists()


def test_text_rejected_mid_run_fails_that_chunk_and_stores_none_of_it(
    setup, django_capture_on_commit_callbacks, monkeypatch, caplog
):
    real = schemes.SCHEMES["whitespace"]

    def picky(text, lowercase):
        if text == CAPTIONS["sys-b"][2]:
            raise ValueError("this segmenter cannot read that")
        return real.split(text, lowercase)

    monkeypatch.setitem(schemes.SCHEMES, "whitespace", dataclasses.replace(real, split=picky))
    run = run_now(setup, django_capture_on_commit_callbacks)
    assert run.status == RunStatus.FAILED
    assert run.error.startswith(
        "sys-b, text chunk 0: the tokenisation scheme “whitespace” for language “de” rejected"
    )
    assert "this segmenter cannot read that" in run.error and "internal error" not in run.error
    assert run.chunks.get(system__name="sys-b").status == ChunkStatus.FAILED
    assert not CaptionScore.objects.filter(run=run, system__name="sys-b").exists()
    assert not CorpusScore.objects.filter(run=run, system__name="sys-b").exists()
    assert CorpusScore.objects.filter(run=run, system__name="sys-a").count() == len(TEXT_METRICS)


def test_a_library_missing_on_the_worker_fails_the_chunk_with_its_name(
    setup, german, django_capture_on_commit_callbacks, monkeypatch
):
    run = create(setup, enqueue=False, metrics=["CIDEr-D"])

    def not_installed(name):
        raise schemes.metadata.PackageNotFoundError(name)

    # The run was planned where the library is; the worker that computes it lacks it.
    MetricRun.objects.filter(pk=run.pk).update(params={"tokenizer": "jieba", "tokenizer_from": "run"})
    german.code = "zh"
    german.save()
    monkeypatch.setattr(schemes.metadata, "version", not_installed)
    from core.jobs.engine import unit_run
    from evaluation.runs.tasks import METRIC_RUN

    chunk = run.chunks.first()
    assert unit_run(METRIC_RUN, unit_id=chunk.pk) == "failed"
    chunk.refresh_from_db()
    assert "“jieba” needs jieba, which is not installed" in chunk.error and "language “zh”" in chunk.error
    assert not CaptionScore.objects.filter(run=run).exists()


def test_old_runs_keep_their_params_and_the_old_character_name_still_resolves(setup):
    old = f.MetricRunFactory(metrics=["CIDEr-D"], params={"tokenizer": "character"})
    assert old.params == {"tokenizer": "character"}
    assert old.signature("CIDEr-D") == NOT_RECORDED
    assert schemes.scheme("character").name == "char"


def test_the_language_setting_migration_renames_character_to_char(db):
    from importlib import import_module

    migration = import_module("annotation.migrations.0007_language_character_to_char")
    zh = f.LanguageFactory(code="zh", name="Chinese")
    th = f.LanguageFactory(code="th", name="Thai")
    Language.objects.filter(pk=zh.pk).update(tokenizer="character")
    Language.objects.filter(pk=th.pk).update(tokenizer="newmm")
    en = f.LanguageFactory(code="en", name="English")
    en_gb = f.LanguageFactory(code="en-GB", name="British English")
    de = f.LanguageFactory(code="de", name="German")
    Language.objects.filter(pk__in=[en.pk, en_gb.pk, de.pk]).update(tokenizer="whitespace")
    migration.forwards(django_apps, None)
    assert Language.objects.get(pk=zh.pk).tokenizer == "char"
    assert Language.objects.get(pk=th.pk).tokenizer == "newmm"
    # English takes its new default, the COCO server's tokenisation; other languages keep theirs.
    assert Language.objects.get(pk=en.pk).tokenizer == "coco-ptb"
    assert Language.objects.get(pk=en_gb.pk).tokenizer == "coco-ptb"
    assert Language.objects.get(pk=de.pk).tokenizer == "whitespace"
    migration.backwards(django_apps, None)
    assert Language.objects.get(pk=zh.pk).tokenizer == "character"
    assert Language.objects.get(pk=th.pk).tokenizer == "whitespace"  # the old field knew only two


def test_clip_signature_names_model_checkpoint_hash_prompt_and_orientation(
    setup, tiny_clip, django_capture_on_commit_callbacks
):
    from evaluation.metrics.clip.hashing import content_hash

    run = run_now(setup, django_capture_on_commit_callbacks, metrics=["BLEU-4", "CLIPScore", "RefCLIPScore"])
    assert run.status == RunStatus.SUCCEEDED, run.error
    digest = content_hash(run.params["clip_checkpoint"])[:16]
    clip = run.signatures["CLIPScore"]
    assert clip == run.signatures["RefCLIPScore"]
    assert (
        clip
        == f'clip:{run.params["clip_model"]}|weights:none|ckpt:sha256-{digest}|prompt:""|orient:exif|impl:clip-1'
    )
    assert run.signatures["BLEU-4"] == text_signature("whitespace")


def test_a_planned_run_with_a_checkpoint_says_its_hash_is_pending(setup, tiny_clip):
    run = create(setup, enqueue=False, metrics=["CLIPScore"])
    assert "|ckpt:pending|" in run.signatures["CLIPScore"]


def test_the_metric_run_command_takes_a_scheme_and_shows_the_signatures(
    setup, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "metric_run",
            "start",
            "--language=de",
            "--systems=sys-a",
            "--references=refs-de",
            "--metrics",
            "BLEU-4",
            "CIDEr-D",
            "--scheme",
            "char",
            stdout=StringIO(),
            stderr=StringIO(),
        )
    run = MetricRun.objects.get()
    assert run.params["tokenizer"] == "char"
    out = StringIO()
    call_command("metric_run", "show", str(run.pk), stdout=out)
    assert f"  signature   {text_signature('char')}  (BLEU-4, CIDEr-D)" in out.getvalue()
    with pytest.raises(CommandError, match="invalid choice: 'words'"):
        call_command(
            "metric_run",
            "start",
            "--language=de",
            "--systems=sys-a",
            "--references=refs-de",
            "--scheme=words",
        )


def test_the_admin_starts_a_run_with_a_scheme_and_shows_its_signatures(
    setup, admin_client, django_capture_on_commit_callbacks
):
    from annotation.models import CaptioningSystem

    form = {
        "name": "",
        "language": setup["language"].pk,
        "systems": [CaptioningSystem.objects.get(name="sys-a").pk],
        "reference_set": setup["references"].pk,
        "image_set": "",
        "metric_names": ["BLEU-4", "CIDEr-D"],
        "scheme": "newmm",
    }
    url = "/admin/evaluation/metricrun/add/"
    response = admin_client.post(url, form)
    assert "the tokenisation scheme “newmm” is for th, not for language “de”" in response.content.decode()
    assert not MetricRun.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {**form, "scheme": "char"})
    assert response.status_code == 302
    run = MetricRun.objects.get()
    page = admin_client.get(f"/admin/evaluation/metricrun/{run.pk}/change/").content.decode()
    assert f"BLEU-4, CIDEr-D: <code>{text_signature('char')}</code>" in page
