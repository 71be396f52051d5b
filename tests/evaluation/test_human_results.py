"""Human-evaluation results where people see them: the selectors that collect a campaign's work and
call the pure numbers, the admin panels and pages, and the ``human_tables`` command. The campaigns
are built and worked through the annotation services only."""

from __future__ import annotations

import csv
import io
import json
import re
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.assignment.engine import batch_request
from annotation.models import Campaign, CampaignKind, CampaignState, ControlKind
from annotation.services import work
from annotation.services.campaigns import campaign_open, rating_campaign_create, sxs_campaign_create
from evaluation.human import control_pass_rates, control_passed, rating_alpha, sxs_summary
from evaluation.human.controls import DEFAULT_MIN_JUDGMENTS
from evaluation.human.selectors import (
    caption_statistics_rows,
    language_tables,
    quality_rows,
    rating_results,
    sxs_results,
)
from tests import factories as f

MARKUP = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


# --- Controls: the pure rule -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "score", "passed"),
    [
        ("identical", 0, True),
        ("identical", 1, True),
        ("identical", -1, True),
        ("identical", 2, False),
        ("identical", -3, False),
        ("wrong_image", -3, True),
        ("wrong_image", -2, True),
        ("wrong_image", -1, False),
        ("wrong_image", 0, False),
        ("wrong_image", 3, False),
    ],
)
def test_control_pass_rule(kind, score, passed):
    assert control_passed(kind, score) is passed


def test_control_minimum_no_flag_below_it_flagged_at_it():
    """All three demo raters were flagged after one or two control judgments: below the minimum
    (5 by default) a pass rate is "too few to judge", never a flag; at the minimum it counts."""
    assert DEFAULT_MIN_JUDGMENTS == 5
    failing = [("ann", "identical", 3)] * 4 + [("ben", "identical", 3)] * 5
    rows = {r.rater_id: r for r in control_pass_rates(failing, threshold=0.75)}
    assert (rows["ann"].n_controls, rows["ann"].pass_rate, rows["ann"].too_few, rows["ann"].flagged) == (
        4,
        0.0,
        True,
        False,
    )
    assert (rows["ben"].n_controls, rows["ben"].too_few, rows["ben"].flagged) == (5, False, True)
    # A campaign's own minimum.
    rows = {r.rater_id: r for r in control_pass_rates(failing, threshold=0.75, minimum=6)}
    assert not rows["ben"].flagged and rows["ben"].too_few
    with pytest.raises(ValueError, match="minimum"):
        control_pass_rates(failing, threshold=0.75, minimum=0)


def test_control_pass_rates_flag_annotators_below_the_threshold():
    rows = control_pass_rates(
        [
            ("ann", "identical", 0),
            ("ann", "wrong_image", -3),
            ("ben", "identical", 2),
            ("ben", "wrong_image", -2),
            ("ben", "wrong_image", -1),
            ("cid", "identical", 1),
            ("cid", "identical", -1),
            ("cid", "wrong_image", -2),
            ("cid", "wrong_image", 0),
        ],
        threshold=0.75,
        minimum=2,
    )
    assert [(r.rater_id, r.n_controls, r.n_passed, r.flagged) for r in rows] == [
        ("ben", 3, 1, True),
        ("cid", 4, 3, False),  # 0.75 is not below 0.75
        ("ann", 2, 2, False),
    ]
    assert control_pass_rates([], threshold=0.5) == []
    with pytest.raises(ValueError, match="unknown control kind"):
        control_passed("odd", 0)
    with pytest.raises(ValueError, match="threshold"):
        control_pass_rates([], threshold=2)


# --- A side-by-side campaign worked through the services -------------------------------------------


@pytest.fixture
def judged(db, german):
    """Images A, B, C (real pairs), D (identical pair), one identical and one wrong-image control,
    K = 3, three annotators. By score from m2's side:

    A: 2, 1, -1 -> WIN;  B: -2, -3, 0 -> LOSS;  C: 3, 3, 0 -> WIN;  D (identical pair): 0, 0, 1.
    identical control: ann 0 (pass), ben 2 (fail), cid -1 (pass)
    wrong-image control: ann -3 (pass), ben -1 (fail), cid -2 (pass)  -> ben flagged at 0.75.
    """
    m1, m2, images = f.sxs_systems(
        images=4, language=german, identical=0, m1_name="base-sys", m2_name="test-sys"
    )
    d = images[3]
    m2.captions.filter(image=d).update(text=m1.captions.get(image=d).text)
    campaign = sxs_campaign_create(
        name="Vergleich",
        language_code="de",
        base_system=m1,
        test_system=m2,
        batch_size=6,
        replication=3,
        controls_identical=1,
        controls_wrong_image=1,
        # Two control judgments each: judged from 2 on, so that the flag is exercised here
        # (the default minimum is proven in test_control_minimum_* below).
        control_min_judgments=2,
        seed=3,
    )
    campaign = campaign_open(campaign_id=campaign.pk)
    items = {i.image_id: i.pk for i in campaign.items.filter(is_control=False)}
    identical = campaign.items.get(control_kind=ControlKind.IDENTICAL).pk
    wrong = campaign.items.get(control_kind=ControlKind.WRONG_IMAGE).pk
    a, b, c = (images[i].pk for i in range(3))
    plan = {
        "ann": {items[a]: 2, items[b]: -2, items[c]: 3, items[d.pk]: 0, identical: 0, wrong: -3},
        "ben": {items[a]: 1, items[b]: -3, items[c]: 3, items[d.pk]: 0, identical: 2, wrong: -1},
        "cid": {items[a]: -1, items[b]: 0, items[c]: 0, items[d.pk]: 1, identical: -1, wrong: -2},
    }
    people = {}
    for n, (name, scores) in enumerate(plan.items()):
        annotator = f.AnnotatorFactory(user__username=name, languages=[german])
        people[name] = annotator
        batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
        assert batch.assignments.count() == 6
        f.sxs_judged(
            annotator,
            batch=batch,
            score=lambda a, scores=scores: scores[a.item_id],
            side=("left", "right")[n % 2],
            submit=name != "cid",
        )
    return campaign, people


def test_only_submitted_judgments_count(judged):
    campaign, people = judged
    assert sxs_results(campaign).summary.n_judgments == 6
    batch = people["cid"].batches.get()
    work.judgment_batch_submit(annotator=people["cid"], batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    assert sxs_results(campaign).summary.n_judgments == 9


@pytest.fixture
def submitted(judged):
    campaign, people = judged
    batch = people["cid"].batches.get()
    work.judgment_batch_submit(annotator=people["cid"], batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    return campaign, people


def test_sxs_results_leave_controls_out_and_report_identical_pairs_apart(submitted):
    campaign, _ = submitted
    results = sxs_results(campaign, n_boot=2000)
    s = results.summary
    assert (s.n_images, s.n_judgments, s.wins, s.losses, s.ties) == (3, 9, 2, 1, 0)
    assert s.wins_pct == pytest.approx(200 / 3) and s.losses_pct == pytest.approx(100 / 3)
    assert s.delta_sxs == pytest.approx(100 / 3)
    assert s.sign_test_p == pytest.approx(1.0)
    assert s.ci_low <= s.delta_sxs <= s.ci_high
    # The same numbers as the pure function over the hand-written records.
    rows = [
        (key, rater, score, side)
        for key, scores in {"A": [2, 1, -1], "B": [-2, -3, 0], "C": [3, 3, 0]}.items()
        for rater, score, side in zip("abc", scores, ["left", "right", "left"])
    ]
    expected = sxs_summary(rows, n_boot=2000)
    assert (s.mean_score_per_judgment, s.alpha_ordinal, s.left_preferred, s.decided_judgments) == (
        expected.mean_score_per_judgment,
        expected.alpha_ordinal,
        expected.left_preferred,
        expected.decided_judgments,
    )
    assert (s.ci_low, s.ci_high) == (expected.ci_low, expected.ci_high)
    identical = results.identical
    assert (identical.n_images, identical.n_judgments, identical.ties) == (1, 3, 1)
    assert results.n_control_judgments == 6
    controls = {row.username: (row.n_controls, row.n_passed, row.flagged) for row in results.controls}
    assert controls == {"ann": (2, 2, False), "ben": (2, 0, True), "cid": (2, 2, False)}
    assert [row.username for row in results.flagged] == ["ben"]


def test_an_empty_side_by_side_campaign_has_no_numbers(german):
    campaign = f.open_sxs_campaign(images=2, language=german)
    results = sxs_results(campaign)
    assert results.summary.n_images == 0 and results.summary.delta_sxs is None
    assert results.controls == [] and results.identical.n_images == 0


# --- A verification campaign worked through the services -------------------------------------------


@pytest.fixture
def rated(campaign, annotator, other_annotator, german):
    """Two captioned images rated by three raters: image 1 good, good, bad (median GOOD);
    image 2 medium, nei, bad (median of medium, bad = the lower: BAD)."""
    f.written_captions(campaign, annotators=[annotator, other_annotator], batches=1)
    verification = rating_campaign_create(
        name="Prüfung", source_campaign_id=campaign.pk, sample_size=2, seed=5, batch_size=2
    )
    verification = campaign_open(campaign_id=verification.pk)
    items = list(verification.items.order_by("image__key").values_list("pk", flat=True))
    plan = [("good", "medium"), ("good", "nei"), ("bad", "bad")]
    for values in plan:
        rater = f.AnnotatorFactory(languages=[german], reads_english=False)
        batch, _ = batch_request(annotator=rater, campaign_id=verification.pk)
        for a in batch.assignments.all():
            value = values[items.index(a.item_id)]
            work.rating_save(annotator=rater, batch_id=batch.pk, assignment_id=a.pk, value=value)
        work.judgment_batch_submit(annotator=rater, batch_id=batch.pk, submit_key=uuid.uuid4().hex)
    return verification


def test_rating_results_give_the_campaigns_table_2_row_and_alpha(rated):
    results = rating_results(rated)
    q = results.quality
    assert (q.language, q.n_captions, q.n_rated, q.n_ratings) == ("de", 2, 2, 6)
    assert (q.pct_good_plus, q.pct_med_plus, q.pct_bad) == (50.0, 50.0, 50.0)
    assert q.nei_rate == pytest.approx(100 / 6)
    units = {0: ["good", "good", "bad"], 1: ["medium", "nei", "bad"]}
    assert results.alpha == rating_alpha([(u, i, v) for u, vs in units.items() for i, v in enumerate(vs)])
    assert quality_rows(language_code="de") == [q]
    assert quality_rows(language_code="fr") == []


def test_table_1_counts_the_written_captions_per_language(campaign, annotator, other_annotator):
    f.written_captions(
        campaign, annotators=[annotator, other_annotator], batches=2, text=lambda a: "Ein roter Ball."
    )
    (row,) = caption_statistics_rows()
    assert (row.language, row.n_captions, row.n_images, row.images_2) == ("de", 12, 6, 6)
    assert (row.mean_words, row.mean_chars, row.tokenizer) == (3.0, 15.0, "whitespace")
    (tables,) = language_tables()
    assert tables.statistics == row and tables.quality is None and tables.name == "German"


# --- The admin ------------------------------------------------------------------------------------


def flat(response) -> str:
    assert response.status_code == 200
    return " ".join(response.content.decode().split())


def test_the_side_by_side_campaign_page_shows_the_results(pm_client, submitted):
    campaign, _ = submitted
    page = flat(pm_client.get(reverse("admin:annotation_campaign_change", args=[campaign.pk])))
    assert 'id="sxs-results"' in page
    assert "base-sys" in page and "test-sys" in page
    assert "66.7% (2 images)" in page and "33.3% (1 image)" in page
    assert (
        "+33.3 points" in page
        and "95% interval of ΔS×S (bootstrap over images, 10,000 resamples, seed 0)" in page
    )
    assert "sign test" in page and "p = 1" in page
    assert "position bias: left caption preferred" in page and "Krippendorff" in page
    identical = page[page.index('id="sxs-identical"') :]
    assert '<th scope="row">images</th><td class="num">1</td>' in identical
    controls = page[page.index('id="sxs-controls"') :]
    assert 'class="flagged" data-annotator="ben"' in controls and "flagged below 75%" in controls
    assert '<tr class="" data-annotator="ann">' in controls
    assert "0 of 2 passed — flagged" in controls and "2 of 2 passed" in controls
    assert " style=" not in page


def test_the_results_panel_says_too_few_to_judge_below_the_minimum(pm_client, submitted):
    campaign, _ = submitted
    campaign.control_min_judgments = 3  # everyone has judged 2 controls
    campaign.save(update_fields=["control_min_judgments"])
    page = flat(pm_client.get(reverse("admin:annotation_campaign_change", args=[campaign.pk])))
    controls = page[page.index('id="sxs-controls"') :]
    assert 'class="flagged"' not in controls
    assert "0 of 2 passed — too few to judge (minimum 3)" in controls
    assert "judged from 3 control judgments on" in controls
    assert sxs_results(campaign).flagged == []


def test_the_verification_campaign_page_shows_its_table_2_row_and_alpha(pm_client, rated):
    page = flat(pm_client.get(reverse("admin:annotation_campaign_change", args=[rated.pk])))
    row = page[page.index('id="rating-quality"') :]
    # Id, captions, with median, %GOOD+, %MED+, %BAD, %NEI (the Table 2 columns, as everywhere).
    assert re.search(
        r'<td>de</td><td class="num">\d+</td><td class="num">\d+</td><td class="num">50.0</td>'
        r'<td class="num">50.0</td><td class="num">50.0</td><td class="num">16.7</td>',
        row,
    )
    assert 'id="rating-agreement"' in page and "6 submitted ratings of 2 captions" in page


def test_the_language_statistics_page_has_table_1_and_table_2_rows(
    pm_client, rated, submitted, researcher_client
):
    for client in (pm_client, researcher_client):
        page = flat(client.get(reverse("admin:evaluation_languagestatistics_changelist")))
        table1 = page[page.index('id="table1"') :]
        assert '<tr data-language="de"><td>de</td><td>German</td><td class="num">6</td>' in table1
        table2 = page[page.index('id="table2"') :]
        assert '<td class="num">50.0</td><td class="num">50.0</td><td class="num">50.0</td>' in table2
        sxs = page[page.index('id="sxs-campaigns"') :]
        assert "Vergleich" in sxs and "33.3" in sxs and "identical pairs" in sxs
        # Headers a person understands: the language column says "language", not "Id", and
        # the subset column "subset" with "real pairs" / "identical pairs", not "pairs".
        header = re.search(r"<thead>(.*?)</thead>", sxs).group(1)
        assert re.findall(r"<th[^>]*>([^<]*)</th>", header)[:5] == [
            "campaign",
            "language",
            "m1",
            "m2",
            "subset",
        ]
        assert "<td>real pairs</td>" in sxs and "<td>identical pairs</td>" in sxs


def test_a_project_manager_creates_and_opens_a_side_by_side_campaign_in_the_browser_forms(pm_client, german):
    m1, m2, _ = f.sxs_systems(images=8, language=german)
    changelist = pm_client.get(reverse("admin:annotation_campaign_changelist")).content.decode()
    assert "Add side-by-side campaign" in changelist and "Add verification campaign" in changelist
    url = reverse("admin:annotation_campaign_add_sxs")
    form = pm_client.get(url).content.decode()
    assert 'name="controls_wrong_image"' in form and 'value="3"' in form  # replication 3 by default
    # Controls are on by default (5 of each kind), judged from 5 control judgments on.
    assert re.search(r'name="controls_identical"[^>]*value="5"|value="5"[^>]*name="controls_identical"', form)
    assert re.search(
        r'name="control_min_judgments"[^>]*value="5"|value="5"[^>]*name="control_min_judgments"', form
    )
    data = {
        "name": "Vergleich DE",
        "language": german.pk,
        "base_system": m1.pk,
        "test_system": m2.pk,
        "sample_size": 5,
        "seed": "",
        "replication": 3,
        "batch_size": 4,
        "controls_identical": 1,
        "controls_wrong_image": 1,
        "control_pass_threshold": 0.8,
        "control_min_judgments": 4,
        "open_now": "on",
    }
    response = pm_client.post(url, data, follow=True)
    campaign = Campaign.objects.get(name="Vergleich DE")
    assert (
        campaign.kind,
        campaign.state,
        campaign.sample_size,
        campaign.control_pass_threshold,
        campaign.control_min_judgments,
    ) == (CampaignKind.SIDE_BY_SIDE, CampaignState.OPEN, 5, 0.8, 4)
    assert campaign.items.count() == 7 and campaign.sample_seed is not None
    messages = [m.message for m in response.context["messages"]]
    assert any("7 items, of which 2 controls" in m and str(campaign.sample_seed) in m for m in messages)
    # The page of the new campaign shows what it was created with, read-only, and an empty result.
    page = flat(pm_client.get(reverse("admin:annotation_campaign_change", args=[campaign.pk])))
    assert 'name="base_system"' not in page and 'name="sample_seed"' not in page
    assert 'id="sxs-results"' in page and "No judged control item." in page
    # The same systems twice or an impossible sample: the form says why, nothing is stored.
    response = pm_client.post(url, {**data, "name": "zwei", "test_system": m1.pk})
    assert "Choose a system other than the base system." in response.content.decode()
    response = pm_client.post(url, {**data, "name": "drei", "sample_size": 50})
    assert "Only 8 images" in response.content.decode()
    assert not Campaign.objects.filter(name__in=["zwei", "drei"]).exists()


def test_a_project_manager_creates_a_verification_campaign_from_a_caption_campaign(
    pm_client, campaign, annotator, other_annotator
):
    f.written_captions(campaign, annotators=[annotator, other_annotator], batches=1)
    response = pm_client.post(
        reverse("admin:annotation_campaign_changelist"),
        {"action": "verify_captions", "_selected_action": [campaign.pk]},
    )
    assert response.status_code == 302
    assert (
        response["Location"]
        == reverse("admin:annotation_campaign_add_verification") + f"?source={campaign.pk}"
    )
    form = pm_client.get(response["Location"]).content.decode()
    assert f"Verification of {campaign.name}" in form and "6 captions" in form
    response = pm_client.post(
        reverse("admin:annotation_campaign_add_verification"),
        {
            "name": "Prüfung",
            "source_campaign": campaign.pk,
            "sample_size": "",
            "seed": 42,
            "replication": 3,
            "batch_size": 15,
            "open_now": "on",
        },
    )
    assert response.status_code == 302
    verification = Campaign.objects.get(name="Prüfung")
    assert (verification.kind, verification.state, verification.sample_seed, verification.items.count()) == (
        CampaignKind.RATING,
        CampaignState.OPEN,
        42,
        6,
    )


def test_researchers_cannot_create_campaigns(researcher_client, german):
    assert researcher_client.get(reverse("admin:annotation_campaign_add_sxs")).status_code == 403
    assert (
        researcher_client.post(reverse("admin:annotation_campaign_add_verification"), {}).status_code == 403
    )
    changelist = researcher_client.get(reverse("admin:annotation_campaign_changelist")).content.decode()
    assert "Add side-by-side campaign" not in changelist


def test_annotators_reach_neither_the_results_nor_the_create_pages(client, submitted):
    _, people = submitted
    client.force_login(people["ann"].user)
    for name in [
        "admin:evaluation_languagestatistics_changelist",
        "admin:annotation_campaign_add_sxs",
        "admin:annotation_campaign_add_verification",
    ]:
        response = client.get(reverse(name))
        assert response.status_code == 302 and response["Location"].startswith(reverse("admin:login"))


def test_markup_in_system_names_and_user_names_is_escaped_in_the_results(pm_client, submitted):
    campaign, people = submitted
    campaign.base_system.name = f"sys {MARKUP}"
    campaign.base_system.save()
    people["ben"].user.username = f"ben{MARKUP}"
    people["ben"].user.save()
    for url in [
        reverse("admin:annotation_campaign_change", args=[campaign.pk]),
        reverse("admin:evaluation_languagestatistics_changelist"),
    ]:
        page = pm_client.get(url).content.decode()
        assert MARKUP not in page and ESCAPED in page, url


# --- The command ----------------------------------------------------------------------------------


def run(*args) -> str:
    out = io.StringIO()
    call_command("human_tables", *args, stdout=out)
    return out.getvalue()


def test_human_tables_prints_the_three_tables_as_text(rated, submitted):
    text = run("--n-boot", "500")
    assert (
        "Table 1: caption statistics" in text
        and "Table 2: caption quality" in text
        and "Side by side" in text
    )
    lines = text.splitlines()
    quality = lines[lines.index("Table 2: caption quality") + 4]
    assert quality.split() == ["de", "2", "2", "50.0", "50.0", "50.0", "16.7", "0"]
    sxs = [line for line in lines if line.startswith("Vergleich")]
    assert len(sxs) == 2
    assert "real pairs" in sxs[0] and "66.7" in sxs[0] and "33.3" in sxs[0]
    assert "identical pairs" in sxs[1]


def test_human_tables_as_json_and_csv(rated, submitted):
    data = json.loads(run("--format", "json", "--n-boot", "500"))
    assert set(data) == {"statistics", "quality", "sxs"}
    assert data["quality"][0]["pct_good_plus"] == 50.0
    pairs = data["sxs"][0]
    assert (pairs["campaign"], pairs["m1"], pairs["m2"], pairs["subset"]) == (
        "Vergleich",
        "base-sys",
        "test-sys",
        "real pairs",
    )
    assert pairs["delta_sxs"] == pytest.approx(100 / 3) and pairs["flagged_annotators"] == 1
    assert pairs["control_pass_rate"] == pytest.approx(4 / 6)

    table = list(csv.reader(io.StringIO(run("--format", "csv", "--table", "sxs", "--n-boot", "500"))))
    header, first = table[0], table[1]
    assert header[:5] == ["campaign", "language", "m1", "m2", "subset"] and "ΔS×S" in header
    assert float(first[header.index("ΔS×S")]) == pytest.approx(100 / 3)
    assert float(first[header.index("WINS")]) == pytest.approx(200 / 3)
    everything = run("--format", "csv", "--n-boot", "500")
    assert "# Table 1: caption statistics\r\n" in everything and "# Side by side\r\n" in everything


def test_human_tables_filters_by_campaign_and_language(rated, submitted, campaign):
    sxs_campaign, _ = submitted
    data = json.loads(run("--format", "json", "--campaign", str(sxs_campaign.pk), "--n-boot", "200"))
    assert set(data) == {"sxs"} and {row["campaign"] for row in data["sxs"]} == {"Vergleich"}
    data = json.loads(run("--format", "json", "--campaign", str(rated.pk)))
    assert set(data) == {"quality"} and data["quality"][0]["n_captions"] == 2
    data = json.loads(run("--format", "json", "--campaign", str(campaign.pk)))
    assert set(data) == {"statistics"} and data["statistics"][0]["n_captions"] == 6
    f.LanguageFactory(code="fr", name="French")
    data = json.loads(run("--format", "json", "--language", "fr"))
    assert data == {"statistics": [], "quality": [], "sxs": []}
    assert "(nothing yet)" in run("--language", "fr")
    with pytest.raises(CommandError, match="no language"):
        run("--language", "xx")
    with pytest.raises(CommandError, match="no campaign"):
        run("--campaign", "98765")


# --- The demo, start to finish, through the pages and endpoints -------------------------------------


def test_demo_side_by_side_and_verification_from_start_to_finish(db):
    import re

    from django.test import Client

    from annotation.models import Annotator, Batch
    from annotation.services.demo import PHOTOS, SXS_CAMPAIGN, demo_load

    demo_load()
    # The German annotators would read their pages in German; this test reads the English ones.
    Annotator.objects.update(interface_language="en")
    caption_campaign = Campaign.objects.get(kind=CampaignKind.CAPTION, language__code="de")
    sxs_campaign = Campaign.objects.get(name=SXS_CAMPAIGN)
    clients = {}
    for name in ("anna-de", "ben-de", "clara-de", "dora-de", "manager"):
        clients[name] = Client()
        assert clients[name].login(username=name, password="demo-pass-2026")

    def start(client, campaign):
        response = client.post(reverse("annotation:campaign_work", args=[campaign.pk]))
        match = re.search(r"/batch/(\d+)/", response.get("Location", ""))
        return Batch.objects.get(pk=int(match.group(1))) if match else None

    def post(client, name, batch, data):
        response = client.post(
            reverse(f"annotation:{name}", args=[batch.pk]), data, content_type="application/json"
        )
        assert response.status_code == 200, response.content
        return response

    # Two German annotators write captions.
    for name in ("anna-de", "ben-de"):
        client = clients[name]
        batch = start(client, caption_campaign)
        for a in batch.assignments.all():
            post(client, "api_rating", batch, {"assignment": a.pk, "value": "good"})
        post(client, "api_open_writing", batch, {})
        for a in batch.assignments.all():
            post(
                client,
                "api_draft",
                batch,
                {
                    "assignment": a.pk,
                    "text": f"Ein Foto mit der Nummer {a.pk} zeigt etwas.",
                    "base_revision": 0,
                },
            )
        post(client, "api_submit", batch, {"submit_key": uuid.uuid4().hex})

    # The manager creates the verification campaign from the caption campaign, in the admin.
    manager = clients["manager"]
    response = manager.post(
        reverse("admin:annotation_campaign_changelist"),
        {"action": "verify_captions", "_selected_action": [caption_campaign.pk]},
    )
    response = manager.post(
        response["Location"],
        {
            "name": "Prüfung der deutschen Beschreibungen",
            "source_campaign": caption_campaign.pk,
            "sample_size": 6,
            "seed": 1,
            "replication": 3,
            "batch_size": 6,
            "open_now": "on",
        },
    )
    verification = Campaign.objects.get(kind=CampaignKind.RATING)
    assert verification.state == CampaignState.OPEN and verification.items.count() == 6

    # Four German annotators rate (nobody rates their own caption, so anna's captions need
    # ben, clara and dora), and fill the side-by-side campaign.
    for name in ("anna-de", "ben-de", "clara-de", "dora-de"):
        client = clients[name]
        assert "Start rating" in client.get(reverse("annotation:dashboard")).content.decode()
        batch = start(client, verification)
        assert client.get(reverse("annotation:verify", args=[batch.pk])).status_code == 200
        for n, a in enumerate(batch.assignments.order_by("position")):
            post(
                client,
                "api_rating",
                batch,
                {"assignment": a.pk, "value": ["excellent", "good", "medium"][n % 3]},
            )
        post(client, "api_submit_judgments", batch, {"submit_key": uuid.uuid4().hex})
        while (batch := start(client, sxs_campaign)) is not None:
            assert client.get(reverse("annotation:sxs", args=[batch.pk])).status_code == 200
            for a in batch.assignments.all():
                post(client, "api_sxs_judgment", batch, {"assignment": a.pk, "choice": "better"})
            post(client, "api_submit_judgments", batch, {"submit_key": uuid.uuid4().hex})

    # The manager sees the numbers.
    page = flat(manager.get(reverse("admin:annotation_campaign_change", args=[sxs_campaign.pk])))
    assert f"{3 * len(PHOTOS)} ({len(PHOTOS)} images with 3 judgments)" in page
    assert "control" in page and 'id="sxs-controls"' in page
    page = flat(manager.get(reverse("admin:annotation_campaign_change", args=[verification.pk])))
    assert "18 submitted ratings of 6 captions" in page
    page = flat(manager.get(reverse("admin:evaluation_languagestatistics_changelist")))
    assert '<tr data-language="de"><td>de</td><td>German</td><td class="num">30</td>' in page
