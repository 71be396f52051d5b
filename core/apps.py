from django.apps import AppConfig


class CoreConfig(AppConfig):
    """What every app shares: base model, domain errors, access rules, scales, CSP, login."""

    name = "core"
    verbose_name = "Core"

    def ready(self):
        from core import checks  # noqa: F401  (registers the deploy checks)
