"""Fine-tuning CLIP on the platform's captions and ratings (seed 001, sec. 3), as a job kind whose job is
its own unit: ``plan`` gathers the data, stores, enqueues and resumes a run; ``compute`` trains it and
registers the model; ``selectors`` reads runs and registered models; ``tasks`` registers the kind. The
training itself is the pure :mod:`evaluation.metrics.clip.finetune`."""
