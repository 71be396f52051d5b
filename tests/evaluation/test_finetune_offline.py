"""The embedded default never waits on model downloads: the Hugging Face libraries are offline, and
the fine-tuning form says when a base model's weights are not on this machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

from evaluation.finetune.availability import base_weights_problem
from evaluation.models import ClipFineTune, ClipModel

ROOT = Path(__file__).resolve().parents[2]


def _settings_env(extra: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_", "CELERY_"))}
    env |= {"DJANGO_SETTINGS_MODULE": "config.settings.base", **extra}
    code = "import os, django; django.setup(); print(os.environ.get('HF_HUB_OFFLINE'), os.environ.get('TRANSFORMERS_OFFLINE'))"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_the_embedded_default_sets_the_hugging_face_libraries_offline():
    assert _settings_env({}) == "1 1"
    # An operator's own choice stands; with a broker (workers elsewhere) nothing is forced.
    assert _settings_env({"HF_HUB_OFFLINE": "0"}).startswith("0 ")
    assert _settings_env({"CELERY_BROKER_URL": "redis://127.0.0.1:6379/0"}) == "None None"


def test_the_demo_script_sets_them_offline_too():
    script = (ROOT / "scripts" / "demo.sh").read_text()
    assert 'HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"' in script and "TRANSFORMERS_OFFLINE" in script


def test_weights_that_are_not_here_are_named(tmp_path):
    weights = tmp_path / "w.pt"
    assert "not on this machine" in base_weights_problem(
        model_name="x", pretrained="", checkpoint=str(weights)
    )
    weights.write_bytes(b"0")
    assert base_weights_problem(model_name="x", pretrained="", checkpoint=str(weights)) is None


@pytest.mark.django_db
def test_the_form_refuses_a_base_model_whose_weights_are_not_on_this_machine(pm_client):
    ClipModel.objects.create(name="gone", model_name="ViT-B-32", checkpoint="/nonexistent/gone.pt")
    base = ClipModel.objects.get(name="gone")
    response = pm_client.post(
        reverse("admin:evaluation_clipfinetune_add"),
        {
            "base": base.pk,
            "register_as": "x-ft",
            "learning_rate": "0.0001",
            "batch_size": "4",
            "epochs": "1",
            "patience": "1",
            "seed": "0",
            "split_seed": "0",
            "trainable": "all",
        },
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "The base model “gone” is not available on this machine" in page.replace("&ldquo;", "“").replace(
        "&rdquo;", "”"
    )
    assert "/nonexistent/gone.pt" in page
    assert ClipFineTune.objects.count() == 0
