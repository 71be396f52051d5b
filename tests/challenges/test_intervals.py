"""Every interval and paired test on the boards is of the number beside it (issue 34, item 3).

A score's replicates are its metric recomputed on each of the split's shared image resamples; the tests
check them against pycocoevalcap (and, for CIDEr, the project's scorer) run on the resampled corpora
written out image by image, that every stored interval contains its score, and that the paired tests
read the same replicates the ranking's numbers come from.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from challenges.models import Phase, PhaseKind, Split, Submission, SubmissionScore
from challenges.selectors import MEAN, leaderboard
from challenges.services import submission_create
from challenges.statistics import (
    SCORE_N_BOOT,
    interval,
    paired_p_value,
    public_images,
    replicates_from_bytes,
    split_resamples,
)
from evaluation.metrics.text.cider import cider_variants
from evaluation.metrics.text.preprocess import TokenCorpus
from evaluation.metrics.text.scoring import score_tokens
from tests import factories as f
from tests.prerequisites import shared_data_folder

WORDS = [
    "hund",
    "katze",
    "strand",
    "haus",
    "baum",
    "auto",
    "berg",
    "see",
    "stadt",
    "wald",
    "fluss",
    "brücke",
    "kind",
    "frau",
    "mann",
    "ball",
]


def _expanded(keys, weights, candidates, references):
    """The resampled corpus written out: each drawn image as often as it is drawn, under a new key."""
    out_c, out_r = {}, {}
    for key, count in zip(keys, weights, strict=True):
        for copy in range(int(count)):
            out_c[(key, copy)] = candidates[key]
            out_r[(key, copy)] = references[key]
    return out_c, out_r


@pytest.fixture(scope="module")
def fakecap():
    folder = shared_data_folder() / "coco-fakecap"
    results = json.loads((folder / "captions_val2014_fakecap_results.json").read_text())
    annotations = json.loads((folder / "captions_val2014_fakecap_subset_refs_tokenized.json").read_text())
    references: dict[int, list[list[str]]] = {}
    for row in annotations["annotations"]:
        references.setdefault(row["image_id"], []).append(row["caption"].split())
    candidates = {row["image_id"]: row["caption"].split() for row in results}
    keys = sorted(candidates)[:120]
    return keys, {k: candidates[k] for k in keys}, {k: references[k] for k in keys}


def test_replicates_equal_pycocoevalcap_on_the_resampled_corpora(fakecap):
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    keys, candidates, references = fakecap
    weights = split_resamples(keys, seed=3, n_boot=6)
    metrics = ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr", "CIDEr-D"]
    report = score_tokens(candidates, references, metrics=metrics, resamples=weights)
    assert set(report.replicates) == set(metrics)
    for row, draws in enumerate(weights):
        cands, refs = _expanded(keys, draws, candidates, references)
        gts = {k: [" ".join(r) for r in v] for k, v in refs.items()}
        res = {k: [" ".join(v)] for k, v in cands.items()}
        bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
        for k in range(4):
            assert report.replicates[f"BLEU-{k + 1}"][row] == pytest.approx(bleu[k], abs=1e-12)
        assert report.replicates["ROUGE-L"][row] == pytest.approx(
            Rouge().compute_score(gts, res)[0], abs=1e-12
        )
        # pycocoevalcap's Cider is CIDEr-D: its document frequencies are the resampled corpus's own.
        assert report.replicates["CIDEr-D"][row] == pytest.approx(
            Cider().compute_score(gts, res)[0], abs=1e-12
        )
        plain = cider_variants(TokenCorpus.build(cands, refs), variants=["CIDEr"])[0].score
        assert report.replicates["CIDEr"][row] == pytest.approx(plain, abs=1e-12)
    # Every metric's replicates scatter around its score, which lies inside their interval.
    for name, value in report.corpus.items():
        low, high = interval(report.replicates[name])
        assert low <= value <= high


@pytest.mark.usefixtures("java")
def test_meteor_replicates_are_the_jars_scores_of_the_resampled_corpora(fakecap):
    from pycocoevalcap.meteor.meteor import Meteor

    keys, candidates, references = fakecap
    keys = keys[:25]
    weights = split_resamples(keys, seed=5, n_boot=2)
    report = score_tokens(
        {k: candidates[k] for k in keys},
        {k: references[k] for k in keys},
        metrics=["METEOR"],
        language="en",
        resamples=weights,
    )
    meteor = Meteor()
    for row, draws in enumerate(weights):
        cands, refs = _expanded(keys, draws, candidates, references)
        gts = {k: [" ".join(r) for r in v] for k, v in refs.items()}
        res = {k: [" ".join(v)] for k, v in cands.items()}
        assert report.replicates["METEOR"][row] == pytest.approx(meteor.compute_score(gts, res)[0], abs=1e-12)


def test_resamples_depend_on_the_seed_and_the_images_only():
    ids = list(range(10, 60, 2))
    first = split_resamples(ids, seed=11)
    assert first.shape == (SCORE_N_BOOT, len(ids))
    assert (first.sum(axis=1) == len(ids)).all()
    assert (first == split_resamples(ids, seed=11)).all()
    assert not (first == split_resamples(ids, seed=12)).all()
    assert not (first == split_resamples([*ids[:-1], 999], seed=11)).all()
    assert split_resamples([5], seed=1) is None
    with pytest.raises(ValueError):
        split_resamples([3, 2], seed=1)


def test_paired_p_value_is_the_share_of_centred_differences_as_far_as_the_observed_one():
    better = np.array([0.5, 0.6, 0.4, 0.7])
    worse = np.array([0.4, 0.6, 0.5, 0.1])
    # Differences 0.1, 0, -0.1, 0.6 (mean 0.15), centred: -0.05, -0.15, -0.25, 0.45.
    assert paired_p_value(better, worse, 0.2) == pytest.approx(3 / 5)
    assert paired_p_value(better, worse, 0.5) == pytest.approx(1 / 5)
    assert paired_p_value(better, worse, 0.0) == 1.0  # a tie is never significant
    assert paired_p_value(better, None, 0.1) is None
    assert paired_p_value(better, worse[:3], 0.1) is None


def test_an_interval_end_off_its_number_by_rounding_only_is_moved_onto_it():
    # A two-image part: half its resamples are the part itself, scored in another summation order.
    value = 0.7755875546452666
    replicates = np.array([0.0] * 500 + [0.7755875546452665] * 500)
    assert interval(replicates, value) == (0.0, value)
    assert interval(np.array([0.0, 0.0, 1.0, 1.0]), 2.0) == (0.0, 1.0)  # a real miss is left as it is


def _centred_p(a: np.ndarray, b: np.ndarray, difference: float) -> float:
    """The paired test written out once more, resample by resample."""
    deltas = [x - y for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    mean = sum(deltas) / len(deltas)
    return (1 + sum(abs(d - mean) >= abs(difference) for d in deltas)) / (1 + len(deltas))


# --- A scored test phase -----------------------------------------------------------------------------------


def _entry(rng: random.Random, references: list[str], skill: float) -> str:
    """A caption that takes each word of the first reference with probability ``skill``."""
    words = [w if rng.random() < skill else rng.choice(WORDS) for w in references[0].split()]
    return " ".join(words[: rng.randint(3, len(words))])


@pytest.fixture(autouse=True)
def _commit_now(monkeypatch):
    monkeypatch.setattr("core.jobs.engine.transaction.on_commit", lambda fn, using=None, robust=False: fn())


@pytest.fixture
def scored(db, request):
    """A test phase of 30 images in German and English, three references each, with the human comparison,
    and five entries of different skill, scored (BLEU, ROUGE-L, CIDEr, CIDEr-D); with METEOR where asked,
    one English entry."""
    rng = random.Random(17)
    de, en = f.LanguageFactory(code="de", name="German"), f.LanguageFactory(code="en", name="English")
    images = [f.ImageFactory(key=str(500 + i), with_file=False) for i in range(30)]
    from challenges.models import Benchmark, BenchmarkLanguage

    benchmark = Benchmark.objects.create(name="Intervals", slug="intervals", description="d")
    texts = {}
    for language in (de, en):
        texts[language.code] = [
            [" ".join(rng.choices(WORDS, k=rng.randint(5, 9))) for _ in range(3)] for _ in images
        ]
        refs = f.reference_set_with(
            images, texts[language.code], name=f"refs {language.code}", language=language
        )
        BenchmarkLanguage.objects.create(benchmark=benchmark, language=language, reference_set=refs)
    metrics = ["BLEU-1", "BLEU-4", "ROUGE-L", "CIDEr", "CIDEr-D"]
    meteor = getattr(request, "param", False)  # METEOR (one JVM per corpus): one entry, English only
    if meteor:
        metrics.append("METEOR")
    phase = Phase.objects.create(
        benchmark=benchmark,
        name="test",
        kind=PhaseKind.TEST,
        is_open=True,
        split_seed=23,
        image_set=f.ImageSetFactory(name="intervals test", images=images),
        reference_counts=[0] if meteor else [0, 1],
        metrics=metrics,
        ranking_metric="CIDEr-D",
        human_comparison=not meteor,
    )
    for n, skill in enumerate([0.8] if meteor else [0.2, 0.4, 0.55, 0.7, 0.9]):
        lines = [
            json.dumps(
                {"image_id": int(image.key), "language": code, "caption": _entry(rng, texts[code][i], skill)}
            )
            for code in (("en",) if meteor else ("de", "en"))
            for i, image in enumerate(images)
        ]
        submission_create(
            phase_id=phase.pk,
            user=None,
            team_id=None,
            data="\n".join(lines).encode(),
            filename="entry.jsonl",
            method_name=f"entry {n}",
            baseline=True,
        )
    assert set(Submission.objects.filter(phase=phase).values_list("status", flat=True)) == {"succeeded"}
    return {"phase": phase, "images": images, "texts": texts}


def test_every_stored_interval_contains_its_score(scored):
    rows = SubmissionScore.objects.filter(submission__phase=scored["phase"])
    assert rows.count() > 100
    for row in rows:
        replicates = replicates_from_bytes(row.replicates)
        assert len(replicates) == SCORE_N_BOOT
        assert (row.low, row.high) == interval(replicates, row.value)
        assert row.low <= row.value <= row.high, (row.metric, row.split, row.language_id, row.value)


def _boards(phase):
    for language in ("de", "en", MEAN):
        for metric in phase.metrics:
            for split in Split.values:
                for count, comparison in ((0, False), (1, False), (0, True)):
                    yield leaderboard(
                        phase=phase,
                        user=None,
                        language=language,
                        metric=metric,
                        reference_count=count,
                        split=split,
                        comparison=comparison,
                    )


def _replicates(submission_id: int, board, code: str) -> np.ndarray:
    return replicates_from_bytes(
        SubmissionScore.objects.get(
            submission_id=submission_id,
            language__code=code,
            metric=board.metric,
            reference_count=board.reference_count,
            held_out=board.comparison,
            split=board.split,
        ).replicates
    )


def test_paired_tests_and_mean_intervals_are_of_the_ranked_numbers(scored):
    """On every board (language or mean, metric, split, reference count, human comparison): each interval
    contains its number, each paired test is that of the two numbers ranked (recomputed here from the
    stored replicates), and a significant order is the ranking's."""
    from challenges.services import phase_close

    phase_close(phase_id=scored["phase"].pk)  # every split is shown
    phase = Phase.objects.get(pk=scored["phase"].pk)
    pairs = significant = 0
    for board in _boards(phase):
        assert len(board.entries) >= 5
        for entry in board.entries:
            assert entry.low <= entry.value <= entry.high, (board.language, board.metric, board.split)
        codes = ["de", "en"] if board.language == MEAN else [board.language]
        for upper, lower in zip(board.entries, board.entries[1:]):
            pairs += 1
            assert upper.value >= lower.value
            a = np.mean([_replicates(upper.submission_id, board, code) for code in codes], axis=0)
            b = np.mean([_replicates(lower.submission_id, board, code) for code in codes], axis=0)
            assert upper.p_vs_next == pytest.approx(_centred_p(a, b, upper.value - lower.value), abs=1e-12)
            if upper.significant:
                significant += 1
                assert upper.value > lower.value
            if upper.value == lower.value:
                assert upper.p_vs_next == 1.0
    assert pairs > 300 and significant > 20


def test_the_mean_over_languages_is_resampled_on_the_same_images(scored):
    from challenges.services import phase_close

    phase_close(phase_id=scored["phase"].pk)
    phase = Phase.objects.get(pk=scored["phase"].pk)
    board = leaderboard(phase=phase, user=None, language=MEAN, metric="BLEU-4", split=Split.PRIVATE)
    for entry in board.entries:
        per_language = [
            replicates_from_bytes(
                SubmissionScore.objects.get(
                    submission_id=entry.submission_id,
                    language__code=code,
                    metric="BLEU-4",
                    reference_count=0,
                    held_out=False,
                    split=Split.PRIVATE,
                ).replicates
            )
            for code in ("de", "en")
        ]
        assert (entry.low, entry.high) == interval(np.mean(per_language, axis=0), entry.value)
    top, second = board.entries[:2]
    both = {
        e.submission_id: np.mean(
            [
                replicates_from_bytes(r)
                for r in SubmissionScore.objects.filter(
                    submission_id=e.submission_id,
                    metric="BLEU-4",
                    reference_count=0,
                    held_out=False,
                    split=Split.PRIVATE,
                ).values_list("replicates", flat=True)
            ],
            axis=0,
        )
        for e in (top, second)
    }
    assert top.p_vs_next == pytest.approx(
        _centred_p(both[top.submission_id], both[second.submission_id], top.value - second.value), abs=1e-12
    )


def test_a_public_score_is_resampled_on_the_public_part_as_its_own_corpus(scored):
    """The stored replicates of a public row equal pycocoevalcap's BLEU-4 and CIDEr-D of the public
    captions, resampled with the phase's draws and written out image by image."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider

    from challenges.models import SubmissionCaption

    phase = scored["phase"]
    ids = sorted(image.pk for image in scored["images"])
    public = sorted(public_images(ids, seed=phase.split_seed, share=phase.public_share))
    weights = split_resamples(public, seed=phase.split_seed)
    row = SubmissionScore.objects.filter(
        submission__phase=phase, language__code="en", split=Split.PUBLIC, reference_count=0, held_out=False
    ).first()
    captions = dict(
        SubmissionCaption.objects.filter(submission=row.submission, language__code="en").values_list(
            "image_id", "text"
        )
    )
    by_pk = {image.pk: i for i, image in enumerate(scored["images"])}
    references = {pk: scored["texts"]["en"][by_pk[pk]] for pk in public}
    stored = {
        metric: replicates_from_bytes(
            SubmissionScore.objects.get(
                submission=row.submission,
                language__code="en",
                metric=metric,
                split=Split.PUBLIC,
                reference_count=0,
                held_out=False,
            ).replicates
        )
        for metric in ("BLEU-4", "CIDEr-D")
    }
    for draw in (0, 1, 2, SCORE_N_BOOT - 1):
        cands, refs = _expanded(public, weights[draw], captions, references)
        gts = {k: v for k, v in refs.items()}
        res = {k: [v] for k, v in cands.items()}
        assert stored["BLEU-4"][draw] == pytest.approx(
            Bleu(4).compute_score(gts, res, verbose=0)[0][3], abs=1e-12
        )
        assert stored["CIDEr-D"][draw] == pytest.approx(Cider().compute_score(gts, res)[0], abs=1e-12)


@pytest.mark.usefixtures("java")
@pytest.mark.parametrize("scored", [True], indirect=True)
def test_meteor_rows_carry_replicates_from_the_jar(scored):
    rows = SubmissionScore.objects.filter(submission__phase=scored["phase"], metric="METEOR")
    assert rows.count() == 3  # one per split
    for row in rows:
        assert row.low <= row.value <= row.high
        assert len(replicates_from_bytes(row.replicates)) == SCORE_N_BOOT


def test_intervals_contain_their_numbers_on_parts_of_four_images(bench):
    """The small benchmark's test phase (8 images: public and private parts of 4), where a resample is
    often the part itself or nearly so."""
    from tests.challenges.conftest import coco, jsonl

    test = bench["test"]
    test.metrics = ["BLEU-1", "BLEU-4", "ROUGE-L", "CIDEr", "CIDEr-D"]
    test.reference_counts = [0, 1]
    test.save()
    images = bench["test_images"]
    for n, data in enumerate(
        [coco(images), jsonl(images), coco(images, text=lambda i, image: f"ein haus am see {i % 3}")]
    ):
        submission_create(
            phase_id=test.pk,
            user=bench["member"],
            team_id=bench["team"].pk,
            data=data,
            filename="r.jsonl" if n == 1 else "r.json",
            language=None if n == 1 else "de",
            method_name=f"m{n}",
        )
    rows = list(SubmissionScore.objects.filter(submission__phase=test))
    assert len(rows) == (2 + 1 + 1) * 5 * 3 * 3  # entry languages x metrics x splits x (2 counts, held out)
    for row in rows:
        assert row.low <= row.value <= row.high, (row.metric, row.split, row.value, row.low, row.high)
