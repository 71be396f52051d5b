"""The research REST API: roles, what it never shows, filters and pages, the numbers, the one write,
the schema and the docs page (RELIABILITY 13-16; 21 does not apply: the API answers JSON, no CSV)."""

from __future__ import annotations

import json
import re
import shutil
import uuid
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.pagination import PageNumberPagination
from rest_framework.test import APIClient

from annotation.assignment.engine import batch_request
from annotation.models import (
    CaptionDraft,
    CaptioningSystem,
    Rating,
    SxsJudgment,
    SystemCaption,
    WrittenCaption,
)
from annotation.services import work
from annotation.services.campaigns import (
    campaign_close,
    campaign_open,
    rating_campaign_create,
    sxs_campaign_create,
)
from core.access import PROJECT_MANAGERS, RESEARCHERS
from evaluation.human.selectors import sxs_results
from evaluation.models import (
    CaptionScore,
    CorpusScore,
    MetricRun,
    RunStatus,
)
from evaluation.research.api.apis import NO_COMPARISON, NO_ITEM
from evaluation.research.comparisons import comparisons_from_db
from evaluation.research.correlation import Comparison, correlate
from evaluation.research.meta_evaluation import (
    ACC23_LABEL,
    MIN_ITEMS,
    SIGNIFICANCE_LEVEL,
    trust_table,
    with_soft_pairwise_accuracy,
)
from evaluation.research.trust_tables import Trust, trust_records
from tests import factories as f

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-only"
DRAFT_TEXT = "GEHEIMER ENTWURF 4711"
UNSUBMITTED_SXS_SYSTEM = "kappa-sys"
SYSTEMS = ["alpha-sys", "beta-sys", "gamma-sys", "delta-sys"]
# Corpus scores per system: CIDEr grows with the system, BLEU-4 shrinks.
# Mirroring ties ΔS×S values (+50 of one comparison, −(−50) of another): the deltas tie alike, so the
# ranks agree exactly.
CIDER = {"alpha-sys": 0.5, "beta-sys": 0.6, "gamma-sys": 0.8, "delta-sys": 0.5}
BLEU4 = {"alpha-sys": 0.30, "beta-sys": 0.25, "gamma-sys": 0.15, "delta-sys": 0.30}
# (m1, m2, scores from m2's side of the 4 images, K = 1) -> ΔS×S = WINS − LOSSES.
SXS_PLAN = [
    ("alpha-sys", "beta-sys", [1, 1, 1, -1], 50.0),
    ("alpha-sys", "gamma-sys", [2, 1, 3, 1], 100.0),
    ("beta-sys", "delta-sys", [1, -1, -2, -1], -50.0),
    ("gamma-sys", "delta-sys", [-1, -3, -1, -2], -100.0),
]


# --- The world: every kind of data the API reads, and some it must never show -------------------------


def judge(campaign, annotator, score_of_image: dict[int, int], *, submit: bool = True):
    """Judge every pair of a new batch so that its score from m2's side is ``score_of_image``, whatever
    side the server drew for m2."""
    return f.sxs_judged(
        annotator, campaign=campaign, score=lambda a: score_of_image[a.item.image_id], submit=submit
    )


@pytest.fixture
def world(db):
    german = f.LanguageFactory(code="de", name="German")
    w = SimpleNamespace(german=german)
    # Usernames unlike any word of the API's answers, whose leaking the tests look for.
    w.researcher = f.RoleUserFactory(username="res-user-q7", role=RESEARCHERS)
    w.manager = f.RoleUserFactory(username="pm-user-q8", role=PROJECT_MANAGERS)
    w.superuser = f.UserFactory(username="root-user-q9", is_staff=True, is_superuser=True)
    w.plain = f.UserFactory(username="plain-user-q0")
    w.writers = [
        f.AnnotatorFactory(user__username=name, languages=[german]) for name in ("anna-q1", "bert-q2")
    ]
    w.drafter = f.AnnotatorFactory(user__username="cem-q3", languages=[german])
    w.judge = f.AnnotatorFactory(user__username="dora-q4", languages=[german])
    w.annotator = w.drafter  # an annotator with work in progress: the API is closed to them
    w.usernames = [u.username for u in (w.researcher, w.manager, w.superuser, w.plain)] + [
        a.user.username for a in (*w.writers, w.drafter, w.judge)
    ]

    # A caption campaign: 4 submitted captions, and a batch on screen 2 with a draft.
    w.caption_campaign = f.open_caption_campaign(images=6, batch_size=2, replication=1, language=german)
    f.written_captions(w.caption_campaign, annotators=w.writers, text=lambda a: f"Ein Bild {a.pk}.")
    w.draft_batch, _ = batch_request(annotator=w.drafter, campaign_id=w.caption_campaign.pk)
    for a in w.draft_batch.assignments.all():
        work.rating_save(annotator=w.drafter, batch_id=w.draft_batch.pk, assignment_id=a.pk, value="bad")
    work.writing_open(annotator=w.drafter, batch_id=w.draft_batch.pk)
    for a in w.draft_batch.assignments.all():
        work.draft_save(
            annotator=w.drafter,
            batch_id=w.draft_batch.pk,
            assignment_id=a.pk,
            text=DRAFT_TEXT,
            base_revision=0,
        )

    # A verification campaign: one rater submitted, another is still rating.
    w.verification = rating_campaign_create(
        name="Prüfung", source_campaign_id=w.caption_campaign.pk, seed=1, batch_size=4, replication=2
    )
    campaign_open(campaign_id=w.verification.pk)
    for rater, submit in ((w.judge, True), (w.writers[0], False)):
        batch, _ = batch_request(annotator=rater, campaign_id=w.verification.pk)
        for a in batch.assignments.all():
            work.rating_save(annotator=rater, batch_id=batch.pk, assignment_id=a.pk, value="good")
        if submit:
            work.judgment_batch_submit(annotator=rater, batch_id=batch.pk, submit_key=uuid.uuid4().hex)

    # Four finished side-by-side campaigns over the same four images (K = 1; the first with an
    # identical control), and one whose only batch is not submitted.
    w.images = [f.ImageFactory() for _ in range(4)]
    systems = {name: f.SystemFactory(name=name) for name in [*SYSTEMS, UNSUBMITTED_SXS_SYSTEM]}
    for n, system in enumerate(systems.values()):
        for i, image in enumerate(w.images):
            SystemCaption.objects.create(
                system=system, image=image, language=german, text=f"Bild {i} von System {n}"
            )
    w.sxs = []
    for n, (m1, m2, scores, _) in enumerate(SXS_PLAN):
        campaign = sxs_campaign_create(
            name=f"Vergleich {n}",
            language_code="de",
            base_system=m1,
            test_system=m2,
            batch_size=5,
            replication=1,
            seed=n,
            controls_identical=1 if n == 0 else 0,
        )
        campaign = campaign_open(campaign_id=campaign.pk)
        judge(campaign, w.judge, {image.pk: s for image, s in zip(w.images, scores)})
        w.sxs.append(campaign)
    w.open_sxs = campaign_open(
        campaign_id=sxs_campaign_create(
            name="Vergleich offen",
            language_code="de",
            base_system="alpha-sys",
            test_system=UNSUBMITTED_SXS_SYSTEM,
            batch_size=4,
            replication=1,
            seed=9,
        ).pk
    )
    w.open_sxs_batch = judge(w.open_sxs, w.writers[1], {image.pk: 3 for image in w.images}, submit=False)

    # References, and a finished run with corpus and caption scores.
    w.references = f.reference_set_with(
        w.images,
        [[f"Bild {i} Referenz {position}" for position in range(2)] for i in range(len(w.images))],
        name="refs-de",
        language=german,
    )
    w.run = f.MetricRunFactory(
        name="scores",
        language=german,
        reference_set=w.references,
        metrics=["BLEU-4", "CIDEr"],
        chunks_done=4,
        chunks_total=4,
        systems=[systems[name] for name in SYSTEMS],
    )
    for name in SYSTEMS:
        f.CorpusScoreFactory(run=w.run, system=systems[name], metric="CIDEr", value=CIDER[name])
        f.CorpusScoreFactory(run=w.run, system=systems[name], metric="BLEU-4", value=BLEU4[name])
        for i, image in enumerate(w.images):
            f.CaptionScoreFactory(
                run=w.run, system=systems[name], image=image, metric="CIDEr", value=CIDER[name] + i / 10
            )
            f.CaptionScoreFactory(
                run=w.run, system=systems[name], image=image, metric="BLEU-4", value=BLEU4[name]
            )
    return w


def api(user=None) -> APIClient:
    """A client that authenticates with the user's token (none: anonymous)."""
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def get_urls(w) -> list[str]:
    """Every GET endpoint of the API, with ids of objects that exist."""
    caption = WrittenCaption.objects.order_by("pk").first()
    judgment = SxsJudgment.objects.filter(assignment__item__campaign=w.sxs[0]).first()
    rating = Rating.objects.filter(assignment__item__campaign=w.verification, assignment__state="submitted")
    return [
        reverse("api:language-list"),
        reverse("api:system-list"),
        reverse("api:reference-set-list"),
        reverse("api:image-set-list"),
        reverse("api:campaign-list"),
        reverse("api:campaign-detail", args=[w.sxs[0].pk]),
        reverse("api:campaign-detail", args=[w.verification.pk]),
        reverse("api:campaign-detail", args=[w.caption_campaign.pk]),
        reverse("api:caption-list"),
        reverse("api:caption-detail", args=[caption.pk]),
        reverse("api:judgment-list"),
        reverse("api:judgment-detail", args=[judgment.pk]),
        reverse("api:rating-list"),
        reverse("api:rating-detail", args=[rating.first().pk]),
        reverse("api:metric-run-list"),
        reverse("api:metric-run-detail", args=[w.run.pk]),
        reverse("api:metric-run-caption-scores", args=[w.run.pk]),
        reverse("api:correlations") + f"?runs={w.run.pk}&n_boot=100&n_permutations=100",
        reverse("api:trust") + f"?runs={w.run.pk}&n_boot=100&n_permutations=100",
        reverse("api:schema"),
        reverse("api:docs"),
        reverse("api:docs") + "?script",
    ]


# --- Roles (RELIABILITY 13, 15) ------------------------------------------------------------------------


def test_researchers_project_managers_and_superusers_read_every_endpoint(world):
    for user in (world.researcher, world.manager, world.superuser):
        client = api(user)
        for url in get_urls(world):
            response = client.get(url)
            assert response.status_code == 200, (user.username, url, response.content[:300])
            # Research data are never stored by a browser or proxy; the schema and docs neither.
            assert response["Cache-Control"] == "private, no-store", url


def test_without_credentials_every_endpoint_answers_401_and_asks_for_a_token(world):
    for url in get_urls(world):
        response = api().get(url)
        assert response.status_code == 401, url
        assert response["WWW-Authenticate"] == "Token", url
    response = api().post(reverse("api:metric-run-list"), {}, format="json")
    assert response.status_code == 401


def test_annotators_and_other_accounts_get_403_everywhere_by_token_and_by_session(world):
    session = Client()
    session.force_login(world.annotator.user)
    clients = {
        "annotator token": api(world.annotator.user),
        "plain token": api(world.plain),
        "session": session,
    }
    for name, client in clients.items():
        for url in get_urls(world):
            response = client.get(url)
            assert response.status_code == 403, (name, url)
            assert DRAFT_TEXT.encode() not in response.content
    # Every write method too, on every endpoint: 403 before anything else is looked at.
    for url in get_urls(world):
        for method in ("post", "put", "patch", "delete"):
            response = getattr(api(world.annotator.user), method)(url, {"name": "x"}, format="json")
            assert response.status_code == 403, (method, url)
    assert MetricRun.objects.count() == 1


def test_an_inactive_researcher_and_a_deleted_token_are_refused(world):
    client = api(world.researcher)
    Token.objects.filter(user=world.researcher).delete()
    assert client.get(reverse("api:language-list")).status_code == 401
    world.manager.is_active = False
    world.manager.save()
    assert api(world.manager).get(reverse("api:language-list")).status_code == 401


def test_researchers_cannot_change_anything_but_start_runs(world):
    client = api(world.researcher)
    for url in get_urls(world):
        for method in ("put", "patch", "delete"):
            assert getattr(client, method)(url, {}, format="json").status_code == 405, (method, url)
        if url != reverse("api:metric-run-list"):
            assert client.post(url, {}, format="json").status_code == 405, url


# --- Nothing that is not submitted, nobody's user name (RELIABILITY 13) ---------------------------------


def all_responses(w, client) -> list[bytes]:
    bodies = []
    for url in get_urls(w):
        if "docs" in url:
            continue
        response = client.get(url)
        assert response.status_code == 200, url
        bodies.append(response.content)
    return bodies


def test_no_endpoint_shows_drafts_unsubmitted_work_or_user_names(world):
    client = api(world.researcher)
    assert CaptionDraft.objects.filter(text=DRAFT_TEXT).count() == 2
    for body in all_responses(world, client):
        assert DRAFT_TEXT.encode() not in body
        for username in world.usernames:
            assert username.encode() not in body, username
    # The unfinished side-by-side batch and the verification batch still being rated are not there.
    judgments = client.get(reverse("api:judgment-list")).json()
    assert judgments["count"] == 17  # 16 pairs and 1 control
    assert {j["m2"] for j in judgments["results"]} == {m2 for _, m2, _, _ in SXS_PLAN}
    ratings = client.get(reverse("api:rating-list"), {"kind": "verification"}).json()
    assert ratings["count"] == 4
    assert {r["annotator"] for r in ratings["results"]} == {world.judge.pseudonym}
    prompt = client.get(reverse("api:rating-list"), {"kind": "prompt"}).json()
    assert prompt["count"] == 4  # the drafter's screen-1 ratings are in an open batch
    assert {r["value"] for r in prompt["results"]} == {"good"}


def test_sequential_id_probing_finds_only_submitted_work(world):
    client = api(world.researcher)
    probes = {
        "api:caption-detail": set(WrittenCaption.objects.values_list("pk", flat=True)),
        "api:judgment-detail": set(
            SxsJudgment.objects.filter(assignment__state="submitted").values_list("pk", flat=True)
        ),
        "api:rating-detail": set(
            Rating.objects.filter(assignment__state="submitted").values_list("pk", flat=True)
        ),
        "api:campaign-detail": {
            c.pk for c in (world.caption_campaign, world.verification, *world.sxs, world.open_sxs)
        },
        "api:metric-run-detail": {world.run.pk},
        "api:metric-run-caption-scores": {world.run.pk},
    }
    hidden_judgments = set(
        SxsJudgment.objects.filter(assignment__batch=world.open_sxs_batch).values_list("pk", flat=True)
    )
    hidden_ratings = set(
        Rating.objects.filter(assignment__batch=world.draft_batch).values_list("pk", flat=True)
    )
    assert len(hidden_judgments) == 4 and len(hidden_ratings) == 2
    for name, visible in probes.items():
        for pk in range(1, max(visible) + 25):
            response = client.get(reverse(name, args=[pk]))
            assert response.status_code == (200 if pk in visible else 404), (name, pk)
            assert DRAFT_TEXT.encode() not in response.content
            if response.status_code == 404:
                assert response.json()["error"] == "not_found"
    assert not hidden_judgments & probes["api:judgment-detail"]
    assert not hidden_ratings & probes["api:rating-detail"]


def test_captions_carry_pseudonyms_and_timings(world):
    response = api(world.researcher).get(reverse("api:caption-list"), {"campaign": world.caption_campaign.pk})
    body = response.json()
    assert body["count"] == 4
    pseudonyms = {a.pseudonym for a in world.writers}
    assert {c["annotator"] for c in body["results"]} == pseudonyms
    first = WrittenCaption.objects.select_related("assignment__batch").order_by("pk").first()
    row = body["results"][0]
    assert row == {
        "id": first.pk,
        "text": first.text,
        "image": first.image.key,
        "language": "de",
        "campaign": world.caption_campaign.pk,
        "annotator": first.annotator.pseudonym,
        "seconds": first.seconds,
        "batch_rating_seconds": first.assignment.batch.rating_seconds,
        "batch_writing_seconds": first.assignment.batch.writing_seconds,
        "is_late": False,
        "submitted_at": row["submitted_at"],
    }
    assert row["submitted_at"]


# --- Filters and pages --------------------------------------------------------------------------------


def test_filters(world):
    client = api(world.researcher)

    def ids(url, **params):
        response = client.get(reverse(url), params)
        assert response.status_code == 200, response.content
        return response.json()

    assert [c["code"] for c in ids("api:language-list")["results"]] == ["de", "en"]
    assert ids("api:language-list", code="de")["count"] == 1
    assert {s["name"] for s in ids("api:system-list", language="de")["results"]} == {
        *SYSTEMS,
        UNSUBMITTED_SXS_SYSTEM,
    }
    (alpha,) = ids("api:system-list", name="alpha-sys")["results"]
    assert alpha["languages"] == ["de"]
    assert ids("api:campaign-list", kind="sxs")["count"] == 5
    assert ids("api:campaign-list", kind="rating", language="de")["count"] == 1
    assert ids("api:campaign-list", language="fr")["count"] == 0
    assert ids("api:campaign-list", state="closed")["count"] == 0
    writer = world.writers[0].pseudonym
    assert {c["annotator"] for c in ids("api:caption-list", annotator=writer)["results"]} == {writer}
    assert ids("api:judgment-list", system="gamma-sys")["count"] == 8
    assert ids("api:judgment-list", campaign=world.sxs[1].pk)["count"] == 4
    (control,) = ids("api:judgment-list", control="true")["results"]
    assert (control["campaign"], control["control_kind"], control["is_control"]) == (
        world.sxs[0].pk,
        "identical",
        True,
    )
    assert ids("api:judgment-list", control="false")["count"] == 16
    assert ids("api:metric-run-list", status="succeeded", system="beta-sys")["count"] == 1
    assert ids("api:metric-run-list", status="running")["count"] == 0
    assert ids("api:reference-set-list", language="de")["count"] == 1


def test_bad_or_unknown_query_parameters_are_refused_with_a_message(world):
    client = api(world.researcher)
    response = client.get(reverse("api:campaign-list"), {"langauge": "de"})
    assert response.status_code == 400
    assert "Unknown query parameter(s): langauge" in response.json()["message"]
    response = client.get(reverse("api:campaign-list"), {"kind": "poll"})
    assert response.status_code == 400 and response.json()["message"].startswith("kind:")
    assert client.get(reverse("api:caption-list"), {"campaign": "abc"}).status_code == 400
    assert client.get(reverse("api:caption-list"), {"campaign": "1.5"}).status_code == 400
    response = client.get(reverse("api:judgment-list"), {"control": "maybe"})
    assert response.status_code == 400 and response.json()["message"] == "control: Give true or false."
    assert response.json()["error"] == "invalid"
    response = client.get(reverse("api:language-list"), {"code": "x" * 17})
    assert response.status_code == 400 and response.json()["message"].startswith("code:")
    assert client.get(reverse("api:correlations")).status_code == 400
    assert client.get(reverse("api:correlations"), {"runs": "1;2"}).status_code == 400


def test_pages(world, monkeypatch):
    monkeypatch.setattr(PageNumberPagination, "page_size", 5)
    client = api(world.researcher)
    url = reverse("api:metric-run-caption-scores", args=[world.run.pk])
    assert client.get(url).json()["count"] == 32  # CIDEr and BLEU-4 of 4 systems on 4 images
    cider = {"metric": "CIDEr"}
    first = client.get(url, cider).json()
    assert first["count"] == 16 and len(first["results"]) == 5 and first["previous"] is None
    assert first["next"].endswith(f"{url}?metric=CIDEr&page=2")
    last = client.get(url, {**cider, "page": 4}).json()
    assert len(last["results"]) == 1 and last["next"] is None
    seen = [
        (r["system"], r["image"])
        for page in (1, 2, 3, 4)
        for r in client.get(url, {**cider, "page": page}).json()["results"]
    ]
    assert len(set(seen)) == 16
    assert client.get(url, {**cider, "page": 5}).status_code == 404
    filtered = client.get(url, {**cider, "system": "gamma-sys", "image": world.images[2].key}).json()
    assert filtered["results"] == [
        {"system": "gamma-sys", "image": world.images[2].key, "metric": "CIDEr", "value": pytest.approx(1.0)}
    ]


def test_list_pages_cost_a_fixed_number_of_queries(world, django_assert_max_num_queries):
    client = api(world.researcher)
    for url in (
        "api:campaign-list",
        "api:judgment-list",
        "api:rating-list",
        "api:caption-list",
        "api:metric-run-list",
    ):
        with django_assert_max_num_queries(8):
            assert client.get(reverse(url)).status_code == 200


# --- The numbers --------------------------------------------------------------------------------------


def test_campaign_progress_and_side_by_side_results(world):
    client = api(world.researcher)
    listed = {c["id"]: c for c in client.get(reverse("api:campaign-list")).json()["results"]}
    assert listed[world.sxs[0].pk]["progress"] == {
        "items": 5,
        "control_items": 1,
        "complete": 5,
        "results": 5,
    }
    assert listed[world.open_sxs.pk]["progress"] == {
        "items": 4,
        "control_items": 0,
        "complete": 0,
        "results": 0,
    }
    assert listed[world.caption_campaign.pk]["progress"]["results"] == 4
    assert "sxs" not in listed[world.sxs[0].pk]  # ΔS×S only on the detail page

    detail = client.get(reverse("api:campaign-detail", args=[world.sxs[0].pk])).json()
    assert (detail["base_system"], detail["test_system"], detail["kind"]) == ("alpha-sys", "beta-sys", "sxs")
    summary = detail["sxs"]["summary"]
    assert (summary["wins_pct"], summary["losses_pct"], summary["delta_sxs"]) == (75.0, 25.0, 50.0)
    expected = sxs_results(world.sxs[0]).summary
    assert (summary["ci_low"], summary["ci_high"]) == (expected.ci_low, expected.ci_high)
    assert detail["verification"] is None and detail["statistics"] is None

    verification = client.get(reverse("api:campaign-detail", args=[world.verification.pk])).json()
    assert verification["verification"]["quality"]["pct_good_plus"] == 100.0
    assert verification["verification"]["n_ratings"] == 4
    captions = client.get(reverse("api:campaign-detail", args=[world.caption_campaign.pk])).json()
    assert captions["statistics"]["n_captions"] == 4 and captions["sxs"] is None


def test_judgments_as_seen_and_from_m2s_side(world):
    client = api(world.researcher)
    rows = client.get(reverse("api:judgment-list"), {"campaign": world.sxs[2].pk}).json()["results"]
    scores = dict(zip([i.key for i in world.images], SXS_PLAN[2][2]))
    for row in rows:
        assert row["score"] == scores[row["image"]]
        assert (row["m1"], row["m2"], row["language"]) == ("beta-sys", "delta-sys", "de")
        advantage = row["score"] if row["m2_side"] == "left" else -row["score"]
        assert row["choice"] == f.CHOICE_FOR_LEFT_ADVANTAGE[advantage]
        assert row["choice_label"] == row["choice"].upper().replace("_", "-")
        assert row["choice_as_seen"].startswith(("Left", "Right", "Similar"))
        assert row["annotator"] == world.judge.pseudonym and row["is_late"] is False


def test_correlations_of_finished_campaigns_with_a_metric_run(world):
    response = api(world.researcher).get(reverse("api:correlations"), {"runs": world.run.pk, "n_boot": 200})
    assert response.status_code == 200, response.content
    body = response.json()
    comparisons = {(c["m1"], c["m2"]): c for c in body["comparisons"]}
    # The unfinished campaign (its batch is not submitted) is not a comparison: it is listed as left out.
    assert set(comparisons) == {(m1, m2) for m1, m2, _, _ in SXS_PLAN}
    for m1, m2, _, delta_sxs in SXS_PLAN:
        c = comparisons[(m1, m2)]
        assert c["delta_sxs"] == delta_sxs
        assert c["deltas"] == {
            "BLEU-4": pytest.approx(BLEU4[m2] - BLEU4[m1]),
            "CIDEr": pytest.approx(CIDER[m2] - CIDER[m1]),
        }
        assert c["runs"] == {"BLEU-4": world.run.pk, "CIDEr": world.run.pk}
    assert [(s["campaign"], s["metrics"]) for s in body["skipped"]] == [(world.open_sxs.pk, [])]
    assert body["skipped"][0]["reason"].startswith("not finished (open; 0 of ")
    assert body["both_directions"] is True
    cider = body["results"]["CIDEr"]
    assert set(cider) == {"all", "de"}
    assert (cider["all"]["n"], cider["all"]["n_comparisons"]) == (8, 4)
    # ΔS×S and ΔCIDEr rank the four comparisons the same way; ΔBLEU-4 the opposite way.
    assert cider["all"]["spearman"] == pytest.approx(1.0) and cider["all"]["kendall_tau_b"] == pytest.approx(
        1.0
    )
    assert body["results"]["BLEU-4"]["all"]["spearman"] == pytest.approx(-1.0)
    sxs = np.array([d for *_, d in SXS_PLAN])
    delta = np.array([CIDER[m2] - CIDER[m1] for m1, m2, _, _ in SXS_PLAN])
    pearson = np.corrcoef(np.concatenate([sxs, -sxs]), np.concatenate([delta, -delta]))[0, 1]
    assert cider["all"]["pearson"] == pytest.approx(pearson)
    assert cider["all"]["pearson_ci"] is not None and len(cider["all"]["pearson_ci"]) == 2
    # The same as correlate() on the comparisons entered by hand.
    by_hand = correlate(
        [
            Comparison(m1, m2, "de", d, {"CIDEr": CIDER[m2] - CIDER[m1], "BLEU-4": BLEU4[m2] - BLEU4[m1]})
            for m1, m2, _, d in SXS_PLAN
        ],
        n_boot=200,
    )
    assert cider["de"]["kendall_tau_c"] == pytest.approx(by_hand["CIDEr"]["de"].kendall_tau_c)
    assert cider["de"]["kendall_tau_c_variant"] == "scipy (m=min distinct)"
    assert cider["de"]["spearman_ci"] == pytest.approx(list(by_hand["CIDEr"]["de"].spearman_ci))


def test_correlation_options_and_refusals(world):
    client = api(world.researcher)
    url = reverse("api:correlations")
    one = client.get(url, {"runs": world.run.pk, "one_direction": "true", "n_boot": 0}).json()
    assert one["results"]["CIDEr"]["all"]["n"] == 4 and one["results"]["CIDEr"]["all"]["pearson_ci"] is None
    # A campaign chosen by id counts whatever its state; one without scores is skipped with the reason.
    chosen = client.get(
        url, {"runs": world.run.pk, "campaigns": f"{world.sxs[0].pk},{world.open_sxs.pk}"}
    ).json()
    assert [c["campaign"] for c in chosen["comparisons"]] == [world.sxs[0].pk]
    assert [{k: s[k] for k in ("campaign", "campaign_name", "m2", "metrics")} for s in chosen["skipped"]] == [
        {
            "campaign": world.open_sxs.pk,
            "campaign_name": "Vergleich offen",
            "m2": UNSUBMITTED_SXS_SYSTEM,
            "metrics": [],
        }
    ]
    assert chosen["skipped"][0]["reason"] == "no submitted judgment of a real pair yet"
    # A closed campaign is finished even when not every item is judged.
    campaign_close(campaign_id=world.open_sxs.pk)
    closed = client.get(url, {"runs": world.run.pk}).json()
    assert world.open_sxs.pk in [s["campaign"] for s in closed["skipped"]]

    twin = f.MetricRunFactory(name="twin", language=world.german, reference_set=world.references)
    for score in CorpusScore.objects.filter(run=world.run, metric="CIDEr"):
        f.CorpusScoreFactory(run=twin, system=score.system, metric="CIDEr", value=score.value)
    for score in CaptionScore.objects.filter(run=world.run, metric="CIDEr"):
        f.CaptionScoreFactory(
            run=twin, system=score.system, image=score.image, metric="CIDEr", value=score.value
        )
    # Two runs score the same pair with CIDEr: the run given first wins, the other is listed for that metric.
    body = client.get(url, {"runs": f"{twin.pk},{world.run.pk}"}).json()
    pair = next(c for c in body["comparisons"] if (c["m1"], c["m2"]) == ("alpha-sys", "beta-sys"))
    assert pair["runs"] == {"CIDEr": twin.pk, "BLEU-4": world.run.pk}
    noted = [s for s in body["skipped"] if s["metrics"] == ["CIDEr"] and s["m2"] == "beta-sys"]
    assert len(noted) == 1 and f"run #{twin.pk} (given first) is used" in noted[0]["reason"]
    twin.status = RunStatus.RUNNING
    twin.save()
    response = client.get(url, {"runs": twin.pk})
    assert response.status_code == 400 and "has not succeeded (running)" in response.json()["message"]
    response = client.get(url, {"runs": "999999"})
    assert response.status_code == 400 and response.json()["message"] == "There is no metric run #999999."
    response = client.get(url, {"runs": world.run.pk, "campaigns": world.caption_campaign.pk})
    assert response.status_code == 400 and "not a side-by-side campaign" in response.json()["message"]


# --- Pairwise accuracies and the trust table -------------------------------------------------------------


def corpus_only_run(w, name: str, values: dict[str, float], metric: str = "CIDEr-D"):
    """A finished run with corpus scores only (no per-caption score): a model level, no item level."""
    run = f.MetricRunFactory(name=name, language=w.german, reference_set=w.references, metrics=[metric])
    for system, value in values.items():
        f.CorpusScoreFactory(
            run=run, system=CaptioningSystem.objects.get(name=system), metric=metric, value=value
        )
    return run


def test_correlations_carry_pairwise_accuracy_counted_by_hand(world):
    # ΔCIDEr-D of this run against ΔS×S on the first three campaigns: beta − alpha = +0.1 (ΔS×S +50,
    # agrees), gamma − alpha = −0.1 (+100, disagrees), delta − beta = −0.1 (−50, agrees): 2 of 3.
    mixed = corpus_only_run(
        world, "mixed", {"alpha-sys": 0.5, "beta-sys": 0.6, "gamma-sys": 0.4, "delta-sys": 0.5}
    )
    three = ",".join(str(c.pk) for c in world.sxs[:3])
    body = (
        api(world.researcher)
        .get(
            reverse("api:correlations"),
            {"runs": f"{mixed.pk},{world.run.pk}", "campaigns": three, "n_boot": 200},
        )
        .json()
    )
    mixed_all = body["results"]["CIDEr-D"]["all"]
    assert mixed_all["pairwise_accuracy"] == pytest.approx(2 / 3)
    assert mixed_all["n_comparisons"] == 3
    lo, hi = mixed_all["pairwise_accuracy_ci"]
    assert 0 <= lo <= 2 / 3 <= hi <= 1
    # No per-caption score, no soft pairwise accuracy: null, on no comparison.
    assert (
        mixed_all["soft_pairwise_accuracy"],
        mixed_all["soft_pairwise_accuracy_ci"],
        mixed_all["n_soft"],
    ) == (
        None,
        None,
        0,
    )
    # The world's run: CIDEr agrees on all three, BLEU-4 on none; mirroring changes neither.
    assert body["results"]["CIDEr"]["de"]["pairwise_accuracy"] == 1.0
    assert body["results"]["BLEU-4"]["de"]["pairwise_accuracy"] == 0.0
    one = (
        api(world.researcher)
        .get(
            reverse("api:correlations"),
            {"runs": mixed.pk, "campaigns": three, "one_direction": "true", "n_boot": 0},
        )
        .json()
    )
    assert one["results"]["CIDEr-D"]["all"]["pairwise_accuracy"] == pytest.approx(2 / 3)
    assert one["results"]["CIDEr-D"]["all"]["pairwise_accuracy_ci"] is None


def test_correlations_carry_soft_pairwise_accuracy_from_the_judgments(world):
    client = api(world.researcher)
    # Campaign 1 alone: people prefer gamma on all four images (+2, +1, +3, +1). ΔCIDEr is +0.3 on each:
    # a sign-flip draw reaches the observed sum for both only when it flips nothing, so the two
    # p-values are equal draw by draw and the soft pairwise accuracy is exactly 1. ΔBLEU-4 is −0.15 on
    # each: every draw reaches its sum (p = 1), so 1 − |p_people − 1| = p_people ≈ 1/16.
    params = {"runs": world.run.pk, "campaigns": world.sxs[1].pk, "n_permutations": 4000, "n_boot": 100}
    body = client.get(reverse("api:correlations"), params).json()
    assert body["n_permutations"] == 4000
    cider, bleu = body["results"]["CIDEr"]["de"], body["results"]["BLEU-4"]["de"]
    assert (cider["soft_pairwise_accuracy"], cider["n_soft"]) == (1.0, 1)
    assert bleu["soft_pairwise_accuracy"] == pytest.approx(1 / 16, abs=0.015)
    assert bleu["n_soft"] == 1

    # Every campaign: the same numbers as the builders called directly on the same selection.
    params = {"runs": world.run.pk, "n_permutations": 300, "n_boot": 150, "seed": 5}
    body = client.get(reverse("api:correlations"), params).json()
    found = comparisons_from_db(metric_run_ids=[world.run.pk])
    direct = with_soft_pairwise_accuracy(
        correlate(list(found), n_boot=150, seed=5),
        list(found),
        found.items,
        n_permutations=300,
        n_boot=150,
        seed=5,
    )
    for metric in ("CIDEr", "BLEU-4"):
        for language in ("all", "de"):
            result, expected = body["results"][metric][language], direct[metric][language]
            assert result["n_soft"] == expected.n_soft == 4
            assert result["soft_pairwise_accuracy"] == expected.soft_pairwise_accuracy
            assert result["soft_pairwise_accuracy_ci"] == list(expected.soft_pairwise_accuracy_ci)
            assert result["pairwise_accuracy_ci"] == list(expected.pairwise_accuracy_ci)
    # CIDEr follows people on every comparison, BLEU-4 against them: far apart.
    assert body["results"]["CIDEr"]["all"]["soft_pairwise_accuracy"] > 0.8
    assert body["results"]["BLEU-4"]["all"]["soft_pairwise_accuracy"] < 0.5


def test_the_trust_table_is_trust_table_of_the_same_selection(world):
    params = {"runs": world.run.pk, "n_boot": 200, "n_permutations": 200, "seed": 3}
    response = api(world.researcher).get(reverse("api:trust"), params)
    assert response.status_code == 200, response.content
    body = response.json()

    found = comparisons_from_db(metric_run_ids=[world.run.pk])
    table = trust_table(found.items, n_boot=200, n_permutations=200, seed=3)
    system = with_soft_pairwise_accuracy(
        correlate(list(found), n_boot=200, seed=3),
        list(found),
        found.items,
        n_permutations=200,
        n_boot=200,
        seed=3,
    )
    assert body["cells"] == trust_records(Trust(table, system))
    assert body["clip_flags"] == [] and not any(
        cell["clip_flag"] for cell in body["cells"]
    )  # no CLIP run here
    assert body["metrics"] == list(table.metrics) == ["CIDEr", "BLEU-4"]
    assert (body["measure"], body["alpha"], body["min_items"]) == (ACC23_LABEL, SIGNIFICANCE_LEVEL, MIN_ITEMS)
    # The table names the test behind its clusters: mt-metrics-eval's PermutationSigDiff by default.
    assert body["significance_test"] == table.significance_test == "PermutationSigDiff"
    assert (body["n_boot"], body["n_permutations"], body["seed"], body["note"]) == (200, 200, 3, "")
    assert [(s["campaign"], s["metrics"]) for s in body["skipped"]] == [(world.open_sxs.pk, [])]

    # By hand: 16 items (4 images of 4 pairs, no human tie). ΔCIDEr has the comparison's sign on every
    # image of a pair, which agrees with people on 14 (all but +1 of campaign 2 and −1 of campaign 0);
    # ΔBLEU-4 has the other sign, 2 of 16. A tie never helps without a human tie: ε = 0.
    assert body["languages"] == {
        code: {"status": "ranked", "note": "", "n_items": 16, "n_pairs": 4} for code in ("all", "de")
    }
    cells = {(c["metric"], c["language"]): c for c in body["cells"]}
    assert list(cells) == [("CIDEr", "all"), ("BLEU-4", "all"), ("CIDEr", "de"), ("BLEU-4", "de")]
    cider, bleu = cells[("CIDEr", "de")], cells[("BLEU-4", "de")]
    assert (cider["acc23"], cider["tau23"], cider["epsilon"], cider["n_items"]) == (0.875, 0.75, 0.0, 16)
    assert (bleu["acc23"], bleu["tau23"], bleu["epsilon"]) == (0.125, -0.75, 0.0)
    # CIDEr is significantly better (a 12-item lead on 16 items: p ≈ 0.002), so they are apart.
    assert (cider["rank"], cider["best"], bleu["rank"], bleu["best"]) == (1, True, 2, False)
    assert cider["p_better_than"]["BLEU-4"] <= SIGNIFICANCE_LEVEL and bleu["p_better_than"] == {}
    for cell in (cider, bleu):
        lo, hi = cell["acc23_ci"]
        assert lo <= cell["acc23"] <= hi
    assert cider["acc23_ci"][0] > bleu["acc23_ci"][1]
    # The model level in the same cells: 4 of 4 comparisons, 0 of 4.
    assert (cider["pairwise_accuracy"], cider["n_comparisons"], cider["n_soft"]) == (1.0, 4, 4)
    assert bleu["pairwise_accuracy"] == 0.0
    assert cider["soft_pairwise_accuracy"] > bleu["soft_pairwise_accuracy"]
    assert len(cider["pairwise_accuracy_ci"]) == 2 and len(cider["soft_pairwise_accuracy_ci"]) == 2


def test_a_trust_table_with_no_item_says_why(world):
    client = api(world.researcher)
    # Corpus scores only: the comparisons are there, the items have no metric.
    mixed = corpus_only_run(
        world, "mixed", {"alpha-sys": 0.5, "beta-sys": 0.6, "gamma-sys": 0.4, "delta-sys": 0.5}
    )
    response = client.get(reverse("api:trust"), {"runs": mixed.pk, "n_boot": 0})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["cells"], body["languages"], body["metrics"], body["note"]) == ([], {}, [], NO_ITEM)
    assert any("no per-caption score" in s["reason"] for s in body["skipped"])
    # Nothing judged: no comparison at all.
    body = client.get(reverse("api:trust"), {"runs": world.run.pk, "campaigns": world.open_sxs.pk}).json()
    assert (body["cells"], body["languages"], body["note"]) == ([], {}, NO_COMPARISON)
    assert body["skipped"][0]["reason"] == "no submitted judgment of a real pair yet"


def test_trust_and_correlation_filters_are_refused_with_the_field_named(world):
    client = api(world.researcher)
    runs = world.run.pk
    for url in (reverse("api:trust"), reverse("api:correlations")):
        for bad, field in (
            ({"runs": runs, "n_permutations": 0}, "n_permutations"),
            ({"runs": runs, "n_permutations": 10_001}, "n_permutations"),
            ({"runs": runs, "n_permutations": "many"}, "n_permutations"),
            ({"runs": runs, "n_boot": -1}, "n_boot"),
            ({"runs": runs, "seed": "x"}, "seed"),
            ({"runs": "1;2"}, "runs"),
            ({}, "runs"),
        ):
            response = client.get(url, bad)
            assert response.status_code == 400, (url, bad)
            assert response.json()["message"].startswith(f"{field}:"), (url, bad, response.json())
    # The trust table does not depend on the direction: the parameter is refused, not ignored.
    response = client.get(reverse("api:trust"), {"runs": runs, "one_direction": "true"})
    assert response.status_code == 400
    assert response.json()["message"].startswith("Unknown query parameter(s): one_direction.")
    response = client.get(reverse("api:trust"), {"runs": "999999"})
    assert response.status_code == 400 and response.json()["message"] == "There is no metric run #999999."


# --- Starting a metric run (RELIABILITY 14, 16) ---------------------------------------------------------


def run_payload(w, **overrides) -> dict:
    return {
        "name": "API run",
        "language": "de",
        "systems": ["alpha-sys", "beta-sys"],
        "reference_set": w.references.pk,
        "metrics": ["text"],
    } | overrides


@pytest.mark.django_db(transaction=True)
def test_a_researcher_starts_a_metric_run_and_it_runs(world):
    response = api(world.researcher).post(reverse("api:metric-run-list"), run_payload(world), format="json")
    assert response.status_code == 201, response.content
    assert response["Cache-Control"] == "private, no-store"
    body = response.json()
    assert body["status"] == "succeeded"  # eager Celery: computed before the answer
    assert body["systems"] == ["alpha-sys", "beta-sys"] and body["language"] == "de"
    assert body["reference_set"] == {"id": world.references.pk, "name": "refs-de"}
    assert body["progress"] == {"chunks_done": 2, "chunks_total": 2, "fraction": 1.0}
    # The text group includes METEOR, computed where Java is installed and named as not computed elsewhere.
    computed = {"BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr", "CIDEr-D"}
    if shutil.which("java"):
        computed.add("METEOR")
        assert body["not_computed"] == {}
    else:
        assert set(body["not_computed"]["METEOR"]) == {"alpha-sys", "beta-sys"}
    assert len(body["corpus_scores"]) == 2 * len(computed)
    assert {s["metric"] for s in body["corpus_scores"]} == computed
    assert body["params"]["cider_df"] == "test"
    run = MetricRun.objects.get(pk=body["id"])
    assert run.created_by == world.researcher
    scores = api(world.manager).get(reverse("api:metric-run-caption-scores", args=[run.pk])).json()
    assert scores["count"] == 2 * 4 * len(computed)
    assert (
        api(world.manager).post(reverse("api:metric-run-list"), run_payload(world), format="json").status_code
        == 201
    )


def test_fields_a_client_must_not_set_are_refused_and_nothing_is_stored(world):
    client = api(world.researcher)
    for extra in ({"status": "succeeded"}, {"created_by": world.superuser.pk}, {"chunks_done": 5}):
        response = client.post(reverse("api:metric-run-list"), run_payload(world, **extra), format="json")
        assert response.status_code == 400
        (field,) = extra
        assert response.json()["message"].startswith(f"{field}: This field cannot be set")
    assert MetricRun.objects.count() == 1


def test_a_run_that_cannot_be_made_says_why(world):
    client = api(world.researcher)
    url = reverse("api:metric-run-list")
    response = client.post(url, run_payload(world, systems=["nobody-sys"]), format="json")
    assert (
        response.status_code == 400
        and "Unknown captioning system(s): nobody-sys" in response.json()["message"]
    )
    response = client.post(url, run_payload(world, metrics=["SPICE"]), format="json")
    assert response.status_code == 400 and response.json()["message"].startswith("metrics:")
    response = client.post(url, run_payload(world, reference_set=999999), format="json")
    assert response.status_code == 404 and "no reference set #999999" in response.json()["message"]
    response = client.post(url, run_payload(world, image_orientation="sideways"), format="json")
    assert response.status_code == 400 and response.json()["message"].startswith("image_orientation:")
    assert MetricRun.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_broker_down_answers_503_with_the_message(world):
    from tests.evaluation.test_runs import celery_conf

    with celery_conf(broker_url="redis://127.0.0.1:1/0", task_always_eager=False):
        response = api(world.researcher).post(
            reverse("api:metric-run-list"), run_payload(world), format="json"
        )
    assert response.status_code == 503
    body = response.json()
    assert body["error"] == "jobs_unavailable"
    assert "could not be queued: the job broker is unreachable" in body["message"]
    assert MetricRun.objects.get(pk=body["details"]["run_id"]).status == RunStatus.FAILED


def test_session_writes_need_the_csrf_token_token_writes_do_not(world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.researcher)
    url = reverse("api:metric-run-list")
    payload = json.dumps(run_payload(world))
    response = client.post(url, payload, content_type="application/json")
    assert response.status_code == 403 and "CSRF" in response.content.decode()
    assert MetricRun.objects.count() == 1
    client.get(url, HTTP_ACCEPT="text/html")  # the browsable API's form sets the CSRF cookie
    csrf = client.cookies["csrftoken"]
    response = client.post(url, payload, content_type="application/json", HTTP_X_CSRFTOKEN=csrf.value)
    assert response.status_code == 201, response.content
    assert api(world.researcher).post(url, payload, content_type="application/json").status_code == 201


def test_an_annotator_cannot_start_a_run(world):
    response = api(world.annotator.user).post(
        reverse("api:metric-run-list"), run_payload(world), format="json"
    )
    assert response.status_code == 403
    assert MetricRun.objects.count() == 1


# --- Schema and docs ---------------------------------------------------------------------------------


def test_the_schema_validates_without_warnings(tmp_path):
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    text = target.read_text()
    for path in (
        "/api/campaigns/{campaign_id}/",
        "/api/metric-runs/{run_id}/caption-scores/",
        "/api/correlations/",
        "/api/trust/",
        "PaginatedWrittenCaptionList",
    ):
        assert path in text
    assert "/work/api/" not in text  # the annotator pages' endpoints are not part of it
    # Every list filter is documented, typed from its FilterSet.
    schema = yaml.safe_load(text)
    parameters = {p["name"]: p["schema"] for p in schema["paths"]["/api/judgments/"]["get"]["parameters"]}
    assert set(parameters) == {"language", "campaign", "system", "annotator", "control", "page"}
    assert parameters["control"]["type"] == "boolean" and parameters["campaign"]["type"] == "integer"
    kinds = {p["name"]: p["schema"] for p in schema["paths"]["/api/campaigns/"]["get"]["parameters"]}
    assert set(kinds["kind"]["enum"]) == {"caption", "rating", "sxs"}
    # Every operation says what it is; the trust table's parameters and accuracies are explained.
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert operation.get("summary"), (method, path)
    trust = {p["name"]: p for p in schema["paths"]["/api/trust/"]["get"]["parameters"]}
    assert set(trust) == {"runs", "campaigns", "n_boot", "n_permutations", "seed"}
    assert trust["n_permutations"]["schema"] == {
        "type": "integer",
        "maximum": 10000,
        "minimum": 1,
        "default": 1000,
    }
    components = schema["components"]["schemas"]
    for component in ("TrustCell", "CorrelationResult"):
        fields = components[component]["properties"]
        assert "Kocmi et al. 2021" in fields["pairwise_accuracy"]["description"]
        assert "WMT24" in fields["soft_pairwise_accuracy"]["description"]
    assert components["Trust"]["properties"]["cells"]["items"]["$ref"].endswith("/TrustCell")


def test_the_docs_page_runs_no_inline_script_or_style(world):
    client = api(world.researcher)
    response = client.get(reverse("api:docs"))
    assert response.status_code == 200
    assert "script-src 'self'" in response["Content-Security-Policy"]
    html = response.content.decode()
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, flags=re.S)
    assert len(scripts) == 3 and all('src="' in attrs and not body.strip() for attrs, body in scripts)
    assert "<style" not in html and " style=" not in html
    for url in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert url.startswith(("/static/drf_spectacular_sidecar/", "/api/docs/?script")), url
    script = client.get(reverse("api:docs") + "?script")
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode() and "/api/schema/" in script.content.decode()


def test_the_docs_assets_are_our_own_static_files():
    for name in ("swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js"):
        assert finders.find(f"drf_spectacular_sidecar/swagger-ui-dist/{name}"), name


@pytest.mark.browser
def test_the_docs_render_in_a_browser_under_the_csp(live_server, transactional_db, page):
    user = f.RoleUserFactory(username="res-browser", role=RESEARCHERS)
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("form:not(.language-select) [type=submit]")
    page.wait_for_load_state()
    problems.clear()  # a researcher lands on the annotators' dashboard, which refuses them
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector("text=/api/metric-runs/{run_id}/caption-scores/", timeout=15_000)
    assert page.locator(".opblock").count() >= 17
    assert problems == []


# --- Signatures (tokenisation scheme, versions) on every metric number --------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_run_started_with_a_scheme_shows_its_signature_on_every_number(world):
    from evaluation.metrics.text.schemes import text_signature

    payload = run_payload(world, metrics=["BLEU-4", "CIDEr-D"], scheme="char")
    response = api(world.researcher).post(reverse("api:metric-run-list"), payload, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    signature = text_signature("char")
    assert body["params"]["tokenizer"] == "char" and body["params"]["tokenizer_from"] == "run"
    assert body["signatures"] == {"BLEU-4": signature, "CIDEr-D": signature}
    assert {score["signature"] for score in body["corpus_scores"]} == {signature}
    detail = api(world.researcher).get(reverse("api:metric-run-detail", args=[body["id"]])).json()
    assert detail["signatures"] == body["signatures"]

    refused = api(world.researcher).post(
        reverse("api:metric-run-list"), run_payload(world, scheme="newmm"), format="json"
    )
    assert refused.status_code == 400
    assert "“newmm” is for th, not for language “de”" in refused.json()["message"]
    unknown = api(world.researcher).post(
        reverse("api:metric-run-list"), run_payload(world, scheme="words"), format="json"
    )
    assert unknown.status_code == 400


@pytest.mark.django_db(transaction=True)
def test_correlations_show_each_metric_signature_and_old_runs_say_not_recorded(world):
    response = api(world.researcher).get(reverse("api:correlations"), {"runs": world.run.pk, "n_boot": 50})
    assert response.status_code == 200, response.content
    for comparison in response.json()["comparisons"]:
        assert comparison["signatures"] == {
            "BLEU-4": "not recorded (computed before signatures)",
            "CIDEr": "not recorded (computed before signatures)",
        }


def test_every_link_of_the_api_root_answers_200_as_it_is(world):
    """/api/correlations/ and /api/trust/ need ``?runs=``: the root links them with the finished runs,
    so a researcher following the links meets no 400."""
    client = api(world.researcher)
    endpoints = client.get("/api/").json()["endpoints"]
    for endpoint in endpoints:
        response = client.get(endpoint["url"])
        assert response.status_code == 200, (endpoint["url"], response.content[:300])
    links = {e["url"].split("?")[0].removeprefix("http://testserver"): e["url"] for e in endpoints}
    assert links["/api/trust/"].endswith(f"?runs={world.run.pk}")


def test_the_research_home_offers_the_schema_as_a_download(world):
    client = Client()
    client.force_login(world.researcher)
    page = client.get(reverse("research-home")).content.decode()
    assert f'href="{reverse("api:schema")}" download="captioneval-openapi.yaml"' in page
