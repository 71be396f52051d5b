"""The side-by-side and verification screens as annotators meet them, and who may reach them
(RELIABILITY cases 13, 14, 16 and 20 for every new URL and endpoint)."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.assignment.engine import batch_request
from annotation.models import Assignment, Batch, BatchStage, CampaignKind, Rating, SxsJudgment
from annotation.services import work
from tests import factories as f

pytestmark = pytest.mark.django_db

MARKUP = '<script>alert("x")</script>'


@pytest.fixture
def sxs_campaign(german):
    return f.open_sxs_campaign(images=4, batch_size=4, replication=3, language=german, name="Vergleich")


def start(client, campaign) -> Batch:
    response = client.post(reverse("annotation:campaign_work", args=[campaign.pk]))
    assert response.status_code == 302, response
    return Batch.objects.get(pk=int(re.search(r"/batch/(\d+)/", response["Location"]).group(1)))


def post_json(client, name, batch_id, data):
    return client.post(reverse(f"annotation:{name}", args=[batch_id]), data, content_type="application/json")


# --- Dashboard ----------------------------------------------------------------------------------


def test_dashboard_lists_side_by_side_and_verification_campaigns_with_their_buttons(
    annotator_client, sxs_campaign, verification
):
    page = annotator_client.get(reverse("annotation:dashboard")).content.decode()
    assert "Vergleich" in page and "Start comparing" in page and "compare two captions side by side" in page
    assert "Prüfung" in page and "Start rating" in page
    # The caption campaign is still listed; it has every caption it needs, so it offers no start
    # button, and says why.
    assert "Start a batch" not in page
    assert "There is no image left for you in this campaign. Thank you!" in page


# --- Side-by-side screen ------------------------------------------------------------------------


def test_start_leads_to_the_side_by_side_screen_with_both_captions_and_the_seven_points(
    annotator_client, sxs_campaign
):
    response = annotator_client.post(reverse("annotation:campaign_work", args=[sxs_campaign.pk]))
    assert response["Location"].endswith("/compare/")
    batch = Batch.objects.get()
    page = annotator_client.get(response["Location"]).content.decode()
    for a in batch.assignments.select_related("item__caption_m1", "item__caption_m2"):
        assert a.item.caption_m1.text in page and a.item.caption_m2.text in page
    assert (
        page.count('<p class="side-label">Left</p>') == 4
        and page.count('<p class="side-label">Right</p>') == 4
    )
    for label in [
        "Left much better",
        "Left better",
        "Left slightly better",
        "Similar",
        "Right slightly better",
    ]:
        assert label in page
    assert "<kbd>7</kbd> Right much better" in page and "<kbd>4</kbd> Similar" in page
    assert "How to compare" in page and "a friend who cannot see it" in page  # one click away
    assert "0</span> / 4</bdi> judged" in page
    assert page.count('lang="de" dir="ltr"') == 8


def test_the_captions_are_placed_by_the_side_drawn_for_this_annotator(annotator_client, sxs_campaign):
    batch = start(annotator_client, sxs_campaign)
    first, second = list(batch.assignments.order_by("position"))[:2]
    Assignment.objects.filter(pk=first.pk).update(m2_side="left")
    Assignment.objects.filter(pk=second.pk).update(m2_side="right")
    page = annotator_client.get(reverse("annotation:sxs", args=[batch.pk])).content.decode()

    def sides(a):
        block = page[page.index(f'data-assignment="{a.pk}"') :]
        left = re.search(r'side-left">.*?<p class="caption"[^>]*>([^<]*)</p>', block, re.S).group(1)
        right = re.search(r'side-right">.*?<p class="caption"[^>]*>([^<]*)</p>', block, re.S).group(1)
        return left, right

    for a, expected in [(first, "left"), (second, "right")]:
        item = a.item
        m1, m2 = item.caption_m1.text, item.caption_m2.text
        assert sides(a) == ((m2, m1) if expected == "left" else (m1, m2))


def test_no_system_name_and_no_side_reach_the_page_or_the_api(annotator_client, sxs_campaign):
    batch = start(annotator_client, sxs_campaign)
    m1, m2 = sxs_campaign.base_system.name, sxs_campaign.test_system.name
    a = batch.assignments.order_by("position").first()
    saved = post_json(
        annotator_client, "api_sxs_judgment", batch.pk, {"assignment": a.pk, "choice": "better"}
    )
    assert saved.status_code == 200
    # No score (it would give the side away); the lease's end for the page's countdown.
    answer = saved.json()
    assert set(answer) == {"assignment", "choice", "lease_expires_at"}
    assert (answer["assignment"], answer["choice"]) == (a.pk, "better")
    page = annotator_client.get(reverse("annotation:sxs", args=[batch.pk])).content.decode()
    dashboard = annotator_client.get(reverse("annotation:dashboard")).content.decode()
    # A random CSRF token could hold "m1" or "m2" by chance: leave it out of the search.
    page, dashboard = (re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", t) for t in (page, dashboard))
    state = annotator_client.get(reverse("annotation:api_state", args=[batch.pk])).content.decode()
    for text in (page, dashboard, saved.content.decode(), state):
        for secret in (m1, m2, "m2_side", "m1", "m2", "base system", "test system", "score"):
            assert secret not in text, secret
    # The only data the items carry: ids, the choice as seen, and the keys; the page besides
    # carries the batch's lease (its end, the server's time, its length) for the countdown.
    attributes = set(re.findall(r"\sdata-([a-z-]+)=", page))
    assert attributes == {
        "batch",
        "field",
        "save-url",
        "submit-url",
        "state-url",
        "batch-url",
        "assignment",
        "value",
        "key",
        "expires",
        "server-now",
        "minutes",
        # The image-report dialog: its endpoint and two translated messages.
        "url",
        "done",
        "failed",
    }
    script = annotator_client.get("/static/js/items.js")
    body = b"".join(script.streaming_content) if script.streaming else script.content
    assert b"m1" not in body and b"m2" not in body and b"score" not in body


def test_rtl_language_sets_dir_on_both_captions(client):
    arabic = f.LanguageFactory(code="ar", name="Arabic", direction="rtl")
    campaign = f.open_sxs_campaign(images=2, batch_size=2, language=arabic)
    annotator = f.AnnotatorFactory(languages=[arabic], reads_english=False)
    client.force_login(annotator.user)
    batch = start(client, campaign)
    page = client.get(reverse("annotation:sxs", args=[batch.pk])).content.decode()
    assert page.count('lang="ar" dir="rtl"') == 4


def test_a_whole_batch_through_the_endpoints_then_the_submitted_page(
    annotator_client, annotator, sxs_campaign
):
    batch = start(annotator_client, sxs_campaign)
    for a in batch.assignments.all():
        r = post_json(
            annotator_client,
            "api_sxs_judgment",
            batch.pk,
            {"assignment": a.pk, "choice": "slightly_worse", "seconds": 4},
        )
        assert r.status_code == 200, r.content
    r = post_json(annotator_client, "api_submit_judgments", batch.pk, {"submit_key": "k" * 16, "seconds": 50})
    assert r.status_code == 200 and r.json()["next"] == f"/work/batch/{batch.pk}/"
    assert set(r.json()) == {"batch", "stage", "late", "next"}
    again = post_json(annotator_client, "api_submit_judgments", batch.pk, {"submit_key": "k" * 16})
    assert again.status_code == 200 and again.json() == r.json()
    batch.refresh_from_db()
    assert batch.stage == BatchStage.SUBMITTED and batch.rating_seconds == 50
    page = annotator_client.get(reverse("annotation:batch", args=[batch.pk])).content.decode()
    assert "Batch submitted" in page and "4 judgments" in page
    # A submitted batch's screen sends the annotator to the submitted page.
    r = annotator_client.get(reverse("annotation:sxs", args=[batch.pk]))
    assert r.status_code == 302 and r["Location"].endswith(f"/batch/{batch.pk}/")


def test_submit_before_all_are_judged_names_the_missing_ones(annotator_client, sxs_campaign):
    batch = start(annotator_client, sxs_campaign)
    a = batch.assignments.order_by("position").first()
    post_json(annotator_client, "api_sxs_judgment", batch.pk, {"assignment": a.pk, "choice": "similar"})
    r = post_json(annotator_client, "api_submit_judgments", batch.pk, {"submit_key": "k" * 16})
    assert r.status_code == 400
    assert "still open: 2, 3, 4" in r.json()["message"]


def test_the_caption_screens_do_not_open_a_side_by_side_batch_and_vice_versa(
    annotator_client, sxs_campaign, campaign
):
    batch = start(annotator_client, sxs_campaign)
    for name in ["screen1", "screen2", "verify"]:
        r = annotator_client.get(reverse(f"annotation:{name}", args=[batch.pk]))
        assert r.status_code == 302 and r["Location"].endswith(f"/batch/{batch.pk}/"), name
    assert annotator_client.get(reverse("annotation:batch", args=[batch.pk]))["Location"].endswith(
        "/compare/"
    )
    caption_batch = start(annotator_client, campaign)
    r = annotator_client.get(reverse("annotation:sxs", args=[caption_batch.pk]))
    assert r.status_code == 302
    r = post_json(
        annotator_client, "api_sxs_judgment", caption_batch.pk, {"assignment": 1, "choice": "similar"}
    )
    assert r.status_code == 409


def test_markup_in_side_by_side_captions_is_escaped(annotator_client, german):
    campaign = f.open_sxs_campaign(images=2, batch_size=2, language=german)
    for item in campaign.items.select_related("caption_m1"):
        item.caption_m1.text = MARKUP
        item.caption_m1.save()
    batch = start(annotator_client, campaign)
    page = annotator_client.get(reverse("annotation:sxs", args=[batch.pk]))
    assert MARKUP.encode() not in page.content
    assert b"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page.content
    assert "script-src 'self'" in page["Content-Security-Policy"]


# --- Verification screen ------------------------------------------------------------------------


def test_verification_screen_shows_the_human_caption_in_its_language_without_its_author(
    client, verification, german, annotator
):
    rater = f.AnnotatorFactory(user__username="rita", languages=[german], reads_english=False)
    client.force_login(rater.user)
    response = client.post(reverse("annotation:campaign_work", args=[verification.pk]))
    assert response["Location"].endswith("/verify/")
    batch = Batch.objects.get(annotator=rater)
    page = client.get(response["Location"]).content.decode()
    for a in batch.assignments.select_related("item__written_caption"):
        assert a.item.written_caption.text in page
    assert page.count('lang="de" dir="ltr"') == 6
    for label in ["EXCELLENT", "GOOD", "MEDIUM", "BAD", "NOT-ENOUGH-INFO"]:
        assert label in page
    assert "How to rate" in page and "0</span> / 6</bdi> rated" in page
    assert "anna" not in page and "otto" not in page  # the authors are not shown
    for a in batch.assignments.all():
        assert (
            post_json(client, "api_rating", batch.pk, {"assignment": a.pk, "value": "good"}).status_code
            == 200
        )
    r = post_json(client, "api_submit_judgments", batch.pk, {"submit_key": "v" * 16})
    assert r.status_code == 200
    assert "6 ratings" in client.get(reverse("annotation:batch", args=[batch.pk])).content.decode()
    assert Rating.objects.filter(assignment__batch=batch).count() == 6


# --- Access (RELIABILITY 13, 14, 16) ------------------------------------------------------------------


@pytest.fixture
def others_batches(sxs_campaign, verification, other_annotator, german):
    """Otto's side-by-side batch with one judgment, and his verification batch with one rating."""
    sxs, _ = batch_request(annotator=other_annotator, campaign_id=sxs_campaign.pk)
    a = sxs.assignments.first()
    work.sxs_judgment_save(
        annotator=other_annotator, batch_id=sxs.pk, assignment_id=a.pk, choice="much_better"
    )
    rating_batch, _ = batch_request(annotator=other_annotator, campaign_id=verification.pk)
    r = rating_batch.assignments.first()
    work.rating_save(
        annotator=other_annotator, batch_id=rating_batch.pk, assignment_id=r.pk, value="excellent"
    )
    return sxs, rating_batch


def new_urls(batch_id: int) -> list[tuple[str, str]]:
    return [
        ("get", reverse("annotation:batch", args=[batch_id])),
        ("get", reverse("annotation:sxs", args=[batch_id])),
        ("get", reverse("annotation:verify", args=[batch_id])),
        ("post", reverse("annotation:api_sxs_judgment", args=[batch_id])),
        ("post", reverse("annotation:api_rating", args=[batch_id])),
        ("post", reverse("annotation:api_submit_judgments", args=[batch_id])),
    ]


def test_other_annotators_batches_are_404_on_every_new_url_and_stay_unchanged(
    annotator_client, others_batches
):
    for batch in others_batches:
        a = batch.assignments.first()
        payload = {"assignment": a.pk, "choice": "much_worse", "value": "bad", "submit_key": "z" * 16}
        for method, url in new_urls(batch.pk):
            if method == "get":
                response = annotator_client.get(url)
            else:
                response = annotator_client.post(url, payload, content_type="application/json")
            assert response.status_code == 404, url
        batch.refresh_from_db()
        assert batch.stage == BatchStage.RATING
    sxs, rating_batch = others_batches
    assert SxsJudgment.objects.get(assignment__batch=sxs).choice == "much_better"
    assert Rating.objects.get(assignment__batch=rating_batch).value == "excellent"


def test_sequential_id_probing_of_the_new_screens_finds_nothing(annotator_client, annotator, others_batches):
    highest = Batch.objects.order_by("-pk").first().pk
    mine = set(Batch.objects.filter(annotator=annotator).values_list("pk", flat=True))  # her caption batches
    for batch_id in set(range(1, highest + 5)) - mine:
        for name in ["sxs", "verify"]:
            assert annotator_client.get(reverse(f"annotation:{name}", args=[batch_id])).status_code == 404
        for name in ["api_sxs_judgment", "api_submit_judgments"]:
            response = post_json(
                annotator_client,
                name,
                batch_id,
                {"assignment": 1, "choice": "similar", "submit_key": "k" * 16},
            )
            assert response.status_code == 404


def test_other_annotators_pair_inside_my_batch_is_404(
    annotator_client, annotator, sxs_campaign, others_batches
):
    mine = start(annotator_client, sxs_campaign)
    theirs = others_batches[0].assignments.first()
    r = post_json(
        annotator_client, "api_sxs_judgment", mine.pk, {"assignment": theirs.pk, "choice": "much_worse"}
    )
    assert r.status_code == 404
    assert SxsJudgment.objects.get(assignment=theirs).choice == "much_better"


def test_score_side_annotator_and_state_sent_by_a_client_are_ignored(
    annotator_client, annotator, other_annotator, sxs_campaign
):
    batch = start(annotator_client, sxs_campaign)
    a = batch.assignments.first()
    Assignment.objects.filter(pk=a.pk).update(m2_side="right")
    r = post_json(
        annotator_client,
        "api_sxs_judgment",
        batch.pk,
        {
            "assignment": a.pk,
            "choice": "much_better",
            "score": 3,
            "m2_side": "left",
            "annotator": other_annotator.pk,
            "state": "submitted",
            "item": 1,
        },
    )
    assert r.status_code == 200
    judgment = SxsJudgment.objects.get(assignment=a)
    assert judgment.score == -3  # the left caption was m1's: m2 much worse, whatever the client said
    a.refresh_from_db()
    assert (a.m2_side, a.annotator_id, a.state) == ("right", annotator.pk, "live")
    r = post_json(
        annotator_client, "api_submit_judgments", batch.pk, {"submit_key": "k" * 16, "stage": "submitted"}
    )
    assert r.status_code == 400
    batch.refresh_from_db()
    assert batch.stage == BatchStage.RATING


def test_csrf_is_enforced_on_the_new_endpoints(annotator, sxs_campaign):
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator.user)
    batch, _ = batch_request(annotator=annotator, campaign_id=sxs_campaign.pk)
    a = batch.assignments.first()
    for name, data in [
        ("api_sxs_judgment", {"assignment": a.pk, "choice": "similar"}),
        ("api_submit_judgments", {"submit_key": "k" * 16}),
    ]:
        assert post_json(client, name, batch.pk, data).status_code == 403
    assert not SxsJudgment.objects.exists()


def test_non_annotators_and_anonymous_users_reach_no_new_endpoint(client, sxs_campaign):
    r = client.get(reverse("annotation:sxs", args=[1]))
    assert r.status_code == 302 and "/accounts/login/" in r["Location"]
    assert post_json(client, "api_sxs_judgment", 1, {}).status_code == 403
    client.force_login(f.UserFactory(is_staff=True))
    assert client.get(reverse("annotation:verify", args=[1])).status_code == 403
    assert post_json(client, "api_submit_judgments", 1, {"submit_key": "k" * 16}).status_code == 403


def test_campaign_kind_choices_are_the_three_kinds():
    assert set(CampaignKind.values) == {"caption", "sxs", "rating"}
