"""Zero-shot and foil checks in the admin: start one from uploaded files (planned once, through the
service, so every problem shows on the form and nothing is stored), follow it, read its per-language
table, resume it."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.utils.html import format_html, format_html_join

from annotation.admin.imports import MultipleFileField
from core.admin import ServiceCheckedForm, StyledModelAdmin
from core.jobs.admin import JobAdminMixin, PlannedJobAdminMixin
from evaluation.admin.clip_model_form import ClipCheckColumns, ClipCheckModelFields, LanguageCodesField
from evaluation.clip_checks.files import DEFAULT_MIN_VOTES
from evaluation.clip_checks.plan import foil_check_plan, probe_check_store, zeroshot_check_plan
from evaluation.clip_checks.selectors import probe_check_queryset, probe_ratio
from evaluation.clip_checks.tasks import CLIP_PROBE_CHECK
from evaluation.models import ClipProbe, ClipProbeCheck, RunStatus
from evaluation.research.clip_trust_tables import probe_check_rows


def _upload(file) -> tuple[str, bytes]:
    return file.name, file.read()


class ClipProbeCheckStartForm(ServiceCheckedForm, ClipCheckModelFields, forms.ModelForm):
    """Start a check from files: the service's own validation, so every problem shows on the form."""

    name = forms.CharField(required=False, help_text="Empty: the model and the data it is checked on.")
    probe = forms.ChoiceField(choices=ClipProbe.choices, help_text="Zero-shot classification or foils.")
    labels = forms.FileField(
        required=False,
        help_text='Zero-shot: class labels, Babel-ImageNet\'s JSON ({"de": [[indices], [labels]]}) or a '
        "class_id,language,label CSV.",
    )
    labelled_images = forms.FileField(
        required=False, help_text="Zero-shot: an image,class_id CSV naming imported images by key."
    )
    templates = forms.FileField(
        required=False,
        help_text="Zero-shot, optional: a language,template CSV, each template with {} where the label goes; "
        "a language without templates uses the plain label.",
    )
    foil_files = MultipleFileField(
        required=False,
        # The admin renders help text as HTML: the placeholders are escaped to show as written.
        help_text="Foils: VALSE-format JSON files, each named &lt;language code&gt;.json or "
        "&lt;language code&gt;_&lt;name&gt;.json (en.json, de_counting.json).",
    )
    min_votes = forms.IntegerField(
        min_value=0,
        initial=DEFAULT_MIN_VOTES,
        help_text="Foils: keep pairs whose caption at least this many of VALSE's 3 annotators validated.",
    )
    skip_unknown_images = forms.BooleanField(
        required=False,
        help_text="Foils: drop the pairs whose image is not imported (counted) instead of refusing.",
    )
    language_codes = LanguageCodesField(
        help_text="Codes separated by spaces or commas; empty: every language of the files. Include en: the "
        "other languages are judged against English.",
    )

    class Meta:
        model = ClipProbeCheck
        fields = ["name"]

    def check(self, data):
        common = self.clip_check_arguments(data)
        if data["probe"] == ClipProbe.ZEROSHOT:
            if not data.get("labels") or not data.get("labelled_images"):
                raise forms.ValidationError(
                    "A zero-shot check needs the class labels and the labelled images."
                )
            self.plan = zeroshot_check_plan(
                labels=_upload(data["labels"]),
                images=_upload(data["labelled_images"]),
                templates=_upload(data["templates"]) if data.get("templates") else None,
                **common,
            )
        else:
            if not data.get("foil_files"):
                raise forms.ValidationError("A foil check needs at least one VALSE-format file.")
            self.plan = foil_check_plan(
                files=[(*_upload(file), "") for file in data["foil_files"]],
                min_votes=data["min_votes"],
                skip_unknown_images=data.get("skip_unknown_images", False),
                **common,
            )


@admin.register(ClipProbeCheck)
class ClipProbeCheckAdmin(ClipCheckColumns, JobAdminMixin, PlannedJobAdminMixin, StyledModelAdmin):
    list_display = [
        "id",
        "name",
        "probe",
        "clip_model_label",
        "languages_list",
        "status",
        "progress",
        "failing",
        "finished_at",
    ]
    list_filter = ["probe", "status"]
    search_fields = ["name", "model_id"]
    job_kind = CLIP_PROBE_CHECK
    check_fields = [
        "name",
        "probe",
        *ClipCheckColumns.CHECK_HEAD_FIELDS,
        "imported",
        "languages_list",
        "results_table",
        *JobAdminMixin.LIFECYCLE_FIELDS,
        "versions",
    ]
    job_fields = check_fields
    job_store = staticmethod(probe_check_store)
    job_start_form = ClipProbeCheckStartForm
    job_start_fields = [
        "name",
        "probe",
        "labels",
        "labelled_images",
        "templates",
        "foil_files",
        "min_votes",
        "skip_unknown_images",
        "language_codes",
        "clip_model",
        "model",
        "pretrained",
        "checkpoint",
    ]

    def get_queryset(self, request):
        return probe_check_queryset()

    @admin.display(description="below the threshold × English")
    def failing(self, check):
        if check.status != RunStatus.SUCCEEDED:
            return "–"
        codes = sorted(
            code for code in check.results if (r := probe_ratio(check, code)) is not None and r.failed
        )
        return ", ".join(codes) or "none"

    @admin.display(description="imported")
    def imported(self, check):
        data = check.data or {}
        if check.probe == ClipProbe.ZEROSHOT:
            classes = ", ".join(f"{code} {n}" for code, n in data.get("n_classes", {}).items())
            return f"{data.get('n_images', 0)} labelled images; classes per language: {classes}"
        pairs = ", ".join(f"{code} {n}" for code, n in data.get("n_pairs", {}).items())
        skipped = data.get("skipped_unknown_images") or {}
        return f"{data.get('rule', '')}; pairs per language: {pairs}" + (
            f"; skipped for unknown images: {skipped}" if skipped else ""
        )

    @admin.display(description="results (accuracies in %)")
    def results_table(self, check):
        if not check.results:
            return "no results yet"
        rows = probe_check_rows(check)
        pct = lambda v: "–" if v is None else f"{100 * v:.1f}"  # noqa: E731
        ratio = lambda r: "–" if r["ratio"] is None else f"{r['ratio']:.2f}×"  # noqa: E731
        if check.probe == ClipProbe.ZEROSHOT:
            head = (
                "language",
                "classes",
                "images",
                "top-1",
                "top-5",
                "en top-1, same classes",
                "ratio",
                "notes",
            )
            cells = [
                (
                    r["language"],
                    r["n_classes"],
                    r["n_images"],
                    pct(r["top1"]),
                    pct(r["top5"]),
                    pct(r["baseline_top1"]),
                    ratio(r),
                    "; ".join(r["notes"]),
                )
                for r in rows
            ]
        else:
            head = ("language", "phenomenon", "pairs", "accuracy", "95% interval", "ties", "ratio to en")
            cells = [
                (
                    r["language"],
                    r["phenomenon"],
                    r["n_pairs"],
                    pct(r["accuracy"]),
                    "–" if not r["interval"] else f"[{pct(r['interval'][0])}, {pct(r['interval'][1])}]",
                    r["ties"],
                    ratio(r),
                )
                for r in rows
            ]
        return format_html(
            "<table id='probe-results'><thead><tr>{}</tr></thead><tbody>{}</tbody></table>",
            format_html_join("", "<th>{}</th>", ((h,) for h in head)),
            format_html_join(
                "",
                "<tr class='{}' data-language='{}'>{}</tr>",
                (
                    (
                        "clip-unreliable" if r["failed"] else "",
                        r["language"],
                        format_html_join("", "<td>{}</td>", ((c,) for c in cell)),
                    )
                    for r, cell in zip(rows, cells, strict=True)
                ),
            ),
        )
