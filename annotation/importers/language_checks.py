"""Imported captions (reference sets, system outputs) go through the script and language checks that
annotators' captions go through (:mod:`annotation.caption_checks`): a Japanese reference set that
holds German text is found before it is imported.

The checks are plain functions over plain data; :func:`language_check_gate` turns their result into
the importers' refusal or record. Only the script and the language checks apply: references and system
outputs may be short, and there is no English prompt to copy. The problems are counted per language
and kind, with the first places named, so the manager sees how much of a file is affected; importing
anyway needs a reason, which the importer records.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.utils import timezone

from annotation.caption_checks import (
    DEFAULT_LANGUAGE_THRESHOLD,
    SCRIPTS,
    CaptionRules,
    LanguageCode,
    ScriptNames,
    base_language,
    in_english,
    language_verdict,
    script_problem,
)

PLACES_SHOWN = 5


@dataclass
class LanguageCheck:
    """``counts[(language, problem)]``: how many captions have that problem, ``places`` the first of
    them (file position and image key). A problem is ``"script"`` or ``"looks like <name>"``."""

    checked: int = 0
    counts: Counter = field(default_factory=Counter)
    places: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))

    def __bool__(self) -> bool:
        return bool(self.counts)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def lines(self) -> list[str]:
        """One line per language and problem: the count, what it is, where the first ones are."""
        out = []
        for (language, problem), n in sorted(self.counts.items()):
            places = self.places[(language, problem)]
            shown = ", ".join(places) + (", …" if n > len(places) else "")
            verb = problem.replace("look like", "looks like", 1) if n == 1 else problem
            out.append(f"{language}: {n} caption{'s' if n != 1 else ''} {verb} ({shown})")
        return out

    def as_dict(self) -> dict:
        return {
            "checked": self.checked,
            "problems": [
                {"language": language, "problem": problem, "count": n}
                for (language, problem), n in sorted(self.counts.items())
            ],
        }


def _script_label(code: str) -> str:
    scripts = SCRIPTS.get(base_language(code), ())
    if base_language(code) == "ja":
        return "kana or kanji"
    return f"{in_english(ScriptNames(scripts))} script"


def captions_language_check(captions: Iterable[tuple[str, str, str]]) -> LanguageCheck:
    """Check ``(place, language code, text)`` triples with the annotators' script and language checks
    (the language check at its default threshold: only a confident verdict for another language)."""
    check = LanguageCheck()
    for place, code, text in captions:
        check.checked += 1
        rules = CaptionRules(
            language=code, per_character=False, language_threshold=DEFAULT_LANGUAGE_THRESHOLD
        )
        if script_problem(text, rules):
            problem = f"not written in {in_english(LanguageCode(code))} ({_script_label(code)})"
        else:
            verdict = language_verdict(text, code)
            if verdict is None or verdict[1] < rules.language_threshold:
                continue
            problem = (
                f"look like {in_english(LanguageCode(verdict[0]))}, not {in_english(LanguageCode(code))}"
            )
        key = (code, problem)
        check.counts[key] += 1
        if len(check.places[key]) < PLACES_SHOWN:
            check.places[key].append(place)
    return check


def language_check_gate(check: LanguageCheck, file_name: str, reason: str, report) -> dict:
    """Refuse captions that failed the checks unless the manager gave a reason; return what to record
    (empty when nothing failed). Adds the counts to the import ``report``'s warnings when accepted.
    Raises ValidationFailed naming the counts per problem and how to import anyway."""
    from core.errors import ValidationFailed

    if not check:
        return {}
    lines = check.lines()
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed(
            f"{file_name}: {check.total} of {check.checked} captions failed the script or language check "
            "that annotators' captions pass; nothing was imported:\n  "
            + "\n  ".join(lines)
            + "\nFix the file (or the language chosen), or import anyway with a reason "
            "(--accept-language-problems REASON; in the admin: “Import anyway, because”).",
            details=lines,
        )
    report.warnings.append(
        f"{check.total} of {check.checked} captions failed the script or language check, imported anyway "
        f"(reason: {reason}): " + "; ".join(lines)
    )
    return {
        "reason": reason,
        "file": file_name,
        "at": timezone.now().isoformat(timespec="seconds"),
        **check.as_dict(),
    }
