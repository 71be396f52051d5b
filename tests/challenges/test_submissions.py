"""Submissions: checked before counted, limited per team (also under concurrency), scored as a job."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from challenges.models import ImageScores, ScoringUnit, Submission, SubmissionCaption, SubmissionScore
from challenges.services import QuotaExceeded, SubmissionRefused, submission_create, submission_select
from core.errors import Conflict, NotAllowed
from tests.challenges.conftest import coco, jsonl, submit


@pytest.fixture(autouse=True)
def _commit_now(monkeypatch):
    # Run on_commit callbacks (the scoring units' sending) at once, as the commit of a request would.

    monkeypatch.setattr("core.jobs.engine.transaction.on_commit", lambda fn, using=None, robust=False: fn())


def test_a_valid_file_is_stored_and_scored(bench):
    submission = submit(bench)
    submission.refresh_from_db()
    assert submission.status == "succeeded", submission.error
    assert submission.languages == ["de"]
    assert SubmissionCaption.objects.filter(submission=submission).count() == 6
    scores = {
        (s.reference_count, s.split, s.metric): s
        for s in SubmissionScore.objects.filter(submission=submission, held_out=False)
    }
    assert set(scores) == {(k, "all", m) for k in (0, 1) for m in ("BLEU-1", "BLEU-4", "ROUGE-L", "CIDEr-D")}
    cider = scores[(0, "all", "CIDEr-D")]
    assert cider.low <= cider.value <= cider.high and cider.n_images == 6
    assert "tok:" in cider.signature or cider.signature
    per_image = ImageScores.objects.get(
        submission=submission, reference_count=0, held_out=False, metric="CIDEr-D"
    )
    assert len(per_image.values) == 6
    # CIDEr-D's corpus score is the mean of its per-image scores.
    assert cider.value == pytest.approx(sum(per_image.values) / 6)


def test_scoring_twice_gives_the_same_numbers(bench):
    from challenges.scoring.tasks import SUBMISSION_SCORING
    from core.jobs.engine import job_resume

    submission = submit(bench, "test", language="en")
    before = sorted(
        SubmissionScore.objects.filter(submission=submission).values_list(
            "split", "metric", "value", "low", "high"
        )
    )
    ScoringUnit.objects.filter(submission=submission).update(status="pending")
    Submission.objects.filter(pk=submission.pk).update(status="failed", chunks_done=0)
    job_resume(SUBMISSION_SCORING, job_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == "succeeded"
    after = sorted(
        SubmissionScore.objects.filter(submission=submission).values_list(
            "split", "metric", "value", "low", "high"
        )
    )
    assert before == after
    assert {row[0] for row in after} == {"all", "public", "private"}


def test_a_test_phase_splits_public_and_private(bench):
    submission = submit(bench, "test")
    rows = SubmissionScore.objects.filter(submission=submission, metric="CIDEr-D")
    sizes = {row.split: row.n_images for row in rows}
    assert sizes == {"all": 8, "public": 4, "private": 4}


def test_an_invalid_file_uses_no_quota(bench):
    for _ in range(5):
        with pytest.raises(SubmissionRefused) as caught:
            submit(bench, "test", data=b'[{"image_id": 999, "caption": "x"}]')
    assert "unknown image id “999”" in caught.value.problems[0]
    assert Submission.objects.count() == 0
    for _ in range(3):
        submit(bench, "test")
    with pytest.raises(QuotaExceeded):
        submit(bench, "test")
    assert Submission.objects.count() == 3


def test_a_zip_and_jsonl_cover_several_languages(bench):
    submission = submit(bench, data=jsonl(bench["val_images"]), filename="r.jsonl", language="")
    assert submission.languages == ["de", "en"]
    assert ScoringUnit.objects.filter(submission=submission, status="done").count() == 2


def test_a_phase_of_coco_results_only_refuses_json_lines_and_uses_no_quota(bench):
    phase = bench["val"]
    phase.accepted_formats = ["coco"]
    phase.save(update_fields=["accepted_formats"])
    with pytest.raises(SubmissionRefused) as caught:
        submit(bench, data=jsonl(bench["val_images"]), filename="r.jsonl", language="")
    assert caught.value.problems == [
        "r.jsonl: a file of JSON lines (XM3600 or flat); this phase accepts only COCO results (one language)"
    ]
    assert Submission.objects.count() == 0
    assert submit(bench).languages == ["de"]


def test_a_closed_phase_and_an_outsider_are_refused(bench):
    from challenges.services import phase_close
    from tests import factories as f

    outsider = f.UserFactory(username="otto2")
    with pytest.raises(NotAllowed):
        submission_create(
            phase_id=bench["val"].pk,
            user=outsider,
            team_id=bench["team"].pk,
            data=b"[]",
            filename="r.json",
            method_name="m",
        )
    phase_close(phase_id=bench["val"].pk)
    with pytest.raises(Conflict):
        submit(bench)


def test_the_selection_limit(bench):
    entries = [submit(bench, method_name=f"m{i}") for i in range(3)]
    submission_select(submission_id=entries[0].pk, user=bench["member"], selected=True)
    submission_select(submission_id=entries[1].pk, user=bench["member"], selected=True)
    with pytest.raises(Conflict):
        submission_select(submission_id=entries[2].pk, user=bench["member"], selected=True)
    assert Submission.objects.filter(is_selected=True).count() == 2


@pytest.mark.django_db(transaction=True)
def test_twenty_uploads_at_once_against_a_limit_of_three_store_three():
    if connection.vendor != "postgresql":
        pytest.skip("row locks are proven on PostgreSQL (set DATABASE_URL)")
    from django.db import connections

    from tests import factories as f
    from tests.challenges.conftest import make_benchmark

    bench = make_benchmark("Race")
    member = f.UserFactory(username="racer")
    bench["team"].members.add(member)
    data = coco(bench["test_images"])
    barrier = threading.Barrier(20)
    outcomes: list[str] = []

    def upload():
        try:
            barrier.wait()
            submission_create(
                phase_id=bench["test"].pk,
                user=member,
                team_id=bench["team"].pk,
                data=data,
                filename="r.json",
                language="de",
                method_name="race",
            )
            outcomes.append("stored")
        except QuotaExceeded:
            outcomes.append("refused")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=upload) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused"] * 17 + ["stored"] * 3
    assert Submission.objects.filter(phase=bench["test"]).count() == 3


def test_the_human_row_is_scored_against_the_same_remaining_references(bench):
    from challenges.selectors import leaderboard
    from challenges.services import human_row_create
    from tests import factories as f

    entry = submit(bench, "test")
    human = human_row_create(phase_id=bench["test"].pk)
    human.refresh_from_db()
    assert human.status == "succeeded" and human.languages == ["de", "en"]
    # The human row has only the comparison's scores; every entry has both.
    assert not SubmissionScore.objects.filter(submission=human, held_out=False).exists()
    assert SubmissionScore.objects.filter(submission=entry, held_out=True, metric="CIDEr-D").exists()
    host = f.RoleUserFactory(username="host", role="Project managers")
    board = leaderboard(phase=bench["test"], user=host, language="de", split="all", comparison=True)
    assert [e.human for e in board.entries].count(True) == 1 and len(board.entries) == 2
    # The held-out captions are references: the human row outscores the generic captions.
    assert board.entries[0].human
    plain = leaderboard(phase=bench["test"], user=host, language="de", split="all")
    assert [e.method for e in plain.entries] == ["m"]

    # Scored twice (re-created), the same numbers.
    def values(s):
        return sorted(
            SubmissionScore.objects.filter(submission=s).values_list(
                "language__code", "split", "metric", "value"
            )
        )

    before = values(human)
    again = human_row_create(phase_id=bench["test"].pk)
    assert Submission.objects.filter(is_human=True).count() == 1
    assert len(before) == 2 * 3 * 3 and values(again) == before


def test_a_killed_scoring_worker_loses_no_submission(bench, monkeypatch):
    """A worker killed mid-unit leaves it 'running' without heartbeats: the orphan sweep sends it again and
    the submission ends scored, once."""
    from datetime import timedelta

    from django.utils import timezone

    from challenges.scoring.tasks import SUBMISSION_SCORING
    from core.jobs.engine import orphans_requeue, units_send

    # The worker "dies" before computing: the unit is claimed (running) and nothing more happens.
    monkeypatch.setattr("core.jobs.engine.units_send", lambda kind, job_id, ids: len(ids))
    submission = submit(bench, "test")
    monkeypatch.setattr("core.jobs.engine.units_send", units_send)
    long_ago = timezone.now() - timedelta(hours=1)
    ScoringUnit.objects.filter(submission=submission).update(
        status="running", started_at=long_ago, heartbeat_at=long_ago
    )
    Submission.objects.filter(pk=submission.pk).update(status="running")
    assert orphans_requeue(SUBMISSION_SCORING) == 1
    submission.refresh_from_db()
    assert submission.status == "succeeded" and submission.chunks_done == 1
    assert SubmissionScore.objects.filter(submission=submission, held_out=False, split="all").count() == 3


@pytest.mark.usefixtures("java")
def test_a_language_is_scored_with_one_meteor_jvm(bench, monkeypatch):
    # A test phase with METEOR and the human comparison scores each language 9 times (2 reference
    # counts x 3 splits, plus the comparison's 3): one JVM for all of them, not one per call.
    from challenges.models import Phase
    from evaluation.metrics.text import meteor

    Phase.objects.filter(pk=bench["test"].pk).update(
        metrics=["BLEU-4", "METEOR"], reference_counts=[0, 1], human_comparison=True
    )
    bench["test"].refresh_from_db()
    starts = []
    real = meteor._Jvm.__enter__
    monkeypatch.setattr(meteor._Jvm, "__enter__", lambda self: starts.append(1) or real(self))
    submission = submit(bench, "test", data=jsonl(bench["test_images"]), language="", filename="r.jsonl")
    submission.refresh_from_db()
    assert submission.status == "succeeded", submission.error
    rows = SubmissionScore.objects.filter(submission=submission, metric="METEOR")
    assert rows.count() == 2 * (2 * 3 + 3)  # two languages
    assert len(starts) == 2  # one per language (unit)
    for row in rows:
        assert row.low <= row.value <= row.high


def test_a_refusal_speaks_the_teams_language(bench):
    from django.utils import translation

    bad = b'[{"image_id": 999, "caption": "x"}]'
    with translation.override("de"), pytest.raises(SubmissionRefused) as german:
        submit(bench, data=bad)
    assert german.value.problems[0] == "r.json Eintrag 1: unbekannte Bild-ID „999“ (kein Bild dieser Phase)"
    with translation.override("ja"), pytest.raises(SubmissionRefused) as japanese:
        submit(
            bench, data=b"\n".join([b'{"image/key": "1", "de": {"caption": ["a", "b"]}}']), filename="r.jsonl"
        )
    assert japanese.value.problems[0] == (
        "r.jsonl の 1 行目：1 の 'de' に説明文が 2 件あります。画像と言語ごとにちょうど1件にしてください"
    )
    with pytest.raises(SubmissionRefused) as english:
        submit(bench, data=bad)
    assert english.value.problems[0] == "r.json entry 1: unknown image id “999” (not an image of this phase)"
