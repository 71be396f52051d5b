"""Item 9 of issue 9: a project manager onboards annotators in the admin, one by form or many by CSV,
and can never make staff or superusers that way (RELIABILITY 14/15)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.importers import annotators_import
from annotation.models import Annotator, AnnotatorSkill
from core.errors import ValidationFailed
from tests import factories as f

User = get_user_model()
ADD_URL = "/admin/annotation/annotator/add/"
IMPORT_URL = "/admin/annotation/annotator/import/"


@pytest.fixture
def languages(db):
    return {
        code: f.LanguageFactory(code=code, name=name)
        for code, name in [("de", "German"), ("ar", "Arabic"), ("en", "English")]
    }


def skills_of(username: str) -> dict[str, str]:
    return dict(
        AnnotatorSkill.objects.filter(annotator__user__username=username).values_list(
            "language__code", "level"
        )
    )


def test_the_user_admin_stays_closed_to_managers(pm_client):
    assert pm_client.get("/admin/auth/user/add/").status_code == 403


def test_one_form_creates_account_annotator_and_skills_with_a_set_password_link(pm_client, languages, client):
    page = pm_client.get(ADD_URL).content.decode()
    # Nothing on the form could make staff: no such fields, and no existing user to pick.
    assert 'name="username"' in page and 'name="native"' in page
    for field in ("is_staff", "is_superuser", "groups", "user_permissions", 'name="user"', 'name="password'):
        assert field not in page
    response = pm_client.post(
        ADD_URL,
        {
            "username": "layla-ar",
            "email": "layla@example.org",
            "native": [languages["ar"].pk],
            "fluent": [languages["en"].pk],
            "reads_english": "on",
            # Posted anyway by a crafted request: ignored.
            "is_staff": "on",
            "is_superuser": "on",
        },
        follow=True,
    )
    user = User.objects.get(username="layla-ar")
    assert (user.is_staff, user.is_superuser, user.is_active, user.has_usable_password()) == (
        False,
        False,
        True,
        False,
    )
    assert not user.groups.exists() and user.email == "layla@example.org"
    assert user.annotator.reads_english and skills_of("layla-ar") == {"ar": "native", "en": "fluent"}
    message = next(str(m) for m in response.context["messages"])
    assert "Created annotator “layla-ar” (ar (native), en (fluent))" in message
    link = re.search(r"http://testserver(/accounts/set-password/[^ ]+/)", message).group(1)
    assert response.request["PATH_INFO"] == reverse(
        "admin:annotation_annotator_change", args=[user.annotator.pk]
    )

    # The link works once: the annotator chooses a password, then can log in with it.
    page = client.get(link, follow=True)
    assert page.status_code == 200 and 'name="new_password1"' in page.content.decode()
    done = client.post(
        page.request["PATH_INFO"],
        {"new_password1": "a-long-Passphrase-2026", "new_password2": "a-long-Passphrase-2026"},
        follow=True,
    )
    assert done.status_code == 200
    user.refresh_from_db()
    assert user.check_password("a-long-Passphrase-2026")
    again = client.get(link, follow=True).content.decode()
    assert 'name="new_password1"' not in again


def test_the_form_refuses_a_taken_name_a_bad_name_and_no_language(pm_client, languages, annotator):
    response = pm_client.post(
        ADD_URL, {"username": "anna", "email": "a@example.org", "native": [languages["de"].pk]}
    )
    assert "The username “anna” is taken." in response.content.decode()
    response = pm_client.post(
        ADD_URL, {"username": "x y", "email": "a@example.org", "native": [languages["de"].pk]}
    )
    assert "is not a username" in response.content.decode()
    response = pm_client.post(ADD_URL, {"username": "neu", "email": "a@example.org"})
    assert "Choose at least one language" in response.content.decode()
    response = pm_client.post(
        ADD_URL,
        {
            "username": "neu",
            "email": "a@example.org",
            "native": [languages["de"].pk],
            "fluent": [languages["de"].pk],
        },
    )
    assert "Native or fluent, not both: de." in response.content.decode()
    assert not User.objects.filter(username__in=["x y", "neu"]).exists()


def test_a_researcher_cannot_add_annotators(researcher_client, languages):
    assert researcher_client.get(ADD_URL).status_code == 403
    assert researcher_client.get(IMPORT_URL).status_code == 403
    response = researcher_client.post(
        ADD_URL, {"username": "neu", "email": "a@example.org", "native": [languages["de"].pk]}
    )
    assert response.status_code == 403 and not User.objects.filter(username="neu").exists()


def test_an_existing_annotator_cannot_be_moved_to_another_account(pm_client, annotator, manager):
    url = reverse("admin:annotation_annotator_change", args=[annotator.pk])
    page = pm_client.get(url).content.decode()
    assert 'name="user"' not in page  # read-only: the profile cannot be attached to a staff account


CSV = (
    "username,email,languages,reads_english\n"
    "anna-de,anna@example.org,de:native;en:fluent,yes\n"
    "layla-ar,layla@example.org,ar:native,no\n"
)


def csv_file(text: str, name: str = "team.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/csv")


def test_csv_dry_run_writes_nothing_then_confirm_imports_and_shows_links(pm_client, languages):
    response = pm_client.post(IMPORT_URL, {"file": csv_file(CSV)})
    page = response.content.decode()
    assert "Dry run: check before importing" in page
    assert (
        "2 annotators: 2 would be created, 0 would be updated, 0 unchanged. Dry run: nothing was written."
        in page
    )
    assert not User.objects.filter(username__in=["anna-de", "layla-ar"]).exists()
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)

    page = pm_client.post(IMPORT_URL, {"token": token, "_confirm": "Import"}).content.decode()
    assert "2 annotators: 2 created, 0 updated, 0 unchanged." in page
    assert re.search(r"anna-de: http://testserver/accounts/set-password/[^/]+/[^/]+/", page)
    assert re.search(r"layla-ar: http://testserver/accounts/set-password/", page)
    assert skills_of("anna-de") == {"de": "native", "en": "fluent"} and skills_of("layla-ar") == {
        "ar": "native"
    }
    assert not Annotator.objects.get(user__username="layla-ar").reads_english
    assert not User.objects.filter(username__in=["anna-de", "layla-ar"], is_staff=True).exists()
    assert not User.objects.filter(username__in=["anna-de", "layla-ar"], is_superuser=True).exists()
    # The token is used once: pressing Import again imports nothing more.
    response = pm_client.post(IMPORT_URL, {"token": token, "_confirm": "Import"}, follow=True)
    assert "no longer waiting" in response.content.decode()


def test_csv_bad_line_is_named_and_nothing_is_imported(pm_client, languages):
    bad = (
        CSV
        + "omar-ar,not-an-address,ar:native,yes\nkai,kai@example.org,xx:native,yes\nlea,lea@example.org,de,yes\n"
    )
    page = pm_client.post(IMPORT_URL, {"file": csv_file(bad)}).content.decode()
    assert "Nothing was imported." in page and 'name="token"' not in page
    assert "team.csv line 4: “not-an-address” is not an e-mail address." in page
    assert "team.csv line 5: unknown language “xx”" in page
    assert "team.csv line 6: “de”: write a language as code:level" in page
    assert not User.objects.filter(username__in=["anna-de", "layla-ar", "omar-ar", "kai", "lea"]).exists()


def test_csv_rerun_is_idempotent_and_updates_only_what_changed(tmp_path, languages):
    path = tmp_path / "team.csv"
    path.write_text(CSV)
    assert annotators_import(path=path).created == 2
    again = annotators_import(path=path)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 2)
    assert User.objects.filter(username__in=["anna-de", "layla-ar"]).count() == 2
    path.write_text(CSV.replace("ar:native,no", "ar:native;en:fluent,yes"))
    changed = annotators_import(path=path)
    assert (changed.created, changed.updated, changed.unchanged, changed.changed_keys) == (
        0,
        1,
        1,
        ["layla-ar"],
    )
    assert skills_of("layla-ar") == {"ar": "native", "en": "fluent"}


def test_csv_cannot_make_or_touch_staff_accounts(tmp_path, languages, manager):
    admin = User.objects.create_superuser("root", "root@example.org", "x")
    path = tmp_path / "team.csv"
    path.write_text(
        "username,email,languages,reads_english,is_staff,is_superuser\n"
        "neu,neu@example.org,de:native,yes,1,1\n"
        f"{manager.username},pm@example.org,de:native,yes,0,0\n"
        "root,root@example.org,de:native,yes,0,0\n"
    )
    with pytest.raises(ValidationFailed) as caught:
        annotators_import(path=path)
    assert "team.csv line 3: the account “pm” exists and is not an annotator." in caught.value.details
    assert "team.csv line 4: the account “root” exists and is not an annotator." in caught.value.details
    assert not User.objects.filter(username="neu").exists()
    assert not Annotator.objects.filter(user__in=[manager, admin]).exists()
    path.write_text("username,email,languages,is_staff,is_superuser\nneu,neu@example.org,de:native,1,1\n")
    report = annotators_import(path=path)
    assert report.unknown_fields == ["team.csv: is_staff, is_superuser"]
    user = User.objects.get(username="neu")
    assert (user.is_staff, user.is_superuser, user.has_usable_password()) == (False, False, False)


def test_csv_duplicate_username_and_dry_run(tmp_path, languages):
    path = tmp_path / "team.csv"
    path.write_text(CSV + "anna-de,anna@example.org,de:native,yes\n")
    with pytest.raises(ValidationFailed, match="team.csv line 4: “anna-de” is also on team.csv line 2."):
        annotators_import(path=path)
    path.write_text(CSV)
    report = annotators_import(path=path, dry_run=True)
    assert report.created == 2 and not User.objects.filter(username="anna-de").exists()


def test_import_annotators_command_prints_the_links(tmp_path, languages, capsys):
    path = tmp_path / "team.csv"
    path.write_text(CSV)
    call_command("import_annotators", str(path))
    out = capsys.readouterr().out
    assert "2 annotators: 2 created" in out and re.search(r"anna-de: /accounts/set-password/", out)


def test_csv_names_every_problem_of_every_line_in_one_run(pm_client, tmp_path, languages, manager):
    """Three problems on one line and a staff account on the next took three runs to find: one dry run,
    in the admin and the command, now names all four."""
    bad = CSV + "bad name!,not-an-address,de:nativ;xx:native,perhaps\npm,pm@example.org,de:native,yes\n"
    expected = [
        "team.csv line 4: “de:nativ”: the level is one of",
        "team.csv line 4: reads_english is yes or no, not “perhaps”.",
        "team.csv line 4: “bad name!” is not a username",
        "team.csv line 4: “not-an-address” is not an e-mail address.",
        "team.csv line 4: unknown language “xx”",
        "team.csv line 5: the account “pm” exists and is not an annotator.",
    ]
    page = pm_client.post(IMPORT_URL, {"file": csv_file(bad)}).content.decode()
    assert "<strong>Nothing was imported.</strong> 6 problems:" in page
    for problem in expected:
        assert problem in page
    path = tmp_path / "team.csv"
    path.write_text(bad)
    with pytest.raises(CommandError) as caught:
        call_command("import_annotators", str(path), "--dry-run")
    for problem in expected:
        assert problem in str(caught.value)
    assert not User.objects.filter(username__in=["anna-de", "layla-ar"]).exists()
