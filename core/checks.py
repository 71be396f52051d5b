"""Deploy checks (``manage.py check --deploy``): the rules of :mod:`core.deploy` applied to the settings
in use, whatever the settings module, so that a deployment that does not go through
``config.settings.production`` (which refuses these values at import) is told too: production refuses to
start with DEBUG on or a missing or insecure SECRET_KEY."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register

from core import deploy

# The platform's (django-csp's, with the header built once) or django-csp's own: either sends the policy.
CSP_MIDDLEWARE = "core.middleware.CachedCSPMiddleware"
CSP_MIDDLEWARES = (CSP_MIDDLEWARE, "csp.middleware.CSPMiddleware")


@register(Tags.security, deploy=True)
def deploy_settings_check(app_configs=None, **kwargs) -> list[Error]:
    caches = settings.CACHES.get("default", {})
    csp = getattr(settings, "CONTENT_SECURITY_POLICY", None) or {}
    csp_problem = deploy.csp_problem(csp.get("DIRECTIVES"))
    if not csp_problem and not any(name in settings.MIDDLEWARE for name in CSP_MIDDLEWARES):
        csp_problem = f"CONTENT_SECURITY_POLICY is not sent: {CSP_MIDDLEWARE} is not in MIDDLEWARE."
    problems = {
        "captioneval.E001": deploy.secret_key_problem(
            settings.SECRET_KEY, insecure_default=getattr(settings, "INSECURE_DEFAULT_SECRET_KEY", "")
        ),
        "captioneval.E002": deploy.allowed_hosts_problem(settings.ALLOWED_HOSTS),
        "captioneval.E003": csp_problem,
        "captioneval.E004": deploy.database_problem(settings.DATABASES["default"]["ENGINE"]),
        "captioneval.E005": deploy.celery_problem(
            getattr(settings, "CELERY_BROKER_URL", ""), getattr(settings, "CELERY_TASK_ALWAYS_EAGER", True)
        ),
        "captioneval.E006": deploy.cache_problem(caches.get("BACKEND", ""), caches.get("LOCATION", "")),
    }
    return [Error(problem, id=check_id) for check_id, problem in problems.items() if problem]
