"""The annotator's own language (issue 14): complete catalogues, no English left on the annotator
pages in German, Arabic and Japanese, the choice of language and its defaults, right-to-left pages,
guidelines per interface language."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from html.parser import HTMLParser

import pytest
from django.conf import settings
from django.core.management import call_command
from django.template.loader import render_to_string
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import translation

from annotation import caption_checks as cc
from annotation import guidelines
from annotation.assignment.engine import batch_request
from annotation.catalogues import DOMAINS, catalogues, read_catalogue, stale
from annotation.interface import SCALE_LABELS, ShownScale, language_for, localized_problem, scale_label
from annotation.models import Annotator, CampaignGuidelines, CampaignState
from annotation.services import work
from annotation.services.campaigns import campaign_open, rating_campaign_create
from core.scales import RATING, SXS
from tests import factories as f

TRANSLATED = [code for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]


# --- The catalogues ---------------------------------------------------------------------------


def test_the_interface_has_german_arabic_and_japanese():
    assert {"de", "ar", "ja"} <= set(TRANSLATED)
    found = {(c.language, c.domain) for c in catalogues()}
    assert found == {(lang, domain) for lang in TRANSLATED for domain in DOMAINS}


@pytest.mark.parametrize("language", TRANSLATED)
@pytest.mark.parametrize("domain", DOMAINS)
def test_every_msgid_has_a_translation_that_is_not_fuzzy(language, domain):
    """Strings added later (makemessages: scripts/messages.sh) fail here until they are translated."""
    path = settings.LOCALE_PATHS[0] / language / "LC_MESSAGES" / f"{domain}.po"
    catalog = read_catalogue(path)
    untranslated = []
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if message.fuzzy or not all(s and s.strip() for s in strings):
            untranslated.append(message.id)
        if isinstance(message.id, tuple):
            assert len(strings) == catalog.num_plurals, message.id
    assert untranslated == [], f"{path}: translate these, then run scripts/messages.sh"
    assert len(catalog) > (100 if domain == "django" else 20)


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_language_translates_the_same_msgids(domain):
    ids = {}
    for language in TRANSLATED:
        catalog = read_catalogue(settings.LOCALE_PATHS[0] / language / "LC_MESSAGES" / f"{domain}.po")
        ids[language] = {(m.context, m.id if isinstance(m.id, str) else tuple(m.id)) for m in catalog if m.id}
    first = ids[TRANSLATED[0]]
    for language in TRANSLATED[1:]:
        assert ids[language] == first, language


def test_the_committed_mo_files_match_the_po_files():
    assert [c.po.name for c in catalogues() if stale(c)] == []
    call_command("compile_translations", "--check", verbosity=0)


def test_a_stale_mo_file_is_reported(tmp_path):
    po = tmp_path / "de" / "LC_MESSAGES" / "django.po"
    po.parent.mkdir(parents=True)
    source = settings.LOCALE_PATHS[0] / "de" / "LC_MESSAGES" / "django.po"
    po.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    with override_settings(LOCALE_PATHS=[tmp_path]):
        call_command("compile_translations", verbosity=0)
        assert not stale(catalogues()[0])
        po.write_text(
            po.read_text(encoding="utf-8").replace('msgstr "Anmelden"', 'msgstr "Einloggen"'),
            encoding="utf-8",
        )
        assert stale(catalogues()[0])
        with pytest.raises(Exception, match="out of date"):
            call_command("compile_translations", "--check", verbosity=0)


def test_the_scale_labels_are_all_in_the_catalogue():
    assert set(SCALE_LABELS) == {p.label for p in RATING} | {p.label for p in SXS}
    with translation.override("de"):
        shown = ShownScale(RATING)
        assert [p.label for p in shown] == ["AUSGEZEICHNET", "GUT", "MITTEL", "SCHLECHT", "NICHT GENUG INFO"]
        # What is stored and sent never changes with the language.
        assert [(p.code, p.key) for p in shown] == [(p.code, p.key) for p in RATING]
        assert (shown.first.key, shown.middle.key, shown.last.key) == ("1", "3", "5")


# --- Scanning rendered pages for English ------------------------------------------------------


class _VisibleText(HTMLParser):
    """What a reader gets from a page: text, and the attributes read out or shown (alt, title,
    aria-label, placeholder). Skipped: scripts, styles, and anything marked as another language
    than the page's (the English prompt captions, each language's own name in the selector)."""

    SHOWN_ATTRIBUTES = ("alt", "title", "aria-label", "placeholder")
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.page_lang = None
        self.stack = []  # (tag, skipped)
        self.parts = []

    def _skipped(self):
        return any(skipped for _tag, skipped in self.stack)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.page_lang = attrs.get("lang")
        lang = attrs.get("lang")
        skipped = tag in ("script", "style") or (
            lang is not None and tag != "html" and lang != self.page_lang
        )
        if not (skipped or self._skipped()):
            self.parts.extend(attrs[a] for a in self.SHOWN_ATTRIBUTES if attrs.get(a))
        if tag not in self.VOID:
            self.stack.append((tag, skipped))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if not self._skipped():
            self.parts.append(data)


def visible_text(html: str) -> tuple[str, str]:
    parser = _VisibleText()
    parser.feed(html)
    return parser.page_lang, " ".join(" ".join(parser.parts).split())


_PLACEHOLDER = re.compile(r"%\([^)]*\)[sd]|%[sd%]")
_KBD = re.compile(r"<kbd>.*?</kbd>")
_TAG = re.compile(r"<[^>]+>")


def english_fragments(language: str, domains=("django",)) -> list[tuple[str, str]]:
    """(msgid, fragment) for every English msgid of the catalogues: its words between placeholders
    and markup (key names in <kbd> are not language), where they carry at least three letters.
    Msgids that ``language`` rightly keeps as they are ("(Esc)") are left out."""
    messages = [
        message
        for domain in domains
        for message in read_catalogue(settings.LOCALE_PATHS[0] / language / "LC_MESSAGES" / f"{domain}.po")
    ]
    fragments = []
    for message in messages:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for msgid in ids:
            if msgid in strings:
                continue
            text = _TAG.sub("|", _KBD.sub("|", msgid))
            for fragment in _PLACEHOLDER.split(text):
                for piece in fragment.split("|"):
                    piece = " ".join(piece.split()).strip(" ,;:·–—")
                    if sum(ch.isalpha() for ch in piece) >= 3:
                        fragments.append((msgid, piece))
    return fragments


def english_left(html: str, language: str, domains=("django",)) -> list[str]:
    """The English fragments (``english_fragments``) found in what a reader gets from ``html``."""
    page_lang, text = visible_text(html)
    assert page_lang == language
    left = []
    for msgid, piece in english_fragments(language, domains):
        if re.search(r"(?<!\w)" + re.escape(piece) + r"(?!\w)", text):
            left.append(f"{piece!r} (from {msgid!r})")
    return left


def test_the_scan_finds_english_it_is_meant_to_find():
    html = '<html lang="de"><body><p>Bild 1 von 3</p><button>Submit batch</button></body></html>'
    assert "'Submit batch' (from 'Submit batch')" in english_left(html, "de")
    # The English prompt caption of screen 1 is marked lang="en": not the interface's text.
    html = '<html lang="de"><body><p lang="en" dir="ltr">Submit batch</p></body></html>'
    assert english_left(html, "de") == []
    html = '<html lang="ja"><body><img alt="Enlarged image"></body></html>'
    assert "'Enlarged image' (from 'Enlarged image')" in english_left(html, "ja")


@pytest.fixture
def workplace(db, german):
    """A German caption campaign, a side-by-side and a verification campaign, and one annotator
    of each interface language with work open in all three and submitted batches to look at."""
    caption = f.open_caption_campaign(images=8, batch_size=2, replication=2, language=german, name="Bilder")
    sxs = f.open_sxs_campaign(images=4, batch_size=2, replication=3, language=german, name="Vergleich")
    writers = [f.AnnotatorFactory(user__username=f"schreiber{i}", languages=[german]) for i in range(2)]
    f.written_captions(caption, annotators=writers, batches=1)
    created = rating_campaign_create(name="Prüfung", source_campaign_id=caption.pk, batch_size=2)
    verification = campaign_open(campaign_id=created.pk)
    closed = f.CampaignFactory(name="Geschlossen", language=german, state=CampaignState.CLOSED)
    return {"caption": caption, "sxs": sxs, "verification": verification, "closed": closed}


def _pages(client, annotator, workplace) -> dict[str, str]:
    """Every annotator page, rendered for ``annotator`` through ``client``."""
    pages = {}
    caption, sxs, verification = workplace["caption"], workplace["sxs"], workplace["verification"]

    # A submitted caption batch, a submitted side-by-side batch, then open ones of each kind.
    f.written_captions(caption, annotators=[annotator], batches=1)
    done_caption = annotator.batches.get(campaign=caption)
    done_sxs = f.sxs_judged(annotator, score=lambda a: 1, campaign=sxs)
    rate, _ = batch_request(annotator=annotator, campaign_id=caption.pk)
    write, _ = batch_request(annotator=annotator, campaign_id=sxs.pk)
    verify, _ = batch_request(annotator=annotator, campaign_id=verification.pk)

    pages["dashboard"] = client.get(reverse("annotation:dashboard")).content.decode()
    pages["screen 1"] = client.get(reverse("annotation:screen1", args=[rate.pk])).content.decode()
    pages["side by side"] = client.get(reverse("annotation:sxs", args=[write.pk])).content.decode()
    pages["verification"] = client.get(reverse("annotation:verify", args=[verify.pk])).content.decode()
    pages["submitted captions"] = client.get(
        reverse("annotation:batch", args=[done_caption.pk])
    ).content.decode()
    pages["submitted judgments"] = client.get(
        reverse("annotation:batch", args=[done_sxs.pk])
    ).content.decode()
    for a in rate.assignments.all():
        work.rating_save(annotator=annotator, batch_id=rate.pk, assignment_id=a.pk, value="good")
    work.writing_open(annotator=annotator, batch_id=rate.pk)
    pages["screen 2"] = client.get(reverse("annotation:screen2", args=[rate.pk])).content.decode()
    # The expired-batch notice of screen 2 and the dashboard's "finish and submit it".
    from annotation.models import Batch, BatchStage

    Batch.objects.filter(pk=rate.pk).update(stage=BatchStage.EXPIRED)
    pages["screen 2, expired"] = client.get(reverse("annotation:screen2", args=[rate.pk])).content.decode()
    pages["dashboard, expired batch"] = client.get(reverse("annotation:dashboard")).content.decode()
    # A message on the dashboard (a campaign that is not open), the error pages an annotator meets.
    response = client.post(reverse("annotation:campaign_work", args=[workplace["closed"].pk]), follow=True)
    pages["dashboard, message"] = response.content.decode()
    pages["404"] = client.get("/work/batch/987654/").content.decode()
    pages["403"] = client.get(reverse("exports:index")).content.decode()
    pages["400"] = client.post(reverse("annotation:interface_language"), {"language": "xx"}).content.decode()
    return pages


@pytest.mark.parametrize("language", ["de", "ar", "ja"])
def test_no_english_is_left_on_any_annotator_page(workplace, german, language):
    annotator = f.AnnotatorFactory(user__username=f"anna-{language}", languages=[german])
    Annotator.objects.filter(pk=annotator.pk).update(interface_language=language)
    annotator.refresh_from_db()
    client = Client()
    client.force_login(annotator.user)
    pages = _pages(client, annotator, workplace)

    visitor = Client(HTTP_ACCEPT_LANGUAGE=language)
    pages["login"] = visitor.get(reverse("login")).content.decode()
    pages["login, refused"] = visitor.post(
        reverse("login"), {"username": "nobody", "password": "wrong"}
    ).content.decode()
    no_role = f.UserFactory(username=f"ohne-rolle-{language}")
    stranger = Client(HTTP_ACCEPT_LANGUAGE=language)
    stranger.force_login(no_role)
    pages["no role"] = stranger.get("/").content.decode()
    pages["not an annotator"] = stranger.get(reverse("annotation:dashboard")).content.decode()
    with translation.override(language):
        pages["500"] = render_to_string("500.html")

    assert len(pages) == 18
    problems = {name: english_left(html, language) for name, html in pages.items()}
    if language == "de":  # what the scan read, for a person to check (pytest -s)
        print("\n\n".join(f"{name}: {visible_text(html)[1]}" for name, html in pages.items()))
    assert {name: left for name, left in problems.items() if left} == {}
    # The pages really are the translated ones, and Arabic ones are right to left.
    direction = "rtl" if language == "ar" else "ltr"
    for name, html in pages.items():
        assert f'<html lang="{language}" dir="{direction}">' in html, name
    with translation.override(language):
        assert translation.gettext("Submit batch") in pages["screen 2"]
        assert translation.pgettext("rating", "GOOD") in pages["screen 1"]
        assert translation.pgettext("side by side", "Left much better") in pages["side by side"]
        assert translation.gettext("Your campaigns") in pages["dashboard"]
        assert guidelines.built_in("writing", language).splitlines()[0][:30] in pages["screen 2"]


@pytest.mark.parametrize("language", ["de", "ar", "ja"])
def test_the_script_catalogue_translates_every_script_string(annotator_client, language):
    response = annotator_client.get(reverse("annotation:javascript_catalog") + f"?lang={language}")
    assert response.status_code == 200
    body = response.content.decode()
    catalog = read_catalogue(settings.LOCALE_PATHS[0] / language / "LC_MESSAGES" / "djangojs.po")
    for message in catalog:
        if message.id:
            assert json.dumps(message.string)[1:-1][:20] in body or message.string[:20] in body, message.id


# --- Which language: the annotator's choice, the campaign's, English ----------------------------


@pytest.fixture
def undecided(db, german):
    """An annotator who never chose a language (the factory's default is English by choice)."""
    return f.AnnotatorFactory(user__username="ulla", languages=[german], interface_language="")


def _html_lang(response) -> str:
    return re.search(r'<html lang="([^"]+)"', response.content.decode()).group(1)


def test_without_a_choice_a_screen_speaks_its_campaigns_language(undecided, campaign):
    client = Client()
    client.force_login(undecided.user)
    batch, _ = batch_request(annotator=undecided, campaign_id=campaign.pk)
    response = client.get(reverse("annotation:screen1", args=[batch.pk]))
    assert _html_lang(response) == "de"
    assert "Englische Beschreibungen bewerten" in response.content.decode()
    assert response["Content-Language"] == "de"
    # The dashboard: the first of the annotator's languages that the interface has.
    assert _html_lang(client.get(reverse("annotation:dashboard"))) == "de"


def test_a_campaign_language_the_interface_lacks_falls_back_to_english(db):
    french = f.LanguageFactory(code="fr", name="French")
    campaign = f.open_caption_campaign(images=2, batch_size=2, language=french)
    annotator = f.AnnotatorFactory(user__username="fabien", languages=[french], interface_language="")
    client = Client()
    client.force_login(annotator.user)
    batch, _ = batch_request(annotator=annotator, campaign_id=campaign.pk)
    response = client.get(reverse("annotation:screen1", args=[batch.pk]))
    assert _html_lang(response) == "en"
    assert "Rate the English captions" in response.content.decode()
    assert _html_lang(client.get(reverse("annotation:dashboard"))) == "en"
    assert language_for(annotator, campaign) == "en"


def test_the_annotators_choice_wins_over_the_campaign_and_follows_them_to_another_device(undecided, campaign):
    laptop = Client()
    laptop.force_login(undecided.user)
    response = laptop.post(
        reverse("annotation:interface_language"), {"language": "ja", "next": reverse("annotation:dashboard")}
    )
    assert response.status_code == 302 and response["Location"] == reverse("annotation:dashboard")
    undecided.refresh_from_db()
    assert undecided.interface_language == "ja"

    phone = Client()  # no cookie from the laptop: the profile carries the choice
    phone.force_login(undecided.user)
    batch, _ = batch_request(annotator=undecided, campaign_id=campaign.pk)
    page = phone.get(reverse("annotation:screen1", args=[batch.pk]))
    assert _html_lang(page) == "ja"
    assert "英語の説明文を評価" in page.content.decode()

    # "Automatic" gives the defaults back.
    phone.post(reverse("annotation:interface_language"), {"language": ""})
    undecided.refresh_from_db()
    assert undecided.interface_language == ""
    assert _html_lang(phone.get(reverse("annotation:screen1", args=[batch.pk]))) == "de"


def test_the_selector_is_on_annotator_pages_with_the_choice_selected(undecided):
    client = Client()
    client.force_login(undecided.user)
    html = client.get(reverse("annotation:dashboard")).content.decode()
    assert 'id="interface-language"' in html
    assert '<option value="" selected>Automatisch</option>' in html  # nothing chosen: the default shows
    assert re.search(r'<option value="ja" lang="ja"[^>]*>日本語</option>', html)
    assert "js/language.js" in html and "<script>" not in html  # CSP: no inline script


def test_bad_input_to_the_selector_changes_nothing(undecided):
    client = Client()
    client.force_login(undecided.user)
    response = client.post(reverse("annotation:interface_language"), {"language": "klingon"})
    assert response.status_code == 400
    assert "Diese Sprache gibt es für die Oberfläche nicht." in response.content.decode()
    undecided.refresh_from_db()
    assert undecided.interface_language == ""
    assert client.get(reverse("annotation:interface_language")).status_code == 405


def test_the_selector_never_redirects_off_site(undecided):
    client = Client()
    client.force_login(undecided.user)
    response = client.post(
        reverse("annotation:interface_language"), {"language": "de", "next": "https://evil.example/"}
    )
    assert response["Location"] == reverse("annotation:dashboard")


def test_the_selector_needs_a_csrf_token(undecided):
    client = Client(enforce_csrf_checks=True)
    client.force_login(undecided.user)
    response = client.post(reverse("annotation:interface_language"), {"language": "ar"})
    assert response.status_code == 403
    undecided.refresh_from_db()
    assert undecided.interface_language == ""


def test_a_visitor_chooses_with_a_cookie_only(db):
    client = Client()
    response = client.post(
        reverse("annotation:interface_language"), {"language": "ar", "next": "/accounts/login/"}
    )
    assert response.status_code == 302
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "ar"
    page = client.get(reverse("login"))
    assert '<html lang="ar" dir="rtl">' in page.content.decode()
    assert "تسجيل الدخول" in page.content.decode()


def test_managers_and_researchers_keep_english_and_cannot_use_the_selector(
    pm_client, researcher_client, manager
):
    for client in (pm_client, researcher_client):
        client.cookies[settings.LANGUAGE_COOKIE_NAME] = "de"
        response = client.post(reverse("annotation:interface_language"), {"language": "de"})
        assert response.status_code == 403
    page = pm_client.get(reverse("admin:index"), HTTP_ACCEPT_LANGUAGE="de")
    assert page.status_code == 200 and "Site administration" in page.content.decode()


def test_json_errors_speak_the_language_of_the_page_that_asked(undecided, campaign):
    client = Client()
    client.force_login(undecided.user)
    batch, _ = batch_request(annotator=undecided, campaign_id=campaign.pk)
    assignment = batch.assignments.first()
    url = reverse("annotation:api_rating", args=[batch.pk])
    body = json.dumps({"assignment": assignment.pk, "value": "splendid"})
    for language, expected in [
        ("ja", "不明な評価「splendid」です。"),
        ("de", "Unbekannte Bewertung „splendid“."),
    ]:
        response = client.post(
            url,
            body,
            content_type="application/json",
            HTTP_ACCEPT="application/json",
            HTTP_ACCEPT_LANGUAGE=language,
        )
        assert response.status_code == 400
        assert response.json()["message"] == expected


def test_the_caption_checks_answer_in_the_interface_language():
    german = cc.CaptionRules(language="de", per_character=False, min_length=3)
    problem = cc.length_problem("Ein Hund.", german)
    assert problem == (
        "This caption is too short (2 of at least 3 words). Describe what the image shows in a full sentence."
    )
    with translation.override("de"):
        assert localized_problem(problem) == (
            "Diese Beschreibung ist zu kurz (2 von mindestens 3 Wörtern). "
            "Beschreiben Sie in einem ganzen Satz, was das Bild zeigt."
        )
    arabic = cc.CaptionRules(language="ar", per_character=False)
    with translation.override("ja"):
        assert localized_problem(cc.script_problem("A dog on the beach", arabic)) == (
            "この説明文はアラビア語で書かれていません。アラビア文字で書いてください。"
        )
    with translation.override("de"):
        assert localized_problem(None) is None


def test_a_submit_refused_by_the_checks_explains_why_in_german(undecided, campaign):
    batch, _ = batch_request(annotator=undecided, campaign_id=campaign.pk)
    for a in batch.assignments.all():
        work.rating_save(annotator=undecided, batch_id=batch.pk, assignment_id=a.pk, value="good")
    work.writing_open(annotator=undecided, batch_id=batch.pk)
    client = Client()
    client.force_login(undecided.user)
    response = client.post(
        reverse("annotation:api_submit", args=[batch.pk]),
        json.dumps({"submit_key": uuid.uuid4().hex}),
        content_type="application/json",
        HTTP_ACCEPT="application/json",
        HTTP_ACCEPT_LANGUAGE="de",
    )
    assert response.status_code == 400
    data = response.json()
    assert data["message"] == "3 Beschreibungen brauchen noch Ihre Aufmerksamkeit, bevor Sie absenden können."
    assert {d["message"] for d in data["details"].values()} == {
        "Schreiben Sie eine Beschreibung für dieses Bild."
    }


# --- Right to left --------------------------------------------------------------------------------


@override_settings(LANGUAGES=[*settings.LANGUAGES, ("fa", "فارسی"), ("he", "עברית")])
@pytest.mark.parametrize(
    ("language", "direction"), [("fa", "rtl"), ("he", "rtl"), ("ar", "rtl"), ("de", "ltr")]
)
def test_persian_hebrew_and_arabic_pages_are_right_to_left(db, language, direction):
    html = Client(HTTP_ACCEPT_LANGUAGE=language).get(reverse("login")).content.decode()
    assert f'<html lang="{language}" dir="{direction}">' in html


def test_the_stylesheet_uses_logical_sides():
    css = (settings.BASE_DIR / "static" / "css" / "app.css").read_text()
    rules = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    # Physical sides only where a layout must not mirror: the footer spans the page either way.
    assert not re.search(r"(margin|padding|border)-(left|right)\b", rules)
    assert not re.search(r"float:\s*(left|right)|text-align:\s*(left|right)", rules)
    assert re.findall(r"[;{\s](left|right):", rules) == ["left", "right"]


# --- Guidelines per interface language --------------------------------------------------------------


@pytest.mark.parametrize("language", ["de", "ar", "ja"])
def test_the_built_in_guidelines_name_the_labels_and_keys_the_buttons_show(language):
    with translation.override(language):
        for point in RATING:
            label = scale_label(point)
            for kind in ("rating", "verification"):
                text = guidelines.built_in(kind, language)
                assert label in text and point.key in text
        sxs = guidelines.built_in("sxs", language)
        assert " · ".join(f"{p.key} {scale_label(p)}" for p in list(SXS)[:4]) in sxs
        assert " · ".join(f"{p.key} {scale_label(p)}" for p in list(SXS)[4:]) in sxs
        assert scale_label(RATING.point("EXCELLENT")) in guidelines.built_in("writing", language)
    for kind in ("rating", "verification", "sxs", "writing"):
        assert guidelines.built_in(kind, language) != guidelines.built_in(kind, "en")


def test_the_english_guidelines_are_the_reference_texts():
    assert guidelines.built_in("rating", "en") == guidelines.RATING_GUIDELINES
    assert guidelines.built_in("writing", "xx") == guidelines.WRITING_GUIDELINES


def test_a_campaigns_guidelines_per_interface_language(campaign):
    with translation.override("de"):
        assert guidelines.rating_guidelines(campaign) == guidelines.built_in("rating", "de")
    campaign.rating_guidelines = "Campaign text for every language."
    campaign.save()
    CampaignGuidelines.objects.create(campaign=campaign, interface_language="de", rating="Kampagnentext.")
    with translation.override("de"):
        assert guidelines.rating_guidelines(campaign) == "Kampagnentext."
        # No German writing text of its own: the built-in German one.
        assert guidelines.writing_guidelines(campaign) == guidelines.built_in("writing", "de")
    with translation.override("ja"):
        assert guidelines.rating_guidelines(campaign) == "Campaign text for every language."


def test_managers_edit_a_campaigns_guidelines_per_language_in_the_admin(pm_client, campaign):
    url = reverse("admin:annotation_campaign_change", args=[campaign.pk])
    page = pm_client.get(url).content.decode()
    assert "guidelines in other interface languages" in page.lower()
    assert '<option value="ja">日本語</option>' in page


def _admin_change_data(page) -> dict:
    """The POST data of an admin change page as it stands: the main form's values and every inline's."""
    form = page.context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        elif value is not None:
            data[name] = getattr(value, "pk", value)
    for inline in page.context["inline_admin_formsets"]:
        formset = inline.formset
        for name, field in formset.management_form.fields.items():
            data[f"{formset.prefix}-{name}"] = formset.management_form.initial.get(name, field.initial)
        for sub in formset.initial_forms:
            for name in sub.fields:
                value = sub.initial.get(name)
                if value is not None:
                    data[sub.add_prefix(name)] = getattr(value, "pk", value)
            data[sub.add_prefix("id")] = sub.instance.pk
    return data


def test_a_manager_sets_an_annotators_interface_language_in_the_admin(pm_client, annotator):
    url = reverse("admin:annotation_annotator_change", args=[annotator.pk])
    page = pm_client.get(url)
    assert '<option value="ar">العربية</option>' in page.content.decode()
    data = {**_admin_change_data(page), "interface_language": "ar"}
    response = pm_client.post(url, data)
    assert response.status_code == 302, response.context["errors"]
    annotator.refresh_from_db()
    assert annotator.interface_language == "ar"
    data["interface_language"] = "tlh"
    assert pm_client.post(url, data).status_code == 200  # the form again, with its error
    annotator.refresh_from_db()
    assert annotator.interface_language == "ar"


def test_a_manager_adds_a_campaigns_japanese_guidelines_in_the_admin(pm_client, campaign):
    url = reverse("admin:annotation_campaign_change", args=[campaign.pk])
    data = _admin_change_data(pm_client.get(url))
    prefix = "translated_guidelines"
    data.update(
        {
            f"{prefix}-TOTAL_FORMS": 1,
            f"{prefix}-0-interface_language": "ja",
            f"{prefix}-0-rating": "このキャンペーンの評価ガイドライン。",
            f"{prefix}-0-writing": "",
            f"{prefix}-0-sxs": "",
        }
    )
    response = pm_client.post(url, data)
    assert response.status_code == 302, response.context["errors"]
    assert CampaignGuidelines.objects.get(campaign=campaign).interface_language == "ja"
    with translation.override("ja"):
        assert guidelines.rating_guidelines(campaign) == "このキャンペーンの評価ガイドライン。"
        assert guidelines.writing_guidelines(campaign) == guidelines.built_in("writing", "ja")
    # A language the interface lacks is refused, and nothing more is stored.
    data = _admin_change_data(pm_client.get(url))
    data.update(
        {f"{prefix}-TOTAL_FORMS": 2, f"{prefix}-1-interface_language": "tlh", f"{prefix}-1-rating": "x"}
    )
    assert pm_client.post(url, data).status_code == 200
    assert CampaignGuidelines.objects.filter(campaign=campaign).count() == 1


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("xgettext") is None, reason="makemessages needs GNU gettext's xgettext")
def test_the_catalogues_hold_every_string_the_code_marks(tmp_path):
    """scripts/messages.sh run on a copy of the code finds no msgid the committed catalogues lack:
    a string wrapped for translation but never extracted fails here (then it must be translated)."""
    root = settings.BASE_DIR
    for name in (
        "annotation",
        "challenges",
        "core",
        "evaluation",
        "config",
        "templates",
        "static",
        "locale",
        "scripts",
    ):
        shutil.copytree(root / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(root / "manage.py", tmp_path / "manage.py")
    env = {**os.environ, "PYTHON": sys.executable, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    result = subprocess.run(
        ["bash", "scripts/messages.sh", "de"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    for domain in DOMAINS:
        committed = read_catalogue(root / "locale" / "de" / "LC_MESSAGES" / f"{domain}.po")
        fresh = read_catalogue(tmp_path / "locale" / "de" / "LC_MESSAGES" / f"{domain}.po")

        def ids(catalog):
            return {(m.context, m.id if isinstance(m.id, str) else tuple(m.id)) for m in catalog if m.id}

        assert ids(fresh) - ids(committed) == set(), f"run scripts/messages.sh and translate ({domain})"
        assert ids(committed) - ids(fresh) == set(), (
            f"run scripts/messages.sh to drop stale msgids ({domain})"
        )


def test_the_dashboard_default_prefers_a_native_language_the_interface_has(db):
    french, arabic, japanese = (
        f.LanguageFactory(code=c, name=n) for c, n in [("fr", "French"), ("ar", "Arabic"), ("ja", "Japanese")]
    )
    annotator = f.AnnotatorFactory(user__username="nadia", languages=[french], interface_language="")
    from annotation.models import AnnotatorSkill, SkillLevel

    AnnotatorSkill.objects.create(annotator=annotator, language=japanese, level=SkillLevel.FLUENT)
    assert language_for(annotator) == "ja"  # French has no interface: the fluent Japanese
    AnnotatorSkill.objects.create(annotator=annotator, language=arabic, level=SkillLevel.NATIVE)
    assert language_for(annotator) == "ar"  # a native language the interface has comes first


def test_the_script_catalogue_is_read_only(annotator_client):
    url = reverse("annotation:javascript_catalog")
    assert annotator_client.post(url + "?lang=de").status_code == 405
    # An unknown language is no error: the page gets English.
    response = annotator_client.get(url + "?lang=xx")
    assert response.status_code == 200 and "Alles gespeichert" not in response.content.decode()


def test_without_a_choice_the_dashboard_speaks_the_first_native_language_read_in_one_query(
    db, django_assert_num_queries
):
    from annotation.interface import _skills_of, annotator_default
    from annotation.models import AnnotatorSkill, SkillLevel

    annotator = f.AnnotatorFactory(interface_language="")
    for code, level in (
        ("ar", SkillLevel.FLUENT),
        ("xx-unknown", SkillLevel.NATIVE),
        ("ja", SkillLevel.NATIVE),
    ):
        language = f.LanguageFactory(code=code)
        AnnotatorSkill.objects.create(annotator=annotator, language=language, level=level)
    with django_assert_num_queries(1):
        assert annotator_default(annotator) == "ja"
    orm = AnnotatorSkill.objects.filter(annotator=annotator).values_list("level", "language__code")
    assert sorted(_skills_of(annotator.pk)) == sorted(orm)
    AnnotatorSkill.objects.filter(annotator=annotator, level=SkillLevel.NATIVE).delete()
    assert annotator_default(annotator) == "ar"
