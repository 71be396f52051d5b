"""A fresh deployment gets its languages by code in one step (XM3600's 36 with --xm3600), with CLDR's
names, script direction and the default tokenisation scheme; bad codes add nothing."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Language
from annotation.services.languages import XM3600_LANGUAGES
from tests import factories as f

pytestmark = pytest.mark.django_db


def test_the_command_adds_the_36_xm3600_languages_in_one_step_and_again_changes_nothing(capsys):
    call_command("add_languages", "--xm3600")
    assert Language.objects.count() == 36 == len(XM3600_LANGUAGES)
    by_code = {lang.code: lang for lang in Language.objects.all()}
    assert (by_code["iw"].name, by_code["iw"].direction) == ("Hebrew", "rtl")
    assert (by_code["fa"].direction, by_code["ar"].direction, by_code["de"].direction) == (
        "rtl",
        "rtl",
        "ltr",
    )
    assert (by_code["en"].tokenizer, by_code["ja"].tokenizer, by_code["th"].tokenizer) == (
        "coco-ptb",
        "char",
        "char",
    )
    assert by_code["quz"].name == "Quechua" and by_code["fil"].name == "Filipino"
    assert "Added 36 language(s); 0 already there." in capsys.readouterr().out
    Language.objects.filter(code="de").update(name="Deutsch (edited)")
    call_command("add_languages", "--xm3600", "de")
    assert Language.objects.count() == 36 and Language.objects.get(code="de").name == "Deutsch (edited)"
    assert "Added 0 language(s); 36 already there." in capsys.readouterr().out


def test_a_malformed_code_adds_nothing_and_every_bad_code_is_named():
    with pytest.raises(CommandError, match=r"“d e/” is not a language code\. “x;y” is not a language code\."):
        call_command("add_languages", "de", "d e/", "x;y")
    assert not Language.objects.exists()


def test_a_dry_run_stores_nothing(capsys):
    call_command("add_languages", "de", "ar", "--dry-run")
    assert not Language.objects.exists() and "Would add 2 language(s)" in capsys.readouterr().out


def test_the_manager_adds_languages_by_code_in_the_admin(pm_client):
    f.LanguageFactory(code="de", name="German")
    changelist = pm_client.get(reverse("admin:annotation_language_changelist")).content.decode()
    url = reverse("admin:annotation_language_add_by_code")
    assert url in changelist and "Add languages by code" in changelist
    response = pm_client.post(url, {"codes": "de, sw mi", "xm3600": ""}, follow=True)
    page = response.content.decode()
    assert "Added 2 language(s): Swahili (sw), Māori (mi). 1 were already there" in page
    assert set(Language.objects.values_list("code", flat=True)) == {"de", "sw", "mi"}
    refused = pm_client.post(url, {"codes": "sw <b>"}, follow=True).content.decode()
    assert "is not a language code" in refused and Language.objects.count() == 3
    pm_client.post(url, {"codes": "", "xm3600": "on"})
    assert Language.objects.count() == 36


def test_a_researcher_cannot_add_languages(researcher_client):
    assert researcher_client.get(reverse("admin:annotation_language_add_by_code")).status_code == 403
