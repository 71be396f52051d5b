"""The evaluation admin, one module per area: metric runs, reference and image sets, the language
statistics page, and the result panels that ``apps.EvaluationConfig.ready`` adds to campaign pages."""

from evaluation.admin import clip_checks, finetune, hours, reports, retrieval, runs, sets, statistics  # noqa: F401  (registers the model admins)
