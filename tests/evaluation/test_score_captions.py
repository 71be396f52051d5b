"""``manage.py score_captions``: the offline scorer. No test here may touch the database (none is marked django_db)."""

from __future__ import annotations

import json
import shutil
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from evaluation.metrics.clip import ensure_torchvision_loadable, load_clip, register_model_config, score_clip
from evaluation.metrics.clip.hashing import content_hash
from evaluation.metrics.text.schemes import text_signature
from tests.evaluation.clip_tiny import TINY_CONFIG, TINY_MODEL_NAME, save_tiny_checkpoint

TEXT_KEYS = ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr", "CIDEr-D"]
JAVA = shutil.which("java") is not None
# The session fixture ``java`` (tests/conftest.py) skips these without java, and fails them under CI.
requires_java = pytest.mark.usefixtures("java")


@pytest.fixture
def fakecap(shared_data):
    folder = shared_data / "coco-fakecap"
    return (
        folder / "captions_val2014_fakecap_results.json",
        folder / "captions_val2014_fakecap_subset_refs_tokenized.json",
    )


def score(*args) -> str:
    out = StringIO()
    call_command("score_captions", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def figures(text: str) -> dict[str, str]:
    """metric -> printed figure, from the text output (the signature lines left out)."""
    return dict(line.split() for line in text.splitlines() if line and not line.startswith("signature"))


@requires_java
def test_coco_fakecap_gives_the_servers_figures(fakecap):
    results, references = fakecap
    text = score(
        "--results", str(results), "--references", str(references), "--language", "en", "--pretokenized"
    )
    lines = figures(text)
    assert "signature (BLEU-1, BLEU-2, BLEU-3, BLEU-4, ROUGE-L, CIDEr, CIDEr-D): tok:pretokenized|" in text
    # Every figure the evaluation server publishes for this set, to the digits it gives.
    assert [lines[k] for k in ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "ROUGE-L", "CIDEr-D"]] == [
        "0.579",
        "0.404",
        "0.279",
        "0.191",
        "0.195",
        "0.396",
        "0.600",
    ]


def test_our_preprocessing_on_ptb_tokens_only_moves_bleu_1_and_2(fakecap):
    # Without --pretokenized, hyphens and apostrophes left inside the PTB tokens ("twin-hulled",
    # "'s") are removed as punctuation, which adds a few reference tokens (9858 instead of 9855).
    results, references = fakecap
    args = ["--results", str(results), "--references", str(references), "--language", "en"]
    text = score(*args, "--scheme", "whitespace", "--metrics", *TEXT_KEYS)
    lines = figures(text)
    assert f"CIDEr-D): {text_signature('whitespace')}" in text
    assert lines["CIDEr-D"] == "0.600"
    assert lines["BLEU-4"] == "0.191"
    assert lines["ROUGE-L"] == "0.396"

    data = json.loads(score(*args, "--scheme", "whitespace", "--metrics", *TEXT_KEYS, "--format", "json"))
    assert list(data) == [*TEXT_KEYS, "signatures"]
    assert data["signatures"] == dict.fromkeys(TEXT_KEYS, text_signature("whitespace"))
    assert round(data["CIDEr-D"], 3) == 0.600
    assert round(data["BLEU-4"], 3) == 0.191


def test_per_caption_scores(fakecap):
    results, references = fakecap
    args = ["--results", str(results), "--references", str(references), "--language", "en", "--per-caption"]
    args += ["--scheme", "whitespace"]
    data = json.loads(score(*args, "--metrics", "CIDEr-D", "ROUGE-L", "--format", "json"))
    assert set(data) == {"ROUGE-L", "CIDEr-D", "per_caption", "signatures"}
    rows = data["per_caption"]
    assert len(rows) == 1000
    assert set(rows[0]) == {"image_id", "caption", "ROUGE-L", "CIDEr-D"}
    candidates = json.loads(results.read_text())
    assert (rows[0]["image_id"], rows[0]["caption"]) == (candidates[0]["image_id"], candidates[0]["caption"])
    # Corpus CIDEr-D and ROUGE-L are the means of the per-caption scores.
    assert np.mean([r["CIDEr-D"] for r in rows]) == pytest.approx(data["CIDEr-D"], abs=1e-12)
    assert np.mean([r["ROUGE-L"] for r in rows]) == pytest.approx(data["ROUGE-L"], abs=1e-12)

    text = score(*args, "--metrics", "bleu-4")
    lines = text.splitlines()
    assert lines[0] == "BLEU-4  0.191"
    assert lines[1] == f"signature (BLEU-4): {text_signature('whitespace')}"
    assert lines[3] == "image_id\tBLEU-4"
    assert len(lines) == 4 + 1000


def test_errors_name_the_entry_and_the_reason(fakecap, tmp_path):
    _, references = fakecap
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps([{"image_id": 391895, "caption": "a man"}, {"image_id": 522418}]))
    with pytest.raises(CommandError, match=r"results.json: entry 1: missing 'caption'"):
        score("--results", str(bad), "--references", str(references), "--language", "en")

    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps([{"image_id": 42, "caption": "a cat"}]))
    with pytest.raises(CommandError, match=r"unknown.json: entry 0: image_id 42 has no reference captions"):
        score("--results", str(unknown), "--references", str(references), "--language", "en")

    broken = tmp_path / "refs.json"
    broken.write_text('{"annotations": [{"image_id": 1, "caption": 5}]}')
    with pytest.raises(CommandError, match=r"refs.json: entry 0: caption of image_id 1 must be a string"):
        score("--results", str(unknown), "--references", str(broken), "--language", "en")

    with pytest.raises(CommandError, match="Unknown metric"):
        score(
            "--results", str(unknown), "--references", str(broken), "--language", "en", "--metrics", "SPICE"
        )
    with pytest.raises(CommandError, match="CLIPScore need the images: give --images"):
        score(
            "--results",
            str(unknown),
            "--references",
            str(broken),
            "--language",
            "en",
            "--metrics",
            "CLIPScore",
        )


def test_xm3600_references_and_the_char_scheme(tmp_path):
    refs = tmp_path / "captions.jsonl"
    refs.write_text(
        json.dumps(
            {"image/key": "k1", "zh": {"caption": ["一只狗在海滩上奔跑。", "海滩上的狗"]}}, ensure_ascii=False
        )
        + "\n",
        encoding="utf-8",
    )
    results = tmp_path / "results.json"
    results.write_text(json.dumps([{"image_id": "k1", "caption": "一只狗在海滩上"}], ensure_ascii=False))
    data = json.loads(
        score("--results", str(results), "--references", str(refs), "--language", "zh", "--format", "json")
    )
    # Per-character tokens: the candidate's 7 characters all occur in the first reference, and the
    # closest reference length (5 or 9: the shorter wins a tie) is below 7, so no brevity penalty.
    assert data["BLEU-1"] == pytest.approx(1.0, abs=1e-6)
    assert data["signatures"]["BLEU-1"] == text_signature("char")  # zh's default
    split = json.loads(
        score(
            "--results",
            str(results),
            "--references",
            str(refs),
            "--language",
            "zh",
            "--format",
            "json",
            "--scheme",
            "whitespace",
        )
    )
    assert split["BLEU-1"] == pytest.approx(0.0, abs=1e-6)  # one whole-caption token matches nothing
    assert split["signatures"]["CIDEr-D"] == text_signature("whitespace")


def test_a_scheme_that_cannot_run_is_a_clear_error(tmp_path):
    refs = tmp_path / "captions.jsonl"
    refs.write_text(json.dumps({"image/key": "k1", "th": {"caption": ["แมว"]}}, ensure_ascii=False) + "\n")
    results = tmp_path / "results.json"
    results.write_text(json.dumps([{"image_id": "k1", "caption": "แมว"}], ensure_ascii=False))
    with pytest.raises(CommandError, match=r"“jieba” is for yue, zh, not for language “th”"):
        score("--results", str(results), "--references", str(refs), "--language", "th", "--scheme", "jieba")


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    ensure_torchvision_loadable()
    register_model_config(TINY_MODEL_NAME, TINY_CONFIG)
    return save_tiny_checkpoint(tmp_path_factory.mktemp("clip") / "tiny.pt", seed=11)


def test_clipscore_with_a_local_checkpoint(shared_data, tmp_path, tiny_checkpoint):
    example = shared_data / "clipscore-example"
    good = json.loads((example / "good_captions.json").read_text())
    refs = json.loads((example / "refs.json").read_text())
    results = tmp_path / "results.json"
    results.write_text(json.dumps([{"image_id": key, "caption": text} for key, text in good.items()]))
    annotations = tmp_path / "refs.json"
    annotations.write_text(
        json.dumps(
            {"annotations": [{"image_id": key, "caption": c} for key, texts in refs.items() for c in texts]}
        )
    )
    config = tmp_path / "tiny.json"
    config.write_text(json.dumps(TINY_CONFIG))
    args = [
        "--results",
        str(results),
        "--references",
        str(annotations),
        "--language",
        "en",
        "--scheme",
        "whitespace",
        "--images",
        str(example / "images"),
        "--clip-model",
        TINY_MODEL_NAME,
        "--clip-checkpoint",
        str(tiny_checkpoint),
        "--clip-config",
        str(config),
        "--device",
        "cpu",
        "--format",
        "json",
        "--per-caption",
    ]
    # The default (text and CLIP metrics) includes METEOR, which needs Java; without it, name the rest.
    data = json.loads(score(*args) if JAVA else score(*args, "--metrics", *TEXT_KEYS, "clip"))
    text_keys = [*TEXT_KEYS, "METEOR"] if JAVA else TEXT_KEYS
    assert [key for key in data if key != "per_caption"] == [
        *text_keys,
        "CLIPScore",
        "RefCLIPScore",
        "image_orientation",
        "signatures",
    ]
    assert data["image_orientation"] == "exif"  # the CLIP_IMAGE_ORIENTATION default
    digest = content_hash(tiny_checkpoint)[:16]
    assert (
        data["signatures"]["CLIPScore"]
        == data["signatures"]["RefCLIPScore"]
        == (f'clip:{TINY_MODEL_NAME}|weights:none|ckpt:sha256-{digest}|prompt:""|orient:exif|impl:clip-1')
    )

    loaded = load_clip(TINY_MODEL_NAME, checkpoint_path=tiny_checkpoint, device="cpu")
    images = {key: example / "images" / f"{key}.jpg" for key in good}
    expected = score_clip(loaded, good, images, refs)
    assert data["CLIPScore"] == pytest.approx(expected.corpus_clipscore, abs=1e-6)
    assert data["RefCLIPScore"] == pytest.approx(expected.corpus_refclipscore, abs=1e-6)
    per_caption = {row["image_id"]: row["CLIPScore"] for row in data["per_caption"]}
    assert per_caption == pytest.approx(expected.clipscore, abs=1e-6)
    # As the reference CLIPScore code reads the files, on request; said in both formats.
    stored = json.loads(score(*args, "--image-orientation", "stored"))
    assert stored["image_orientation"] == "stored"
    expected_stored = score_clip(loaded, good, images, refs, image_orientation="stored")
    assert stored["CLIPScore"] == pytest.approx(expected_stored.corpus_clipscore, abs=1e-6)
    text = score(
        *[a for a in args if a not in ("--format", "json", "--per-caption")], "--image-orientation", "stored"
    )
    assert figures(text)["image_orientation"] == "stored"

    with pytest.raises(CommandError, match=r"results.json: entry 0: no image file for image_id 'image1'"):
        score(*[a if a != str(example / "images") else str(tmp_path) for a in args])
    with pytest.raises(CommandError, match="does not exist"):
        score(*[a if a != str(tiny_checkpoint) else str(tmp_path / "nope.pt") for a in args])


def test_without_java_the_other_metrics_are_printed_and_the_exit_status_is_3(fakecap, settings):
    settings.METEOR_JAVA = "/nonexistent/bin/java"
    results, references = fakecap
    out = StringIO()
    with pytest.raises(CommandError, match=r"METEOR not computed: Java was not found") as caught:
        call_command(
            "score_captions",
            "--results",
            str(results),
            "--references",
            str(references),
            "--language",
            "en",
            "--pretokenized",
            "--metrics",
            "text",
            stdout=out,
            stderr=StringIO(),
        )
    assert caught.value.returncode == 3
    assert "apt-get install default-jre-headless" in str(caught.value)
    lines = figures(out.getvalue())
    assert list(lines) == TEXT_KEYS  # every other text metric, METEOR left out
    assert (lines["BLEU-4"], lines["CIDEr-D"]) == ("0.191", "0.600")

    out = StringIO()
    with pytest.raises(CommandError):
        call_command(
            "score_captions",
            *["--results", str(results), "--references", str(references), "--language", "en"],
            *["--pretokenized", "--metrics", "METEOR", "BLEU-4", "--format", "json"],
            stdout=out,
            stderr=StringIO(),
        )
    data = json.loads(out.getvalue())
    assert round(data["BLEU-4"], 3) == 0.191
    assert data["not_computed"]["METEOR"].startswith("Java was not found")


def test_cider_df_from_a_references_file(fakecap, tmp_path):
    results, references = fakecap
    one = tmp_path / "one.json"
    first = json.loads(results.read_text())[0]
    one.write_text(json.dumps([first]))
    args = ["--results", str(one), "--references", str(references), "--language", "en", "--pretokenized"]
    err = StringIO()
    alone = json.loads(score(*args, "--metrics", "CIDEr-D", "--format", "json"))
    out = StringIO()
    call_command(
        "score_captions",
        *args,
        "--metrics",
        "CIDEr-D",
        "--format",
        "json",
        "--cider-df",
        str(references),
        stdout=out,
        stderr=err,
    )
    with_df = json.loads(out.getvalue())
    assert alone["CIDEr-D"] == 0.0  # one image: its own df gives every n-gram idf 0
    # With the whole file's df the image scores what it scores among all 1,000 images.
    everything = json.loads(
        score(
            "--results",
            str(results),
            "--references",
            str(references),
            "--language",
            "en",
            "--pretokenized",
            "--metrics",
            "CIDEr-D",
            "--per-caption",
            "--format",
            "json",
        )
    )
    inside = next(row["CIDEr-D"] for row in everything["per_caption"] if row["image_id"] == first["image_id"])
    assert with_df["CIDEr-D"] == pytest.approx(inside, abs=1e-12) and inside > 0
    assert "CIDEr document frequencies: file:" in err.getvalue()


@requires_java
def test_raw_english_with_no_options_is_the_coco_servers_pipeline(tmp_path):
    """Issue 10's "done when": raw English, no scheme named, equals pycocoevalcap's whole pipeline
    (its Java PTBTokenizer, then Bleu, Rouge, Cider) per caption to 1e-6."""
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    from tests.evaluation import ptb_captions
    from tests.evaluation.test_ptb_tokenizer import _pycocoevalcap_scores

    candidates, references = ptb_captions.images(300, references=5, seed=7, plain=0.3)
    results = tmp_path / "results.json"
    results.write_text(json.dumps([{"image_id": key, "caption": text} for key, text in candidates.items()]))
    annotations = tmp_path / "references.json"
    annotations.write_text(
        json.dumps(
            {
                "images": [{"id": key} for key in references],
                "annotations": [
                    {"id": n, "image_id": key, "caption": text}
                    for n, (key, text) in enumerate((k, t) for k, ts in references.items() for t in ts)
                ],
            }
        )
    )
    metrics = ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr-D"]
    out = score(
        *["--results", str(results), "--references", str(annotations), "--language", "en"],
        *["--metrics", *metrics, "--per-caption", "--format", "json"],
    )
    data = json.loads(out)
    assert set(data["signatures"].values()) == {text_signature("coco-ptb", language="en")}
    assert data["signatures"]["CIDEr-D"].startswith("tok:coco-ptb@corenlp-3.4.1/")

    keys = list(candidates)
    gts = PTBTokenizer().tokenize({key: [{"caption": text} for text in references[key]] for key in keys})
    res = PTBTokenizer().tokenize({key: [{"caption": candidates[key]}] for key in keys})
    theirs = _pycocoevalcap_scores(gts, res)
    ours = {row["image_id"]: row for row in data["per_caption"]}
    for name, values in theirs.items():
        assert max(abs(ours[key][name] - float(value)) for key, value in zip(keys, values)) <= 1e-6, name
