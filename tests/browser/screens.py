"""Open an annotator screen in the browser with a batch made through the services.

The walk through login and the dashboard is covered by test_caption_batch and test_sxs_batch;
the tests of the screens' frame start on the screen itself, logged in by session cookie.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.test import Client
from django.urls import reverse

from annotation.assignment.engine import batch_request
from annotation.services import work
from tests import factories as f

SCREEN_URL = {"screen1": "annotation:screen1", "screen2": "annotation:screen2", "sxs": "annotation:sxs"}


def log_in(page, live_server, user) -> None:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
    )


def caption_batch(language, *, images: int, username: str = "frame-anna", writing: bool = False, **campaign):
    """A caption batch of ``images`` images; with ``writing``, rated and on screen 2."""
    campaign = f.open_caption_campaign(
        images=images, batch_size=images, replication=2, language=language, **campaign
    )
    annotator = f.AnnotatorFactory(user__username=username, languages=[language])
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    if writing:
        for a in batch.assignments.all():
            work.rating_save(annotator=annotator, batch_id=batch.pk, assignment_id=a.pk, value="good")
        work.writing_open(annotator=annotator, batch_id=batch.pk)
    return annotator, batch


def sxs_batch(language, *, images: int, username: str = "frame-clara"):
    campaign = f.open_sxs_campaign(images=images, batch_size=images, replication=3, language=language)
    annotator = f.AnnotatorFactory(user__username=username, languages=[language], reads_english=False)
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    return annotator, batch


def verification_batch(language, *, images: int, username: str = "frame-rita"):
    """A verification batch rating ``images`` written captions of a caption campaign."""
    from annotation.services.campaigns import campaign_open, rating_campaign_create

    source = f.open_caption_campaign(images=images, batch_size=images, replication=2, language=language)
    writers = [f.AnnotatorFactory(user__username=f"writer{i}", languages=[language]) for i in range(2)]
    f.written_captions(source, annotators=writers, batches=1)
    created = rating_campaign_create(name="Prüfung", source_campaign_id=source.pk, batch_size=images)
    campaign = campaign_open(campaign_id=created.pk)
    annotator = f.AnnotatorFactory(user__username=username, languages=[language])
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    return annotator, batch


def open_screen(page, live_server, annotator, batch, screen: str) -> None:
    log_in(page, live_server, annotator.user)
    page.goto(live_server.url + reverse(SCREEN_URL.get(screen, f"annotation:{screen}"), args=[batch.pk]))
    # The scripts are loaded and have selected (focused) the first item.
    wait_until(page, "document.activeElement && document.activeElement.closest('.item') !== null")


def wait_until(page, expression: str, timeout: float = 10.0) -> None:
    """Poll a JavaScript expression until it is true. (Playwright's wait_for_function polls with
    eval(), which the page's Content-Security-Policy rightly forbids.)"""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout} s: {expression}")
        page.wait_for_timeout(50)


def in_viewport(page, selector: str) -> bool:
    """The element is shown and lies wholly inside the visible part of the page."""
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    return (
        box is not None
        and box["width"] > 0
        and box["height"] > 0
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= size["width"]
        and box["y"] + box["height"] <= size["height"]
    )
