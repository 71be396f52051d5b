"""Research exports: every file opens in the tool it targets (the project's own readers, importers and
metric engine), CSV is RFC 4180 with formula-like cells neutralised, annotators are pseudonymous
unless asked otherwise, every export carries its provenance, only staff download, and large exports
stream in constant memory (RELIABILITY 21)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import tracemalloc
import uuid
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotation.assignment.engine import batch_request
from annotation.importers.captions import system_captions_import
from annotation.models import (
    Assignment,
    AssignmentState,
    Batch,
    BatchStage,
    CampaignKind,
    ControlKind,
    Image,
    Item,
    SxsJudgment,
    SystemCaption,
    WrittenCaption,
)
from annotation.services import work
from annotation.services.campaigns import campaign_open, rating_campaign_create, sxs_campaign_create
from core.versions import platform_version
from evaluation.metrics.references import references_import
from evaluation.metrics.text.formats import read_coco_annotations, read_coco_results, read_xm3600_captions
from evaluation.metrics.text.schemes import scheme, tokens_signature
from evaluation.metrics.text.scoring import score_texts
from evaluation.models import Reference
from evaluation.research.exports import export_prepare
from evaluation.research.exports.writers import Counts, coco_image_id, csv_lines, xm3600_lines
from tests import factories as f

pytestmark = pytest.mark.django_db

FORMULAS = ["=cmd|' /C calc'!A0", "+1+1", "-2-2", "@SUM(A1)", "\tTab", "\rreturn"]
AWKWARD = ["a, b and c", 'she said "hi"', "two\nlines", "crlf\r\ninside", " leading space", "plain"]


def export(tmp_path: Path, *args, name: str | None = None, **options) -> tuple[bytes, dict]:
    """Run ``manage.py export`` into a file; return the file's bytes and its sidecar."""
    path = tmp_path / (name or f"export-{uuid.uuid4().hex[:8]}")
    call_command("export", *args, output=str(path), verbosity=0, **options)
    sidecar = path.with_name(path.name + ".provenance.json")
    return path.read_bytes(), json.loads(sidecar.read_text(encoding="utf-8"))


def csv_rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def expected_captions(campaign) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for key, text in (
        WrittenCaption.objects.filter(campaign=campaign)
        .order_by("image__key", "pk")
        .values_list("image__key", "text")
    ):
        out[key].append(text)
    return dict(out)


# --- XM3600 captions file ----------------------------------------------------------------------------


def test_xm3600_export_reads_back_and_imports_as_the_same_references(captioned, tmp_path):
    data, provenance = export(tmp_path, "captions", campaign=captioned.pk, name="de.jsonl")
    expected = expected_captions(captioned)
    assert read_xm3600_captions(tmp_path / "de.jsonl", "de") == expected
    assert list(read_xm3600_captions(tmp_path / "de.jsonl", "de")) == sorted(expected)  # by image key

    lines = data.decode("utf-8").splitlines()
    assert len(lines) == 6
    record = json.loads(lines[0])
    key = sorted(expected)[0]
    assert list(record) == ["image/key", "image/locale", "de"]
    assert record["image/key"] == key and record["image/locale"] == ""
    block = record["de"]
    assert block["caption"] == expected[key]
    assert block["caption/tokenized/lowercase"] == [
        " ".join(scheme("whitespace").tokenize(t)) for t in expected[key]
    ]
    writer = expected[key][0].split()[-1].rstrip("!")  # "ANNA" or "OTTO"
    assert block["caption/tokenized/lowercase"][0] == f"ein bild {key} von {writer.lower()}"
    assert block["caption/tokenized"][0] == f"Ein Bild {key} von {writer}"
    assert provenance["export"]["rows"] == {"images": 6, "captions": 12}

    report = references_import(
        path=tmp_path / "de.jsonl", name="exported", language_code="de", format="xm3600"
    )
    assert report.created == 12
    imported = defaultdict(list)
    for key, text in (
        Reference.objects.filter(reference_set__name="exported")
        .order_by("image__key", "position")
        .values_list("image__key", "text")
    ):
        imported[key].append(text)
    assert dict(imported) == expected
    # The project's importer of system captions reads the same file (first caption per image).
    system_captions_import(path=tmp_path / "de.jsonl", system_name="from-export", language_code="de")
    assert dict(
        SystemCaption.objects.filter(system__name="from-export").values_list("image__key", "text")
    ) == {key: texts[0] for key, texts in expected.items()}


def test_image_locale_is_the_images_country(captioned, tmp_path):
    Image.objects.filter(pk=captioned.items.order_by("image__key").first().image_id).update(country="DE")
    data, _ = export(tmp_path, "captions", campaign=captioned.pk)
    locales = [json.loads(line)["image/locale"] for line in data.decode().splitlines()]
    assert locales == ["DE"] + [""] * 5


@pytest.mark.parametrize(
    ("code", "name", "tokenizer", "text", "lowercase"),
    [
        ("zh", "Chinese", "char", "一只猫坐在窗台上，看着iPhone 12。", "一 只 猫 坐 在 窗 台 上 看 着 iphone 12"),
        ("ar", "Arabic", "whitespace", "قطة تجلس على حافة النافذة، وتنظر إلى الخارج.", "قطة تجلس على حافة النافذة وتنظر إلى الخارج"),
        ("he", "Hebrew", "whitespace", "\u05d7\u05ea\u05d5\u05dc \u05d9\u05d5\u05e9\u05d1 \u05e2\u05dc \u05d4\u05d7\u05dc\u05d5\u05df\u202b!", None),
    ],
)  # fmt: skip
def test_rtl_and_chinese_captions_survive_byte_exact(tmp_path, code, name, tokenizer, text, lowercase):
    language = f.LanguageFactory(code=code, name=name, tokenizer=tokenizer)
    campaign = f.open_caption_campaign(images=2, batch_size=2, replication=1, language=language)
    writer = f.AnnotatorFactory(languages=[language])
    f.written_captions(campaign, annotators=[writer], text=lambda a: text)
    for fmt in ("xm3600", "coco"):
        data, _ = export(tmp_path, "captions", campaign=campaign.pk, format=fmt, name=f"{code}.{fmt}")
        assert text.encode("utf-8") in data  # not \u-escaped, not re-normalised
        assert b"\\u" not in data
    refs = read_xm3600_captions(tmp_path / f"{code}.xm3600", code)
    assert [texts for texts in refs.values()] == [[text], [text]]
    assert read_coco_annotations(tmp_path / f"{code}.coco").n_captions == 2
    record = json.loads((tmp_path / f"{code}.xm3600").read_text(encoding="utf-8").splitlines()[0])
    assert record[code]["caption/tokenized/lowercase"] == [" ".join(scheme(tokenizer).tokenize(text))]
    if lowercase:
        assert record[code]["caption/tokenized/lowercase"] == [lowercase]
    if code == "zh":
        assert record[code]["caption/tokenized"] == ["一 只 猫 坐 在 窗 台 上 看 着 iPhone 12"]


def test_xm3600_export_provenance_names_the_tokenisation_of_each_field(tmp_path):
    language = f.LanguageFactory(code="zh", name="Chinese", tokenizer="char")
    campaign = f.open_caption_campaign(images=1, batch_size=1, replication=1, language=language)
    f.written_captions(
        campaign, annotators=[f.AnnotatorFactory(languages=[language])], text=lambda a: "一只猫"
    )
    _, provenance = export(tmp_path, "captions", campaign=campaign.pk, format="xm3600")
    assert provenance["tokenization"] == {
        "caption/tokenized": tokens_signature("char", lowercase=False),
        "caption/tokenized/lowercase": tokens_signature("char"),
    }
    assert provenance["tokenization"]["caption/tokenized/lowercase"].startswith("tok:char@2+unicode-")


def test_one_record_is_one_line_whatever_line_breaks_a_caption_holds():
    text = "Zeile\nzwei\u2028drei\u2029vier\x85fünf\x1cende"
    lines = "".join(xm3600_lines([("k1", "", text)], language="de", tokenizer="whitespace", counts=Counts()))
    assert len(lines.splitlines()) == 1 and lines.endswith("}\n")
    assert read_xm3600_captions(io.StringIO(lines), "de") == {"k1": [text]}


def test_the_export_is_the_same_bytes_every_time(captioned, tmp_path):
    first, p1 = export(tmp_path, "captions", campaign=captioned.pk, format="coco")
    again, p2 = export(tmp_path, "captions", campaign=captioned.pk, format="coco")
    assert first == again and p1["export"]["sha256"] == p2["export"]["sha256"]


def test_an_empty_campaign_exports_valid_empty_files(campaign, tmp_path):
    data, provenance = export(tmp_path, "captions", campaign=campaign.pk)
    assert data == b"" and provenance["export"]["rows"] == {"images": 0, "captions": 0}
    data, provenance = export(tmp_path, "captions", campaign=campaign.pk, format="coco")
    assert json.loads(data)["annotations"] == [] and provenance["export"]["rows"] == {
        "images": 0,
        "annotations": 0,
    }
    data, provenance = export(tmp_path, "ratings", campaign=campaign.pk)
    assert data.count(b"\r\n") == 1 and provenance["export"]["rows"] == {"rows": 0}


# --- COCO annotations and COCO results -----------------------------------------------------------------


def test_coco_annotations_read_back_and_import_as_references(captioned, tmp_path):
    data, provenance = export(tmp_path, "captions", campaign=captioned.pk, format="coco", name="refs.json")
    expected = expected_captions(captioned)
    refs = read_coco_annotations(tmp_path / "refs.json")
    assert dict(refs) == expected and refs.missing == []
    document = json.loads(data)
    assert document["info"]["campaign"] == captioned.pk and document["info"]["version"] == platform_version()
    ids = {a["id"] for a in document["annotations"]}
    assert ids == set(WrittenCaption.objects.filter(campaign=captioned).values_list("pk", flat=True))
    assert provenance["export"]["rows"] == {"images": 6, "annotations": 12}
    references_import(path=tmp_path / "refs.json", name="coco-refs", language_code="de", format="coco")
    assert Reference.objects.filter(reference_set__name="coco-refs").count() == 12


def test_coco_results_read_back_import_and_score_against_the_coco_annotations(captioned, german, tmp_path):
    system = f.SystemFactory(name="sys-de")
    images = list(Image.objects.filter(items__campaign=captioned).order_by("key"))
    for n, image in enumerate(images):
        f.SystemCaptionFactory(
            system=system, image=image, language=german, text=f"Ein Bild {image.key} Nummer {n}"
        )
    results_bytes, provenance = export(
        tmp_path, "system-captions", system="sys-de", language="de", name="results.json"
    )
    export(tmp_path, "captions", campaign=captioned.pk, format="coco", name="refs.json")

    results = read_coco_results(tmp_path / "results.json")
    assert results == dict(SystemCaption.objects.filter(system=system).values_list("image__key", "text"))
    assert provenance["export"]["rows"] == {"captions": 6}
    assert provenance["system"] == {
        "id": system.pk, "name": "sys-de", "description": "", "language": "de", "tokenizer": "whitespace"
    }  # fmt: skip
    refs = read_coco_annotations(tmp_path / "refs.json")
    from_files = score_texts(results, refs, metrics=("BLEU-4", "CIDEr-D", "ROUGE-L"))
    from_database = score_texts(
        dict(SystemCaption.objects.filter(system=system).values_list("image__key", "text")),
        expected_captions(captioned),
        metrics=("BLEU-4", "CIDEr-D", "ROUGE-L"),
    )
    assert from_files.corpus == from_database.corpus and from_files.n_images == 6
    assert from_files.corpus["CIDEr-D"] > 0

    # The offline metric command reads the files as they are, against either reference format.
    export(tmp_path, "captions", campaign=captioned.pk, name="refs.jsonl")
    for references in ("refs.json", "refs.jsonl"):
        out = io.StringIO()
        call_command(
            "score_captions", "--results", str(tmp_path / "results.json"), "--references",
            str(tmp_path / references), "--language", "de", "--metrics", "BLEU-4", "CIDEr-D", "ROUGE-L",
            "--format", "json", stdout=out, stderr=io.StringIO(),
        )  # fmt: skip
        printed = json.loads(out.getvalue())
        assert printed.pop("signatures") == dict.fromkeys(from_database.corpus, from_database.signature)
        assert printed == pytest.approx(from_database.corpus, abs=1e-12)

    # ... and the importer of system captions takes the results file back.
    system_captions_import(path=tmp_path / "results.json", system_name="again", language_code="de")
    assert (
        dict(SystemCaption.objects.filter(system__name="again").values_list("image__key", "text")) == results
    )


def test_numeric_image_keys_are_coco_integer_ids_in_both_coco_files(german, tmp_path):
    english = f.LanguageFactory(code="en", name="English")
    prompt, system = f.SystemFactory(), f.SystemFactory(name="numeric-sys")
    for key in ("404464", "0042", "abc"):
        image = f.ImageFactory(key=key)
        f.SystemCaptionFactory(system=prompt, image=image, language=english)
        f.SystemCaptionFactory(system=system, image=image, language=german, text=f"Bild {key}")
    campaign = campaign_open(campaign_id=f.CampaignFactory(language=german, prompt_system=prompt).pk)
    f.written_captions(
        campaign, annotators=[f.AnnotatorFactory(languages=[german])], text=lambda a: "Ein Hund."
    )

    export(tmp_path, "system-captions", system="numeric-sys", language="de", name="r.json")
    export(tmp_path, "captions", campaign=campaign.pk, format="coco", name="a.json")
    results, refs = read_coco_results(tmp_path / "r.json"), read_coco_annotations(tmp_path / "a.json")
    assert set(results) == set(refs) == {404464, "0042", "abc"}
    assert score_texts(results, refs, metrics=("BLEU-1",)).n_images == 3
    assert (coco_image_id("404464"), coco_image_id("0042"), coco_image_id("٣")) == (404464, "0042", "٣")


# --- Ratings and judgments ----------------------------------------------------------------------------


@pytest.fixture
def screen1(german, annotator, other_annotator):
    """Screen-1 ratings (all GOOD) of 12 prompt captions that hold formulas and awkward CSV characters."""
    campaign = f.open_caption_campaign(images=12, batch_size=3, replication=1, language=german)
    texts = FORMULAS + AWKWARD
    for item, text in zip(campaign.items.order_by("image__key"), texts):
        SystemCaption.objects.filter(pk=item.prompt_caption_id).update(text=text)
    f.written_captions(
        campaign, annotators=[annotator, other_annotator], batches=2, text=lambda a: "Ein Hund."
    )
    return campaign


def test_csv_neutralises_formula_cells_and_keeps_numbers(screen1, german, tmp_path):
    prompts = dict(screen1.items.values_list("image__key", "prompt_caption__text"))
    f_texts = set(FORMULAS[:5] + ["\rreturn"])
    assert f_texts <= set(prompts.values())
    data, _ = export(tmp_path, "ratings", campaign=screen1.pk)
    rows = csv_rows(data)
    assert len(rows) == 12
    for row in rows:
        original = prompts[row["image_key"]]
        if original in FORMULAS:
            assert row["caption"] == "'" + original
        else:
            assert row["caption"] == original
        assert row["rating"] == "good" and row["rating_score"] == "3" and row["rating_label"] == "GOOD"
        assert row["campaign_kind"] == "caption" and row["caption_kind"] == "system"
    # A negative number is a number, not a neutralised string.
    m1, m2, _ = f.sxs_systems(images=2, language=german)
    sxs = campaign_open(
        campaign_id=sxs_campaign_create(
            name="vergleich", language_code="de", base_system=m1, test_system=m2, batch_size=2, replication=1
        ).pk
    )
    judge_all(sxs, [f.AnnotatorFactory(languages=[german])], lambda item, n: -3, side="right")
    data, _ = export(tmp_path, "judgments", campaign=sxs.pk)
    assert {row["score"] for row in csv_rows(data)} == {"-3"}
    assert b",-3," in data and b"'-3" not in data


def test_csv_is_rfc_4180_and_parses_back_to_the_original_text(screen1, tmp_path):
    data, _ = export(tmp_path, "ratings", campaign=screen1.pk)
    text = data.decode("utf-8")
    assert not text.startswith("\ufeff")
    assert text.endswith("\r\n")
    assert b'"she said ""hi"""' in data and b'"a, b and c"' in data and b'"two\nlines"' in data
    # Record ends are CRLF; bare LF occurs only inside quoted fields.
    parsed = list(csv.reader(io.StringIO(text, newline="")))
    header, records = parsed[0], parsed[1:]
    captions = {r[header.index("caption")] for r in records}
    assert set(AWKWARD) <= captions
    assert all(len(r) == len(header) for r in records)
    prompts = set(screen1.items.values_list("prompt_caption__text", flat=True))
    assert {c.removeprefix("'") if c.removeprefix("'") in FORMULAS else c for c in captions} == prompts


def test_ratings_as_json_lines_keep_types_and_text(screen1, tmp_path):
    data, provenance = export(tmp_path, "ratings", campaign=screen1.pk, format="jsonl")
    records = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    assert len(records) == 12 == provenance["export"]["rows"]["rows"]
    first = records[0]
    assert isinstance(first["rating_score"], int) and isinstance(first["is_late"], bool)
    assert first["submitted_at"].endswith("Z") and first["annotator"].startswith("A-")
    assert {r["caption"] for r in records} == set(
        screen1.items.values_list("prompt_caption__text", flat=True)
    )
    assert "annotator_username" not in first


def judge_all(campaign, annotators, score_for, *, side: str | None = None, submit: bool = True):
    """Each annotator takes a batch and judges every pair; ``score_for(item, n)`` is the score from
    m2's side; m2 is shown on ``side`` (or alternately left/right per annotator)."""
    for n, annotator in enumerate(annotators):
        f.sxs_judged(
            annotator,
            campaign=campaign,
            score=lambda a, n=n: score_for(a.item, n),
            side=side or ("left", "right")[n % 2],
            submit=submit,
            seconds=2.5,
            screen_seconds=30,
        )


@pytest.fixture
def judged(german):
    """A side-by-side campaign (seed 7, 3 images + one identical control, K=2) judged by two
    annotators (m2 on the left for the first, on the right for the second) and a third who has not
    submitted."""
    m1, m2, _ = f.sxs_systems(images=3, language=german, m1_name="base-sys", m2_name="test-sys")
    campaign = sxs_campaign_create(
        name="Vergleich", language_code="de", base_system=m1, test_system=m2, sample_size=3, seed=7,
        batch_size=4, replication=3, controls_identical=1,
    )  # fmt: skip
    campaign = campaign_open(campaign_id=campaign.pk)
    people = [f.AnnotatorFactory(user__username=name, languages=[german]) for name in ("ann", "ben")]
    judge_all(campaign, people, lambda item, n: 0 if item.is_control else 2)
    judge_all(
        campaign, [f.AnnotatorFactory(user__username="cid", languages=[german])], lambda i, n: 1, submit=False
    )
    return campaign, people


def test_judgments_resolve_sides_scores_and_controls(judged, tmp_path):
    campaign, (ann, ben) = judged
    data, provenance = export(tmp_path, "judgments", campaign=campaign.pk, format="jsonl")
    records = [json.loads(line) for line in data.decode().splitlines()]
    assert len(records) == 8 == provenance["export"]["rows"]["rows"]  # cid has not submitted
    assert [r["image_key"] for r in records] == sorted(r["image_key"] for r in records)
    captions = {
        item.pk: (item.caption_m1.text, item.caption_m2.text)
        for item in campaign.items.select_related("caption_m1", "caption_m2")
    }
    by_annotator = {ann.pseudonym: "left", ben.pseudonym: "right"}
    for r in records:
        assert r["m2_side"] == by_annotator[r["annotator"]]
        assert (r["m1"], r["m2"], r["campaign_id"], r["language"]) == (
            "base-sys",
            "test-sys",
            campaign.pk,
            "de",
        )
        assert r["seconds"] == 2.5 and r["screen_seconds"] == 30.0 and r["is_late"] is False
        if r["is_control"]:
            assert r["control_kind"] == ControlKind.IDENTICAL and r["score"] == 0
            assert r["left_system"] == r["right_system"] == "base-sys" and r["choice_label"] == "SIMILAR"
            assert r["left_caption"] == r["right_caption"]
            continue
        assert r["control_kind"] is None and r["is_identical_pair"] is False and r["score"] == 2
        if r["m2_side"] == "left":
            assert (r["left_system"], r["right_system"]) == ("test-sys", "base-sys")
            assert (r["choice"], r["choice_label"]) == ("better", "BETTER")  # left (m2) better
        else:
            assert (r["left_system"], r["right_system"]) == ("base-sys", "test-sys")
            assert (r["choice"], r["choice_label"]) == ("worse", "WORSE")  # right (m2) better
            assert r["choice_as_seen"] == "Right better"  # what the annotator clicked
        # The judged item itself: the identical control shows m1's caption of the same image on both sides,
        # so a search by caption text could pick the control (items have no order).
        m1_text, m2_text = captions[SxsJudgment.objects.get(pk=r["judgment_id"]).assignment.item_id]
        assert {r["left_caption"], r["right_caption"]} == {m1_text, m2_text}
        assert (r["left_caption"] == m2_text) == (r["m2_side"] == "left")


def test_pseudonyms_by_default_and_usernames_only_when_asked(judged, tmp_path):
    campaign, people = judged
    pseudonyms = {p.pseudonym for p in people}
    for fmt in ("csv", "jsonl"):
        data, provenance = export(tmp_path, "judgments", campaign=campaign.pk, format=fmt)
        assert b"ann" not in data.replace(b"annotator", b"") and b"ben" not in data
        assert provenance["export"]["with_usernames"] is False
        rows = csv_rows(data) if fmt == "csv" else [json.loads(line) for line in data.decode().splitlines()]
        assert {r["annotator"] for r in rows} == pseudonyms and "annotator_username" not in rows[0]

    data, provenance = export(tmp_path, "judgments", campaign=campaign.pk, with_usernames=True)
    rows = csv_rows(data)
    assert {(r["annotator"], r["annotator_username"]) for r in rows} == {
        (p.pseudonym, p.user.username) for p in people
    }
    assert list(rows[0]).index("annotator_username") == list(rows[0]).index("annotator") + 1
    assert provenance["export"]["with_usernames"] is True


def test_verification_ratings_name_the_rated_captions_author_by_pseudonym(
    captioned, annotator, german, tmp_path
):
    verification = rating_campaign_create(
        name="Prüfung", source_campaign_id=captioned.pk, sample_size=2, seed=5, batch_size=2
    )
    verification = campaign_open(campaign_id=verification.pk)
    rater = f.AnnotatorFactory(user__username="rita", languages=[german], reads_english=False)
    batch, _ = batch_request(annotator=rater, campaign_id=verification.pk)
    for a in batch.assignments.all():
        work.rating_save(annotator=rater, batch_id=batch.pk, assignment_id=a.pk, value="nei", seconds=4.0)
    work.judgment_batch_submit(annotator=rater, batch_id=batch.pk, submit_key=uuid.uuid4().hex)

    data, provenance = export(tmp_path, "ratings", campaign=verification.pk, with_usernames=True)
    rows = csv_rows(data)
    assert len(rows) == 2
    written = {
        item.written_caption_id: item.written_caption
        for item in verification.items.select_related("written_caption__annotator__user")
    }
    for row in rows:
        caption = written[int(row["caption_id"])]
        assert (
            row["caption"] == caption.text and row["caption_kind"] == "human" and row["caption_system"] == ""
        )
        assert row["caption_author"] == caption.annotator.pseudonym
        assert row["caption_author_username"] == caption.annotator.user.username
        assert (row["annotator"], row["annotator_username"]) == (rater.pseudonym, "rita")
        assert (row["rating"], row["rating_label"], row["rating_score"], row["seconds"]) == (
            "nei",
            "NOT-ENOUGH-INFO",
            "",
            "4.0",
        )
    assert provenance["campaign"]["source_campaign"] == {"id": captioned.pk, "name": captioned.name}
    assert (
        provenance["campaign"]["sample_seed"] == 5 and provenance["campaign"]["kind"] == CampaignKind.RATING
    )


# --- Provenance -------------------------------------------------------------------------------------------


def test_the_provenance_sidecar_describes_settings_seed_version_time_and_the_files_hash(judged, tmp_path):
    campaign, _ = judged
    before = datetime.now(UTC).replace(microsecond=0)
    data, provenance = export(tmp_path, "judgments", campaign=campaign.pk, name="j.csv")
    export_info = provenance["export"]
    assert export_info["sha256"] == hashlib.sha256(data).hexdigest()
    assert export_info["bytes"] == len(data) == (tmp_path / "j.csv").stat().st_size
    assert (export_info["kind"], export_info["format"], export_info["rows"]) == (
        "judgments",
        "csv",
        {"rows": 8},
    )
    exported_at = datetime.strptime(export_info["exported_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before <= exported_at <= datetime.now(UTC) + timedelta(seconds=1)
    assert provenance["platform"] == {"name": "captioneval", "version": platform_version()}
    assert platform_version() not in ("", "unknown")
    settings = provenance["campaign"]
    assert {k: settings[k] for k in ("id", "kind", "language", "batch_size", "replication", "lease_minutes")} == {
        "id": campaign.pk, "kind": "sxs", "language": "de", "batch_size": 4, "replication": 3, "lease_minutes": 60,
    }  # fmt: skip
    assert (settings["base_system"], settings["test_system"]) == ("base-sys", "test-sys")
    assert (
        settings["sample_size"],
        settings["sample_seed"],
        settings["items"],
        settings["control_items"],
    ) == (3, 7, 3, 1)
    assert settings["control_pass_threshold"] == 0.75 and settings["tokenizer"] == "whitespace"
    assert any("RFC 4180" in note for note in provenance["notes"])
    # The data file itself carries no time, so the hash identifies the data.
    assert export_info["exported_at"].encode() not in data


def test_a_caption_campaigns_provenance_names_its_prompt_system(captioned, tmp_path):
    _, provenance = export(tmp_path, "captions", campaign=captioned.pk)
    settings = provenance["campaign"]
    assert settings["prompt_system"] == captioned.prompt_system.name
    assert (settings["kind"], settings["batch_size"], settings["replication"], settings["items"]) == (
        "caption",
        3,
        2,
        6,
    )
    assert settings["sample_seed"] is None and settings["base_system"] is None


def test_the_command_writes_to_standard_output_and_a_chosen_sidecar(captioned, tmp_path):
    out = io.StringIO()
    call_command(
        "export",
        "captions",
        campaign=captioned.pk,
        output="-",
        provenance=str(tmp_path / "p.json"),
        stdout=out,
    )
    data = out.getvalue().encode("utf-8")
    provenance = json.loads((tmp_path / "p.json").read_text())
    assert provenance["export"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert len(data.splitlines()) == 6


def test_the_default_file_name_goes_into_an_output_folder(captioned, tmp_path):
    call_command("export", "ratings", campaign=captioned.pk, output=str(tmp_path), verbosity=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"campaign-{captioned.pk}-ratings.csv",
        f"campaign-{captioned.pk}-ratings.csv.provenance.json",
    ]


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        (["captions"], {"campaign": 999999}, "There is no campaign #999999."),
        (["captions"], {}, "captions needs --campaign ID."),
        (["judgments"], {"campaign": "CAPTION"}, "is a caption (rate, then write) campaign: the judgments export is for side by side campaigns"),
        (["captions"], {"campaign": "CAPTION", "format": "csv"}, "The captions export comes as xm3600 or coco, not “csv”."),
        (["ratings"], {"campaign": "CAPTION", "format": "coco"}, "The ratings export comes as csv or jsonl"),
        (["system-captions"], {"system": "nope", "language": "de"}, "There is no captioning system “nope”."),
        (["system-captions"], {"system": "PROMPT", "language": "xx"}, "There is no language “xx”."),
        (["system-captions"], {"system": "PROMPT"}, "system-captions needs --system NAME and --language CODE."),
        (["ratings"], {"campaign": "CAPTION", "system": "x"}, "ratings takes --campaign only"),
    ],
)  # fmt: skip
def test_the_command_explains_what_is_wrong(campaign, tmp_path, args, options, message):
    options = {
        k: campaign.pk if v == "CAPTION" else campaign.prompt_system.name if v == "PROMPT" else v
        for k, v in options.items()
    }
    with pytest.raises(CommandError) as error:
        call_command("export", *args, output=str(tmp_path / "x"), **options)
    assert message in str(error.value)
    assert not (tmp_path / "x").exists()


# --- Web downloads -------------------------------------------------------------------------------------------


def every_export_url(caption_id: int, sxs_id: int, rating_id: int, system_id: int) -> list[str]:
    from evaluation.research.exports.urls import urlpatterns

    urls = []
    for pattern in urlpatterns:
        name = f"exports:{pattern.name}"
        if pattern.name == "index":
            urls.append(reverse(name))
        elif pattern.name.startswith("system-captions"):
            urls.append(reverse(name, args=[system_id, "de"]))
        else:
            kind = next(
                k
                for k in ("captions", "ratings", "judgments", "work-time", "hours", "controls")
                if pattern.name.startswith(f"{k}-")
            )
            campaign_id = {
                "captions": caption_id,
                "ratings": caption_id,
                "judgments": sxs_id,
                "work-time": sxs_id,
                "hours": rating_id,
                "controls": sxs_id,
            }[kind]
            urls.append(reverse(name, args=[campaign_id]))
            if kind == "ratings":
                urls.append(reverse(name, args=[rating_id]))
    return urls


@pytest.fixture
def all_urls(captioned, judged, verification):
    sxs, _ = judged
    return every_export_url(captioned.pk, sxs.pk, verification.pk, sxs.base_system_id)


def test_annotators_get_403_on_every_export_url_and_anonymous_users_go_to_login(client, annotator, all_urls):
    assert (
        len(all_urls) == 31
    )  # the page, 14 campaign exports and their sidecars (ratings twice), 1 system export
    for url in all_urls:
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login")), url
    client.force_login(annotator.user)
    for url in all_urls + [url + "?with_usernames=1" for url in all_urls]:
        assert client.get(url).status_code == 403, url
    assert client.get(reverse("exports:captions-xm3600", args=[987654])).status_code == 403  # nothing leaks


def test_staff_without_a_role_get_403(client, all_urls):
    user = f.UserFactory(username="bare-staff")
    user.is_staff = True
    user.save()
    client.force_login(user)
    assert all(client.get(url).status_code == 403 for url in all_urls)


def test_researchers_and_project_managers_download_every_export(client, researcher, manager, all_urls):
    for user in (researcher, manager):
        client.force_login(user)
        for url in all_urls:
            response = client.get(url)
            assert response.status_code == 200, url
            assert response["Cache-Control"] == "private, no-store", url


def test_a_download_streams_with_its_file_name_provenance_header_and_sidecar(researcher_client, captioned):
    url = reverse("exports:captions-xm3600", args=[captioned.pk])
    response = researcher_client.get(url)
    assert response.status_code == 200 and response.streaming
    data = b"".join(response.streaming_content)
    assert response["Content-Type"] == "application/jsonl; charset=utf-8"
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="campaign-{captioned.pk}-captions.xm3600.jsonl"'
    )
    assert response["Cache-Control"] == "private, no-store"
    header = json.loads(response["X-Export-Provenance"])
    assert (header["kind"], header["format"], header["campaign"], header["language"]) == (
        "captions", "xm3600", captioned.pk, "de",
    )  # fmt: skip
    assert (
        header["platform_version"] == platform_version() and header["provenance"] == url + ".provenance.json"
    )
    assert dict(read_xm3600_captions(io.BytesIO(data), "de")) == expected_captions(captioned)

    sidecar = researcher_client.get(header["provenance"])
    assert sidecar.status_code == 200
    provenance = json.loads(sidecar.content)
    assert provenance["export"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert provenance["export"]["rows"] == {"images": 6, "captions": 12}
    assert provenance["campaign"]["id"] == captioned.pk


def test_web_usernames_only_with_the_explicit_option(researcher_client, judged):
    campaign, people = judged
    url = reverse("exports:judgments-csv", args=[campaign.pk])
    plain = b"".join(researcher_client.get(url).streaming_content)
    assert b"ann" not in plain.replace(b"annotator", b"")
    named = researcher_client.get(url + "?with_usernames=1")
    rows = csv_rows(b"".join(named.streaming_content))
    assert {r["annotator_username"] for r in rows} == {"ann", "ben"}
    assert named["X-Export-Provenance"].endswith('.provenance.json?with_usernames=1"}')
    assert json.loads(researcher_client.get(url + ".provenance.json?with_usernames=1").content)["export"][
        "with_usernames"
    ]


def test_exports_that_do_not_fit_the_campaign_are_404(researcher_client, captioned, judged):
    sxs, _ = judged
    assert researcher_client.get(reverse("exports:judgments-csv", args=[captioned.pk])).status_code == 404
    assert researcher_client.get(reverse("exports:captions-coco", args=[sxs.pk])).status_code == 404
    assert researcher_client.get(reverse("exports:ratings-csv", args=[sxs.pk])).status_code == 404
    assert researcher_client.get(reverse("exports:captions-coco", args=[987654])).status_code == 404
    assert (
        researcher_client.get(reverse("exports:system-captions", args=[sxs.base_system_id, "xx"])).status_code
        == 404
    )


def test_the_exports_page_lists_each_campaigns_exports(researcher_client, captioned, judged):
    sxs, _ = judged
    response = researcher_client.get(reverse("exports:index"))
    page = response.content.decode()
    assert response.status_code == 200
    caption_card = page[page.index(f'data-campaign="{captioned.pk}"') :].split("</section>")[0]
    assert reverse("exports:captions-xm3600", args=[captioned.pk]) in caption_card
    assert reverse("exports:captions-coco", args=[captioned.pk]) in caption_card
    assert reverse("exports:ratings-csv", args=[captioned.pk]) + ".provenance.json" in caption_card
    assert "judgments" not in caption_card
    sxs_card = page[page.index(f'data-campaign="{sxs.pk}"') :].split("</section>")[0]
    assert reverse("exports:judgments-jsonl", args=[sxs.pk]) in sxs_card and "captions" not in sxs_card
    assert reverse("exports:system-captions", args=[sxs.base_system_id, "de"]) in page
    assert "<script" not in page and " style=" not in page and "<style" not in page


# --- Constant memory ---------------------------------------------------------------------------------------------


# These two are tests, not benchmarks: they assert a bound (peak allocations that do not grow with
# the number of rows, RELIABILITY 21), measured with tracemalloc, which counts bytes, not time, so
# the result does not depend on the machine's load. They take seconds, so they are marked slow:
# the README command runs every marker; `-m "not slow"` leaves them out while iterating.


def peak_bytes(consume) -> int:
    tracemalloc.start()
    try:
        consume()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_the_writers_stream_in_constant_memory():
    def rows(n):
        for i in range(n):
            yield f"img{i:07d}", "", f"Ein Hund läuft am Strand entlang, Bild {i}."

    def run(n, writer):
        def consume():
            for _ in writer(rows(n)):
                pass

        return peak_bytes(consume)

    xm3600 = lambda r: xm3600_lines(r, language="de", tokenizer="whitespace", counts=Counts())  # noqa: E731
    table = lambda r: csv_lines(["a", "b", "c"], ({"a": k, "b": l, "c": t} for k, l, t in r), counts=Counts())  # noqa: E731, E741
    scheme("whitespace").tokenize("warm up")
    for writer in (xm3600, table):
        small, large = run(5_000, writer), run(50_000, writer)
        print(f"writer peak: 5k rows {small / 1024:.0f} KiB, 50k rows {large / 1024:.0f} KiB")
        assert large < small * 1.5 + 64 * 1024


def bulk_captions(campaign, annotator, n: int, prefix: str) -> None:
    """``n`` submitted captions in ``campaign``, written straight to the tables (fast)."""
    now = timezone.now()
    images = Image.objects.bulk_create(Image(key=f"{prefix}{i:06d}") for i in range(n))
    batch = Batch.objects.create(
        campaign=campaign,
        annotator=annotator,
        stage=BatchStage.SUBMITTED,
        lease_expires_at=now,
        submitted_at=now,
    )
    items = Item.objects.bulk_create(Item(campaign=campaign, image=image) for image in images)
    assignments = Assignment.objects.bulk_create(
        Assignment(batch=batch, item=item, annotator=annotator, position=i, state=AssignmentState.SUBMITTED)
        for i, item in enumerate(items)
    )
    WrittenCaption.objects.bulk_create(
        WrittenCaption(
            assignment=a,
            image_id=a.item.image_id,
            language=campaign.language,
            annotator=annotator,
            campaign=campaign,
            text=f"Ein Hund läuft am Strand entlang, Bild {i}, mit einem roten Ball.",
        )  # fmt: skip
        for i, a in enumerate(assignments)
    )


@pytest.mark.slow
def test_a_caption_export_streams_from_the_database_in_constant_memory(german):
    """4,000 and 16,000 captions: both read in several chunks of 2,000 rows (the database driver
    holds at most two chunks at a time), so four times the rows must take the same memory."""
    writer = f.AnnotatorFactory(languages=[german])
    small = f.CampaignFactory(language=german)
    large = f.CampaignFactory(language=german)
    bulk_captions(small, writer, 4_000, "s")
    bulk_captions(large, writer, 16_000, "l")

    def run(campaign, fmt):
        stream = export_prepare(kind="captions", fmt=fmt, campaign_id=campaign.pk)

        def consume():
            for _ in stream.chunks():
                pass

        peak = peak_bytes(consume)
        return peak, dict(stream.counts)

    for fmt in ("xm3600", "coco"):
        run(small, fmt)  # warm up: query compilation, tokenizer tables
        small_peak, small_counts = run(small, fmt)
        large_peak, large_counts = run(large, fmt)
        print(
            f"{fmt} export peak: 4k captions {small_peak / 1024:.0f} KiB, 16k captions {large_peak / 1024:.0f} KiB"
        )
        assert max(large_counts.values()) == 16_000 and max(small_counts.values()) == 4_000
        assert large_peak < small_peak * 1.2 + 64 * 1024, (small_peak, large_peak)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_an_export_reads_one_snapshot_while_annotators_keep_writing(
    captioned, annotator, monkeypatch, tmp_path
):
    """The COCO annotations file reads the images, then the captions: a caption submitted in between
    (for a new image) must not appear in the second pass, or the file would be inconsistent."""
    import threading

    from django.db import connection

    from evaluation.research.exports import rows

    if connection.vendor != "postgresql":
        pytest.skip("the snapshot is taken on PostgreSQL (DATABASE_URL)")
    images_pass = rows.caption_images

    def images_then_someone_submits(campaign):
        yield from images_pass(campaign)

        def submit():
            try:
                bulk_captions(campaign, annotator, 1, "late")
            finally:
                connection.close()

        writer = threading.Thread(target=submit)
        writer.start()
        writer.join()

    monkeypatch.setattr(rows, "caption_images", images_then_someone_submits)
    data, provenance = export(tmp_path, "captions", campaign=captioned.pk, format="coco", name="a.json")
    assert WrittenCaption.objects.filter(campaign=captioned, image__key="late000000").exists()  # committed
    refs = read_coco_annotations(tmp_path / "a.json")
    assert "late000000" not in refs and refs.n_captions == 12
    assert provenance["export"]["rows"] == {"images": 6, "annotations": 12}
