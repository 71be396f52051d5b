"""Retrieval checks: per language, how well a CLIP model retrieves images from human captions and back.

A job kind: ``plan`` validates, stores, enqueues and resumes a check; ``compute`` computes one chunk
(images, then texts, embedded with the shared caches, then the recall of each language) and stores it;
``selectors`` reads checks and gives the per-language verdict ("CLIP-based scores unreliable here") for a
model; ``tasks`` registers the kind with the job engine and holds its Celery task.
"""
