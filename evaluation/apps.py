from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self):
        # The campaign admin belongs to annotation; evaluation only adds its result panels to it.
        from evaluation.admin.results import campaign_panels_register

        campaign_panels_register()
