"""The torchvision compatibility step that lets open_clip import on a CPU-only torch."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.metrics.clip import compat

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fresh_compat(monkeypatch):
    """compat as if never run in this process, with placeholder definition recorded, not performed."""
    calls = {"import": 0, "define": 0}
    monkeypatch.setattr(compat, "_state", None)

    def define():
        calls["define"] += 1

    monkeypatch.setattr(compat, "_define_placeholder_ops", define)
    monkeypatch.setattr(compat, "_forget_partial_torchvision", lambda: None)
    return calls


def test_noop_when_torchvision_imports_normally(fresh_compat, monkeypatch):
    def works():
        fresh_compat["import"] += 1

    monkeypatch.setattr(compat, "_import_torchvision", works)

    assert compat.ensure_torchvision_loadable() is False
    assert compat.ensure_torchvision_loadable() is False
    assert fresh_compat == {"import": 1, "define": 0}


def test_defines_placeholders_only_for_the_missing_operator_error(fresh_compat, monkeypatch):
    def fails_once():
        fresh_compat["import"] += 1
        if fresh_compat["import"] == 1:
            raise RuntimeError("operator torchvision::nms does not exist")

    monkeypatch.setattr(compat, "_import_torchvision", fails_once)

    assert compat.ensure_torchvision_loadable() is True
    assert compat.ensure_torchvision_loadable() is True
    assert fresh_compat == {"import": 2, "define": 1}


@pytest.mark.parametrize(
    "error", [RuntimeError("CUDA driver exploded"), ImportError("No module named 'torchvision'")]
)
def test_other_import_errors_propagate_untouched(fresh_compat, monkeypatch, error):
    def fails():
        raise error

    monkeypatch.setattr(compat, "_import_torchvision", fails)

    with pytest.raises(type(error), match=str(error).split("'")[0]):
        compat.ensure_torchvision_loadable()
    assert fresh_compat["define"] == 0


def test_still_failing_import_explains_itself(fresh_compat, monkeypatch):
    def always_fails():
        raise RuntimeError("operator torchvision::roi_align does not exist")

    monkeypatch.setattr(compat, "_import_torchvision", always_fails)

    with pytest.raises(RuntimeError, match="Install a torchvision build that matches torch"):
        compat.ensure_torchvision_loadable()


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )


def test_open_clip_imports_after_the_step_on_this_machine():
    bare = _run("import open_clip")
    patched = _run(
        "import json\n"
        "from evaluation.metrics.clip.compat import ensure_torchvision_loadable\n"
        "patched = ensure_torchvision_loadable()\n"
        "import open_clip, torch, torchvision.transforms\n"
        "assert ensure_torchvision_loadable() is patched\n"
        "try:\n"
        "    torchvision.ops.nms(torch.zeros(1, 4), torch.zeros(1), 0.5)\n"
        "    nms = 'works'\n"
        "except RuntimeError as exc:\n"
        "    nms = str(exc)\n"
        "print(json.dumps({'patched': patched, 'nms': nms}))\n"
    )

    assert patched.returncode == 0, patched.stderr
    result = json.loads(patched.stdout.strip().splitlines()[-1])
    # Needed exactly where the plain import fails with the missing-operator error.
    assert result["patched"] is ("torchvision::nms does not exist" in bare.stderr)
    assert (bare.returncode == 0) is not result["patched"]
    if result["patched"]:
        # Placeholders give no implementation: torchvision's own error, not a crash.
        assert "Couldn't load custom C++ ops" in result["nms"]
