"""Retrieval checks: per language, how well a CLIP model retrieves images from human captions and back.

``services`` plans, stores, enqueues and resumes a check; ``jobs`` computes one chunk (images, then
texts, embedded with the shared caches, then the recall of each language); ``selectors`` reads
checks and gives the per-language verdict ("CLIP-based scores unreliable here") for a model;
``tasks`` holds the Celery tasks.
"""
