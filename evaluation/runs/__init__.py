"""Metric runs as a job kind: ``plan`` validates, stores, enqueues and resumes a run; ``compute`` scores one
chunk and stores it; ``selectors`` reads runs, their chunks, references and captions; ``tasks`` registers
the kind with the job engine and holds its Celery task."""
