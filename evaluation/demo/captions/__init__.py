"""The simulated side-by-side set's text: captions of four simulated systems and two human-style
references per image, in German, Arabic and Japanese, for the 17 demo photographs (plain data).

Every caption was written for its photograph (``annotation.services.demo.PHOTOS`` has each one's
title and the English captions of the real demo systems) and carries a grade that says what it is,
which the simulated raters' model reads (:mod:`evaluation.demo.simulation`):

    A  accurate and specific       B  accurate but brief       C  vague, nothing wrong
    D  specific, with a wrong detail (a colour, an object, a place)       E  wrong: another picture

The systems differ in a controlled way, and not the same way in every language:

* ``sim-a`` writes detailed, accurate captions (A), but in Japanese six of them carry a wrong
  detail (D): there it is close to ``sim-b`` for people, while its many matching characters still
  please the n-gram metrics;
* ``sim-b`` writes short, correct captions (B) in German and Japanese; its Arabic is poor, short
  and often wrong (D, E);
* ``sim-c`` is vague everywhere (C);
* ``sim-d`` is fluent and detailed but invents details in German (D, some E) and describes other
  pictures in Japanese (E, some D); its Arabic is good (B, some A).

The references are what a careful annotator writes: accurate, in their own words, never a copy of
a system's caption.

One module per language (``german``, ``arabic``, ``japanese``) over ``base`` (grades, systems, the
record of one photograph).
"""

from __future__ import annotations

from evaluation.demo.captions.arabic import ARABIC
from evaluation.demo.captions.base import GRADES, SIM_SYSTEMS, PhotoCaptions, SimSystem
from evaluation.demo.captions.german import GERMAN
from evaluation.demo.captions.japanese import JAPANESE

__all__ = ["CAPTIONS", "GRADES", "SIM_SYSTEMS", "PhotoCaptions", "SimSystem"]

# language code -> image key -> the photograph's references and system captions.
CAPTIONS: dict[str, dict[str, PhotoCaptions]] = {"de": GERMAN, "ar": ARABIC, "ja": JAPANESE}
