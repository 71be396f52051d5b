"""The hosts' admin (project managers): benchmarks, phases (open, close), teams and invitation links,
submissions (scoring progress, resume, baselines uploaded as entries without a team)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from annotation.models import Campaign, CampaignKind, Language
from challenges.fresh import DEFAULT_RATING, fresh_references_attach, phase_rescore
from challenges.human import human_evaluation_create
from challenges.models import (
    Benchmark,
    BenchmarkLanguage,
    Invitation,
    Phase,
    Submission,
    SubmissionScore,
    Team,
)
from challenges.scoring.tasks import SUBMISSION_SCORING
from challenges.services import (
    SubmissionRefused,
    human_row_create,
    invitation_create,
    phase_close,
    phase_open,
    submission_create,
)
from core import caption_files
from core.admin import (
    ReadOnlyAdminMixin,
    StyledModelAdmin,
    admin_page,
    run_service,
    run_service_each,
    service_form_view,
)
from core.errors import ValidationFailed
from core.jobs.admin import JobAdminMixin
from evaluation.admin.clip_model_form import RegisteredClipModelField
from evaluation.models import ALL_METRICS, CLIP_METRICS

# Reference counts a phase may score with, offered as boxes: all references, and COCO's c5 and c40 beside
# the small counts XM3600-size benchmarks have.
REFERENCE_COUNT_CHOICES = [0, 1, 2, 3, 4, 5, 40]


class BenchmarkLanguageInline(admin.TabularInline):
    model = BenchmarkLanguage
    extra = 0
    autocomplete_fields = ["language", "reference_set", "fresh_reference_set"]
    fields = ["language", "reference_set", "public_dataset", "fresh_reference_set"]
    readonly_fields = ["public_dataset"]

    @admin.display(description=_("public dataset"))
    def public_dataset(self, link):
        return references_origin(link)


def references_origin(link: BenchmarkLanguage) -> str:
    """Where a benchmark language's references come from, as a host reads it."""
    if not link.pk:
        return ""
    dataset = link.reference_set.public_dataset
    if not dataset:
        return _("written on this platform")
    if link.fresh_reference_set_id:
        return _("%(dataset)s (public), with fresh references") % {"dataset": dataset}
    return _("%(dataset)s: public, anyone may have trained on it") % {"dataset": dataset}


class FreshReferencesForm(forms.Form):
    benchmark = forms.ModelChoiceField(queryset=Benchmark.objects.all())
    language = forms.ModelChoiceField(
        queryset=Language.objects.filter(benchmark_languages__isnull=False).distinct(),
        help_text=_("A language of the benchmark."),
    )
    campaign = forms.ModelChoiceField(
        queryset=Campaign.objects.filter(kind=CampaignKind.CAPTION).select_related("language"),
        help_text=_(
            "A caption campaign of that language over the phase's images (made from its image set); its "
            "captions are sealed from then on: no export, no research API."
        ),
    )
    min_verified_rating = forms.ChoiceField(
        label=_("Keep"),
        choices=[
            ("GOOD", _("captions rated GOOD or better")),
            ("MEDIUM", _("MEDIUM or better")),
            ("", _("every counted caption")),
        ],
        required=False,
        initial=DEFAULT_RATING,
        help_text=_(
            "By the median rating of the campaign's verification campaigns (a caption not yet rated is left out)."
        ),
    )


class PhaseInline(admin.TabularInline):
    model = Phase
    extra = 0
    fields = ["name", "kind", "image_set", "is_open", "starts_at", "ends_at", "visibility"]
    show_change_link = True


@admin.register(Benchmark)
class BenchmarkAdmin(StyledModelAdmin):
    list_display = ["name", "slug", "references", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [BenchmarkLanguageInline, PhaseInline]
    change_list_template = "admin/change_list_tools.html"

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("benchmark_languages__reference_set")

    @admin.display(description=_("references"))
    def references(self, benchmark):
        public = sorted(
            {link.reference_set.public_dataset for link in benchmark.benchmark_languages.all()} - {""}
        )
        fresh = sorted(
            link.language_id for link in benchmark.benchmark_languages.all() if link.fresh_reference_set_id
        )
        if not public:
            return _("written on this platform")
        text = _("public dataset: %(names)s") % {"names": ", ".join(public)}
        return f"{text} · " + (_("with fresh references") if fresh else _("no fresh references"))

    def changelist_view(self, request, extra_context=None):
        tools = []
        if self.has_add_permission(request):
            tools.append(
                {"url": reverse("admin:challenges_benchmark_fresh"), "label": _("Add fresh references")}
            )
        return super().changelist_view(request, {**(extra_context or {}), "extra_tools": tools})

    def get_urls(self):
        return [admin_page(self, "fresh-references/", self.fresh_view, "fresh"), *super().get_urls()]

    def fresh_view(self, request):
        made = {}

        def create(data):
            made["done"] = fresh_references_attach(
                benchmark_id=data["benchmark"].pk,
                language_code=data["language"].code,
                campaign_id=data["campaign"].pk,
                min_verified_rating=data.get("min_verified_rating") or "",
            )
            return data["benchmark"]

        initial = {}
        benchmark = request.GET.get("benchmark")
        if benchmark and benchmark.isdigit():
            initial["benchmark"] = int(benchmark)
        return service_form_view(
            self,
            request,
            form_class=FreshReferencesForm,
            create=create,
            title=_("Add fresh references"),
            done=lambda _benchmark: made["done"].summary(),
            initial=initial,
            submit_label=_("Add and seal"),
        )

    def change_view(self, request, object_id, form_url="", extra_context=None):
        benchmark = self.get_object(request, object_id)
        if benchmark is not None and request.method == "GET":
            _warn_public(self, request, benchmark)
        return super().change_view(request, object_id, form_url, extra_context)


def _warn_public(model_admin, request, benchmark: Benchmark) -> None:
    """A warning on a benchmark scored on a public dataset's references and without fresh ones."""
    links = benchmark.benchmark_languages.select_related("reference_set", "language")
    exposed = [
        link.language.code
        for link in links
        if link.reference_set.public_dataset and not link.fresh_reference_set_id
    ]
    if exposed and benchmark.phases.filter(kind="test").exists():
        model_admin.message_user(
            request,
            format_html(
                '{} <a href="{}?benchmark={}">{}</a>',
                _(
                    "The references of %(languages)s come from a public dataset: a hidden test phase hides "
                    "nothing from a team that has it, and a model trained on its captions would top the board."
                )
                % {"languages": ", ".join(exposed)},
                reverse("admin:challenges_benchmark_fresh"),
                benchmark.pk,
                _("Add fresh references"),
            ),
            level=messages.WARNING,
        )


class PhaseForm(forms.ModelForm):
    """The phase form with its metrics, reference counts and accepted formats as boxes: the metrics the
    platform computes, the common reference counts and the registry's upload formats, instead of a JSON
    field to type."""

    metrics = forms.MultipleChoiceField(
        choices=[(name, name) for name in ALL_METRICS],
        widget=forms.CheckboxSelectMultiple,
        help_text=_("The metrics scored for every entry; the ranking metric must be one of them."),
    )
    reference_counts = forms.TypedMultipleChoiceField(
        coerce=int,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Score with all references of each image, and with only the first k (COCO's c5: 5)."),
    )
    accepted_formats = forms.MultipleChoiceField(
        label=_("Accepted formats"),
        choices=[(name, caption_files.FORMATS[name].label) for name in caption_files.UPLOAD_FORMATS],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text=_("The result-file formats teams may upload; none ticked: every format."),
    )
    # The registered CLIP models, as every form that needs one offers them.
    clip_model = RegisteredClipModelField(
        help_text="For CLIPScore and RefCLIPScore, when the metrics name them."
    )

    # No Meta: the admin builds the form's model and fields (modelform_factory) on this class.

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        counts = sorted(set(REFERENCE_COUNT_CHOICES) | set(self.initial.get("reference_counts") or []))
        self.fields["reference_counts"].choices = [
            (k, _("all references") if k == 0 else f"c{k}") for k in counts
        ]

    def clean_metrics(self):
        chosen = set(self.cleaned_data["metrics"])
        return [name for name in ALL_METRICS if name in chosen]  # the platform's order

    def clean_reference_counts(self):
        return sorted(set(self.cleaned_data["reference_counts"]))

    def clean_accepted_formats(self):
        chosen = set(self.cleaned_data["accepted_formats"])
        return [name for name in caption_files.UPLOAD_FORMATS if name in chosen]  # the registry's order

    def clean(self):
        data = super().clean()
        # Entries are scored with the phase's model: one this server cannot load is refused now.
        if data.get("clip_model") is None and set(data.get("metrics") or []) & set(CLIP_METRICS):
            try:
                self.fields["clip_model"].settings_check()
            except forms.ValidationError as exc:
                self.add_error("clip_model", exc)
        return data


@admin.register(Phase)
class PhaseAdmin(StyledModelAdmin):
    form = PhaseForm
    list_display = ["__str__", "kind", "is_open", "closed_at", "starts_at", "ends_at", "visibility"]
    list_filter = ["kind", "is_open", "benchmark"]
    readonly_fields = ["closed_at"]
    actions = ["open_phases", "close_phases", "score_human_row", "human_evaluation_top", "rescore"]

    @admin.action(
        description=_("Score the entries again (after new or fresh references)"), permissions=["change"]
    )
    def rescore(self, request, queryset):
        sent = []
        for phase in queryset:
            sent += run_service(self, request, phase_rescore, phase_id=phase.pk) or []
        _report(
            self,
            request,
            ngettext(
                "%(n)s entry is being scored again:", "%(n)s entries are being scored again:", len(sent)
            ),
            [(reverse("admin:challenges_submission_change", args=[s.pk]), s.method_name) for s in sent],
        )

    @admin.action(
        description=_("Human evaluation: side-by-side campaigns of the top 3 entries per language"),
        permissions=["change"],
    )
    def human_evaluation_top(self, request, queryset):
        created = []
        for phase in queryset:
            created += run_service(self, request, human_evaluation_create, phase_id=phase.pk, top_n=3) or []
        _campaigns_created(self, request, created)

    @admin.action(description=_("Score the human row (held-out reference per image)"), permissions=["change"])
    def score_human_row(self, request, queryset):
        done = [
            row
            for phase in queryset
            if (row := run_service(self, request, human_row_create, phase_id=phase.pk, user=request.user))
        ]
        _report(
            self,
            request,
            ngettext("Human row queued for %(n)s phase:", "Human rows queued for %(n)s phases:", len(done)),
            [(reverse("admin:challenges_submission_change", args=[s.pk]), str(s.phase)) for s in done],
        )

    @admin.action(description=_("Open for submissions"), permissions=["change"])
    def open_phases(self, request, queryset):
        done = run_service_each(self, request, phase_open, queryset, lambda p: {"phase_id": p.pk})
        _report(
            self,
            request,
            ngettext("%(n)s phase opened:", "%(n)s phases opened:", len(done)),
            [(reverse("challenges:benchmark", args=[p.benchmark.slug]), str(p)) for p in done],
        )

    @admin.action(description=_("Close (reveals a test phase's private ranking)"), permissions=["change"])
    def close_phases(self, request, queryset):
        done = run_service_each(self, request, phase_close, queryset, lambda p: {"phase_id": p.pk})
        _report(
            self,
            request,
            ngettext(
                "%(n)s phase closed; its leaderboard:", "%(n)s phases closed; their leaderboards:", len(done)
            ),
            [(reverse("challenges:leaderboard", args=[p.pk]), str(p)) for p in done],
        )


def _report(model_admin, request, message: str, links: list[tuple[str, str]]) -> None:
    """An action's result: ``message`` (with ``%(n)s``, the number of links) and the links to what it
    made or changed."""
    if not links:
        model_admin.message_user(request, _("Nothing was changed."), level=messages.WARNING)
        return
    listed = format_html_join(", ", '<a href="{}">{}</a>', links)
    model_admin.message_user(
        request, format_html("{} {}", message % {"n": len(links)}, listed), level=messages.SUCCESS
    )


def _campaigns_created(model_admin, request, created) -> None:
    _report(
        model_admin,
        request,
        ngettext(
            "%(n)s side-by-side campaign created and opened:",
            "%(n)s side-by-side campaigns created and opened:",
            len(created),
        ),
        [
            (reverse("admin:annotation_campaign_change", args=[c.campaign_id]), c.campaign.name)
            for c in created
        ],
    )


class InvitationInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = Invitation
    extra = 0
    fields = ["link", "expires_at", "used_at", "used_by"]
    readonly_fields = fields

    @admin.display(description=_("link"))
    def link(self, invitation):
        if invitation.used_at is not None:
            return "–"
        return reverse("challenges:join", args=[invitation.token])


def isolated(text) -> str:
    """A name a team chose, in an isolate: direction controls in it cannot reorder what stands beside it."""
    return format_html("<bdi>{}</bdi>", text)


@admin.register(Team)
class TeamAdmin(StyledModelAdmin):
    list_display = ["team_name", "created_at"]

    @admin.display(description=_("name"), ordering="name")
    def team_name(self, team):
        return isolated(team.name)

    search_fields = ["name"]
    filter_horizontal = ["members", "benchmarks"]
    inlines = [InvitationInline]
    actions = ["invite"]

    @admin.action(description=_("Create a one-use invitation link"), permissions=["change"])
    def invite(self, request, queryset):
        for team in queryset:
            invitation = invitation_create(team_id=team.pk)
            url = request.build_absolute_uri(reverse("challenges:join", args=[invitation.token]))
            self.message_user(
                request, format_html(_("Invitation into {}: {}"), team.name, url), level=messages.SUCCESS
            )
            _warn_without_benchmark(self, request, team)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        _warn_without_benchmark(self, request, form.instance)


def _warn_without_benchmark(model_admin, request, team: Team) -> None:
    """A team in no benchmark sees nothing: say so to the host who made or invited it."""
    if not team.benchmarks.exists():
        model_admin.message_user(
            request,
            format_html(
                _(
                    "Team {} is in no benchmark: its members see no benchmark until you tick one under Benchmarks."
                ),
                isolated(team.name),
            ),
            level=messages.WARNING,
        )


class BaselineForm(forms.Form):
    phase = forms.ModelChoiceField(queryset=Phase.objects.select_related("benchmark"))
    method_name = forms.CharField(max_length=200)
    file = forms.FileField(
        help_text=_("COCO results JSON (one language), JSON lines with a language, or a zip.")
    )
    language = forms.CharField(max_length=16, required=False, help_text=_("For a COCO results file."))
    description = forms.CharField(widget=forms.Textarea, required=False)


class ScoreInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = SubmissionScore
    extra = 0
    fields = [
        "language",
        "reference_count",
        "split",
        "metric",
        "value",
        "low",
        "high",
        "n_images",
        "signature",
    ]
    readonly_fields = fields


@admin.register(Submission)
class SubmissionAdmin(JobAdminMixin, StyledModelAdmin):
    job_kind = SUBMISSION_SCORING
    actions = ["resume", "human_evaluation"]

    @admin.action(
        description=_("Human evaluation: side-by-side campaigns of the selected entries"),
        permissions=["change"],
    )
    def human_evaluation(self, request, queryset):
        phases = set(queryset.values_list("phase_id", flat=True))
        if len(phases) != 1:
            self.message_user(request, _("Select entries of one phase."), level=messages.ERROR)
            return
        created = run_service(
            self,
            request,
            human_evaluation_create,
            phase_id=phases.pop(),
            submission_ids=list(queryset.values_list("pk", flat=True)),
        )
        if created is not None:
            _campaigns_created(self, request, created)

    list_display = [
        "entry",
        "phase",
        "entrant_isolated",
        "status",
        "progress",
        "is_baseline",
        "is_selected",
        "created_at",
    ]
    list_filter = ["status", "is_baseline", "phase"]
    search_fields = ["method_name", "team__name"]
    inlines = [ScoreInline]
    readonly_fields = [
        "phase",
        "team",
        "submitted_by",
        "method_name",
        "description",
        "paper_url",
        "code_url",
        "file_name",
        "file_sha256",
        "languages",
        "is_baseline",
        "status",
        "error",
        "chunks_done",
        "chunks_total",
        "signatures",
        "timings",
        "created_at",
        "finished_at",
    ]
    fields = readonly_fields + ["is_selected"]

    @admin.display(description=_("submission"), ordering="pk")
    def entry(self, submission):
        return format_html("#{} <bdi>{}</bdi>", submission.pk, submission.method_name)

    @admin.display(description=_("entrant"), ordering="team__name")
    def entrant_isolated(self, submission):
        return isolated(submission.entrant)

    def add_view(self, request, form_url="", extra_context=None):
        def create(data):
            upload = data["file"]
            try:
                return submission_create(
                    phase_id=data["phase"].pk,
                    user=request.user,
                    team_id=None,
                    data=upload,
                    filename=upload.name,
                    language=data["language"],
                    method_name=data["method_name"],
                    description=data["description"],
                    baseline=True,
                )
            except SubmissionRefused as exc:
                raise ValidationFailed(f"{exc.message} " + "; ".join(exc.problems)) from exc

        return service_form_view(
            self,
            request,
            form_class=BaselineForm,
            create=create,
            title=_("Upload a baseline"),
            done=lambda s: _("Baseline “%(name)s” stored; scoring is queued.") % {"name": s.method_name},
            submit_label=_("Upload"),
        )
