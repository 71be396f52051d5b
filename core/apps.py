from django.apps import AppConfig
from django.core import checks
from django.db.models.signals import post_migrate


class CoreConfig(AppConfig):
    """What every app shares: base model, domain errors, access rules, scales, CSP, login."""

    name = "core"
    verbose_name = "Core"

    def ready(self):
        checks.register(check_login_rate_limit)
        from core import checks as deploy_checks  # noqa: F401  (registers the deploy checks)

        # Before any URLconf is loaded: the urls.py modules use <id:…> and <code:…>.
        from core.converters import converters_register

        converters_register()

        # The role groups follow the models: every migrate (a new deployment, or an upgrade that adds
        # a model, such as the retrieval checks) re-grants each role exactly its listed permissions.
        post_migrate.connect(roles_after_migrate, dispatch_uid="core.roles_after_migrate")


def roles_after_migrate(sender, using="default", **kwargs):
    """``post_migrate``: once per migrate (when core's turn comes), create or update the role groups.
    ``roles_ensure`` creates the permission rows it needs first, so app order does not matter."""
    if sender.name != "core":
        return
    from core.access import roles_ensure

    roles_ensure()


RATE_SETTINGS = ("LOGIN_RATE_LIMIT", "SUBMISSION_REFUSED_RATE")


def check_login_rate_limit(app_configs, **kwargs):
    """A mistyped rate (``LOGIN_RATE_LIMIT``, ``SUBMISSION_REFUSED_RATE``) stops the start instead of
    failing every login or upload."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    from core.ratelimit import Rate

    errors = []
    for name in RATE_SETTINGS:
        try:
            Rate.parse(getattr(settings, name, "1/m"))
        except ImproperlyConfigured as error:
            errors.append(checks.Error(str(error), id="core.E001", obj=name))
    return errors
