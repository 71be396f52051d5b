"""The built-in annotator guidelines in the interface languages other than English.

Each module holds the four texts of ``annotation.guidelines`` (rating, verification, side by
side, writing), translated from the English ones, which follow seed paper 000's appendices B and
C. The scale labels in them are the ones the buttons show in that language (the ``rating`` and
``side by side`` entries of the language's catalogue) and the keys come from ``core.scales``:
tests/annotation/test_interface_language.py checks both. The labels are read from the compiled
catalogue itself (:func:`scale_labels`), so a text never names a button other than the one shown.
"""

import gettext

from django.conf import settings

from core.scales import RATING, SXS


def scale_labels(language: str) -> dict[str, str]:
    """Every point of the rating and side-by-side scales -> its label in ``language``: the ``rating``
    and ``side by side`` entries of that language's compiled catalogue (LOCALE_PATHS), read with
    Python's gettext because the texts are built when their module is imported."""
    catalogue = gettext.translation("django", settings.LOCALE_PATHS[0], languages=[language])
    return {
        point.label: catalogue.pgettext(context, point.label)
        for context, scale in (("rating", RATING), ("side by side", SXS))
        for point in scale
    }


def rated(labels: dict[str, str], pattern: str, label: str) -> str:
    """A rating point as a text names it: ``pattern`` filled with its ``label`` in the text's language
    (``labels``) and its ``key``, e.g. ``"{label} (Taste {key})"``."""
    point = RATING.point(label)
    return pattern.format(label=labels[point.label], key=point.key)


def sxs_points(labels: dict[str, str]) -> list[str]:
    """The side-by-side scale as ``key label`` in the text's language, in the scale's order."""
    return [f"{point.key} {labels[point.label]}" for point in SXS]
