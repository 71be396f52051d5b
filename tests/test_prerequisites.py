"""What the suite needs from outside the repository: skipped with the reason on a developer's machine,
a failure under CI (tests/prerequisites.py). The helpers are tested on their own, with a temporary
path and a made-up environment, never by breaking the session."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.prerequisites import java_executable, shared_data_folder, under_ci


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("TRUE", True), ("1", True), ("yes", True), ("", False), ("false", False), ("0", False)],
)
def test_ci_is_read_from_the_environment(value, expected):
    assert under_ci({"CI": value}) is expected
    assert under_ci({}) is False


def test_missing_shared_data_fails_under_ci_naming_the_path_and_what_to_do(tmp_path):
    missing = tmp_path / "shared" / "data"
    with pytest.raises(pytest.fail.Exception) as failed:
        shared_data_folder(missing, environ={"CI": "true"})
    message = str(failed.value)
    assert f"shared test data not found at {missing}" in message
    assert "coco-fakecap/, clipscore-example/, xm3600-images/" in message
    assert f"ln -s /path/to/shared {missing.parent}" in message
    assert "CI=true: a missing prerequisite fails instead of skipping" in message


def test_missing_shared_data_skips_outside_ci(tmp_path, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    missing = tmp_path / "nowhere"
    with pytest.raises(pytest.skip.Exception, match=f"shared test data not found at {missing}"):
        shared_data_folder(missing)  # the real environment, without CI
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception):
        shared_data_folder(missing)


def test_present_shared_data_is_returned(tmp_path):
    assert shared_data_folder(tmp_path, environ={"CI": "true"}) == tmp_path


def test_missing_java_fails_under_ci_and_skips_otherwise():
    def nowhere(name):
        return None

    with pytest.raises(pytest.fail.Exception, match="java not found: .* default-jre-headless"):
        java_executable(which=nowhere, environ={"CI": "true"})
    with pytest.raises(pytest.skip.Exception, match="java not found"):
        java_executable(which=nowhere, environ={})
    assert java_executable(which=lambda name: f"/usr/bin/{name}", environ={"CI": "true"}) == "/usr/bin/java"


def test_java_runs_the_ptb_tokenizer_jar_shipped_in_pycocoevalcap(java):
    """The prerequisite works, not only exists: the COCO server's tokenizer runs under this Java."""
    tokenizer = pytest.importorskip("pycocoevalcap.tokenizer.ptbtokenizer")
    jar = Path(tokenizer.__file__).parent / "stanford-corenlp-3.4.1.jar"
    done = subprocess.run(
        [java, "-cp", str(jar), "edu.stanford.nlp.process.PTBTokenizer", "-preserveLines", "-lowerCase"],
        input="A man, riding a horse.\nTwo dogs don't play!\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.splitlines() == ["a man , riding a horse .", "two dogs do n't play !"]
