"""The web tier's cost per request (issue 24): what an annotator's request waits on, and how many
queries each endpoint of the annotator path makes. The load itself is measured by
benchmarks/load_annotators.py; these tests keep what it found from coming back."""

from __future__ import annotations

import importlib
import threading
import time

import pytest

from annotation import caption_checks as cc


@pytest.fixture
def cold_identifier(monkeypatch):
    """The caption checks' language identifier as a fresh server process has it: not loaded yet."""
    monkeypatch.setattr(cc, "_IDENTIFIER", None)


def test_threads_reaching_their_first_submit_together_load_the_language_model_once(
    cold_identifier, monkeypatch
):
    # A cold server process: its 8 threads all submit at once. The model took half a second of CPU
    # per load, and each thread loaded its own: the first submits waited seconds behind each other.
    from py3langid import langid

    real = langid.LanguageIdentifier.from_model_file
    loads = []

    def slow_load(*args, **kwargs):
        loads.append(1)
        time.sleep(0.2)
        return real(*args, **kwargs)

    monkeypatch.setattr(langid.LanguageIdentifier, "from_model_file", staticmethod(slow_load))
    answers = []
    threads = [
        threading.Thread(target=lambda: answers.append(cc.language_verdict("Ein Hund am Strand", "de")))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1
    assert len(answers) == 8 and len(set(answers)) == 1


def test_the_web_server_process_loads_the_language_model_as_it_starts(cold_identifier):
    import config.wsgi

    importlib.reload(config.wsgi)
    assert cc._IDENTIFIER is not None
