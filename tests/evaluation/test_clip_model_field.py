"""The one choice of a registered CLIP model in every admin form that needs one (metric runs, retrieval,
zero-shot and foil checks, fine-tuning, phases), validated on save: the demo's registered tiny model
starts a zero-shot and a foil check that succeed; a model this server cannot load (the settings' in the
embedded default, a registered one whose checkpoint is gone, the tiny model's bare architecture typed)
is refused on the form with what to do, and nothing is stored."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.forms import modelform_factory
from django.test import override_settings
from django.urls import reverse

from challenges.admin import PhaseForm
from challenges.models import Phase
from evaluation.admin.clip_checks import ClipProbeCheckStartForm
from evaluation.admin.clip_model_form import RegisteredClipModelField
from evaluation.admin.finetune import ClipFineTuneStartForm
from evaluation.admin.retrieval import RetrievalCheckStartForm
from evaluation.admin.runs import MetricRunStartForm
from evaluation.metrics.clip.tiny import TINY_CLIP_NAME
from evaluation.models import ClipModel, ClipProbeCheck, MetricRun, RetrievalCheck, RunStatus
from tests import factories as f

# The embedded default's settings model as this machine has it: weights that are not here.
NOT_HERE = {"CLIP_MODEL": "ViT-B-32", "CLIP_PRETRAINED": "", "CLIP_CHECKPOINT": "/nonexistent/weights.pt"}
REFUSED_SETTINGS = (
    "The CLIP model of the CLIP_* settings (ViT-B-32) is not available on this machine: its checkpoint "
    "file /nonexistent/weights.pt is not on this machine. Choose a registered CLIP model (on the demo: "
    "demo-tiny-clip)"
)


def text(response) -> str:
    return (
        response.content.decode()
        .replace("&ldquo;", "“")
        .replace("&rdquo;", "”")
        .replace("&#x27;", "'")
        .replace("&quot;", '"')
    )


@pytest.fixture
def demo_model(db, tmp_path):
    from evaluation.finetune.plan import clip_model_demo_register

    with override_settings(CLIP_FINETUNE_DIR=str(tmp_path)):
        yield clip_model_demo_register()


@pytest.fixture
def photos(db):
    for code in ("en", "de"):
        f.LanguageFactory(code=code)
    return [f.ImageFactory(key=f"photo{i}") for i in range(2)]


def zeroshot_form(**fields) -> dict:
    labels = json.dumps({"en": [[0, 1], ["dog", "cat"]], "de": [[0, 1], ["Hund", "Katze"]]}).encode()
    return {
        "probe": "zeroshot",
        "min_votes": 2,
        "labels": SimpleUploadedFile("babel.json", labels),
        "labelled_images": SimpleUploadedFile("images.csv", b"image,class_id\nphoto0,0\nphoto1,1\n"),
        **fields,
    }


def foil_form(**fields) -> dict:
    def item(caption, foil, image):
        return {
            "caption": caption,
            "foil": foil,
            "linguistic_phenomena": "counting",
            "image_file": f"{image}.jpg",
            "mturk": {"caption": 3},
        }

    en = {"1": item("two dogs", "three dogs", "photo0"), "2": item("one cat", "two cats", "photo1")}
    de = {"1": item("zwei Hunde", "drei Hunde", "photo0"), "2": item("eine Katze", "zwei Katzen", "photo1")}
    return {
        "probe": "foil",
        "min_votes": 2,
        "foil_files": [
            SimpleUploadedFile("en_counting.json", json.dumps(en).encode()),
            SimpleUploadedFile("de_counting.json", json.dumps(de).encode()),
        ],
        **fields,
    }


def test_every_form_that_needs_a_clip_model_offers_the_registered_ones_through_one_field(demo_model):
    ClipModel.objects.create(name="bilder-ft", model_name="ViT-B-32", checkpoint="/models/ft.pt")
    forms = {
        "metric run": (MetricRunStartForm(), "clip_model"),
        "retrieval check": (RetrievalCheckStartForm(), "clip_model"),
        "zero-shot and foil checks": (ClipProbeCheckStartForm(), "clip_model"),
        "fine-tuning": (ClipFineTuneStartForm(), "base"),
        "phase": (modelform_factory(Phase, form=PhaseForm, fields="__all__")(), "clip_model"),
    }
    expected = [
        "– none: the CLIP_* settings (xlm-roberta-base-ViT-B-32) –",
        "bilder-ft",
        "demo-tiny-clip (tiny demo model)",
    ]
    for what, (form, name) in forms.items():
        field = form.fields[name]
        assert isinstance(field, RegisteredClipModelField), what
        assert [str(label) for _, label in field.choices] == expected, what
        assert "refused on save where this server runs the jobs itself" in field.help_text, what


@pytest.mark.parametrize("form", [zeroshot_form, foil_form], ids=["zero-shot", "foils"])
def test_a_check_started_from_the_admin_with_the_demos_registered_model_succeeds(
    form, photos, demo_model, pm_client, django_capture_on_commit_callbacks
):
    url = reverse("admin:evaluation_clipprobecheck_add")
    page = text(pm_client.get(url))
    assert "Registered CLIP model" in page and "demo-tiny-clip (tiny demo model)" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = pm_client.post(url, form(clip_model=demo_model.pk))
    assert response.status_code == 302, text(response)[:3000]
    check = ClipProbeCheck.objects.get()
    assert check.status == RunStatus.SUCCEEDED, check.error
    assert check.params["clip_registered"] == "demo-tiny-clip"
    assert check.params["clip_model"] == TINY_CLIP_NAME and check.params["clip_model_config"]
    assert check.params["clip_checkpoint"] == demo_model.checkpoint
    assert check.name.startswith("demo-tiny-clip ")
    assert set(check.results) == {"de", "en"}


@override_settings(**NOT_HERE)
def test_the_empty_default_is_refused_on_save_when_this_server_cannot_load_the_settings_model(
    photos, demo_model, pm_client
):
    probe_url = reverse("admin:evaluation_clipprobecheck_add")
    for form in (zeroshot_form, foil_form):
        response = pm_client.post(probe_url, form(name="empty"))
        assert response.status_code == 200
        assert REFUSED_SETTINGS in text(response)
    english = f.LanguageFactory(code="en")
    refs = f.reference_set_with(photos, [["a dog"], ["a cat"]], name="refs-en", language=english)
    response = pm_client.post(
        reverse("admin:evaluation_retrievalcheck_add"), {"reference_sets": [refs.pk], "language_codes": ""}
    )
    assert REFUSED_SETTINGS in text(response)
    assert ClipProbeCheck.objects.count() == 0 and RetrievalCheck.objects.count() == 0


@override_settings(**NOT_HERE)
def test_a_metric_run_with_clip_metrics_refuses_the_empty_default_and_runs_text_metrics_without_a_model(
    demo_model, pm_client, django_capture_on_commit_callbacks
):
    english = f.LanguageFactory(code="en")
    images = [f.ImageFactory() for _ in range(2)]
    refs = f.reference_set_with(images, [["a dog"], ["a cat"]], name="refs", language=english)
    system = f.SystemFactory(name="sys")
    for image, caption in zip(images, ["a dog", "a cat"], strict=True):
        f.SystemCaptionFactory(system=system, image=image, language=english, text=caption)
    url = reverse("admin:evaluation_metricrun_add")
    form = {"language": english.pk, "systems": [system.pk], "reference_set": refs.pk, "cider_df": "test"}
    refused = pm_client.post(url, form | {"metric_names": ["BLEU-4", "CLIPScore"]})
    assert REFUSED_SETTINGS in text(refused) and MetricRun.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        chosen = pm_client.post(
            url, form | {"metric_names": ["BLEU-4", "CLIPScore"], "clip_model": demo_model.pk}
        )
    assert chosen.status_code == 302, text(chosen)[:3000]
    run = MetricRun.objects.get()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.params["clip_registered"] == "demo-tiny-clip"
    text_only = pm_client.post(url, form | {"metric_names": ["BLEU-4"]})
    assert text_only.status_code == 302, text(text_only)[:3000]


def test_a_model_the_check_could_not_load_is_refused_on_save_with_the_way_out(photos, demo_model, pm_client):
    url = reverse("admin:evaluation_clipprobecheck_add")
    # The demo model's bare architecture, typed with its checkpoint: the workers know it only from the
    # registered model (the check failed with "unknown CLIP model 'captioneval-demo-tiny-clip'").
    typed = pm_client.post(url, zeroshot_form(model=TINY_CLIP_NAME, checkpoint=demo_model.checkpoint))
    assert typed.status_code == 200
    assert (
        f"“{TINY_CLIP_NAME}” is the architecture of the registered CLIP model “demo-tiny-clip”, which the "
        "workers only know from its registration: choose “demo-tiny-clip” as the registered CLIP model"
    ) in text(typed)
    gone = ClipModel.objects.create(name="gone", model_name="ViT-B-32", checkpoint="/nonexistent/gone.pt")
    refused = pm_client.post(url, foil_form(clip_model=gone.pk))
    assert (
        "The CLIP model “gone” is not available on this machine: its checkpoint file /nonexistent/gone.pt "
        "is not on this machine. Choose another registered model (on the demo: demo-tiny-clip)"
    ) in text(refused)
    both = pm_client.post(url, zeroshot_form(clip_model=demo_model.pk, model="ViT-B-32"))
    assert "Choose a registered CLIP model or type an open_clip model with its weights, not both." in text(
        both
    )
    assert ClipProbeCheck.objects.count() == 0


def test_the_foil_files_help_shows_its_placeholders(pm_client):
    page = pm_client.get(reverse("admin:evaluation_clipprobecheck_add")).content.decode()
    assert "each named &lt;language code&gt;.json or &lt;language code&gt;_&lt;name&gt;.json" in page
    assert "<language code>" not in page
