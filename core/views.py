"""The views every role shares: the home page that sends each role to its own area, login (rate-limited
through the shared cache), the error pages and the health check."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.utils.decorators import method_decorator
from django_ratelimit.decorators import ratelimit

from core.access import areas_for, home_for


@method_decorator(
    ratelimit(key="ip", rate=lambda g, r: settings.LOGIN_RATE_LIMIT, method="POST", block=False),
    name="dispatch",
)
@method_decorator(
    ratelimit(key="post:username", rate=lambda g, r: settings.LOGIN_RATE_LIMIT, method="POST", block=False),
    name="dispatch",
)
class LoginView(auth_views.LoginView):
    """Django's login, rate-limited per address and per user name through the shared cache."""

    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        if getattr(request, "limited", False):
            response = render(
                request,
                self.template_name,
                {"form": self.get_form(), "limited": True},
                status=429,
            )
            response["Retry-After"] = "60"
            return response
        return super().post(request, *args, **kwargs)


def healthz(request):
    return HttpResponse("ok", content_type="text/plain")


def home(request):
    """``/``: anonymous visitors log in; everyone else goes to the page that is theirs (project managers
    to the admin, annotators to their work, researchers to the research home). An account with no role
    gets a page that says so instead of somebody else's 403."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    target = home_for(request.user)
    if target is None:
        return render(request, "core/no_role.html", status=403)
    return redirect(target)


def nav(request) -> dict:
    """Context processor: the areas the signed-in user may open, for the top bar (and nothing else)."""
    user = getattr(request, "user", None)
    return {"nav_areas": areas_for(user) if user is not None else []}


def favicon(request):
    """``/favicon.ico``, which browsers ask for on pages that name no icon (the admin's). The static
    URL is looked up per request: with the manifest storage of production it exists only after
    ``collectstatic``."""
    return HttpResponsePermanentRedirect(static("img/favicon.svg"))
