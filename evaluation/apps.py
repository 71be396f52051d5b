from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self):
        # The campaign admin belongs to annotation; evaluation only adds its result panels to it.
        from evaluation.admin.results import campaign_panels_register

        campaign_panels_register()

        # Stored reports: the default report is queued when a metric run succeeds ...
        from core.jobs.kinds import on_job_succeeded
        from evaluation.research.reports import tasks as report_tasks  # noqa: F401 (sends queued reports)
        from evaluation.research.reports.stored import report_precompute_listener

        on_job_succeeded(report_precompute_listener)
        # ... and when a side-by-side campaign closes.
        from django.db.models.signals import post_save

        from annotation.models import Campaign
        from evaluation.research.reports.stored import report_precompute_on_campaign

        post_save.connect(report_precompute_on_campaign, sender=Campaign, dispatch_uid="report-on-campaign")
