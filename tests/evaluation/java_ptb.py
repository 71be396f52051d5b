"""The reference: Stanford CoreNLP 3.4.1's PTBTokenizer run the way pycocoevalcap 1.2 runs it.

Shared by ``test_ptb_tokenizer.py`` and ``benchmarks/bench_ptb_tokenizer.py`` (which puts the project
root on ``sys.path``). Every function runs ONE JVM for all the captions it is given.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

try:
    from pycocoevalcap.tokenizer import ptbtokenizer
    from pycocoevalcap.tokenizer.ptbtokenizer import PUNCTUATIONS, PTBTokenizer
except ImportError:  # pragma: no cover - a test-only dependency
    ptbtokenizer = None
    PUNCTUATIONS = []
    PTBTokenizer = None

JAR = Path(ptbtokenizer.__file__).parent / "stanford-corenlp-3.4.1.jar" if ptbtokenizer else None


def java_missing_reason() -> str | None:
    """Why the Java reference cannot run here, or None when it can."""
    if ptbtokenizer is None:
        return "pycocoevalcap is not installed"
    if shutil.which("java") is None:
        return "java is not on PATH (the reference PTB tokenizer is a Java program)"
    if not JAR.exists():
        return f"the CoreNLP jar is missing at {JAR}"
    return None


def pycocoevalcap_tokens(texts: Sequence[str]) -> list[list[str]]:
    """pycocoevalcap's own ``PTBTokenizer().tokenize`` on ``texts`` (one caption per image, in order).

    Its result is one space-joined string per caption; split on spaces, as its ROUGE-L does.
    """
    captions = {index: [{"caption": text}] for index, text in enumerate(texts)}
    tokenized = PTBTokenizer().tokenize(captions)
    out = []
    for index in range(len(texts)):
        joined = tokenized.get(index, [""])[0]
        out.append(joined.split(" ") if joined else [])
    return out


def java_ptb_lines(texts: Sequence[str], *, lowercase: bool = True) -> list[list[str]]:
    """The jar's raw tokens per caption (punctuation kept), with ``-lowerCase`` or without.

    The captions are written as pycocoevalcap writes them (newlines replaced by spaces, joined with
    newlines, UTF-8) and the command is the same, ``-lowerCase`` aside.
    """
    command = ["java", "-cp", str(JAR), "edu.stanford.nlp.process.PTBTokenizer", "-preserveLines"]
    if lowercase:
        command.append("-lowerCase")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "captions.txt"
        path.write_bytes("\n".join(text.replace("\n", " ") for text in texts).encode())
        completed = subprocess.run([*command, str(path)], capture_output=True, check=True, timeout=600)
    lines = completed.stdout.decode().split("\n")
    lines += [""] * (len(texts) - len(lines))
    return [line.split(" ") if line else [] for line in lines[: len(texts)]]


def java_ptb_tokens(texts: Sequence[str], *, lowercase: bool = True) -> list[list[str]]:
    """As :func:`java_ptb_lines`, then pycocoevalcap's punctuation removal."""
    drop = set(PUNCTUATIONS)
    return [
        [token for token in line if token not in drop] for line in java_ptb_lines(texts, lowercase=lowercase)
    ]
