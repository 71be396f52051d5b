"""Zero-shot classification (seed 004, Babel-ImageNet) and foil (seed 001, VALSE) checks of a CLIP model.

One job kind on the engine (:mod:`core.jobs`) with a ``probe`` per check: ``files`` and ``measures``
are plain Python (the file formats and the numbers); ``plan`` validates an import and stores a check
with its chunks; ``compute`` embeds (through the caches metric runs share) and measures one language;
``selectors`` reads checks and gives each language's probe ratios to English for the trust verdict.
"""
