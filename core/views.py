"""The views every role shares: the home page that sends each role to its own area, login (rate-limited
through the shared cache), the error pages and the health check."""

from __future__ import annotations

from django.contrib.auth import login as auth_login
from django.contrib.auth import views as auth_views
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse, HttpResponsePermanentRedirect, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.templatetags.static import static

from core.access import areas_for, home_for
from core.login import LoginForm, login_limit, retry_if_connection_dropped


class LoginView(auth_views.LoginView):
    """Django's login, limited per address and per user name (as authentication reads it) in the
    shared cache, and retried once when the database connection drops under it."""

    template_name = "registration/login.html"
    redirect_authenticated_user = True
    form_class = LoginForm

    def post(self, request, *args, **kwargs):
        decision = login_limit(request)
        if not decision.allowed:
            # An unbound form: rendering a bound one would validate it, and so check the password.
            form = self.form_class(request=request, initial={"username": request.POST.get("username", "")})
            response = render(request, self.template_name, {"form": form, "limited": True}, status=429)
            response["Retry-After"] = str(decision.retry_after)
            return response
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        # The password was checked (PBKDF2, no database); a connection killed meanwhile must not
        # throw that away: login() is safe to repeat, so it gets one retry on a new connection.
        user = form.get_user()
        retry_if_connection_dropped(lambda: auth_login(self.request, user))
        return HttpResponseRedirect(self.get_success_url())


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
