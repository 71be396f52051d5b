"""The Celery application. Settings come from Django settings with the CELERY_ prefix."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("captioneval")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each app's tasks.py; the job engine's sweep (core/jobs/tasks.py); and each job kind's tasks.py, which
# registers the kind with the engine (the sweep covers every kind registered in the worker).
# Task names are explicit on each task, so moving a module never renames a queued task.
app.autodiscover_tasks()
app.autodiscover_tasks(
    [
        "core.jobs",
        "evaluation.runs",
        "evaluation.retrieval",
        "evaluation.finetune",
        "evaluation.clip_checks",
        "evaluation.research.reports",
        "challenges.scoring",
    ]
)
