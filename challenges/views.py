"""The participants' pages: their benchmarks, instructions, the upload form, their submissions and scores,
the leaderboards (with CSV and JSON export) and the invitation link's sign-up page.

Views are thin: a form validates, one service or selector is called. Every object is looked up through
the selectors' access rules, so a page that is not the viewer's answers 404."""

from __future__ import annotations

import contextlib
import csv
import json
from functools import wraps

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from annotation.views import image_file_response
from challenges import selectors
from challenges.forms import JoinForm, SubmissionForm
from challenges.human import human_ranking, word_agreement_k, word_agreement_report
from challenges.images import MANIFEST_COLUMNS, phase_image, phase_manifest, zip_stream
from challenges.models import Invitation, Phase, Submission
from challenges.scoring.selectors import phase_image_ids
from challenges.services import (
    SubmissionRefused,
    api_token_rotate,
    invitation_accept,
    invitation_usable,
    member_invitation_create,
    submission_from_upload,
    submission_select,
    submission_upload_check,
    submission_withdraw,
)
from core.csv_cells import csv_safe
from core.errors import DomainError, NotFound
from core.request_guard import accepts_files, files_too_large


@login_required
def home(request):
    benchmarks = selectors.benchmarks_for(request.user).prefetch_related("phases")
    return render(
        request,
        "challenges/home.html",
        {
            "benchmarks": benchmarks,
            "participant": selectors.teams_of(request.user).exists(),
            # Teams of the viewer that no host has put in a benchmark yet: they see nothing of them.
            "teams_without_benchmark": list(
                selectors.teams_of(request.user)
                .filter(benchmarks__isnull=True)
                .values_list("name", flat=True)
            ),
            "token": request.session.pop("challenges_new_token", None),
            "server": request.build_absolute_uri("/").rstrip("/"),
        },
    )


@login_required
def api_help(request):
    """How to submit from a script: curl examples with this server's address and, where the viewer has
    one, a phase of their own benchmarks."""
    phase = (
        Phase.objects.filter(benchmark__in=selectors.benchmarks_for(request.user), is_open=True)
        .order_by("pk")
        .first()
    )
    return render(
        request,
        "challenges/api_help.html",
        {
            "server": request.build_absolute_uri("/").rstrip("/"),
            "phase_id": phase.pk if phase else "<phase id>",
        },
    )


@login_required
@require_POST
def api_token(request):
    """Create (or replace) the participant's API token; shown once, on the next page."""
    if not selectors.teams_of(request.user).exists():
        raise NotFound(_("No such page."))
    request.session["challenges_new_token"] = api_token_rotate(user=request.user)
    return redirect("challenges:home")


def benchmark_detail(request, slug):
    try:
        benchmark = selectors.benchmark_get(user=request.user, slug=slug)
    except NotFound:
        # A benchmark's address is what its organisers hand out: someone not yet logged in is asked to
        # log in rather than told it does not exist (a logged-in outsider still gets the 404).
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        raise
    team = selectors.team_for(request.user, benchmark)
    phases = []
    for phase in benchmark.phases.select_related("image_set").order_by("pk"):
        phases.append(
            {
                "phase": phase,
                "submissions": list(selectors.submissions_of_team(user=request.user, phase=phase))
                if team
                else [],
                "leaderboard": selectors.leaderboard_visible(request.user, phase),
                "form": SubmissionForm() if team and phase.is_open else None,
                "usage": selectors.team_usage(phase, team) if team else None,
                "n_images": phase.image_set.images.count(),
                "images": selectors.images_visible(request.user, phase),
            }
        )
    return render(
        request,
        "challenges/benchmark.html",
        {
            "benchmark": benchmark,
            "team": team,
            "phases": phases,
            "languages": benchmark.benchmark_languages.select_related("language", "reference_set"),
            "new_invitation": request.session.pop("challenges_new_invitation", None) if team else None,
        },
    )


@accepts_files("SUBMISSION_MAX_BYTES")
@csrf_exempt  # checked in _upload_read, after the checks below: CSRF's check reads the body
@login_required
@require_POST
def submission_upload(request, phase_id):
    """The upload form's target. Everything that needs no body is checked before it is read: its
    declared size (core.request_guard), the phase, the team, the refused files of account and team."""
    phase = selectors.phase_get(user=request.user, phase_id=phase_id)
    submission_upload_check(phase=phase, user=request.user)
    return _upload_read(request, phase)


@csrf_protect
def _upload_read(request, phase):
    form = SubmissionForm(request.POST, request.FILES)
    files_too_large(request)
    problems, total = [], 0
    if form.is_valid():
        try:
            submission = submission_from_upload(phase=phase, user=request.user, cleaned=form.cleaned_data)
        except SubmissionRefused as exc:
            form.add_error(None, exc.message)
            problems, total = exc.problems, exc.total
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, _("Submission received; it is being scored."))
            return redirect("challenges:submission", submission.pk)
    return render(
        request,
        "challenges/upload_refused.html",
        {"phase": phase, "form": form, "problems": problems, "total": total, "more": total - len(problems)},
        status=400,
    )


@login_required
def submission_detail(request, submission_id):
    submission = selectors.submission_get(user=request.user, submission_id=submission_id)
    scores = selectors.submission_scores(submission, user=request.user)
    return render(
        request,
        "challenges/submission.html",
        {
            "submission": submission,
            "blocks": selectors.score_blocks(submission, scores),
            "per_image": selectors.per_image_scores(submission, user=request.user),
            "sealed": selectors.sealed_for(request.user, submission.phase),
            "can_select": submission.team_id
            and submission.status == "succeeded"
            and submission.withdrawn_at is None,
            "own": submission.team_id
            and selectors.teams_of(request.user).filter(pk=submission.team_id).exists(),
        },
    )


@login_required
@require_POST
def submission_withdraw_toggle(request, submission_id):
    """A member withdraws one of the team's entries from the leaderboards, or puts it back."""
    submission = selectors.submission_get(user=request.user, submission_id=submission_id)
    withdrawn = submission.withdrawn_at is None
    submission_withdraw(submission_id=submission.pk, user=request.user, withdrawn=withdrawn)
    messages.success(
        request,
        _("Withdrawn: the entry is on no leaderboard now; it still counts toward your limits.")
        if withdrawn
        else _("The entry is back on the leaderboards."),
    )
    return redirect("challenges:submission", submission.pk)


@login_required
@require_POST
def team_invite(request, team_id):
    """A member makes a one-use invitation link for a teammate; it is shown once, on the benchmark page
    the form was sent from."""
    team = selectors.teams_of(request.user).filter(pk=team_id).first()
    if team is None:
        raise NotFound(_("No such team."))
    benchmark = team.benchmarks.order_by("pk").first()
    try:
        invitation = member_invitation_create(team_id=team.pk, user=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        request.session["challenges_new_invitation"] = request.build_absolute_uri(
            reverse("challenges:join", args=[invitation.token])
        )
    slug = request.POST.get("benchmark", "")
    if team.benchmarks.filter(slug=slug).exists():
        return redirect("challenges:benchmark", slug)
    return redirect("challenges:benchmark", benchmark.slug) if benchmark else redirect("challenges:home")


@login_required
@require_POST
def submission_toggle(request, submission_id):
    submission = selectors.submission_get(user=request.user, submission_id=submission_id)
    try:
        submission_select(submission_id=submission.pk, user=request.user, selected=not submission.is_selected)
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("challenges:submission", submission.pk)


class LoginFirst(Exception):
    """Raised by a page that someone logged out may see after logging in (see :func:`_or_login`)."""


def _board(request, phase_id):
    phase = _visible_phase(request, phase_id)
    if not selectors.leaderboard_visible(request.user, phase):
        if not request.user.is_authenticated:
            raise LoginFirst
        raise NotFound(_("No such leaderboard."))
    return selectors.leaderboard_asked(phase=phase, user=request.user, params=request.GET)


def _visible_phase(request, phase_id) -> Phase:
    try:
        return selectors.phase_get(user=request.user, phase_id=phase_id)
    except NotFound:
        if not request.user.is_authenticated:
            raise LoginFirst from None
        raise


def _or_login(view):
    """A page a benchmark's teams are sent to by address: someone not logged in is asked to log in
    (as on the benchmark page) rather than told it does not exist; a logged-in outsider gets the 404."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except LoginFirst:
            return redirect_to_login(request.get_full_path())

    return wrapped


@_or_login
def leaderboard(request, phase_id):
    board = _board(request, phase_id)
    human = None
    if board.language != selectors.MEAN:
        human = human_ranking(board.phase, board.language)
    if human is not None:
        names = dict(Submission.objects.filter(phase=board.phase).values_list("pk", "method_name"))
        # The metric's rank among the teams' entries, as the human ranking ranks them (no baseline, no
        # human row).
        ranked = [e for e in board.entries if not (e.baseline or e.human)]
        metric_rank = {e.submission_id: rank for rank, e in enumerate(ranked, start=1)}
        human = {
            "pairs": [(names.get(p.entry_a), names.get(p.entry_b), p) for p in human.pairs],
            "ranking": [
                (rank, names.get(entry), metric_rank.get(entry), score)
                for rank, (entry, score) in enumerate(human.ranking, start=1)
            ],
        }
    return render(
        request,
        "challenges/leaderboard.html",
        {"board": board, "phase": board.phase, "mean": selectors.MEAN, "human": human},
    )


@_or_login
def leaderboard_export(request, phase_id, fmt):
    board = _board(request, phase_id)
    rows = selectors.leaderboard_rows(board)
    name = f"leaderboard-{board.phase.pk}-{board.language}-{board.metric}-{board.split}"
    if fmt == "json":
        response = JsonResponse(
            {"phase": board.phase.pk, "rows": rows}, json_dumps_params={"ensure_ascii": False}
        )
        response["Content-Disposition"] = f'attachment; filename="{name}.json"'
        return response
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    columns = list(rows[0]) if rows else ["rank", "method", "team", "value"]
    writer = csv.writer(response)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_safe("" if row[c] is None else str(row[c])) for c in columns])
    return response


@login_required
def word_agreement(request, phase_id):
    """Human agreement for word prediction and each entry's PHR (seed 002, sec. 4.2). It reads the
    references' words: hosts only for a test phase; the benchmark's teams too for a validation phase."""
    phase = selectors.phase_get(user=request.user, phase_id=phase_id)
    allowed = selectors.can_host(request.user) or (
        not phase.is_test and selectors.is_member(request.user, phase.benchmark)
    )
    if not allowed:
        raise NotFound(_("No such report."))
    codes = list(phase.benchmark.languages.order_by("code").values_list("code", flat=True))
    code = (
        request.GET.get("language") if request.GET.get("language") in codes else (codes[0] if codes else "")
    )
    # Opens at the largest k every image's references allow; a k asked for is kept within what any allows.
    k, k_most = word_agreement_k(phase, code) if code else (1, 1)
    with contextlib.suppress(KeyError, ValueError):
        k = min(max(int(request.GET["k"]), 1), k_most)
    report = word_agreement_report(phase, code, k=k) if code else None
    return render(
        request,
        "challenges/word_agreement.html",
        {
            "phase": phase,
            "report": report,
            # The words are escaped in agreement_svg; the rest of the figure is ours.
            "svg": mark_safe(report.svg) if report else "",  # noqa: S308
            "codes": codes,
            "code": code,
            "k": k,
            "k_most": k_most,
        },
    )


def _images_phase(request, phase_id) -> Phase:
    phase = selectors.phase_get(user=request.user, phase_id=phase_id)
    if not selectors.images_visible(request.user, phase):
        raise NotFound(_("No such download."))
    return phase


@login_required
def images_manifest(request, phase_id, fmt):
    """The phase's images, one row each (image id, file name, bytes, sha256, width, height), as CSV or
    JSON, for the benchmark's teams and its hosts."""
    phase = _images_phase(request, phase_id)
    rows = [row.as_dict() for row in phase_manifest(phase)]
    name = f"images-{phase.pk}"
    if fmt == "json":
        for row in rows:
            row["url"] = request.build_absolute_uri(
                reverse("challenges:image", args=[phase.pk, row["image_id"]])
            )
        response = JsonResponse(
            {"phase": phase.pk, "images": rows}, json_dumps_params={"ensure_ascii": False}
        )
        response["Content-Disposition"] = f'attachment; filename="{name}.json"'
        return response
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    writer = csv.writer(response)
    writer.writerow(MANIFEST_COLUMNS)
    for row in rows:
        writer.writerow(
            [
                csv_safe(v) if isinstance(v := row[column], str) else ("" if v is None else v)
                for column in MANIFEST_COLUMNS
            ]
        )
    return response


@login_required
def images_zip(request, phase_id):
    """Every stored image of the phase as one zip, made while it is sent."""
    phase = _images_phase(request, phase_id)
    response = StreamingHttpResponse(zip_stream(phase_manifest(phase)), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="images-{phase.pk}.zip"'
    return response


@login_required
def image_download(request, phase_id, key):
    """One image of the phase by its key."""
    phase = _images_phase(request, phase_id)
    image = phase_image(phase, key)
    if image is None:
        raise NotFound(_("No such image in this phase."))
    return image_file_response(image)


def references_download(request, phase_id):
    """A validation phase's references as XM3600-style JSON lines; a test phase's never (404)."""
    phase = selectors.phase_get(user=request.user, phase_id=phase_id)
    if phase.is_test or not (
        selectors.can_host(request.user) or selectors.is_member(request.user, phase.benchmark)
    ):
        raise NotFound(_("No such download."))
    from challenges.scoring.selectors import phase_references

    image_ids = phase_image_ids(phase)
    keys = dict(phase.image_set.images.values_list("pk", "key"))
    lines: dict[int, dict] = {i: {"image/key": keys[i]} for i in image_ids}
    for link in phase.benchmark.benchmark_languages.select_related("language"):
        for image_id, texts in phase_references(phase, link.language_id, image_ids).items():
            lines[image_id][link.language.code] = {"caption": texts}
    body = "\n".join(json.dumps(lines[i], ensure_ascii=False) for i in image_ids) + "\n"
    response = HttpResponse(body, content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="references-{phase.pk}.jsonl"'
    return response


def join(request, token):
    """The invitation link: choose a username and password, and land in the team's benchmarks. A link
    used already or expired says so and what to do (410); an unknown one is a 404."""
    try:
        invitation = invitation_usable(token)
    except NotFound:
        spent = Invitation.objects.select_related("team").filter(token=token).first()
        if spent is None:
            raise
        if spent.used_by_id and spent.used_by_id == request.user.pk:
            return redirect("challenges:home")  # the account it made, back on the link
        return render(
            request,
            "challenges/join_spent.html",
            {"used": spent.used_at is not None, "invitation": spent},
            status=410,
        )
    form = JoinForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = invitation_accept(
                token=token, username=form.cleaned_data["username"], password=form.cleaned_data["password"]
            )
        except DomainError as exc:
            if isinstance(exc, NotFound):
                raise
            form.add_error(None, exc.message)
        else:
            login(request, user, backend="annotation.auth.AnnotatorAwareBackend")
            messages.success(request, _("Welcome to team %(team)s.") % {"team": invitation.team.name})
            return redirect("challenges:home")
    return render(request, "challenges/join.html", {"form": form, "team": invitation.team})
