from django.apps import AppConfig


class CoreConfig(AppConfig):
    """What every app shares: base model, domain errors, access rules, scales, CSP, login."""

    name = "core"
    verbose_name = "Core"

    def ready(self):
        # Before any URLconf is loaded: the urls.py modules use <id:…> and <code:…>.
        from core.converters import converters_register

        converters_register()
