"""Reference sets are created through their service, in the admin as everywhere: a campaign's captions
keep the campaign's language, an uploaded file is validated and imported whole or not at all."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from core.errors import ValidationFailed
from evaluation.metrics.references import reference_set_from_campaign
from evaluation.models import Reference, ReferenceSet, ReferenceSetKind
from tests import factories as f

ADD_URL = "/admin/evaluation/referenceset/add/"


@pytest.fixture
def french_campaign(db):
    french = f.LanguageFactory(code="fr", name="French")
    return f.CampaignFactory(name="Légendes", language=french)


def test_service_refuses_a_german_set_of_a_french_campaign(french_campaign):
    f.LanguageFactory(code="de", name="German")
    with pytest.raises(ValidationFailed, match=r"in French \(fr\).*in French too, not in German \(de\)"):
        reference_set_from_campaign(campaign_id=french_campaign.pk, name="de refs", language_code="de")
    assert not ReferenceSet.objects.exists()
    made = reference_set_from_campaign(campaign_id=french_campaign.pk, language_code="fr")
    assert (made.language.code, made.kind, made.campaign_id) == ("fr", "campaign", french_campaign.pk)


def test_service_refuses_a_campaign_without_written_captions(db):
    sxs = f.open_sxs_campaign()
    with pytest.raises(ValidationFailed, match="only caption campaigns have written captions"):
        reference_set_from_campaign(campaign_id=sxs.pk)


def test_admin_refuses_a_german_set_of_a_french_campaign(pm_client, french_campaign):
    german = f.LanguageFactory(code="de", name="German")
    response = pm_client.post(
        ADD_URL,
        {
            "name": "de refs",
            "kind": "campaign",
            "campaign": french_campaign.pk,
            "language": german.pk,
            "format": "auto",
        },
    )
    assert response.status_code == 200  # the form again, with the reason
    assert "collects captions in French (fr)" in response.content.decode()
    assert not ReferenceSet.objects.exists()


def test_admin_creates_the_campaign_set_in_the_campaign_language(pm_client, french_campaign):
    response = pm_client.post(
        ADD_URL, {"name": "", "kind": "campaign", "campaign": french_campaign.pk, "format": "auto"}
    )
    assert response.status_code == 302
    made = ReferenceSet.objects.get()
    assert (made.name, made.language.code, made.kind) == ("Légendes (written captions)", "fr", "campaign")
    # Afterwards only the name and description change; the language stays the campaign's.
    german = f.LanguageFactory(code="de", name="German")
    pm_client.post(
        f"/admin/evaluation/referenceset/{made.pk}/change/",
        {"name": "fr refs", "description": "renamed", "language": german.pk},
    )
    made.refresh_from_db()
    assert (made.name, made.description, made.language.code) == ("fr refs", "renamed", "fr")


def xm3600_upload(*lines: dict) -> SimpleUploadedFile:
    body = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"
    return SimpleUploadedFile("captions.jsonl", body.encode(), content_type="application/json")


def test_admin_imports_a_file_through_the_importer(pm_client, db):
    german = f.LanguageFactory(code="de", name="German")
    f.ImageFactory(key="a1")
    f.ImageFactory(key="b2")
    record = {"image/key": "a1", "de": {"caption": ["Ein Hund.", "Ein Tier."]}}
    response = pm_client.post(
        ADD_URL,
        {
            "name": "XM de",
            "kind": "imported",
            "language": german.pk,
            "format": "xm3600",
            "file": xm3600_upload(record, {"image/key": "b2", "de": {"caption": ["Eine Katze."]}}),
        },
    )
    assert response.status_code == 302
    made = ReferenceSet.objects.get(name="XM de")
    assert (made.kind, made.source_name, made.references.count()) == (
        ReferenceSetKind.IMPORTED,
        "captions.jsonl",
        3,
    )


def test_admin_import_of_a_bad_file_stores_nothing(pm_client, db):
    german = f.LanguageFactory(code="de", name="German")
    f.ImageFactory(key="a1")
    response = pm_client.post(
        ADD_URL,
        {
            "name": "XM de",
            "kind": "imported",
            "language": german.pk,
            "format": "xm3600",
            "file": SimpleUploadedFile(
                "broken.jsonl", b'{"image/key": "a1", "de": {"caption": ["x"]}}\n{oops\n'
            ),
        },
    )
    assert response.status_code == 200
    assert "broken.jsonl: line 2" in response.content.decode()
    assert not ReferenceSet.objects.exists() and not Reference.objects.exists()


def test_admin_import_needs_file_language_and_name(pm_client, db):
    response = pm_client.post(ADD_URL, {"name": "", "kind": "imported", "format": "auto"})
    page = response.content.decode()
    assert response.status_code == 200
    for message in ("Upload the file of references.", "Choose the language", "Name the reference set."):
        assert message in page
    assert not ReferenceSet.objects.exists()
