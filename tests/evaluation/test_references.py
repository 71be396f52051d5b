"""Reference import (XM3600 captions file, COCO annotations): content, errors, idempotency (RELIABILITY 19)."""

from __future__ import annotations

import hashlib
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from core.errors import ValidationFailed
from evaluation.metrics.references import reference_set_from_campaign, references_import
from evaluation.models import Reference, ReferenceSet, ReferenceSetKind
from tests import factories as f


def xm3600_line(key: str, **languages) -> str:
    record = {"image/key": key, "image/locale": "de"}
    for code, captions in languages.items():
        record[code] = {
            "caption": captions,
            "caption/tokenized": [c.lower() for c in captions],
            "caption/tokenized/lowercase": [c.lower() for c in captions],
        }
    return json.dumps(record, ensure_ascii=False)


@pytest.fixture
def images(db, german):
    return [f.ImageFactory(key=key) for key in ("a1b2", "c3d4", "e5f6")]


@pytest.fixture
def xm3600_file(tmp_path, images):
    path = tmp_path / "captions.jsonl"
    path.write_text(
        "\n".join(
            [
                xm3600_line(
                    "a1b2", de=["Ein Hund am Strand.", "Ein brauner Hund."], en=["A dog on a beach."]
                ),
                xm3600_line("c3d4", de=["Zwei Kinder spielen."], en=["Two kids play."]),
                xm3600_line("e5f6", en=["Only English here."]),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return path


def stored(name: str) -> list[tuple[str, int, str]]:
    return list(
        Reference.objects.filter(reference_set__name=name)
        .order_by("image__key", "position")
        .values_list("image__key", "position", "text")
    )


def test_xm3600_import_stores_the_languages_captions(xm3600_file):
    report = references_import(path=xm3600_file, name="XM3600 de", language_code="de")

    assert (report.created, report.updated, report.unchanged) == (3, 0, 0)
    assert stored("XM3600 de") == [
        ("a1b2", 0, "Ein Hund am Strand."),
        ("a1b2", 1, "Ein brauner Hund."),
        ("c3d4", 0, "Zwei Kinder spielen."),
    ]
    reference_set = ReferenceSet.objects.get(name="XM3600 de")
    assert reference_set.kind == ReferenceSetKind.IMPORTED and reference_set.language.code == "de"
    assert (reference_set.source_name, reference_set.source_format) == ("captions.jsonl", "xm3600")
    assert reference_set.source_sha256 == hashlib.sha256(xm3600_file.read_bytes()).hexdigest()
    assert any("1 image in the file without a “de” caption" in w and "e5f6" in w for w in report.warnings)


def test_coco_import_matches_numeric_ids_to_keys(tmp_path, german):
    for key in ("391895", "522418"):
        f.ImageFactory(key=key)
    path = tmp_path / "refs.json"
    path.write_text(
        json.dumps(
            {
                "images": [{"id": 391895}, {"id": 522418}],
                "annotations": [
                    {"image_id": 391895, "id": 1, "caption": "Ein Mann fährt Fahrrad."},
                    {"image_id": 522418, "id": 2, "caption": "Eine Frau schneidet einen Kuchen."},
                    {"image_id": 391895, "id": 3, "caption": "Ein Radfahrer auf einer Straße."},
                ],
            }
        ),
        encoding="utf-8",
    )
    report = references_import(path=path, name="coco de", language_code="de", format="coco")
    assert report.created == 3
    assert stored("coco de") == [
        ("391895", 0, "Ein Mann fährt Fahrrad."),
        ("391895", 1, "Ein Radfahrer auf einer Straße."),
        ("522418", 0, "Eine Frau schneidet einen Kuchen."),
    ]
    assert ReferenceSet.objects.get(name="coco de").source_format == "coco"


def test_reimport_changes_nothing_and_a_changed_file_updates_the_set(xm3600_file):
    references_import(path=xm3600_file, name="XM3600 de", language_code="de")
    before = list(Reference.objects.order_by("pk").values_list("pk", "text", "updated_at"))

    report = references_import(path=xm3600_file, name="XM3600 de", language_code="de")
    assert (report.created, report.updated, report.unchanged) == (0, 0, 3)
    assert list(Reference.objects.order_by("pk").values_list("pk", "text", "updated_at")) == before

    xm3600_file.write_text(
        xm3600_line("a1b2", de=["Ein Hund am Strand."])
        + "\n"
        + xm3600_line("c3d4", de=["Drei Kinder spielen."])
        + "\n",
        encoding="utf-8",
    )
    report = references_import(path=xm3600_file, name="XM3600 de", language_code="de")
    assert (report.created, report.updated, report.unchanged) == (0, 1, 1)
    assert stored("XM3600 de") == [("a1b2", 0, "Ein Hund am Strand."), ("c3d4", 0, "Drei Kinder spielen.")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (xm3600_line("a1b2", de=["ok"]) + "\n{not json\n", "captions.jsonl: line 2: invalid JSON"),
        (
            xm3600_line("a1b2", de=["ok"]) + '\n{"image/locale": "de"}\n',
            "line 2: missing or invalid 'image/key'",
        ),
        (
            xm3600_line("a1b2", de=["ok"]) + "\n" + xm3600_line("a1b2", de=["twice"]),
            "line 2: duplicate image/key",
        ),
        (
            '{"image/key": "a1b2", "de": {"caption": "not a list"}}\n',
            "line 1: de/caption of 'a1b2' must be a list",
        ),
        (xm3600_line("a1b2", de=["ok", "  "]), "image a1b2: reference 2 is empty"),
    ],
)
def test_a_malformed_file_imports_nothing_and_names_line_and_reason(tmp_path, images, content, message):
    path = tmp_path / "captions.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValidationFailed) as caught:
        references_import(path=path, name="bad", language_code="de")
    assert message in caught.value.message
    assert "Nothing was imported" in caught.value.message or "nothing was imported" in caught.value.message
    assert not ReferenceSet.objects.exists() and not Reference.objects.exists()


def test_a_malformed_coco_file_names_the_entry(tmp_path, images):
    path = tmp_path / "refs.json"
    path.write_text(
        json.dumps({"annotations": [{"image_id": "a1b2", "caption": "ok"}, {"image_id": "c3d4"}]}),
        encoding="utf-8",
    )
    with pytest.raises(ValidationFailed, match=r"refs.json: entry 1: missing 'caption'"):
        references_import(path=path, name="bad", language_code="de")
    assert not Reference.objects.exists()


def test_unknown_image_keys_are_refused_unless_skipped(tmp_path, images):
    path = tmp_path / "captions.jsonl"
    path.write_text(
        "\n".join([xm3600_line("a1b2", de=["Ein Hund."]), xm3600_line("zz99", de=["Eine Katze."])]),
        encoding="utf-8",
    )
    with pytest.raises(ValidationFailed) as caught:
        references_import(path=path, name="refs", language_code="de")
    assert "1 image key not in the database (zz99)" in caught.value.message
    assert "--skip-unknown" in caught.value.message
    assert not Reference.objects.exists()

    report = references_import(path=path, name="refs", language_code="de", skip_unknown=True)
    assert (report.created, report.skipped, report.unknown_keys) == (1, 1, ["zz99"])
    assert stored("refs") == [("a1b2", 0, "Ein Hund.")]


def test_dry_run_writes_nothing(xm3600_file):
    report = references_import(path=xm3600_file, name="XM3600 de", language_code="de", dry_run=True)
    assert report.created == 3 and report.dry_run
    assert not ReferenceSet.objects.exists() and not Reference.objects.exists()


def test_other_refusals(xm3600_file, german, tmp_path):
    with pytest.raises(ValidationFailed, match="Unknown language “xx”"):
        references_import(path=xm3600_file, name="r", language_code="xx")
    with pytest.raises(ValidationFailed, match="no such file"):
        references_import(path=tmp_path / "missing.jsonl", name="r", language_code="de")
    f.LanguageFactory(code="fr", name="French")
    with pytest.raises(ValidationFailed, match="no reference captions in “fr”"):
        references_import(path=xm3600_file, name="r", language_code="fr")
    campaign = f.CampaignFactory(language=german)
    reference_set_from_campaign(campaign_id=campaign.pk, name="taken")
    with pytest.raises(ValidationFailed, match="is a reference set of a campaign's captions"):
        references_import(path=xm3600_file, name="taken", language_code="de")


def test_import_references_command(xm3600_file):
    out = StringIO()
    call_command("import_references", str(xm3600_file), "--name", "XM3600 de", "--language", "de", stdout=out)
    assert "3 references: 3 created, 0 updated, 0 unchanged" in out.getvalue()
    out = StringIO()
    call_command("import_references", str(xm3600_file), "--name", "XM3600 de", "--language", "de", stdout=out)
    assert "3 references: 0 created, 0 updated, 3 unchanged" in out.getvalue()

    broken = xm3600_file.with_name("broken.jsonl")
    broken.write_text("{oops\n", encoding="utf-8")
    with pytest.raises(CommandError, match="broken.jsonl: line 1: invalid JSON"):
        call_command("import_references", str(broken), "--name", "x", "--language", "de")
