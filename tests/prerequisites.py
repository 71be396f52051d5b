"""What some tests need from outside the repository, and what happens when it is missing.

* the shared test data folder, ``../shared/data`` beside the project root (real public data, not
  copied into the repository: see its README.md);
* ``java``, for the tests that run the Java jars shipped in pycocoevalcap (PTB tokenizer, METEOR);
  ``scripts/test.sh`` installs Debian's ``default-jre-headless`` when it is missing.

On a developer's machine a missing prerequisite skips the tests that need it, with the reason. Under
CI (``CI=true``, as CI services and ``.ci/run`` set it) it fails them instead: a CI run that silently
skipped the data or Java tests would pass without checking what it claims to check.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NoReturn

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def under_ci(environ: Mapping[str, str] = os.environ) -> bool:
    """True when ``CI`` is set to a true value (``true``, ``1``, ``yes``; any case)."""
    return environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def prerequisite_missing(message: str, *, environ: Mapping[str, str] = os.environ) -> NoReturn:
    """Skip the test with ``message``; under CI, fail it with the same message."""
    if under_ci(environ):
        pytest.fail(f"{message} [CI=true: a missing prerequisite fails instead of skipping]", pytrace=False)
    pytest.skip(message)


def shared_data_folder(path: Path = SHARED_DATA, *, environ: Mapping[str, str] = os.environ) -> Path:
    """``path`` if it is a folder; otherwise skip (fail under CI) naming the path and what to do."""
    if not path.is_dir():
        prerequisite_missing(
            f"shared test data not found at {path}: put the project's shared data folder there "
            "(coco-fakecap/, clipscore-example/, xm3600-images/; see its README.md), e.g. "
            f"`ln -s /path/to/shared {path.parent}`",
            environ=environ,
        )
    return path


def java_executable(
    *, which: Callable[[str], str | None] = shutil.which, environ: Mapping[str, str] = os.environ
) -> str:
    """The path of ``java``; otherwise skip (fail under CI) saying how to install it."""
    found = which("java")
    if found is None:
        prerequisite_missing(
            "java not found: the PTB tokenizer and METEOR tests run Java jars shipped in pycocoevalcap. "
            "scripts/test.sh installs Debian's default-jre-headless when it can (root or sudo); or run "
            "`sudo apt-get install default-jre-headless`",
            environ=environ,
        )
    return found
