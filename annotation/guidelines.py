"""The built-in annotator guidelines, in the project's own words, faithful to XM3600 appendices B and C.

A campaign may replace any of these texts, for every interface language (its own fields) or for one
(``CampaignGuidelines``, an inline of the campaign's admin page); an empty text means the next in
line (see ``_guidelines``). The built-in texts exist in every interface language (``BUILT_IN``).
The side-by-side guidelines apply the rating criteria of appendix B to a choice between two
captions (sec. 3.3). The keys named here come from ``core.scales``, as the page's do, so the page
and the help agree.
"""

from django.utils import translation

from annotation.guideline_texts import ar as _ar
from annotation.guideline_texts import de as _de
from annotation.guideline_texts import ja as _ja
from annotation.models import CampaignGuidelines
from core.scales import RATING, SXS


def _rated(label: str) -> str:
    point = RATING.point(label)
    return f"{point.paper_label} (key {point.key})"


_RATING_INTRO = """\
Picture a friend who cannot see, and imagine reading them the caption in place of the image. \
How well would they know what the picture shows?

Rate each {what} on this scale. When you hesitate between two ratings, choose the lower one.

"""

_RATING_SCALE_TEXT = f"""\
{_rated("EXCELLENT")}: the caption covers the whole image: all the main objects, what they are doing, \
and how they relate to each other.

{_rated("GOOD")}: the caption explains most of the main objects, activities and their relationships.

{_rated("MEDIUM")}: the caption names some objects or activities but leaves out something essential: \
an important person or object, the main activity, or a modifier that matters.

{_rated("BAD")}: the caption has at least one of these problems:
  • it misses the main subject of the image;
  • it has serious grammar problems (unfinished, words in the wrong order, …) — ignore capital \
letters and punctuation;
  • it breaks the "no hallucination" rule: it mentions an object, activity or relationship that is \
certainly not in the image. Apply this rule only when you are sure the thing is not there or implied.

{_rated("NOT-ENOUGH-INFO")}: you cannot judge the caption from what you see. Use this as rarely as \
possible; when something cannot be checked, give the caption the benefit of the doubt."""

RATING_GUIDELINES = _RATING_INTRO.format(what="English caption") + _RATING_SCALE_TEXT

VERIFICATION_GUIDELINES = (
    _RATING_INTRO.format(what="caption (written by another annotator)")
    + _RATING_SCALE_TEXT
    + f"""

Rate the caption as it is written, in its own language: its grammar counts, capital letters and \
punctuation do not. Keys: {RATING.first.key}–{RATING.last.key} rate the selected image and move on, ↑/↓ (or k/j) move, Enter submits \
once every caption is rated."""
)

_SXS_POINTS = [f"{point.key} {point.label}" for point in SXS]
SXS_GUIDELINES = f"""\
Each image comes with two captions, one on the left and one on the right. Imagine describing the \
image to a friend who cannot see it: which caption would tell them better what the picture shows?

Judge both captions by the same criteria as when rating captions:
  • does it cover the whole image: the main objects, what they are doing, and how they relate?
  • does it name things as precisely as the picture allows ("young girl" rather than "person")?
  • does it mention something that is certainly NOT in the image (a hallucination)? That weighs heavily.
  • is it grammatical and complete? Ignore capital letters and punctuation.

Then choose one of seven points, from the left caption's side:
  {" · ".join(_SXS_POINTS[:4])} ·
  {" · ".join(_SXS_POINTS[4:])}

Use "Similar" when neither caption would serve your friend better, also when both are equally \
good or equally bad. Use "much better" when one caption is right and the other misses the main \
subject or describes something that is not there. Which caption is on which side is random and \
means nothing; judge each pair on its own.

Keys: {SXS.first.key}–{SXS.last.key} judge the selected pair and move on, ↑/↓ (or k/j) move, ? shows or hides these \
guidelines, Enter submits once every pair is judged."""

WRITING_GUIDELINES = """\
Again, imagine describing the image to a friend who cannot see it. Write one caption per image, \
in the campaign's language, that explains the whole image: the main objects, the main activity, \
and how they relate. Name things as precisely as you reasonably can: "young boy" is better than \
"young child", which is better than "person".

Aim for a caption you would rate EXCELLENT. Do not copy or translate the English captions from the \
first screen: write your own description from the image itself.

A way to build the caption (not every step fits every image):
  1. Find the most important object(s) or person(s), named at the most informative level \
("girl" rather than "child" or "person").
  2. Find the most important relation between them ("girl standing in front of a whiteboard").
  3. Find the main activity ("smiling", "standing").
  4. Find the attributes that matter most ("young", "smiling").
  5. Add context if it helps: where it happens, what is around.
  6. Put it together in one natural sentence, e.g. "a smiling girl standing in a classroom".

Reasonable assumptions are fine as long as nothing in the image contradicts them (say "families" \
when a group seems to mix children and adults; "people" is fine too)."""


# The built-in texts per interface language; English is the reference (above), the others are
# its translations (annotation/guideline_texts). A language missing here reads the English ones.
BUILT_IN = {
    "en": {
        "rating": RATING_GUIDELINES,
        "verification": VERIFICATION_GUIDELINES,
        "sxs": SXS_GUIDELINES,
        "writing": WRITING_GUIDELINES,
    },
}
for _code, _module in (("de", _de), ("ar", _ar), ("ja", _ja)):
    BUILT_IN[_code] = {
        "rating": _module.RATING_GUIDELINES,
        "verification": _module.VERIFICATION_GUIDELINES,
        "sxs": _module.SXS_GUIDELINES,
        "writing": _module.WRITING_GUIDELINES,
    }


def built_in(kind: str, language: str | None = None) -> str:
    """The built-in ``kind`` text ("rating", "verification", "sxs", "writing") in ``language``
    (default: the active interface language), else in English."""
    language = language or translation.get_language() or "en"
    texts = BUILT_IN.get(language) or BUILT_IN.get(language.split("-")[0]) or BUILT_IN["en"]
    return texts[kind]


def _guidelines(campaign, kind: str, field: str, translated_field: str) -> str:
    """The campaign's guidelines of ``kind`` for the active interface language, in this order: the
    campaign's own text in that language (``CampaignGuidelines``); the campaign's own text for
    every language (its ``field``); the built-in text in that language; the built-in English."""
    language = translation.get_language() or "en"
    own = (
        CampaignGuidelines.objects.filter(campaign=campaign, interface_language=language)
        .values_list(translated_field, flat=True)
        .first()
    )
    if own and own.strip():
        return own.strip()
    return getattr(campaign, field).strip() or built_in(kind, language)


def rating_guidelines(campaign) -> str:
    return _guidelines(campaign, "rating", "rating_guidelines", "rating")


def verification_guidelines(campaign) -> str:
    return _guidelines(campaign, "verification", "rating_guidelines", "rating")


def sxs_guidelines(campaign) -> str:
    return _guidelines(campaign, "sxs", "sxs_guidelines", "sxs")


def writing_guidelines(campaign) -> str:
    return _guidelines(campaign, "writing", "writing_guidelines", "writing")
