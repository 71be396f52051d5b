"""What the manager reads in the CLIP admin lists: the fine-tuning runs' name, the retrieval- and probe-check
lists' columns and generated names, and what a failed run says about the model it would register."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.clip_choice import ClipModelChoice
from evaluation.models import ClipFineTune, ClipModel, ClipProbeCheck, RetrievalCheck, RunStatus
from evaluation.retrieval.plan import retrieval_check_plan
from tests import factories as f
from tests.evaluation.test_retrieval_pages import checked  # noqa: F401 (fixture)


def test_the_admin_index_names_clip_fine_tuning_runs(pm_client, db):
    page = pm_client.get(reverse("admin:index")).content.decode()
    assert "CLIP fine-tuning runs" in page and "CLIP models" in page
    assert "Clip fine tunes" not in page and "Clip models" not in page


def test_the_retrieval_check_list_shows_the_model_once_under_its_own_header(checked, pm_client):  # noqa: F811
    page = pm_client.get(reverse("admin:evaluation_retrievalcheck_changelist")).content.decode()
    assert "Retrievalcheck" not in page
    assert '<th scope="col" class="column-clip_model_label">' in page
    assert "xlm-roberta-base-ViT-B-32 (laion5b_s13b_b90k)" in page


def test_the_probe_check_list_and_page_show_the_model_under_its_own_header(pm_client, db):
    check = ClipProbeCheck.objects.create(
        name="probe", probe="zeroshot", params={"clip_model": "ViT-B-32", "clip_pretrained": "openai"}
    )
    page = pm_client.get(reverse("admin:evaluation_clipprobecheck_changelist")).content.decode()
    assert "Clipprobecheck" not in page
    assert '<th scope="col" class="column-clip_model_label">' in page
    assert "ViT-B-32 (openai)" in page
    page = pm_client.get(reverse("admin:evaluation_clipprobecheck_change", args=[check.pk])).content.decode()
    assert "Clipprobecheck" not in page and "ViT-B-32 (openai)" in page


def test_a_generated_check_name_names_what_fits_and_counts_the_rest(db):
    english = f.LanguageFactory(code="en")
    images = [f.ImageFactory() for _ in range(2)]
    names = []
    for i in range(12):
        language = english if i == 0 else f.LanguageFactory(code=f"l{i}")
        name = f"a-rather-long-reference-set-name-number-{i:02d}"
        f.reference_set_with(images, [["a"], ["b"]], name=name, language=language)
        names.append(name)
    plan = retrieval_check_plan(
        reference_sets=names, clip=ClipModelChoice(model="ViT-B-32", pretrained="openai")
    )
    assert len(plan.name) <= 200
    assert plan.name.startswith("ViT-B-32 on reference sets a-rather-long-reference-set-name-number-00, ")
    shown = plan.name.count("a-rather-long")
    assert 1 <= shown < 12 and plan.name.endswith(f" and {12 - shown} more")


def test_a_name_over_the_limit_is_refused_on_the_form(checked, pm_client):  # noqa: F811
    refs = f.reference_set_with(
        [f.ImageFactory() for _ in range(2)], [["a"], ["b"]], name="r", language=f.LanguageFactory(code="en")
    )
    response = pm_client.post(
        reverse("admin:evaluation_retrievalcheck_add"), {"name": "x" * 201, "reference_sets": [refs.pk]}
    )
    assert response.status_code == 200
    assert "Ensure this value has at most 200 characters (it has 201)." in response.content.decode()
    assert RetrievalCheck.objects.count() == 1


@pytest.mark.parametrize(
    ("status", "taken", "expected"),
    [
        (RunStatus.QUEUED, False, "(will be “demo-ft-ui”)"),
        (RunStatus.FAILED, False, "none (the run failed)"),
        (RunStatus.FAILED, True, "none (the run failed; “demo-ft-ui” now names another model)"),
        (RunStatus.RUNNING, True, "none (“demo-ft-ui” now names another model)"),
    ],
)
def test_a_run_without_its_model_says_whether_it_can_still_register_it(
    pm_client, db, status, taken, expected
):
    run = ClipFineTune.objects.create(name="ui run", register_as="demo-ft-ui", status=status)
    if taken:
        ClipModel.objects.create(name="demo-ft-ui", model_name="ViT-B-32", pretrained="openai")
    page = pm_client.get(reverse("admin:evaluation_clipfinetune_changelist")).content.decode()
    assert expected.replace("“", "&ldquo;").replace("”", "&rdquo;") in page or expected in page
    if status == RunStatus.FAILED or taken:
        assert "will be" not in page
    assert run.model is None
