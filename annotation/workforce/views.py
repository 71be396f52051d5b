"""The participant's pages: entry link, language declaration, screen-out, tutorial with feedback,
completion, pilot feedback. Thin: a form validates, one service or selector is called, a template is rendered. Every
string is translated (the annotator's interface)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods
from django.views.defaults import page_not_found

from annotation import interface
from annotation.assignment.engine import batch_start_problem
from annotation.models import (
    Batch,
    BatchStage,
    CampaignKind,
    Enrolment,
    EntryLink,
    SkillLevel,
    TutorialVerdict,
)
from annotation.selectors import batch_of
from annotation.views import annotator_required, image_file_response
from annotation.workforce import selectors, services
from annotation.workforce.forms import LanguagesForm, SignupForm, TutorialAnswerForm
from core import ratelimit
from core.access import is_annotator
from core.errors import DomainError, NotFound
from core.login import client_address
from core.scales import RATING, SXS

BACKEND = "annotation.auth.AnnotatorAwareBackend"
CROWD_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "hitId", "assignmentId")


def _next_url(annotator, campaign) -> str:
    name = selectors.next_step(annotator, campaign)
    return reverse(name) if name == "annotation:dashboard" else reverse(name, args=[campaign.pk])


@never_cache
@require_http_methods(["GET", "POST"])
def join(request, token: str):
    """An entry link. Crowd visitors (ids in the query) press one button; others sign up, or join with
    the annotator account they are signed in with. Unknown token: 404; closed link: 410 with why."""
    link = EntryLink.objects.select_related("campaign", "campaign__language").filter(token=token).first()
    if link is None:
        # Rendered here, not raised, so that the refusal too is no-store (a stale tab or Back asks the server again).
        return page_not_found(request, Http404())
    params = request.POST if request.method == "POST" else request.GET
    form = SignupForm(request.POST or None)
    error, status, identity = None, 200, services.CrowdIdentity()
    try:
        identity = services.crowd_identity_parse(params)
    except DomainError as exc:  # the join page itself says what is wrong with the link's ids
        error, status = exc.message, exc.status_code
    signed_in = is_annotator(request.user)
    if request.method == "POST" and error is None and not _join_allowed(request, identity):
        # Following a link with crowd ids signs in, so guesses of a session id are limited like logins.
        error, status = _("Too many attempts. Wait a minute, then try again."), 429
    if request.method == "POST" and error is None:
        try:
            admission = services.entry_admit(
                token=token,
                identity=identity,
                user=request.user,
                username=None if (identity.is_crowd or signed_in) else request.POST.get("username", ""),
                password=request.POST.get("password", ""),
                password2=request.POST.get("password2", ""),
            )
        except DomainError as exc:  # shown above the sign-up form, filled in as it was sent
            error, status = exc.message, exc.status_code
        else:
            if admission.sign_in is not None:
                login(request, admission.sign_in, backend=BACKEND)
            enrolment = admission.enrolment
            return redirect(_next_url(enrolment.annotator, enrolment.campaign))
    closed = services.link_closed_reason(link)
    if closed and error is None and request.method == "GET" and not identity.is_crowd:
        error, status = closed, 410
    context = {
        "link": link,
        "campaign": link.campaign,
        "form": form,
        "error": error,
        "identity": identity,
        "crowd_fields": [(k, params.get(k)) for k in CROWD_PARAMS if params.get(k)],
        "signed_in": signed_in,
        "closed": closed,
        "has_tutorial": selectors.tutorial_required(link.campaign),
    }
    return render(request, "annotation/workforce/join.html", context, status=status)


def _join_allowed(request, identity) -> bool:
    """One admission attempt counted against the address and, with crowd ids, the worker id
    (``LOGIN_RATE_LIMIT`` each, in the shared cache: across every server process)."""
    rate = ratelimit.Rate.parse(settings.LOGIN_RATE_LIMIT)
    decisions = [ratelimit.hit("join-address", client_address(request), rate)]
    if identity.is_crowd:
        decisions.append(ratelimit.hit("join-worker", f"{identity.platform}:{identity.worker_id}", rate))
    return all(d.allowed for d in decisions)


@annotator_required
@require_http_methods(["GET", "POST"])
def languages(request, campaign_id: int):
    """A participant whose account the link made says which languages they speak."""
    enrolment = _own_enrolment_or_404(request, campaign_id)
    interface.use_campaign_language(request, enrolment.campaign)
    annotator = request.annotator
    initial = {
        "native": list(
            annotator.skills.filter(level=SkillLevel.NATIVE).values_list("language_id", flat=True)
        ),
        "fluent": list(
            annotator.skills.filter(level=SkillLevel.FLUENT).values_list("language_id", flat=True)
        ),
        "reads_english": annotator.reads_english,
    }
    form = LanguagesForm(request.POST if request.method == "POST" else None, initial=initial)
    error = None
    if request.method == "POST" and form.is_valid():
        try:
            services.skills_declare(
                annotator=annotator,
                native=[x.pk for x in form.cleaned_data["native"]],
                fluent=[x.pk for x in form.cleaned_data["fluent"]],
                reads_english=form.cleaned_data["reads_english"],
            )
        except DomainError as exc:  # shown above the language form, filled in as it was sent
            error = exc.message
        else:
            # Declared languages that do not fit lead to the screen-out page (next_step).
            return redirect(_next_url(annotator, enrolment.campaign))
    campaign = enrolment.campaign
    return render(
        request,
        "annotation/workforce/languages.html",
        {
            "campaign": campaign,
            "form": form,
            "error": error,
            "needs_english": campaign.kind == CampaignKind.CAPTION,
        },
        status=400 if error or form.errors else 200,
    )


def _own_enrolment_or_404(request, campaign_id) -> Enrolment:
    """The enrolment in ``campaign_id`` of a participant whose account the link made (they declare
    their languages); 404 for anyone else."""
    enrolment = (
        Enrolment.objects.select_related("campaign", "campaign__language", "link", "annotator")
        .filter(campaign_id=campaign_id, annotator=request.annotator, account_created=True)
        .first()
    )
    if enrolment is None:
        raise Http404
    return enrolment


@annotator_required
@require_GET
def screened_out(request, campaign_id: int):
    """A participant whose declared languages do not fit: why, what their crowd platform needs (the
    link's screen-out code or URL, else the platform's way to return the study), and the way back to
    the language form. All of it in the one interface language of the campaign's pages."""
    enrolment = _own_enrolment_or_404(request, campaign_id)
    interface.use_campaign_language(request, enrolment.campaign)
    screen = selectors.screen_out_for(enrolment)
    if screen is None:
        return redirect(_next_url(request.annotator, enrolment.campaign))
    return render(
        request,
        "annotation/workforce/screened_out.html",
        {"campaign": enrolment.campaign, "screen": screen, "needs_english": screen.reason == "english"},
    )


def _campaign_or_404(request, campaign_id):
    campaign = selectors.campaign_for_participant(request.annotator, campaign_id)
    interface.use_campaign_language(request, campaign)
    return campaign


def _answer_choices(campaign):
    """(code, label) of the buttons a gold item offers: the campaign's own scale."""
    scale = SXS if campaign.kind == CampaignKind.SIDE_BY_SIDE else RATING
    return [(p.code, interface.scale_label(p), p.key) for p in scale]


def _expected_text(campaign, expected: str) -> str:
    if campaign.kind == CampaignKind.SIDE_BY_SIDE:
        return {
            "left": _("the left caption is better"),
            "right": _("the right caption is better"),
            "similar": _("the two captions are about as good (SIMILAR, or at most slightly better)"),
        }.get(expected, expected)
    label = interface.scale_label(RATING.by_code(expected))
    if RATING.by_code(expected).value is None:
        return label
    return _("%(label)s (one level above or below also counts as right)") % {"label": label}


def _tutorial_context(campaign, step, **extra):
    return {
        "campaign": campaign,
        "step": step,
        "choices": _answer_choices(campaign),
        "sxs": campaign.kind == CampaignKind.SIDE_BY_SIDE,
        "caption_lang": "en" if campaign.kind == CampaignKind.CAPTION else campaign.language.code,
        "onboarding": selectors.onboarding_of(campaign),
        **extra,
    }


@annotator_required
@require_http_methods(["GET", "POST"])
def tutorial(request, campaign_id: int):
    """The campaign's gold items one at a time; an answer leads to its feedback page."""
    campaign = _campaign_or_404(request, campaign_id)
    if not selectors.tutorial_required(campaign):
        return redirect("annotation:dashboard")
    services.tutorial_attempt_start(annotator=request.annotator, campaign=campaign)
    error = None
    if request.method == "POST":
        form = TutorialAnswerForm(request.POST)
        if form.is_valid():
            try:
                services.tutorial_answer(
                    annotator=request.annotator,
                    campaign_id=campaign.pk,
                    item_id=form.cleaned_data["item"],
                    answer=form.cleaned_data["answer"],
                    text=form.cleaned_data["text"],
                )
            except NotFound:
                raise Http404 from None
            except DomainError as exc:  # shown on the item's own page, which the answer is kept on
                error = exc.message
            else:
                return redirect("annotation:tutorial_feedback", campaign_id=campaign.pk)
        else:
            error = _("Choose one of the answers shown.")
            if (request.POST.get("text") or "") and len(request.POST["text"]) > 1000:
                error = _("A caption can be at most 1000 characters.")
    step = selectors.tutorial_step(request.annotator, campaign)
    failed = step.result is not None and step.result.verdict == TutorialVerdict.FAILED
    screen = selectors.tutorial_screen_out_for(request.annotator, campaign) if failed else None
    return render(
        request,
        "annotation/workforce/tutorial.html",
        _tutorial_context(campaign, step, error=error, screen=screen),
        status=400 if error else 200,
    )


@annotator_required
@require_GET
def tutorial_feedback(request, campaign_id: int):
    """Right or wrong, the expected answer and the manager's explanation, for the last answer given."""
    campaign = _campaign_or_404(request, campaign_id)
    answer = selectors.last_tutorial_answer(request.annotator, campaign)
    if answer is None:
        return redirect("annotation:tutorial", campaign_id=campaign.pk)
    scale = SXS if campaign.kind == CampaignKind.SIDE_BY_SIDE else RATING
    step = selectors.tutorial_step(request.annotator, campaign)
    written = answer.item.expected == services.WRITE
    return render(
        request,
        "annotation/workforce/tutorial_feedback.html",
        _tutorial_context(
            campaign,
            step,
            answer=answer,
            written=written,
            given="" if written else interface.scale_label(scale.by_code(answer.answer)),
            expected="" if written else _expected_text(campaign, answer.item.expected),
        ),
    )


@annotator_required
@require_GET
def tutorial_image(request, campaign_id: int, item_id: int):
    return image_file_response(selectors.tutorial_item_for(request.annotator, campaign_id, item_id).image)


@annotator_required
@require_GET
def completion(request, batch_id: int):
    """The completion code (and the way back to the crowd platform) after a batch or the quota."""
    batch = batch_of(request.annotator, batch_id)
    done = selectors.completion_for(batch)
    if done is None:
        return redirect("annotation:batch", batch_id=batch.pk)
    interface.use_campaign_language(request, batch.campaign)
    start_problem = (
        None if done.final else batch_start_problem(annotator=request.annotator, campaign=batch.campaign)
    )
    return render(
        request,
        "annotation/workforce/completion.html",
        {"batch": batch, "done": done, "start_problem": start_problem},
    )


@annotator_required
@require_GET
def pilot_feedback(request, campaign_id: int):
    """A participant's own pilot captions that a manager accepted or returned, with the comments."""
    if not Batch.objects.filter(
        campaign_id=campaign_id, annotator=request.annotator, stage=BatchStage.SUBMITTED
    ).exists():
        raise Http404
    batch = (
        Batch.objects.select_related("campaign")
        .filter(campaign_id=campaign_id, annotator=request.annotator)
        .first()
    )
    campaign = batch.campaign
    interface.use_campaign_language(request, campaign)
    reviews = selectors.own_reviews(request.annotator, campaign)
    return render(
        request, "annotation/workforce/pilot_feedback.html", {"campaign": campaign, "reviews": reviews}
    )
