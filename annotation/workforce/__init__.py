"""The workforce: recruitment links, crowd participants, onboarding (tutorial of gold items) and pilots.

``models`` (imported by ``annotation.models``), ``services`` (writes), ``selectors`` (reads and the
one gate every batch request asks: :func:`annotation.workforce.selectors.work_problem`), ``views``
and ``urls`` (the participant's pages), ``admin`` (entry links, onboarding settings, pilot review),
``scoring`` (pure: is a tutorial answer right, the verdict, whether a constant answer passes a gold
set, each participant's order of the items).
"""
