"""METEOR through the METEOR 1.5 jar: pycocoevalcap's numbers, the protocol, languages, failures.

The tests that run the jar are skipped only where ``java`` is not on the PATH; the missing-Java
behaviour itself is tested everywhere (with a java path that does not exist).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evaluation.metrics.text.meteor import (
    JAVA_INSTALL_HINT,
    MeteorConfig,
    MeteorFailed,
    MeteorSession,
    MeteorUnavailable,
    default_jar,
    meteor_score,
    meteor_setting,
    protocol_text,
)
from evaluation.metrics.text.scoring import METRICS, score_texts, score_tokens

# The session fixture ``java`` (tests/conftest.py) skips these without java, and fails them under CI.
requires_java = pytest.mark.usefixtures("java")
NO_JAVA = MeteorConfig(java="/nonexistent/bin/java")


def zombies_of_this_process() -> list[str]:
    """Children of this process that exited but were never waited for (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == os.getpid():
            found.append(stat.parent.name)
    return found


# --- Equality with pycocoevalcap ------------------------------------------------------------------


@requires_java
def test_coco_fakecap_equals_pycocoevalcap_meteor_per_caption_and_corpus(coco):
    from pycocoevalcap.meteor.meteor import Meteor

    candidates, references = coco
    ours = meteor_score(candidates, references, language="en")

    gts = {key: [" ".join(ref) for ref in references[key]] for key in candidates}
    res = {key: [" ".join(tokens)] for key, tokens in candidates.items()}
    reference = Meteor()
    try:
        corpus, per_caption = reference.compute_score(gts, res)
    finally:
        reference.meteor_p.stdin.close()  # its __del__ would do it at some later garbage collection
        reference.meteor_p.kill()
        reference.meteor_p.wait()

    assert ours.result.score == corpus  # the jar's aggregate of the final EVAL line, bit for bit
    assert list(ours.result.per_caption.values()) == list(per_caption)
    assert list(ours.result.per_caption) == list(candidates)
    assert round(ours.result.score, 3) == 0.195  # the evaluation server's published figure
    # The corpus score pools the statistics: it is not the mean of the per-caption scores.
    assert abs(sum(per_caption) / len(per_caption) - corpus) > 1e-3
    assert ours.setting.name == "meteor-1.5 en norm exact+stem+synonym+paraphrase"
    assert ours.setting.arguments() == ["-l", "en", "-norm"]  # pycocoevalcap's command line
    assert zombies_of_this_process() == []


@requires_java
def test_score_tokens_runs_meteor_on_the_same_tokens_next_to_the_other_metrics(coco):
    candidates, references = coco
    some = dict(list(candidates.items())[:50])
    report = score_tokens(some, references, metrics=["BLEU-4", "METEOR", "CIDEr-D"], language="de")
    assert report.metrics == ("BLEU-4", "METEOR", "CIDEr-D")
    assert report.not_computed == {}
    assert report.meteor_setting == "meteor-1.5 de norm exact+stem"
    alone = meteor_score(some, references, language="de")
    assert report.corpus["METEOR"] == alone.result.score
    assert report.per_caption["METEOR"] == alone.result.per_caption


# --- One JVM for many calls ---------------------------------------------------------------------


@requires_java
def test_a_session_gives_each_call_the_numbers_of_its_own_jvm_from_one_jvm(coco):
    import numpy as np

    candidates, references = coco
    some = dict(list(candidates.items())[:60])
    half = dict(list(some.items())[:30])
    rng = np.random.default_rng(3)
    draws = np.stack([np.bincount(rng.integers(0, 30, 30), minlength=30) for _ in range(20)])
    alone_all = meteor_score(some, references, language="de")
    alone_half = meteor_score(half, references, language="de", resamples=draws)
    with MeteorSession("de") as session:
        whole = session.score(some, references)
        memo = len(session._memo)
        part = session.score(half, references, resamples=draws)
        assert len(session._memo) == memo == 60  # the half's segments were scored with the whole
        again = session.score(some, references)
        assert session.starts == 1
    assert whole.result == alone_all.result == again.result
    assert part.result == alone_half.result
    assert np.array_equal(part.replicates, alone_half.replicates)
    # Through score_texts: the session in place of a config, the same report.
    texts = {key: " ".join(tokens) for key, tokens in half.items()}
    refs = {key: [" ".join(r) for r in references[key]] for key in half}
    plain = score_texts(texts, refs, language="de", metrics=["BLEU-4", "METEOR"])
    with MeteorSession("de") as session:
        shared = score_texts(texts, refs, language="de", metrics=["BLEU-4", "METEOR"], meteor=session)
        with pytest.raises(ValueError, match="session of 'de' cannot score 'fr'"):
            score_texts(texts, refs, language="fr", metrics=["METEOR"], meteor=session)
    assert shared.corpus == plain.corpus and shared.meteor_setting == plain.meteor_setting
    assert zombies_of_this_process() == []


@requires_java
def test_a_session_after_a_failure_starts_a_new_jvm_and_each_call_has_its_own_time_limit():
    session = MeteorSession("en", MeteorConfig(timeout=0.5))
    with pytest.raises(MeteorFailed, match="longer than 0.5 s"):
        session.score({1: ["a", "dog"]}, {1: [["a", "dog"]]})
    assert session._jvm is None  # reaped at the failure
    with pytest.raises(MeteorFailed):
        session.score({1: ["a", "dog"]}, {1: [["a", "dog"]]})
    assert session.starts == 2
    session.close()
    assert zombies_of_this_process() == []


def test_a_session_without_java_says_why_and_the_other_metrics_are_computed():
    with MeteorSession("de", NO_JAVA) as session:
        report = score_texts(
            {1: "ein hund"}, {1: ["ein hund"]}, language="de", metrics=["BLEU-1", "METEOR"], meteor=session
        )
    assert "BLEU-1" in report.corpus and "Java was not found" in report.not_computed["METEOR"]


# --- The protocol ---------------------------------------------------------------------------------


def test_protocol_text_removes_field_separators_and_line_breaks():
    assert protocol_text("a dog ||| on a beach") == "a dog on a beach"
    assert protocol_text("a|||dog") == "adog"
    assert protocol_text("a dog\non a\r\nbeach\r") == "a dog on a beach"
    # A run of pipes keeps fewer than three: no separator can re-form after the deletion.
    for pipes in range(1, 10):
        assert "|||" not in protocol_text("x" + "|" * pipes + "y")
    assert protocol_text("|| | ||") == "|| | ||"
    assert protocol_text("plain words stay as they are") == "plain words stay as they are"


@requires_java
def test_separators_and_line_breaks_inside_captions_do_not_shift_the_answers():
    candidates = {
        1: ["a", "dog|||", "runs"],
        2: ["two", "cats\nsleep", "on", "a", "sofa"],
        3: ["a", "red", "bus"],
    }
    references = {
        1: [["a", "dog", "runs", "on", "the", "beach"], ["a", "|||", "dog", "running"]],
        2: [["two", "cats", "sleep", "on", "a", "sofa"]],
        3: [["a", "red", "bus", "at", "a", "stop"], ["a\r\nred", "bus"]],
    }
    cleaned_candidates = {
        1: ["a", "dog", "runs"],
        2: ["two", "cats", "sleep", "on", "a", "sofa"],
        3: ["a", "red", "bus"],
    }
    cleaned_references = {
        1: [["a", "dog", "runs", "on", "the", "beach"], ["a", "dog", "running"]],
        2: [["two", "cats", "sleep", "on", "a", "sofa"]],
        3: [["a", "red", "bus", "at", "a", "stop"], ["a", "red", "bus"]],
    }
    # German: no paraphrase table to load, so the JVM starts in a fraction of a second.
    messy = meteor_score(candidates, references, language="de", config=MeteorConfig())
    clean = meteor_score(cleaned_candidates, cleaned_references, language="de")
    assert messy.result.per_caption == clean.result.per_caption
    assert messy.result.score == clean.result.score
    assert messy.result.per_caption[2] > 0.9  # identical after cleaning: not shifted onto caption 3


# --- Missing Java, missing jar, a JVM that does not answer in time -------------------------------


def test_missing_java_is_named_with_how_to_install_it_and_the_other_metrics_are_computed():
    candidates = {1: ["a", "dog", "on", "a", "beach"], 2: ["a", "red", "bus"]}
    references = {
        1: [["a", "dog", "runs", "on", "the", "beach"]],
        2: [["a", "red", "bus", "at", "a", "stop"]],
    }
    with pytest.raises(MeteorUnavailable, match="Java was not found") as caught:
        meteor_score(candidates, references, language="en", config=NO_JAVA)
    assert "apt-get install default-jre-headless" in str(caught.value)

    report = score_tokens(candidates, references, metrics=[*METRICS, "METEOR"], language="en", meteor=NO_JAVA)
    assert report.metrics == METRICS
    assert "METEOR" not in report.corpus and "METEOR" not in report.per_caption
    assert report.not_computed["METEOR"].startswith("Java was not found ('/nonexistent/bin/java')")
    assert JAVA_INSTALL_HINT in report.not_computed["METEOR"]
    assert report.corpus == score_tokens(candidates, references).corpus


def test_a_missing_jar_is_named(tmp_path):
    config = MeteorConfig(jar=tmp_path / "meteor-1.5.jar")
    with pytest.raises(
        MeteorUnavailable, match=r"the METEOR jar .*meteor-1.5.jar does not exist \(METEOR_JAR\)"
    ):
        meteor_score({1: ["a"]}, {1: [["a"]]}, language="en", config=config)


def test_the_default_jar_is_pycocoevalcaps():
    jar = default_jar()
    assert jar is not None and jar.name == "meteor-1.5.jar" and jar.is_file()
    assert jar.parent.name == "meteor" and jar.parent.parent.name == "pycocoevalcap"


@requires_java
def test_a_jvm_over_its_time_limit_is_stopped_and_reaped():
    # English loads a 60 MB paraphrase table first (about 10 s): half a second is not enough.
    config = MeteorConfig(timeout=0.5)
    with pytest.raises(MeteorFailed, match=r"METEOR took longer than 0.5 s and was stopped"):
        meteor_score({1: ["a", "dog"]}, {1: [["a", "dog"]]}, language="en", config=config)
    assert zombies_of_this_process() == []


@requires_java
def test_a_jvm_that_exits_reports_its_stderr(tmp_path):
    # A java "executable" that is a script printing an error: the failure carries its words.
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'Error: Unable to access jarfile' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(MeteorFailed, match=r"exited with status 1.*Unable to access jarfile"):
        meteor_score({1: ["a"]}, {1: [["a"]]}, language="en", config=MeteorConfig(java=str(fake)))
    assert zombies_of_this_process() == []


# --- Languages ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "arguments", "modules"),
    [
        ("en", ["-l", "en", "-norm"], ("exact", "stem", "synonym", "paraphrase")),
        ("en-GB", ["-l", "en", "-norm"], ("exact", "stem", "synonym", "paraphrase")),
        ("de", ["-l", "de", "-norm", "-m", "exact stem"], ("exact", "stem")),
        ("fr", ["-l", "fr", "-norm", "-m", "exact stem"], ("exact", "stem")),
        ("es", ["-l", "es", "-norm", "-m", "exact stem"], ("exact", "stem")),
        ("ru", ["-l", "ru", "-norm", "-m", "exact stem"], ("exact", "stem")),
        ("cs", ["-l", "cz", "-norm", "-m", "exact"], ("exact",)),
        ("pt_BR", ["-l", "pt", "-lower"], ("exact", "stem")),
        ("sv", ["-l", "se", "-lower"], ("exact", "stem")),
        ("nb", ["-l", "no", "-lower"], ("exact", "stem")),
        ("zh-Hans", ["-l", "other", "-lower"], ("exact",)),
        ("ar", ["-l", "other", "-lower"], ("exact",)),  # the jar's Arabic is Buckwalter transliteration
        ("sw", ["-l", "other", "-lower"], ("exact",)),
    ],
)
def test_each_language_gets_the_jar_setting_it_supports(code, arguments, modules):
    setting = meteor_setting(code)
    assert setting.arguments() == arguments
    assert setting.modules == modules


def test_a_paraphrase_table_beside_the_jar_brings_the_paraphrase_module_back():
    setting = meteor_setting("de", paraphrase_languages=frozenset({"en", "de"}))
    assert setting.arguments() == ["-l", "de", "-norm"]  # the jar's own default modules
    assert setting.modules == ("exact", "stem", "paraphrase")


def test_meteor_needs_the_language():
    with pytest.raises(ValueError, match="METEOR needs the captions' language"):
        score_tokens({1: ["a"]}, {1: [["a"]]}, metrics=["METEOR"])


@requires_java
@pytest.mark.parametrize("code", ["de", "fr", "es", "ru", "cs", "pt", "it", "sv", "tr", "zh", "th", "ar"])
def test_every_setting_runs_on_the_shipped_jar(code):
    # The jar refuses -norm where it has no normaliser and a paraphrase module without its table:
    # every language must get a setting the shipped jar accepts.
    report = score_texts(
        {1: "Ein Hund läuft am Strand", 2: "一只狗在海滩上"},
        {1: ["Ein Hund rennt am Strand", "Hunde am Meer"], 2: ["海滩上的一只狗"]},
        scheme="char" if code in ("zh", "th") else "whitespace",
        metrics=["METEOR"],
        language=code,
    )
    assert report.not_computed == {}
    assert 0 < report.corpus["METEOR"] < 1
    assert report.meteor_setting == meteor_setting(code).name


@requires_java
def test_a_language_the_jar_does_not_know_gets_exact_matching_only():
    # German stems "hunde" to "hund"; with -l other only identical tokens match.
    candidates = {1: ["zwei", "hunde", "am", "strand"]}
    references = {1: [["zwei", "hund", "am", "strand"]]}
    german = meteor_score(candidates, references, language="de")
    other = meteor_score(candidates, references, language="yo")
    assert other.setting.name == "meteor-1.5 other lower exact"
    assert german.result.score > other.result.score > 0
