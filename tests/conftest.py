"""Fixtures shared by the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import factories as f

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def german(db):
    return f.LanguageFactory(code="de", name="German")


@pytest.fixture
def campaign(db, german):
    """An open caption campaign in German: 6 images, N=3, K=2."""
    return f.open_caption_campaign(images=6, batch_size=3, replication=2, language=german)


@pytest.fixture
def annotator(db, german):
    return f.AnnotatorFactory(user__username="anna", languages=[german])


@pytest.fixture
def other_annotator(db, german):
    return f.AnnotatorFactory(user__username="otto", languages=[german])


@pytest.fixture
def annotator_client(client, annotator):
    client.force_login(annotator.user)
    return client
