"""Which language the annotator interface speaks, and the one place that decides it.

The languages are ``settings.LANGUAGES`` (each with a complete catalogue under ``locale/``). The
order of precedence, for an annotator:

1. their own choice, stored on their profile (``Annotator.interface_language``), so it follows them
   to every device;
2. the language of the campaign the page is about, where the interface has it (a batch screen,
   and a recruited participant's pages: languages, tutorial, completion, pilot feedback);
   on the dashboard, their first language (native before fluent) that the interface has;
3. the browser's choice (the selector's cookie, then ``Accept-Language``), as for a visitor: a
   participant who has just arrived through an entry link has declared no language yet;
4. English (``settings.LANGUAGE_CODE``).

Visitors who are not logged in (the login page, error pages) get Django's usual choice: the
language cookie the selector sets, then the browser's ``Accept-Language``. Managers and
researchers work in English: the admin and the research pages are not translated.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.db import connections, router
from django.utils import translation
from django.utils.translation import gettext, pgettext_lazy

from annotation.models import Annotator, AnnotatorSkill, SkillLevel


def interface_languages() -> list[tuple[str, str]]:
    """(code, name in its own language) of every interface language, English first."""
    return list(settings.LANGUAGES)


def supported(code: str | None) -> str | None:
    """The interface language ``code`` names ("de-CH" -> "de"), or None if the interface lacks it."""
    if not code:
        return None
    try:
        return translation.get_supported_language_variant(code)
    except LookupError:
        return None


_SKILLS_SQL: dict[str, str] = {}


def _skills_of(annotator_id: int) -> list[tuple[str, str]]:
    """(level, language code) of each of the annotator's languages: what
    ``AnnotatorSkill.objects.filter(annotator=...).values_list("level", "language__code")`` reads, in
    SQL written once per database vendor. Every annotator page without an interface choice asks for
    them, and the ORM built this two-table query afresh each time for two short columns."""
    connection = connections[router.db_for_read(AnnotatorSkill)]
    sql = _SKILLS_SQL.get(connection.vendor)
    if sql is None:
        q = connection.ops.quote_name
        skill, language = AnnotatorSkill._meta, AnnotatorSkill.language.field.related_model._meta
        sql = _SKILLS_SQL[connection.vendor] = (
            f"SELECT s.{q(skill.get_field('level').column)}, l.{q(language.get_field('code').column)} "  # noqa: S608 - names from the models
            f"FROM {q(skill.db_table)} s INNER JOIN {q(language.db_table)} l "
            f"ON s.{q(skill.get_field('language').column)} = l.{q(language.pk.column)} "
            f"WHERE s.{q(skill.get_field('annotator').column)} = %s"
        )
    with connection.cursor() as cursor:
        cursor.execute(sql, [annotator_id])
        return cursor.fetchall()


def annotator_default(annotator: Annotator, request=None) -> str:
    """The annotator's language when no campaign is in view: the first of their languages, native
    before fluent, that the interface has; else the browser's (with ``request``); else English."""
    skills = _skills_of(annotator.pk)
    ordered = sorted(skills, key=lambda s: (s[0] != SkillLevel.NATIVE, s[1]))
    for _level, code in ordered:
        found = supported(code)
        if found:
            return found
    if request is not None:
        return translation.get_language_from_request(request)
    return settings.LANGUAGE_CODE


def language_for(annotator: Annotator, campaign=None, request=None) -> str:
    """The interface language of a page for ``annotator``, about ``campaign`` if given (see the
    module docstring for the order)."""
    chosen = supported(annotator.interface_language)
    if chosen:
        return chosen
    if campaign is not None:
        return supported(campaign.language.code) or settings.LANGUAGE_CODE
    return annotator_default(annotator, request)


def use_campaign_language(request, campaign) -> None:
    """Speak ``campaign``'s language on this page unless the annotator chose another one."""
    annotator = getattr(request, "annotator", None)
    if annotator is None:
        return
    language = language_for(annotator, campaign, request)
    translation.activate(language)
    request.LANGUAGE_CODE = language


def language_from_page(request) -> str | None:
    """The language an annotator page asks its JSON answers in: the pages send their own
    ``<html lang>`` as ``Accept-Language`` (static/js/common.js), so that an error a save meets
    reads in the language of the page it is shown on."""
    header = request.headers.get("Accept-Language", "")
    first = header.split(",")[0].split(";")[0].strip()
    return supported(first)


def language_name(language, interface_language: str | None = None, fallback: str | None = None) -> str:
    """The name of ``language`` (a ``Language`` or a code) in the interface language, from CLDR
    through Babel ("German" reads "Deutsch" in German, "ドイツ語" in Japanese); the stored name
    (or the code) where CLDR has none."""
    from babel import Locale, UnknownLocaleError

    code = getattr(language, "code", language)
    fallback = fallback or getattr(language, "name", code)
    try:
        locale = Locale.parse(interface_language or translation.get_language() or "en", sep="-")
    except (ValueError, UnknownLocaleError):
        return fallback
    names = locale.languages
    return names.get(str(code).replace("-", "_")) or names.get(str(code).split("-")[0]) or fallback


# What each point of a scale reads on the annotator's buttons, per interface language. The
# protocol's terms keep their meaning (EXCELLENT ... BAD, NOT-ENOUGH-INFO as in seed paper 000):
# translators render the term, never a looser synonym. Keyed by the English label (core.scales).
SCALE_LABELS = {
    "EXCELLENT": pgettext_lazy("rating", "EXCELLENT"),
    "GOOD": pgettext_lazy("rating", "GOOD"),
    "MEDIUM": pgettext_lazy("rating", "MEDIUM"),
    "BAD": pgettext_lazy("rating", "BAD"),
    "NOT-ENOUGH-INFO": pgettext_lazy("rating", "NOT-ENOUGH-INFO"),
    "Left much better": pgettext_lazy("side by side", "Left much better"),
    "Left better": pgettext_lazy("side by side", "Left better"),
    "Left slightly better": pgettext_lazy("side by side", "Left slightly better"),
    "Similar": pgettext_lazy("side by side", "Similar"),
    "Right slightly better": pgettext_lazy("side by side", "Right slightly better"),
    "Right better": pgettext_lazy("side by side", "Right better"),
    "Right much better": pgettext_lazy("side by side", "Right much better"),
}


def scale_label(point) -> str:
    """The label of a scale point (``core.scales.Point``) in the interface language."""
    return str(SCALE_LABELS.get(point.label, point.label))


class ShownScale:
    """A scale as the annotator's page shows it: the same points, codes and keys, with labels in
    the interface language. Iterates like ``core.scales.Scale`` and has its first, middle, last."""

    def __init__(self, scale) -> None:
        self.points = tuple(point._replace(label=scale_label(point)) for point in scale)

    def __iter__(self):
        return iter(self.points)

    def __len__(self) -> int:
        return len(self.points)

    @property
    def first(self):
        return self.points[0]

    @property
    def middle(self):
        return self.points[len(self.points) // 2]

    @property
    def last(self):
        return self.points[-1]


# ISO 15924 codes of the ``regex`` script names the caption checks use, for CLDR's names.
_SCRIPT_CODES = {
    "Arabic": "Arab",
    "Armenian": "Armn",
    "Bengali": "Beng",
    "Cyrillic": "Cyrl",
    "Devanagari": "Deva",
    "Ethiopic": "Ethi",
    "Georgian": "Geor",
    "Greek": "Grek",
    "Gujarati": "Gujr",
    "Gurmukhi": "Guru",
    "Han": "Hani",
    "Hangul": "Hang",
    "Hebrew": "Hebr",
    "Hiragana": "Hira",
    "Kannada": "Knda",
    "Katakana": "Kana",
    "Khmer": "Khmr",
    "Lao": "Laoo",
    "Latin": "Latn",
    "Malayalam": "Mlym",
    "Myanmar": "Mymr",
    "Sinhala": "Sinh",
    "Tamil": "Taml",
    "Telugu": "Telu",
    "Thai": "Thai",
    "Tibetan": "Tibt",
}


# Lists the interface shows ("still unrated: 3, 5, 7", the scale's keys) take their separators from
# CLDR through Babel: Arabic joins with " و", Japanese with "、", German puts "und" before the last.
# The narrow style keeps English as it read before: "1, 2, 3", with no "and".
LIST_STYLE = "standard-narrow"


def _interface_locale(interface_language: str | None = None):
    from babel import Locale, UnknownLocaleError

    try:
        return Locale.parse(interface_language or translation.get_language() or "en", sep="-")
    except (ValueError, UnknownLocaleError):
        return Locale.parse("en")


def interface_list(items, interface_language: str | None = None) -> str:
    """``items`` (as text) written as a list in the interface language, its own separators and
    conjunction from CLDR ("1, 2, 3"; German "1, 2 und 3"; Arabic "1 و2 و3"; Japanese "1、2、3")."""
    from babel.lists import format_list

    texts = [str(item) for item in items]
    return format_list(texts, style=LIST_STYLE, locale=_interface_locale(interface_language)) if texts else ""


def list_separators(count: int, interface_language: str | None = None) -> list[str]:
    """What stands between the items of a list of ``count`` items in the interface language: the
    ``count - 1`` separators ``interface_list`` puts, for templates that write each item themselves
    (a link, a key). Items are marked with characters no CLDR pattern contains, then cut out."""
    if count < 2:
        return []
    marks = [f"\x00{i}\x00" for i in range(count)]
    return re.split("\x00\\d+\x00", interface_list(marks, interface_language))[1:-1]


def script_name(script: str) -> str:
    """A writing system's name in the interface language (CLDR through Babel), else as given."""
    from babel import Locale, UnknownLocaleError

    try:
        locale = Locale.parse(translation.get_language() or "en", sep="-")
    except (ValueError, UnknownLocaleError):
        return script
    return locale.scripts.get(_SCRIPT_CODES.get(script, ""), script)


def localized_problem(problem: str | None) -> str | None:
    """A caption check's message (``annotation.caption_checks.Problem``) in the interface
    language, with the languages and scripts it names named in that language too."""
    from annotation.caption_checks import LanguageCode, Problem, ScriptNames, base_language, in_english

    if not isinstance(problem, Problem):
        return problem
    values = {}
    for key, value in problem.params.items():
        if isinstance(value, LanguageCode):
            values[key] = language_name(base_language(value), fallback=in_english(value))
        elif isinstance(value, ScriptNames):
            values[key] = " / ".join(script_name(s) for s in value)
        else:
            values[key] = value
    return gettext(problem.template) % values
