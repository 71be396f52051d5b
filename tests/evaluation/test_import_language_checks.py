"""Imported references and system captions pass the annotators' script and language checks: a
Japanese reference set with German text is refused with counts per problem, and imported anyway only
with a reason, which is recorded."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.importers import system_captions_import
from annotation.importers.language_checks import captions_language_check
from annotation.models import CaptioningSystem, Language, SystemCaption
from core.errors import ValidationFailed
from evaluation.metrics.references import references_import
from evaluation.models import Reference, ReferenceSet
from tests import factories as f

JAPANESE = ["犬が浜辺を走っている。", "赤いバスが停留所に止まっている。", "猫がソファの上で寝ている。"]
GERMAN = [
    "Ein brauner Hund läuft am Strand entlang.",
    "Ein roter Bus hält an der Haltestelle.",
    "Eine Katze schläft auf dem Sofa.",
]
ENGLISH_IN_GERMAN = "A brown dog is running along the sandy beach with a red ball in its mouth."


@pytest.fixture
def images(db):
    f.LanguageFactory(code="ja", name="Japanese")
    f.LanguageFactory(code="de", name="German")
    return [f.ImageFactory(key=f"k{i}") for i in range(3)]


def _xm3600(tmp_path, code, captions_per_image):
    path = tmp_path / "captions.jsonl"
    lines = [
        json.dumps({"image/key": f"k{i}", code: {"caption": captions}}, ensure_ascii=False)
        for i, captions in enumerate(captions_per_image)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_checks_count_problems_per_language_and_kind():
    check = captions_language_check(
        [
            ("l1", "ja", GERMAN[0]),
            ("l2", "ja", GERMAN[1]),
            ("l3", "ja", JAPANESE[0]),
            ("l4", "de", ENGLISH_IN_GERMAN),
        ]
    )
    assert check.checked == 4 and check.total == 3
    assert check.lines() == [
        "de: 1 caption looks like English, not German (l4)",
        "ja: 2 captions not written in Japanese (kana or kanji) (l1, l2)",
    ]


def test_a_japanese_reference_set_with_german_text_is_refused_with_counts(tmp_path, images):
    path = _xm3600(tmp_path, "ja", [[JAPANESE[0], GERMAN[0]], [GERMAN[1]], [JAPANESE[2]]])
    with pytest.raises(ValidationFailed) as caught:
        references_import(path=path, name="XM ja", language_code="ja")
    message = caught.value.message
    assert "2 of 4 captions failed the script or language check" in message
    assert (
        "ja: 2 captions not written in Japanese (kana or kanji) (image k0, reference 2, image k1, reference 1)"
        in message
    )
    assert "nothing was imported" in message and "--accept-language-problems" in message
    assert not ReferenceSet.objects.exists() and not Reference.objects.exists()
    # A blank reason is no reason.
    with pytest.raises(ValidationFailed):
        references_import(path=path, name="XM ja", language_code="ja", language_check_reason="  ")


def test_importing_anyway_needs_a_reason_and_records_it(tmp_path, images):
    path = _xm3600(tmp_path, "ja", [[JAPANESE[0], GERMAN[0]], [JAPANESE[1]], [JAPANESE[2]]])
    report = references_import(
        path=path, name="XM ja", language_code="ja", language_check_reason="brand names quoted in German"
    )
    assert report.created == 4
    assert any("imported anyway (reason: brand names quoted in German)" in w for w in report.warnings)
    override = ReferenceSet.objects.get(name="XM ja").language_check_override
    assert override["reason"] == "brand names quoted in German" and override["file"] == "captions.jsonl"
    assert override["problems"] == [
        {"language": "ja", "problem": "not written in Japanese (kana or kanji)", "count": 1}
    ]
    # A clean file later clears the record.
    clean = _xm3600(tmp_path, "ja", [[JAPANESE[0]], [JAPANESE[1]], [JAPANESE[2]]])
    references_import(path=clean, name="XM ja", language_code="ja")
    assert ReferenceSet.objects.get(name="XM ja").language_check_override == {}


def test_the_command_refuses_and_accepts_with_a_reason(tmp_path, images):
    path = _xm3600(tmp_path, "ja", [[GERMAN[0]], [JAPANESE[1]], [JAPANESE[2]]])
    with pytest.raises(CommandError, match="ja: 1 caption not written in Japanese"):
        call_command("import_references", str(path), "--name", "XM ja", "--language", "ja")
    out = StringIO()
    call_command(
        "import_references",
        str(path),
        "--name",
        "XM ja",
        "--language",
        "ja",
        "--accept-language-problems",
        "checked by hand",
        stdout=out,
    )
    assert ReferenceSet.objects.get(name="XM ja").language_check_override["reason"] == "checked by hand"


def test_system_captions_go_through_the_same_checks(tmp_path, images):
    path = tmp_path / "results.json"
    path.write_text(
        json.dumps(
            [{"image_id": "k0", "caption": GERMAN[0]}, {"image_id": "k1", "caption": JAPANESE[1]}],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    with pytest.raises(ValidationFailed, match="ja: 1 caption not written in Japanese"):
        system_captions_import(path=path, system_name="m-ja", language_code="ja")
    assert not SystemCaption.objects.exists() and not CaptioningSystem.objects.exists()
    with pytest.raises(CommandError, match="failed the script or language check"):
        call_command("import_system_captions", str(path), "--system", "m-ja", "--language", "ja")
    call_command(
        "import_system_captions",
        str(path),
        "--system",
        "m-ja",
        "--language",
        "ja",
        "--accept-language-problems",
        "the system answers in German on purpose",
        stdout=StringIO(),
    )
    system = CaptioningSystem.objects.get(name="m-ja")
    assert system.captions.count() == 2
    assert [o["reason"] for o in system.language_check_overrides] == [
        "the system answers in German on purpose"
    ]
    assert system.language_check_overrides[0]["problems"][0]["count"] == 1


def test_the_reference_set_admin_form_takes_the_reason(pm_client, images):
    ja = Language.objects.get(code="ja")
    body = "\n".join(
        json.dumps({"image/key": f"k{i}", "ja": {"caption": [text]}}, ensure_ascii=False)
        for i, text in enumerate([GERMAN[0], JAPANESE[1], JAPANESE[2]])
    )

    def post(reason):
        upload = SimpleUploadedFile("captions.jsonl", body.encode(), content_type="application/jsonl")
        return pm_client.post(
            reverse("admin:evaluation_referenceset_add"),
            {
                "name": "XM ja",
                "kind": "imported",
                "language": ja.pk,
                "format": "xm3600",
                "file": upload,
                "language_check_reason": reason,
            },
        )

    refused = post("")
    assert refused.status_code == 200
    assert "ja: 1 caption not written in Japanese (kana or kanji)" in refused.content.decode()
    assert not ReferenceSet.objects.exists()
    assert post("quoted shop sign").status_code == 302
    assert ReferenceSet.objects.get(name="XM ja").language_check_override["reason"] == "quoted shop sign"


def test_the_system_caption_admin_import_takes_the_reason_through_its_dry_run(pm_client, images):
    url = "/admin/annotation/systemcaption/import/"
    ja = Language.objects.get(code="ja")
    results = json.dumps(
        [{"image_id": "k0", "caption": GERMAN[0]}, {"image_id": "k1", "caption": JAPANESE[1]}]
    )

    def upload():
        return SimpleUploadedFile("results.json", results.encode())

    refused = pm_client.post(url, {"system": "m-ja", "language": ja.pk, "file": upload()}).content.decode()
    assert "ja: 1 caption not written in Japanese (kana or kanji)" in refused
    assert not SystemCaption.objects.exists()
    data = {
        "system": "m-ja",
        "language": ja.pk,
        "file": upload(),
        "language_check_reason": "German on purpose",
    }
    page = pm_client.post(url, data).content.decode()
    assert "imported anyway (reason: German on purpose)" in page and not SystemCaption.objects.exists()
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    pm_client.post(url, {"token": token, "_confirm": "Import"})
    system = CaptioningSystem.objects.get(name="m-ja")
    assert system.captions.count() == 2
    assert system.language_check_overrides[0]["reason"] == "German on purpose"
