"""METEOR through the METEOR 1.5 jar, exactly as the COCO evaluation server runs it.

The reference is pycocoevalcap 1.2 ``meteor/meteor.py``: one JVM, ``java -jar -Xmx2G
meteor-1.5.jar - - -stdio -l en -norm``, and its stdio protocol:

- ``SCORE ||| ref 1 ||| ... ||| ref n ||| hypothesis`` answers one line of sufficient statistics;
- ``EVAL ||| stats 1 ||| ... ||| stats k`` answers k lines (each segment's score), then one line with
  the score of the summed statistics. That last line is the corpus score (METEOR pools its matches
  over the corpus, like BLEU), not the mean of the per-caption scores.

The jar splits every line on ``|||`` and reads lines, so a caption holding ``|||`` or a line break
would shift or cut the protocol. pycocoevalcap deletes ``|||`` from the hypothesis; here every
caption, reference or hypothesis, has ``|||`` deleted and carriage returns / line feeds turned into
spaces, then whitespace collapsed (:func:`protocol_text`). Tokens joined by single spaces, as the
metrics get them, pass unchanged, so the numbers are pycocoevalcap's.

This module imports no Django: the jar and Java are passed in (:class:`MeteorConfig`), from the
``METEOR_JAR`` / ``METEOR_JAVA`` settings in the Django layer, from the installed pycocoevalcap package
and ``java`` on the PATH otherwise. It is not pure in the sense of the other metric modules (it runs
a subprocess): each scoring call owns one JVM, or a :class:`MeteorSession` one for many calls in one
language, started and always reaped here.

Languages (see :func:`meteor_setting` and the table in docs/metrics.md, "METEOR"): the jar knows en, cz, de, es, fr, ru
with its own normaliser (``-norm``), and da, fi, hu, it, nl, no, pt, ro, se, tr with a stemmer but no
normaliser (``-lower``; the platform's preprocessing already lowercased and removed punctuation).
pycocoevalcap ships only the English paraphrase table, so the paraphrase module is used where its
table is beside the jar (``data/paraphrase-<lang>.gz``) and left out otherwise. Every other language
gets ``-l other``: exact matching only, with the jar's language-independent parameters.
"""

from __future__ import annotations

import contextlib
import importlib.util
import queue
import re
import subprocess
import threading
import time
from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import MetricResult

__all__ = [
    "JAVA_INSTALL_HINT",
    "MeteorConfig",
    "MeteorError",
    "MeteorFailed",
    "MeteorResult",
    "MeteorSession",
    "MeteorSetting",
    "MeteorUnavailable",
    "default_jar",
    "meteor_score",
    "meteor_setting",
    "protocol_text",
    "resample_statistics",
]

JAR_NAME = "meteor-1.5.jar"
JAVA_INSTALL_HINT = (
    "METEOR runs the METEOR 1.5 jar and needs a Java runtime (8 or newer): on Debian or Ubuntu "
    "`apt-get install default-jre-headless`; or set METEOR_JAVA to the java executable"
)
DEFAULT_TIMEOUT = 900.0
STDERR_LINES = 20

# The jar's language names (its -l values) for ISO 639-1 codes, and what it supports for each.
_NORMALISED = {"en": "en", "cs": "cz", "de": "de", "es": "es", "fr": "fr", "ru": "ru"}
_STEMMED_ONLY = {
    "da": "da",
    "fi": "fi",
    "hu": "hu",
    "it": "it",
    "nl": "nl",
    "no": "no",
    "nb": "no",
    "nn": "no",
    "pt": "pt",
    "ro": "ro",
    "sv": "se",
    "tr": "tr",
}
# Default modules of the jar per language (edu.cmu.meteor.util.Constants.getModules), before the
# paraphrase module is dropped where its table is missing. Synonyms (WordNet) exist only for English.
_JAR_MODULES = {
    "en": ("exact", "stem", "synonym", "paraphrase"),
    "cz": ("exact", "paraphrase"),
    "de": ("exact", "stem", "paraphrase"),
    "es": ("exact", "stem", "paraphrase"),
    "fr": ("exact", "stem", "paraphrase"),
    "ru": ("exact", "stem", "paraphrase"),
}


class MeteorError(Exception):
    """METEOR could not be computed; the message says why. Other metrics are not affected."""


class MeteorUnavailable(MeteorError):
    """Java or the jar is missing: nothing was run."""


class MeteorFailed(MeteorError):
    """The JVM started but did not answer as the protocol says (crash, timeout, garbage)."""


@dataclass(frozen=True)
class MeteorSetting:
    """How the jar is run for one language: ``-l language``, normaliser, modules."""

    language: str  # the jar's -l value
    normalise: bool  # -norm (the jar's tokeniser and lowercasing) or -lower
    modules: tuple[str, ...]
    explicit_modules: bool  # pass -m (the jar's default modules include a table that is missing)

    def arguments(self) -> list[str]:
        args = ["-l", self.language, "-norm" if self.normalise else "-lower"]
        if self.explicit_modules:
            args += ["-m", " ".join(self.modules)]
        return args

    @property
    def name(self) -> str:
        """A short stable description, e.g. ``meteor-1.5 en norm exact+stem+synonym+paraphrase``."""
        return f"meteor-1.5 {self.language} {'norm' if self.normalise else 'lower'} {'+'.join(self.modules)}"


def _primary(language_code: str) -> str:
    return language_code.strip().replace("_", "-").split("-", 1)[0].lower()


def meteor_setting(
    language_code: str, *, paraphrase_languages: frozenset[str] = frozenset({"en"})
) -> MeteorSetting:
    """The jar setting for a BCP 47 / POSIX language code (only the primary subtag counts).

    ``paraphrase_languages``: the jar's language names whose paraphrase table is available (see
    :meth:`MeteorConfig.paraphrase_languages`). English with every table present is exactly
    pycocoevalcap's ``-l en -norm``.
    """
    primary = _primary(language_code)
    if primary in _NORMALISED:
        jar_language = _NORMALISED[primary]
        default = _JAR_MODULES[jar_language]
        modules = tuple(m for m in default if m != "paraphrase" or jar_language in paraphrase_languages)
        return MeteorSetting(jar_language, True, modules, explicit_modules=modules != default)
    if primary in _STEMMED_ONLY:
        return MeteorSetting(_STEMMED_ONLY[primary], False, ("exact", "stem"), explicit_modules=False)
    return MeteorSetting("other", False, ("exact",), explicit_modules=False)


def default_jar() -> Path | None:
    """The jar inside the installed pycocoevalcap package, or None when it is not installed."""
    spec = importlib.util.find_spec("pycocoevalcap")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "meteor" / JAR_NAME


@dataclass(frozen=True)
class MeteorConfig:
    """Where the jar and Java are, and how long one scoring call may take (seconds)."""

    jar: Path | str | None = None  # None: pycocoevalcap's
    java: str = "java"
    timeout: float = DEFAULT_TIMEOUT

    def jar_path(self) -> Path:
        """The jar to run; raises :class:`MeteorUnavailable` when there is none."""
        jar = Path(self.jar) if self.jar else default_jar()
        if jar is None:
            raise MeteorUnavailable(
                "METEOR needs the METEOR 1.5 jar, which ships with pycocoevalcap (pip install "
                "pycocoevalcap==1.2, in requirements.txt); or set METEOR_JAR to a meteor-1.5.jar"
            )
        if not jar.is_file():
            raise MeteorUnavailable(f"the METEOR jar {jar} does not exist (METEOR_JAR)")
        return jar

    def paraphrase_languages(self) -> frozenset[str]:
        """The jar's language names whose paraphrase table lies beside the jar (``data/paraphrase-xx.gz``)."""
        try:
            folder = self.jar_path().parent / "data"
        except MeteorUnavailable:
            return frozenset()
        found = (re.fullmatch(r"paraphrase-(.+)\.gz", p.name) for p in folder.glob("paraphrase-*.gz"))
        return frozenset(m.group(1) for m in found if m)


@dataclass(frozen=True)
class MeteorResult:
    result: MetricResult
    setting: MeteorSetting
    replicates: np.ndarray | None = field(default=None, compare=False, repr=False)  # one per resample


_PIPES = re.compile(r"\|\|\|")
_LINE_BREAKS = re.compile(r"[\r\n]")


def protocol_text(text: str) -> str:
    """A caption as one protocol field: ``|||`` deleted, line breaks to spaces, whitespace collapsed.

    Deleting every ``|||`` leaves fewer than three pipes in any run of pipes, so none can re-form.
    """
    return " ".join(_LINE_BREAKS.sub(" ", _PIPES.sub("", text)).split())


def meteor_score(
    candidates: Mapping[Hashable, Sequence[str]],
    references: Mapping[Hashable, Sequence[Sequence[str]]],
    *,
    language: str,
    config: MeteorConfig | None = None,
    resamples: np.ndarray | None = None,
) -> MeteorResult:
    """METEOR of tokenised candidates (key -> tokens) against references (key -> token lists).

    The tokens are joined by spaces, as pycocoevalcap feeds the jar its PTB-tokenised text. Per
    caption and corpus scores are the jar's (see the module docstring). ``resamples``: draw counts
    (one row per resample, one column per candidate in key order); each resample's corpus score, the
    jar's score of its summed segment statistics (:func:`resample_statistics`), is in ``replicates``
    (same JVM, one more EVAL line). One JVM for the call; a :class:`MeteorSession` keeps one for
    many. Raises :class:`MeteorUnavailable` (no Java, no jar) or :class:`MeteorFailed` (crash,
    timeout, protocol), with the JVM's last stderr lines in the message; ``ValueError`` for an empty
    candidate set.
    """
    with MeteorSession(language, config) as session:
        return session.score(candidates, references, resamples=resamples)


class MeteorSession:
    """One METEOR JVM kept for many scoring calls in one language (a scoring unit of the evaluation server
    scores every reference count, both halves of a test phase and the human comparison: 6 to 9 calls,
    each of which started a JVM of its own).

    Each call is the protocol of :func:`meteor_score` on the open JVM, with its own timeout. A segment's
    statistics and score depend only on its hypothesis and references, so the session keeps each SCORE
    line's statistics and segment score and asks the jar once per distinct line: a half of the phase
    scored after the whole costs one EVAL line of its summed statistics (its corpus score, as
    :func:`resample_statistics` sums them for the replicates) beside the resamples' lines. The JVM
    starts at the first call and is reaped on exit (or after a failure, when the next call starts a new
    one). One call at a time. (A second JVM sharing the lines was tried: no faster on two cores, where
    one JVM's compiler and collector threads already use the second.)"""

    def __init__(self, language: str, config: MeteorConfig | None = None):
        self.language = language
        self.config = config or MeteorConfig()
        self._jvm: _Jvm | None = None
        self._memo: dict[str, str] = {}  # SCORE line -> its statistics
        self._segments: dict[str, float] = {}  # SCORE line -> its segment score
        self._setting: MeteorSetting | None = None
        self.starts = 0  # JVMs started (for tests and benchmarks)

    def __enter__(self) -> MeteorSession:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        if self._jvm is not None:
            jvm, self._jvm = self._jvm, None
            jvm.__exit__(None, None, None)

    def _open(self) -> _Jvm:
        """The running JVM (started if need be), given the call's deadline."""
        if self._jvm is None:
            jar = self.config.jar_path()
            self._setting = meteor_setting(
                self.language, paraphrase_languages=self.config.paraphrase_languages()
            )
            command = [self.config.java, "-Xmx2G", "-jar", str(jar), "-", "-", "-stdio"]
            command += self._setting.arguments()
            self._jvm = _Jvm(command, cwd=jar.parent, timeout=self.config.timeout).__enter__()
            self.starts += 1
        self._jvm.arm(self.config.timeout)
        return self._jvm

    @staticmethod
    def _statistics(jvm: _Jvm, lines: list[str]) -> list[str]:
        # All lines in one write: the reader thread drains the answers meanwhile, so the jar never
        # waits for the next batch (writing 500 and reading their answers before the next left it idle
        # for 40% of the time).
        jvm.write(lines)
        return [jvm.read_stats() for _ in lines]

    def score(
        self,
        candidates: Mapping[Hashable, Sequence[str]],
        references: Mapping[Hashable, Sequence[Sequence[str]]],
        *,
        resamples: np.ndarray | None = None,
    ) -> MeteorResult:
        """As :func:`meteor_score`, on this session's JVM."""
        if not candidates:
            raise ValueError("no candidate captions to score")
        keys = list(candidates)
        lines = []
        for key in keys:
            refs = [protocol_text(" ".join(ref)) for ref in references[key]]
            lines.append(" ||| ".join(["SCORE", *refs, protocol_text(" ".join(candidates[key]))]))
        try:
            jvm = self._open()
            fresh = list(dict.fromkeys(line for line in lines if line not in self._memo))
            self._memo.update(zip(fresh, self._statistics(jvm, fresh), strict=True))
            stats = [self._memo[line] for line in lines]
            replicates = None
            if all(line in self._segments for line in lines):
                # Every segment's score is known (a half of a corpus scored before): the corpus score is
                # the jar's score of the summed statistics, one line, sent with the resamples' sums.
                rows = np.ones((1, len(lines)), dtype=np.int64)
                if resamples is not None:
                    rows = np.vstack([rows, np.asarray(resamples, dtype=np.int64)])
                totals = resample_statistics(stats, rows)
                jvm.write([" ||| ".join(["EVAL", *totals])])
                answers = [jvm.read_score() for _ in totals]
                jvm.read_score()  # their aggregate, not used
                corpus = answers[0]
                per_caption = [self._segments[line] for line in lines]
                if resamples is not None:
                    replicates = np.array(answers[1:])
            else:
                jvm.write([" ||| ".join(["EVAL", *stats])])
                per_caption = [jvm.read_score() for _ in keys]
                corpus = jvm.read_score()
                self._segments.update(zip(lines, per_caption))
                if resamples is not None:
                    totals = resample_statistics(stats, resamples)
                    jvm.write([" ||| ".join(["EVAL", *totals])])
                    # One score per summed line (the score of that resample's corpus), then their aggregate.
                    replicates = np.array([jvm.read_score() for _ in totals])
                    jvm.read_score()
        except MeteorFailed:
            self.close()  # a JVM that broke the protocol is not asked again
            raise
        return MeteorResult(
            result=MetricResult(name="METEOR", score=corpus, per_caption=dict(zip(keys, per_caption))),
            setting=self._setting,
            replicates=replicates,
        )


def resample_statistics(stats: Sequence[str], resamples: np.ndarray) -> list[str]:
    """The jar's statistics of each resampled corpus, as one line each: its segments' SCORE answers
    summed as the jar's ``MeteorStats.addStats`` sums them for an EVAL line, with each segment counted
    as often as it is drawn.

    A line holds: test and reference length, test and reference function words, four stages of (test
    content, reference content, test function, reference function) matches, chunks, test and reference
    word matches. ``addStats`` adds every field, except that a segment matched completely in one chunk
    (all test and reference words matched, chunks = 1) adds no chunk. Every field is a count, so the
    float64 sums are exact, and the jar reads them back as they are written.
    """
    table = np.array([[float(x) for x in line.split()] for line in stats], dtype=np.float64)
    chunks = table.shape[1] - 3
    test_matches = table[:, 4:chunks:4].sum(axis=1) + table[:, 6:chunks:4].sum(axis=1)
    reference_matches = table[:, 5:chunks:4].sum(axis=1) + table[:, 7:chunks:4].sum(axis=1)
    whole = (test_matches == table[:, 0]) & (reference_matches == table[:, 1]) & (table[:, chunks] == 1)
    table[whole, chunks] = 0.0
    totals = np.asarray(resamples, dtype=np.float64) @ table
    return [" ".join(map(repr, row)) for row in totals.tolist()]


_EOF = object()
_STATS = re.compile(r"^-?\d+(\.\d+)?(E-?\d+)?( -?\d+(\.\d+)?(E-?\d+)?)*$")


class _Jvm:
    """One METEOR JVM: a reader thread per output pipe, a deadline that kills it, always reaped."""

    def __init__(self, command: list[str], *, cwd: Path, timeout: float):
        self.command, self.cwd, self.timeout = command, cwd, timeout
        self.lines: queue.Queue = queue.Queue()
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.timed_out = False

    def __enter__(self) -> _Jvm:
        try:
            self.process = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                encoding="utf-8",
                bufsize=1,
            )
        except FileNotFoundError:
            raise MeteorUnavailable(
                f"Java was not found ({self.command[0]!r}). {JAVA_INSTALL_HINT}"
            ) from None
        except PermissionError:
            raise MeteorUnavailable(
                f"Java ({self.command[0]!r}) cannot be executed. {JAVA_INSTALL_HINT}"
            ) from None
        self.killer: threading.Timer | None = None
        self.arm(self.timeout)
        self.readers = [
            threading.Thread(
                target=self._pump, args=(self.process.stdout, self.lines.put, True), daemon=True
            ),
            threading.Thread(
                target=self._pump, args=(self.process.stderr, self.stderr.append, False), daemon=True
            ),
        ]
        for reader in self.readers:
            reader.start()
        return self

    def arm(self, timeout: float) -> None:
        """Give the JVM ``timeout`` seconds from now (a new deadline for each call of a session)."""
        if self.killer is not None:
            self.killer.cancel()
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.killer = threading.Timer(timeout, self._expire)
        self.killer.daemon = True
        self.killer.start()

    def __exit__(self, *exc_info) -> None:
        if self.killer is not None:
            self.killer.cancel()
        with contextlib.suppress(OSError):  # a broken pipe when the JVM is already gone
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for reader in self.readers:
            reader.join(timeout=5)

    def _expire(self) -> None:
        self.timed_out = True
        self.process.kill()

    @staticmethod
    def _pump(stream, put, mark_end: bool) -> None:
        try:
            for line in stream:
                put(line.rstrip("\r\n"))
        except (OSError, ValueError):  # closed under us when the process is killed
            pass
        finally:
            if mark_end:
                put(_EOF)

    def _failure(self, what: str) -> MeteorFailed:
        if self.timed_out:
            return MeteorFailed(f"METEOR took longer than {self.timeout:g} s and was stopped ({what})")
        # A broken pipe or an early end of output means the JVM is ending: give it a moment to exit and
        # the stderr reader time to take its last words, so the message says why.
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=2)
        code = self.process.poll()
        if code is not None:
            self.readers[1].join(timeout=2)
        tail = " | ".join(line for line in self.stderr if line.strip())[-1500:]
        exited = f"the Java process exited with status {code}" if code is not None else "the Java process"
        return MeteorFailed(f"METEOR failed: {exited} {what}" + (f"; it said: {tail}" if tail else ""))

    def write(self, lines: list[str]) -> None:
        try:
            self.process.stdin.write("".join(f"{line}\n" for line in lines))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._failure("while reading captions") from None

    def _read(self, what: str) -> str:
        remaining = self.deadline - time.monotonic()
        try:
            line = self.lines.get(timeout=max(remaining, 0) + 5)
        except queue.Empty:
            self._expire()
            raise self._failure(what) from None
        if line is _EOF:
            raise self._failure(what)
        return line

    def read_stats(self) -> str:
        line = self._read("before answering every SCORE line").strip()
        if not _STATS.match(line):
            raise MeteorFailed(f"METEOR answered a SCORE line with {line[:200]!r} instead of statistics")
        return line

    def read_score(self) -> float:
        line = self._read("before answering the EVAL line").strip()
        try:
            return float(line)
        except ValueError:
            raise MeteorFailed(
                f"METEOR answered the EVAL line with {line[:200]!r} instead of a score"
            ) from None
