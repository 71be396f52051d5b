"""The Celery application. Settings come from Django settings with the CELERY_ prefix."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("captioneval")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each app's tasks.py, and the metric-run tasks, which live with the metrics (evaluation/metrics/tasks.py).
# Task names are explicit on each task, so moving a module never renames a queued task.
app.autodiscover_tasks()
app.autodiscover_tasks(
    ["evaluation.metrics", "evaluation.metrics.retrieval_checks", "evaluation.metrics.finetune"]
)
