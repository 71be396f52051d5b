"""The scorers: tokenisation and the text metrics (``text``, pure), CLIPScore (``clip``), signatures, and
the caches (CLIP models, embeddings) and reference sets they read. The jobs that run them are
``evaluation.runs``, ``evaluation.retrieval`` and ``evaluation.finetune``."""
