"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from django.test import Client

from core.access import PROJECT_MANAGERS, RESEARCHERS, roles_ensure
from tests import factories as f
from tests.prerequisites import SHARED_DATA, java_executable, shared_data_folder


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data``; skipped when missing, failed under CI (see tests/prerequisites.py)."""
    return shared_data_folder(SHARED_DATA)


@pytest.fixture(scope="session")
def java() -> str:
    """The ``java`` executable for the pycocoevalcap jars; skipped when missing, failed under CI."""
    return java_executable()


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


@pytest.fixture
def captioned(campaign, annotator, other_annotator):
    """The caption campaign (6 images, K=2) with two captions per image, punctuation and case."""
    from annotation.models import WrittenCaption

    f.written_captions(
        campaign,
        annotators=[annotator, other_annotator],
        batches=2,
        text=lambda a: f"Ein Bild: {a.item.image.key}, von {a.annotator.user.username.upper()}!",
    )
    assert WrittenCaption.objects.filter(campaign=campaign).count() == 12
    return campaign


@pytest.fixture
def verification(captioned):
    """An open verification campaign “Prüfung” rating the captions of ``captioned`` (batches of 6)."""
    from annotation.services.campaigns import campaign_open, rating_campaign_create

    # A fixed seed: each image's caption to rate is drawn from its two, and a draw of the test annotator's own
    # caption for all six would leave them nothing to rate (1 run in 64).
    created = rating_campaign_create(name="Prüfung", source_campaign_id=captioned.pk, batch_size=6, seed=7)
    return campaign_open(campaign_id=created.pk)


# --- Staff: the role groups, a project manager and a researcher (tests/annotation/test_admin.py
# proves what each role may do).


@pytest.fixture
def roles(db):
    roles_ensure()


@pytest.fixture
def manager(roles):
    return f.RoleUserFactory(username="pm", role=PROJECT_MANAGERS)


@pytest.fixture
def researcher(roles):
    return f.RoleUserFactory(username="res", role=RESEARCHERS)


@pytest.fixture
def pm_client(client, manager):
    client.force_login(manager)
    return client


@pytest.fixture
def researcher_client(researcher):
    """A client of its own, so that a test can hold it beside ``pm_client``."""
    client = Client()
    client.force_login(researcher)
    return client


# --- Real browser: Debian's system chromium driven by Playwright (never its own download).
# One Playwright instance for the whole session: its sync API runs an event loop in this thread,
# and a second instance started while it runs would fail.
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Chromium on a closed network: no background traffic, no sandbox when run as root.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    # Playwright runs an event loop in this thread; the test's ORM calls are still synchronous.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def screenshot(page):
    """Save a screenshot under $SCREENSHOT_DIR when it is set (to look at the screens)."""
    folder = os.environ.get("SCREENSHOT_DIR")

    def take(name: str):
        if folder:
            os.makedirs(folder, exist_ok=True)
            page.screenshot(path=os.path.join(folder, f"{name}.png"), full_page=False)

    return take
