"""A team, as a new user would in a real browser: joins through an invitation link, reads the benchmark's
instructions, submits a file with errors and reads them by line, submits a valid one, sees its scores and
its place on the leaderboard."""

from __future__ import annotations

import json

import pytest

from challenges.models import BenchmarkLanguage
from challenges.services import invitation_create
from tests import factories as f
from tests.challenges.conftest import coco, make_benchmark

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect = pytest.importorskip("playwright.sync_api").expect


def test_a_team_joins_submits_with_errors_then_validly_and_finds_its_place(live_server, page, screenshot):
    bench = make_benchmark("Browser bench", base=5000)
    invitation = invitation_create(team_id=bench["team"].pk)
    page.goto(f"{live_server.url}/challenges/join/{invitation.token}/")
    expect(page.locator("h1")).to_contain_text("Join team Browser bench team")
    page.fill("input[name=username]", "newcomer")
    page.fill("input[name=password]", "a-long-passphrase-42")
    page.fill("input[name=password_again]", "a-long-passphrase-42")
    page.click("main button[type=submit]")
    expect(page.locator("h1")).to_contain_text("Benchmarks")
    page.click("main h2 a:has-text('Browser bench')")
    expect(page.locator("#instructions")).to_contain_text("Caption every image.")
    screenshot("server-01-benchmark")

    test_phase = f"#phase-{bench['test'].pk}"
    bad = json.dumps([{"image_id": 5001, "caption": "ein hund"}, {"image_id": 42, "caption": ""}]).encode()
    page.locator(f"{test_phase} input[name=file]").set_input_files(
        {"name": "bad.json", "mimeType": "application/json", "buffer": bad}
    )
    page.locator(f"{test_phase} input[name=language]").fill("de")
    page.locator(f"{test_phase} input[name=method_name]").fill("first try")
    page.locator(f"{test_phase} button[type=submit]").click()
    expect(page.locator("#refused")).to_contain_text("nothing was counted against your limits")
    expect(page.locator("#problems")).to_contain_text("bad.json entry 1: unknown image id “5001”")
    expect(page.locator("#problems")).to_contain_text("bad.json entry 2: unknown image id “42”")
    screenshot("server-02-refused")

    page.go_back()
    good = coco(bench["test_images"])
    page.locator(f"{test_phase} input[name=file]").set_input_files(
        {"name": "good.json", "mimeType": "application/json", "buffer": good}
    )
    page.locator(f"{test_phase} input[name=language]").fill("de")
    page.locator(f"{test_phase} input[name=method_name]").fill("my model")
    page.locator(f"{test_phase} button[type=submit]").click()
    expect(page.locator("#state")).to_contain_text("scored")
    expect(page.locator("#scores")).to_contain_text("CIDEr-D")
    screenshot("server-03-scores")

    page.goto(f"{live_server.url}/challenges/phases/{bench['test'].pk}/leaderboard/?language=de")
    expect(page.locator("#leaderboard")).to_contain_text("my model")
    expect(page.locator("#split")).to_contain_text("public part")
    screenshot("server-04-leaderboard")


@pytest.mark.parametrize(("code", "scored"), [("de", "bewertet"), ("ar", "قُيِّم")])
def test_a_team_walks_the_server_on_a_phone_in_its_language(live_server, browser, code, scored):
    """From the invitation link to a scored entry on the leaderboard, in German and in Arabic on a 390 px
    screen: every page in the team's language and none wider than the screen, the leaderboard with its
    fresh-reference columns too."""
    import os

    bench = make_benchmark(f"Phone bench {code}", base=7000)
    # References from a public dataset, with fresh ones of the test images: the widest leaderboard.
    link = BenchmarkLanguage.objects.get(benchmark=bench["benchmark"], language=bench["de"])
    link.reference_set.public_dataset = "XM3600, CC-BY 4.0"
    link.reference_set.save()
    link.fresh_reference_set = f.reference_set_with(
        bench["test_images"],
        [[f"ein frisches bild vom {n}. tag"] for n, _ in enumerate(bench["test_images"])],
        name=f"Phone bench {code} fresh",
        language=bench["de"],
    )
    link.save()
    invitation = invitation_create(team_id=bench["team"].pk)
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale=code)
    page = context.new_page()
    page.set_default_timeout(15_000)
    folder = os.environ.get("SCREENSHOT_DIR")

    def look(name: str):
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{name}: {width} px wide on a 390 px screen"
        if folder:
            os.makedirs(folder, exist_ok=True)
            page.screenshot(path=os.path.join(folder, f"phone-{code}-{name}.png"), full_page=True)

    try:
        page.goto(f"{live_server.url}/challenges/join/{invitation.token}/")
        assert page.locator("html").get_attribute("lang") == code
        look("01-join")
        page.fill("input[name=username]", f"phone-{code}")
        page.fill("input[name=password]", "a-long-passphrase-42")
        page.fill("input[name=password_again]", "a-long-passphrase-42")
        page.click("main button[type=submit]")
        page.wait_for_url(f"{live_server.url}/challenges/")
        look("02-home")
        page.goto(f"{live_server.url}/challenges/{bench['benchmark'].slug}/")
        look("03-benchmark")
        test_phase = f"#phase-{bench['test'].pk}"
        page.locator(f"{test_phase} input[name=file]").set_input_files(
            {"name": "good.json", "mimeType": "application/json", "buffer": coco(bench["test_images"])}
        )
        page.locator(f"{test_phase} input[name=language]").fill("de")
        page.locator(f"{test_phase} input[name=method_name]").fill("mein Modell")
        page.locator(f"{test_phase} button[type=submit]").click()
        expect(page.locator("#state")).to_contain_text(scored)
        look("04-submission")
        page.goto(f"{live_server.url}/challenges/phases/{bench['test'].pk}/leaderboard/?language=de")
        expect(page.locator("#leaderboard")).to_contain_text("mein Modell")
        expect(page.locator("#fresh")).to_be_visible()
        look("05-leaderboard")
        page.goto(f"{live_server.url}/challenges/api/")
        look("06-api")
    finally:
        context.close()
