"""The views every role shares: login (rate-limited through the shared cache) and the health check."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpResponse
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django_ratelimit.decorators import ratelimit


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
