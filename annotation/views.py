"""Annotator pages. Thin: check the role, call one service or selector, render."""

from __future__ import annotations

import mimetypes
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from django.views.defaults import page_not_found
from django.views.i18n import JavaScriptCatalog

from annotation import guidelines, interface
from annotation.assignment.engine import batch_request, batch_start_problem
from annotation.forms import InterfaceLanguageForm
from annotation.models import BatchStage, CampaignKind
from annotation.screen_rows import screen1_rows, screen2_rows, sxs_rows, verification_rows
from annotation.selectors import (
    annotator_for_user,
    batch_of,
    dashboard_cards,
    held_context,
    image_visible_to,
)
from annotation.services.annotators import annotator_interface_language_set
from annotation.workforce.selectors import completion_for, hold_of
from core.access import is_annotator, role_required
from core.errors import DomainError, NotFound
from core.scales import RATING, SXS


def _not_annotator(request):
    return render(request, "annotation/not_annotator.html", status=403)


def annotator_required(view):
    """Only annotators (``core.access.is_annotator``) reach the annotation pages; anyone else gets
    403 with a page that says why, anonymous visitors go to the login page.

    Every answer is ``Cache-Control: no-store``: Back after a submit, or a restored tab, must
    ask the server again and never show a batch's screen as it was before."""

    @never_cache
    @role_required(is_annotator, denied=_not_annotator)
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        request.annotator = annotator_for_user(request.user)
        try:
            return view(request, *args, **kwargs)
        except Http404 as exc:
            # Rendered here, not left to Django's handler, so that never_cache marks the refusal too.
            return page_not_found(request, exc)

    return wrapper


@annotator_required
@require_GET
def dashboard(request):
    return render(request, "annotation/dashboard.html", {"cards": dashboard_cards(request.annotator)})


@annotator_required
@require_POST
def campaign_work(request, campaign_id: int):
    try:
        batch, _created = batch_request(annotator=request.annotator, campaign_id=campaign_id)
    except NotFound:
        raise Http404 from None
    except DomainError as exc:
        # Not the error page: back to the dashboard, whose cards say what can start, with the reason on top.
        messages.warning(request, exc.message)
        return redirect("annotation:dashboard")
    # Straight to the right screen: one round trip less than via batch_detail (each screen
    # re-reads the batch and redirects itself if its stage changed meanwhile).
    return redirect(_screen_of(batch), batch_id=batch.pk)


def _screen_of(batch) -> str:
    """The URL name of the screen an open batch is on."""
    if batch.campaign.kind == CampaignKind.SIDE_BY_SIDE:
        return "annotation:sxs"
    if batch.campaign.kind == CampaignKind.RATING:
        return "annotation:verify"
    return "annotation:screen2" if batch.writing_opened_at is not None else "annotation:screen1"


@annotator_required
@require_GET
def batch_detail(request, batch_id: int):
    batch = batch_of(request.annotator, batch_id)
    hold = hold_of(batch) if batch.stage == BatchStage.SUBMITTED else None
    if hold is not None:
        # Stored, but too little work to count (annotation.workforce.counting): say so, and what next.
        interface.use_campaign_language(request, batch.campaign)
        return render(request, "annotation/workforce/held.html", held_context(hold))
    if batch.stage == BatchStage.SUBMITTED and completion_for(batch) is not None:
        # Came through an entry link with a completion code or URL (annotation.workforce).
        return redirect("annotation:completion", batch_id=batch.pk)
    if batch.stage == BatchStage.SUBMITTED:
        interface.use_campaign_language(request, batch.campaign)
        start_problem = batch_start_problem(annotator=request.annotator, campaign=batch.campaign)
        return render(request, "annotation/submitted.html", {"batch": batch, "start_problem": start_problem})
    return redirect(_screen_of(batch), batch_id=batch.pk)


def _screen_context(request, batch):
    interface.use_campaign_language(request, batch.campaign)
    return {
        "batch": batch,
        "campaign": batch.campaign,
        "language": batch.campaign.language,
        "expired": batch.stage == BatchStage.EXPIRED,
    }


def _screen(request, batch_id: int, name: str, template: str, rows, guidelines_of, scale=None):
    """The screen ``name`` of the annotator's open batch. A batch that is submitted, or that belongs on
    another screen (:func:`_screen_of`: screen 1 cannot be reopened once screen 2 has opened), goes
    to its batch page, which sends it where it belongs."""
    batch = batch_of(request.annotator, batch_id)
    if batch.stage == BatchStage.SUBMITTED or _screen_of(batch) != name:
        return redirect("annotation:batch", batch_id=batch.pk)
    context = _screen_context(request, batch)
    context.update(rows=rows(batch), guidelines=guidelines_of(batch.campaign))
    if scale is not None:
        context["scale"] = interface.ShownScale(scale)
    return render(request, template, context)


@annotator_required
@require_GET
def screen1(request, batch_id: int):
    return _screen(
        request,
        batch_id,
        "annotation:screen1",
        "annotation/screen1.html",
        screen1_rows,
        guidelines.rating_guidelines,
        RATING,
    )


@annotator_required
@require_GET
def screen2(request, batch_id: int):
    return _screen(
        request,
        batch_id,
        "annotation:screen2",
        "annotation/screen2.html",
        screen2_rows,
        guidelines.writing_guidelines,
    )


@annotator_required
@require_GET
def sxs_screen(request, batch_id: int):
    """The side-by-side screen. The page gets the two caption texts already placed left and
    right: no system name and no side of m2, anywhere in the response."""
    return _screen(
        request, batch_id, "annotation:sxs", "annotation/sxs.html", sxs_rows, guidelines.sxs_guidelines, SXS
    )


@annotator_required
@require_GET
def verification_screen(request, batch_id: int):
    return _screen(
        request,
        batch_id,
        "annotation:verify",
        "annotation/verify.html",
        verification_rows,
        guidelines.verification_guidelines,
        RATING,
    )


@login_required
@require_GET
def image_file(request, image_id: int):
    """An image's file, for staff and for annotators who were assigned it."""
    return image_file_response(image_visible_to(request.user, image_id))


def image_file_response(image) -> FileResponse:
    """The stored file of ``image`` (404 while it has none): kept an hour by the browser and by no shared
    cache, and never sniffed as another type than its name says."""
    if not image.file:
        raise Http404
    content_type = mimetypes.guess_type(image.file.name)[0] or "application/octet-stream"
    response = FileResponse(image.file.open("rb"), content_type=content_type)
    response["Cache-Control"] = "private, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    return response


@never_cache
@require_POST
def interface_language(request):
    """The top bar's language selector. An annotator's choice is stored on their profile (it
    follows them to every device) and in the language cookie; a visitor not logged in (the
    login page) gets the cookie only. Other roles work in English: 403. A language the
    interface lacks is refused with 400, and nothing changes."""
    user = request.user
    annotator = annotator_for_user(user) if user.is_authenticated and is_annotator(user) else None
    if user.is_authenticated and annotator is None:
        return _not_annotator(request)
    form = InterfaceLanguageForm(request.POST)
    if not form.is_valid():
        errors = " ".join(str(e) for errors in form.errors.values() for e in errors)
        return render(request, "400.html", {"error": errors}, status=400)
    language = form.cleaned_data["language"]
    if annotator is not None:
        annotator_interface_language_set(annotator=annotator, language=language)
    target = form.cleaned_data["next"]
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("annotation:dashboard") if annotator is not None else reverse("login")
    response = HttpResponseRedirect(target)
    _remember_language(response, language)
    return response


def _remember_language(response, language: str) -> None:
    """The language cookie, which pages for visitors not logged in (login) follow; "" forgets it."""
    if language:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            language,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            samesite="Lax",
            secure=settings.SESSION_COOKIE_SECURE,
            httponly=True,
        )
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME)


class PasswordSetView(auth_views.PasswordResetConfirmView):
    """A new annotator's one-time set-password page (the link their manager sends: Django's
    password-reset token), in the annotator pages' look rather than the admin's. A valid link
    speaks its annotator's interface language (annotation.interface) unless one was picked in the
    top bar, and once the password is set leaves it in the language cookie for the pages that
    follow (done, login). An invalid
    link reveals nothing of the account: it reads like any visitor's page."""

    template_name = "registration/password_set.html"

    def dispatch(self, request, *args, **kwargs):
        language = self._annotator_language(kwargs.get("uidb64"), kwargs.get("token"))
        if language:
            translation.activate(language)
            request.LANGUAGE_CODE = language
        return super().dispatch(request, *args, **kwargs)

    def _annotator_language(self, uidb64, token) -> str | None:
        if settings.LANGUAGE_COOKIE_NAME in self.request.COOKIES:
            return None  # a language picked in the top bar (on this page or the login page) wins
        user = self.get_user(uidb64)
        if token == self.reset_url_token:  # the page after Django's redirect keeps the token in the session
            token = self.request.session.get(auth_views.INTERNAL_RESET_SESSION_TOKEN)
        if user is None or not token or not self.token_generator.check_token(user, token):
            return None
        annotator = annotator_for_user(user)
        return interface.language_for(annotator, request=self.request) if annotator is not None else None

    def form_valid(self, form):
        response = super().form_valid(form)
        _remember_language(response, translation.get_language())
        return response


class PasswordSetDoneView(auth_views.PasswordResetCompleteView):
    """After the password is set: the way to log in, in the annotator pages' look."""

    template_name = "registration/password_set_done.html"


_catalog = JavaScriptCatalog.as_view(packages=["annotation"])


@never_cache
@require_GET
def javascript_catalog(request):
    """The translated strings of the annotator pages' scripts (``djangojs`` catalogue), served as
    a script from our own origin, since the CSP allows no inline one. A page asks for it in its
    own language (``?lang=``), which a batch screen may have taken from its campaign."""
    language = interface.supported(request.GET.get("lang"))
    if language:
        translation.activate(language)
    return _catalog(request)
