"""Die eingebauten Richtlinien auf Deutsch (übersetzt aus annotation/guidelines.py)."""

from functools import partial

from annotation.guideline_texts import rated, scale_labels, sxs_points
from core.scales import RATING, SXS

LABELS = scale_labels("de")


_rated = partial(rated, LABELS, "{label} (Taste {key})")


_RATING_INTRO = """\
Stellen Sie sich eine befreundete Person vor, die nicht sehen kann, und lesen Sie ihr in Gedanken \
statt des Bildes die Beschreibung vor. Wie gut wüsste sie dann, was auf dem Bild zu sehen ist?

Bewerten Sie jede {what} auf dieser Skala. Wenn Sie zwischen zwei Bewertungen schwanken, \
wählen Sie die niedrigere.

"""

_RATING_SCALE_TEXT = f"""\
{_rated("EXCELLENT")}: Die Beschreibung erfasst das ganze Bild: alle wichtigen Objekte, was sie \
tun und wie sie zueinander in Beziehung stehen.

{_rated("GOOD")}: Die Beschreibung erklärt die meisten wichtigen Objekte, Tätigkeiten und ihre \
Beziehungen.

{_rated("MEDIUM")}: Die Beschreibung nennt einige Objekte oder Tätigkeiten, lässt aber etwas \
Wesentliches weg: eine wichtige Person oder ein wichtiges Objekt, die Haupttätigkeit oder eine \
Bestimmung, auf die es ankommt.

{_rated("BAD")}: Die Beschreibung hat mindestens eines dieser Probleme:
  • Sie verfehlt das Hauptmotiv des Bildes.
  • Sie hat schwere grammatische Fehler (unvollständig, Wörter in falscher Reihenfolge, …); \
Groß- und Kleinschreibung und Zeichensetzung zählen nicht.
  • Sie verstößt gegen die Regel „nichts erfinden“: Sie nennt ein Objekt, eine Tätigkeit oder \
eine Beziehung, die sicher nicht im Bild ist. Wenden Sie diese Regel nur an, wenn Sie sicher \
sind, dass das Genannte weder zu sehen noch mitgemeint ist.

{_rated("NOT-ENOUGH-INFO")}: Sie können die Beschreibung anhand dessen, was Sie sehen, nicht \
beurteilen. Nutzen Sie dies so selten wie möglich; wenn sich etwas nicht überprüfen lässt, \
geben Sie der Beschreibung im Zweifel recht."""

RATING_GUIDELINES = _RATING_INTRO.format(what="englische Bildbeschreibung") + _RATING_SCALE_TEXT

VERIFICATION_GUIDELINES = (
    _RATING_INTRO.format(what="Bildbeschreibung (von einer anderen Person geschrieben)")
    + _RATING_SCALE_TEXT
    + f"""

Bewerten Sie die Beschreibung so, wie sie geschrieben ist, in ihrer eigenen Sprache: Ihre \
Grammatik zählt, Groß- und Kleinschreibung und Zeichensetzung nicht. Tasten: \
{RATING.first.key}–{RATING.last.key} bewerten das ausgewählte Bild und gehen weiter, ↑/↓ (oder \
k/j) wechseln das Bild, Enter sendet ab, sobald jede Beschreibung bewertet ist."""
)

_SXS_POINTS = sxs_points(LABELS)
SXS_GUIDELINES = f"""\
Zu jedem Bild gibt es zwei Beschreibungen, eine links und eine rechts. Stellen Sie sich vor, Sie \
beschreiben das Bild einer befreundeten Person, die nicht sehen kann: Welche Beschreibung würde \
ihr besser sagen, was auf dem Bild zu sehen ist?

Beurteilen Sie beide Beschreibungen nach denselben Kriterien wie beim Bewerten:
  • Erfasst sie das ganze Bild: die wichtigen Objekte, was sie tun und wie sie zueinander stehen?
  • Benennt sie die Dinge so genau, wie das Bild es zulässt („junges Mädchen“ statt „Person“)?
  • Nennt sie etwas, das sicher NICHT im Bild ist (etwas Erfundenes)? Das wiegt schwer.
  • Ist sie grammatisch richtig und vollständig? Groß- und Kleinschreibung und Zeichensetzung \
zählen nicht.

Wählen Sie dann einen von sieben Punkten, gesehen von der linken Beschreibung aus:
  {" · ".join(_SXS_POINTS[:4])} ·
  {" · ".join(_SXS_POINTS[4:])}

Wählen Sie „Ähnlich“, wenn keine der beiden Beschreibungen der Person besser helfen würde, auch \
wenn beide gleich gut oder gleich schlecht sind. Wählen Sie „viel besser“, wenn eine \
Beschreibung stimmt und die andere das Hauptmotiv verfehlt oder etwas beschreibt, das nicht da \
ist. Welche Beschreibung auf welcher Seite steht, ist zufällig und bedeutet nichts; beurteilen \
Sie jedes Paar für sich.

Tasten: {SXS.first.key}–{SXS.last.key} beurteilen das ausgewählte Paar und gehen weiter, ↑/↓ \
(oder k/j) wechseln das Paar, ? zeigt oder verbirgt diese Richtlinien, Enter sendet ab, sobald \
jedes Paar beurteilt ist."""

WRITING_GUIDELINES = """\
Stellen Sie sich wieder vor, Sie beschreiben das Bild einer befreundeten Person, die nicht sehen \
kann. Schreiben Sie pro Bild eine Beschreibung in der Sprache der Kampagne, die \
das ganze Bild erklärt: die wichtigen Objekte, die Haupttätigkeit und wie sie zueinander stehen. \
Benennen Sie die Dinge so genau, wie es vernünftigerweise geht: „kleiner Junge“ ist besser als \
„kleines Kind“, und das ist besser als „Person“.

Streben Sie eine Beschreibung an, die Sie mit AUSGEZEICHNET bewerten würden. Kopieren oder \
übersetzen Sie nicht die englischen Beschreibungen vom ersten Schritt: Schreiben Sie Ihre eigene \
Beschreibung, vom Bild selbst ausgehend.

Ein Weg zur Beschreibung (nicht jeder Schritt passt zu jedem Bild):
  1. Finden Sie die wichtigsten Objekte oder Personen und benennen Sie sie so aussagekräftig wie \
möglich („Mädchen“ statt „Kind“ oder „Person“).
  2. Finden Sie die wichtigste Beziehung zwischen ihnen („Mädchen, das vor einer Tafel steht“).
  3. Finden Sie die Haupttätigkeit („lächelt“, „steht“).
  4. Finden Sie die wichtigsten Eigenschaften („jung“, „lächelnd“).
  5. Fügen Sie Zusammenhang hinzu, wenn er hilft: wo es geschieht, was darum herum ist.
  6. Fügen Sie alles zu einem natürlichen Satz zusammen, z. B. „ein lächelndes Mädchen, das in \
einem Klassenzimmer steht“.

Vernünftige Annahmen sind in Ordnung, solange nichts im Bild ihnen widerspricht (sagen Sie \
„Familien“, wenn eine Gruppe aus Kindern und Erwachsenen zu bestehen scheint; „Menschen“ ist \
auch in Ordnung)."""
