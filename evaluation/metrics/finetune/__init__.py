"""Fine-tuning CLIP on the platform's captions and ratings (seed 001, sec. 3): plan and store a run
(:mod:`.services`), train it on a worker (:mod:`.jobs`, :mod:`.tasks`); the training itself is the pure
:mod:`evaluation.metrics.clip.finetune`."""
