"""Zero-shot and foil checks as jobs, run eagerly: known answers, ties, one class, refused files,
resume after a killed worker, the text cache.

The CLIP model is the tiny random one; where an answer must be known, the embeddings are
monkeypatched (as the retrieval check's tests do) so that it is: a label's vector equals its image's,
a foil's vector is orthogonal to its image (it must lose), a tied foil equals its caption.
"""

from __future__ import annotations

import json
from datetime import timedelta

import numpy as np
import pytest
from django.test import override_settings
from django.utils import timezone

from core.errors import ValidationFailed
from core.jobs.engine import unit_claim
from evaluation.clip_checks.plan import (
    foil_check_plan,
    probe_check_resume,
    probe_check_store,
    zeroshot_check_plan,
)
from evaluation.clip_checks.tasks import CLIP_PROBE_CHECK, compute_clip_probe_chunk
from evaluation.metrics.clip import ensure_torchvision_loadable, register_model_config
from evaluation.models import ClipEmbedding, ClipProbeCheck, ClipProbeChunk, ClipProbeChunkKind, RunStatus
from evaluation.retrieval import compute as shared
from tests import factories as f
from tests.evaluation.clip_tiny import TINY_CONFIG, TINY_MODEL_NAME, save_tiny_checkpoint

N = 4  # images, one class each: 0 dog, 1 cat, 2 bus, 3 bicycle
LABELS = {
    "en": [[0, 1, 2, 3], ["dog", "cat", "bus", "bicycle"]],
    "de": [[0, 1, 2, 3], ["Hund", "Katze", "Bus", "Fahrrad"]],
    "ja": [[0], ["犬"]],  # one class only
    "ar": [[0, 1, 2, 3], ["كلب", "قطة", "حافلة", "دراجة"]],
}


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    ensure_torchvision_loadable()
    register_model_config(TINY_MODEL_NAME, TINY_CONFIG)
    return save_tiny_checkpoint(tmp_path_factory.mktemp("clip") / "tiny.pt", seed=5)


@pytest.fixture
def tiny_clip(tiny_checkpoint):
    with override_settings(
        CLIP_MODEL=TINY_MODEL_NAME,
        CLIP_PRETRAINED="",
        CLIP_CHECKPOINT=str(tiny_checkpoint),
        METRIC_CLIP_CHUNK_SIZE=3,
        CLIP_FOIL_BOOTSTRAP=200,
    ):
        yield tiny_checkpoint


@pytest.fixture
def images(db):
    return [f.ImageFactory(key=f"photo{i}") for i in range(N)]


def labelled_csv(rows=None) -> str:
    rows = rows if rows is not None else [(f"photo{i}", i) for i in range(N)]
    return "image,class_id\n" + "".join(f"{key},{cid}\n" for key, cid in rows)


def valse(pairs: dict) -> str:
    return json.dumps(
        {
            key: {
                "caption": caption,
                "foil": foil,
                "linguistic_phenomena": phenomenon,
                "image_file": image,
                "mturk": {"caption": votes, "foil": 0, "other": 3 - votes},
            }
            for key, (image, phenomenon, caption, foil, votes) in pairs.items()
        }
    )


FOILS = {
    "1": ("photo0.jpg", "counting", "two dogs", "three dogs", 3),
    "2": ("photo1.jpg", "counting", "one cat", "two cats", 2),
    "3": ("photo2.jpg", "existence", "there is a bus", "there is no bus", 3),
    "4": ("photo3.jpg", "existence", "a bicycle", "no bicycle", 1),  # not valid: one vote
}
FOILS_DE = {
    "1": ("photo0.jpg", "counting", "zwei Hunde", "drei Hunde", 3),
    "2": ("photo1.jpg", "counting", "eine Katze", "zwei Katzen", 2),
    "3": ("photo2.jpg", "existence", "ein Bus", "ein Bus", 3),  # caption = foil: a tie
}


def run(django_capture_on_commit_callbacks, plan) -> ClipProbeCheck:
    with django_capture_on_commit_callbacks(execute=True):
        check = probe_check_store(plan=plan)
    check.refresh_from_db()
    return check


def known_embeddings(monkeypatch, images):
    """An image's vector is one-hot on its position; a label or caption of class/image i is that
    same one-hot vector; a foil is orthogonal to every image (it must lose), except where it is the
    caption itself (a tie)."""
    position = {image.content_hash: i for i, image in enumerate(images)}
    text_vector = {}
    for code in LABELS:
        for cid, label in zip(*LABELS[code], strict=True):
            text_vector[label] = np.eye(N + 1)[cid]
    for pairs in (FOILS, FOILS_DE):
        for image, _, caption, foil, _ in pairs.values():
            text_vector[caption] = np.eye(N + 1)[int(image[5])]
            text_vector.setdefault(foil, np.eye(N + 1)[N])

    def embed_images(loaded, items, cache, **kwargs):
        return np.eye(N + 1, dtype=np.float32)[[position[h] for h, _ in items]]

    def embed_texts(loaded, batch, prefix="", cache=None):
        return np.asarray([text_vector[t] for t in batch], dtype=np.float32)

    monkeypatch.setattr(shared, "embed_images_cached", embed_images)
    monkeypatch.setattr(shared, "embed_texts", embed_texts)


def test_labels_equal_to_their_images_classify_every_image_and_english_is_compared_on_the_same_classes(
    images, tiny_clip, monkeypatch, django_capture_on_commit_callbacks
):
    known_embeddings(monkeypatch, images)
    plan = zeroshot_check_plan(
        labels=("babel.json", json.dumps(LABELS)), images=("images.csv", labelled_csv())
    )
    check = run(django_capture_on_commit_callbacks, plan)
    assert check.status == RunStatus.SUCCEEDED, check.error
    assert check.languages == ["ar", "de", "en", "ja"]
    de = check.results["de"]
    assert (de["top1"], de["top5"], de["n_classes"], de["n_images"]) == (1.0, 1.0, 4, 4)
    assert de["per_class"]["2"] == {"n_images": 1, "correct": 1, "top1": 1.0}
    assert de["baseline"]["top1"] == 1.0 and de["baseline"]["n_classes"] == 4
    # A language with one class: its one image is right by construction, and it says so.
    ja = check.results["ja"]
    assert (ja["n_classes"], ja["n_images"], ja["top1"]) == (1, 1, 1.0)
    assert "only 1 class" in ja["notes"][0]
    assert "3 images of classes this language has no label for are left out" in ja["notes"]
    assert ja["baseline"]["n_classes"] == 1


def test_tied_labels_count_against_the_model(
    images, tiny_clip, monkeypatch, django_capture_on_commit_callbacks
):
    known_embeddings(monkeypatch, images)
    tied = {"en": [[0, 1], ["dog", "hound"]]}  # "hound" is not known: make it the dog's vector too
    shared_texts = shared.embed_texts

    def embed_texts(loaded, batch, prefix="", cache=None):
        return np.asarray([np.eye(N + 1)[0] if t == "hound" else shared_texts(loaded, [t])[0] for t in batch])

    monkeypatch.setattr(shared, "embed_texts", embed_texts)
    plan = zeroshot_check_plan(
        labels=("babel.json", json.dumps(tied)),
        images=("images.csv", labelled_csv([("photo0", 0), ("photo1", 1)])),
    )
    check = run(django_capture_on_commit_callbacks, plan)
    en = check.results["en"]
    # photo0 (dog) ties dog and hound: wrong at 1; photo1 (cat) is nearer neither: hound's 0 ≥ … also wrong.
    assert en["per_class"]["0"]["top1"] == 0.0
    assert en["top5"] == 1.0 and "only 2 classes" in en["notes"][0]


def test_prompt_templates_are_embedded_through_the_shared_text_cache(
    images, tiny_clip, django_capture_on_commit_callbacks
):
    templates = "language,template\nen,a photo of a {}.\nen,a picture of a {}.\nde,ein Foto von {}.\n"
    labels = "class_id,language,label\n0,en,dog\n1,en,cat\n0,de,Hund\n1,de,Katze\n"
    plan = zeroshot_check_plan(
        labels=("labels.csv", labels),
        images=("images.csv", labelled_csv([("photo0", 0), ("photo1", 1), ("photo2", 1)])),
        templates=("templates.csv", templates),
    )
    assert plan.texts["en"][0] == [0, "a photo of a dog."]
    check = run(django_capture_on_commit_callbacks, plan)
    assert check.status == RunStatus.SUCCEEDED, check.error
    # 3 images, 4 English prompts, 2 German: every one embedded once, in the shared caches.
    assert check.timings["embeddings_computed"] == 3 + 4 + 2
    assert ClipEmbedding.objects.count() == 9
    assert check.data["plain_label"] == []
    again = run(django_capture_on_commit_callbacks, plan)
    assert again.timings["embeddings_computed"] == 0
    assert again.results["en"]["top1"] == check.results["en"]["top1"]


def test_foils_that_must_lose_lose_and_ties_count_against_the_model(
    images, tiny_clip, monkeypatch, django_capture_on_commit_callbacks
):
    known_embeddings(monkeypatch, images)
    plan = foil_check_plan(
        files=[("en_valse.json", valse(FOILS), ""), ("de_valse.json", valse(FOILS_DE), "")]
    )
    assert plan.data["invalid"] == {"de": 0, "en": 1}
    assert "mturk.caption ≥ 2" in plan.data["rule"]
    check = run(django_capture_on_commit_callbacks, plan)
    assert check.status == RunStatus.SUCCEEDED, check.error
    en, de = check.results["en"], check.results["de"]
    assert en["accuracy"] == 1.0 and en["phenomena"]["counting"]["n_pairs"] == 2
    assert en["phenomena"]["all"]["n_pairs"] == 3  # the unvalidated pair is left out
    assert de["phenomena"]["existence"] == {"n_pairs": 1, "accuracy": 0.0, "ties": 1, "interval": None}
    assert de["accuracy"] == pytest.approx(2 / 3)
    # English on the same pairs (by VALSE piece and id): the three German ones, all right.
    assert de["baseline"] == {"accuracy": 1.0, "n_pairs": 3}
    assert [pair[:2] for pair in check.pairs["de"]] == [
        ["valse:1", "counting"],
        ["valse:2", "counting"],
        ["valse:3", "existence"],
    ]
    assert de["phenomena"]["all"]["ties"] == 1
    low, high = de["phenomena"]["all"]["interval"]
    assert 0 <= low <= 2 / 3 <= high <= 1


def test_a_foil_file_with_unknown_images_is_refused_or_its_pairs_skipped_when_asked(images, tiny_clip):
    pairs = dict(FOILS) | {"9": ("elsewhere.jpg", "counting", "a dog", "two dogs", 3)}
    with pytest.raises(ValidationFailed, match="1 foil images are not imported \\(elsewhere.jpg\\)"):
        foil_check_plan(files=[("en.json", valse(pairs), "")])
    plan = foil_check_plan(files=[("en.json", valse(pairs), "")], skip_unknown_images=True)
    assert plan.data["skipped_unknown_images"] == {"en": 1}
    assert len(plan.texts["en"]) == 3
    assert ClipProbeCheck.objects.count() == 0


@pytest.mark.parametrize(
    ("labels", "images_csv", "message"),
    [
        (
            "class_id,language,label\n0,en,dog\nx,en,cat\n",
            None,
            "line 3: the class id must be a whole number",
        ),
        ("class_id,language,label\n0,en,dog\n0,en,hound\n", None, "line 3: class 0 already has a en label"),
        ('{"en": [[0, 1], ["dog"]]}', None, "“en” must be \\[\\[class indices\\], \\[labels\\]\\]"),
        ('{"en": [[0], ["dog"]', None, "not valid JSON at line 1"),
        ("class_id,label\n0,dog\n", None, "line 1 must be the header class_id,language,label"),
        ("class_id,language,label\n0,<b>en</b>,dog\n", None, "line 2: “<b>en</b>” is not a language code"),
        (None, "image,class_id\nphoto0,0\nphoto0,1\n", "line 3: image “photo0” is listed twice"),
        (None, "image,class_id\nphoto0,0\nnowhere,1\n", "1 labelled images are not imported \\(nowhere\\)"),
        (None, "image,class_id\nphoto3,7\n", "en: none of its 2 classes has a labelled image"),
    ],
)
def test_malformed_zeroshot_files_are_refused_by_line_with_nothing_stored(
    images, labels, images_csv, message
):
    labels = labels or "class_id,language,label\n0,en,dog\n1,en,cat\n"
    with pytest.raises(ValidationFailed, match=message):
        zeroshot_check_plan(labels=("labels", labels), images=("images", images_csv or labelled_csv()))
    assert ClipProbeCheck.objects.count() == ClipProbeChunk.objects.count() == 0


def test_malformed_templates_and_foil_files_are_refused(images):
    labels = ("labels", "class_id,language,label\n0,en,dog\n")
    with pytest.raises(ValidationFailed, match="line 2: the template must hold"):
        zeroshot_check_plan(
            labels=labels, images=("i", labelled_csv()), templates=("t", "language,template\nen,a dog\n")
        )
    bad = json.dumps(
        {"1": {"caption": "a dog", "foil": "", "linguistic_phenomena": "x", "image_file": "photo0"}}
    )
    with pytest.raises(ValidationFailed, match="item “1” lacks foil"):
        foil_check_plan(files=[("en.json", bad, "")])
    no_votes = json.dumps(
        {"1": {"caption": "a", "foil": "b", "linguistic_phenomena": "x", "image_file": "photo0"}}
    )
    with pytest.raises(ValidationFailed, match="item “1” lacks the mturk caption votes"):
        foil_check_plan(files=[("en.json", no_votes, "")])
    with pytest.raises(ValidationFailed, match="Cannot tell the language of “valse.json”"):
        foil_check_plan(files=[("valse.json", valse(FOILS), "")])
    with pytest.raises(ValidationFailed, match="en: no valid pair"):
        foil_check_plan(files=[("en.json", valse(FOILS), "")], min_votes=4)
    assert ClipProbeCheck.objects.count() == 0


def test_a_check_killed_during_its_text_chunks_resumes_to_the_same_result(
    images, tiny_clip, django_capture_on_commit_callbacks
):
    plan = zeroshot_check_plan(
        labels=("babel.json", json.dumps(LABELS)), images=("images.csv", labelled_csv())
    )
    reference = run(django_capture_on_commit_callbacks, plan)
    assert reference.status == RunStatus.SUCCEEDED, reference.error
    ClipEmbedding.objects.all().delete()

    check = probe_check_store(plan=plan, enqueue=False)
    for chunk in check.chunks.filter(kind=ClipProbeChunkKind.IMAGES):
        assert compute_clip_probe_chunk.apply(args=[chunk.pk]).get() == "done"
    victim = check.chunks.filter(kind=ClipProbeChunkKind.TEXTS).order_by("language", "index").first()
    assert unit_claim(CLIP_PROBE_CHECK, unit_id=victim.pk) == 1
    long_ago = timezone.now() - timedelta(hours=1)
    check.chunks.filter(pk=victim.pk).update(heartbeat_at=long_ago, started_at=long_ago)
    with django_capture_on_commit_callbacks(execute=True):
        result = probe_check_resume(check_id=check.pk)
    assert result.requeued >= 1
    check.refresh_from_db()
    assert check.status == RunStatus.SUCCEEDED, check.error
    assert check.results == reference.results
    # Every vector was computed once, the interrupted chunk's included: 4 images, 13 labels.
    assert ClipEmbedding.objects.count() == 4 + 13


def test_a_language_failing_zero_shot_is_flagged_wherever_the_models_verdict_is_read(
    images, tiny_clip, monkeypatch, django_capture_on_commit_callbacks
):
    from evaluation.retrieval.selectors import clip_trust

    known_embeddings(monkeypatch, images)
    known = shared.embed_texts
    arabic = set(LABELS["ar"][1])

    def embed_texts(loaded, batch, prefix="", cache=None):
        # Every Arabic label is the same point: Arabic classifies nothing.
        return np.asarray(
            [np.ones(N + 1) / np.sqrt(N + 1) if t in arabic else known(loaded, [t])[0] for t in batch]
        )

    monkeypatch.setattr(shared, "embed_texts", embed_texts)
    plan = zeroshot_check_plan(
        labels=("babel.json", json.dumps(LABELS)), images=("images.csv", labelled_csv())
    )
    check = run(django_capture_on_commit_callbacks, plan)
    assert check.results["ar"]["top1"] == 0.0 and check.results["en"]["top1"] == 1.0
    verdicts = clip_trust(check.model_key, ["ar", "de", "sw"])
    assert verdicts["ar"].flagged
    assert verdicts["ar"].reasons == ["zero-shot accuracy 0.00× English"]
    assert not verdicts["de"].flagged and not verdicts["de"].trusted  # no retrieval check: unchecked
    assert "zero-shot accuracy 100.0%, 1.00× English" in verdicts["de"].note
    assert verdicts["sw"].probes == ()


def test_the_commands_compute_show_compare_and_print_the_trust_table(
    images, tiny_clip, monkeypatch, tmp_path, capsys
):
    from django.core.management import CommandError, call_command

    known_embeddings(monkeypatch, images)
    (tmp_path / "babel.json").write_text(json.dumps(LABELS))
    (tmp_path / "images.csv").write_text(labelled_csv())
    call_command(
        "clip_zeroshot", "--labels", str(tmp_path / "babel.json"), "--images", str(tmp_path / "images.csv")
    )
    out, err = capsys.readouterr()
    check = ClipProbeCheck.objects.get()
    assert f"Zero-shot classification check #{check.pk}" in out
    assert next(line for line in out.splitlines() if line.startswith("ja")).split()[1:4] == [
        "1",
        "1",
        "100.0",
    ]
    assert f"[{'#' * 30}] {check.chunks_total}/{check.chunks_total} chunks" in err

    (tmp_path / "en_valse.json").write_text(valse(FOILS))
    (tmp_path / "valse_de.json").write_text(valse(FOILS_DE))
    call_command("clip_foils", "--files", str(tmp_path / "en_valse.json"), f"de={tmp_path / 'valse_de.json'}")
    out, _ = capsys.readouterr()
    assert "Kept: pairs with mturk.caption ≥ 2" in out
    de_all = next(line for line in out.splitlines() if line.startswith("de") and " all " in line)
    assert de_all.startswith("de !")  # below 0.9 × English's foil accuracy on the same pairs
    parts = de_all.split()
    assert parts[3:5] == ["3", "66.7"] and parts[-2:] == ["1", "0.67×"]
    foil = ClipProbeCheck.objects.get(probe="foil")

    call_command("clip_foils", "--compare", str(foil.pk), str(foil.pk))
    out, _ = capsys.readouterr()
    assert "de        all" in out and "+0.0" in out

    call_command("clip_zeroshot", "--trust")
    out, _ = capsys.readouterr()
    assert "CLIP trust, clip:" in out
    assert "de !" in out and "foil accuracy 0.67× English" in out  # 0.67 < 0.9: flagged

    with pytest.raises(CommandError, match="line 2: the class id must be a whole number"):
        (tmp_path / "bad.csv").write_text("class_id,language,label\nx,en,dog\n")
        call_command(
            "clip_zeroshot", "--labels", str(tmp_path / "bad.csv"), "--images", str(tmp_path / "images.csv")
        )
    assert ClipProbeCheck.objects.count() == 2
