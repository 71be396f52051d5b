"""Annotators in the admin: one form creates the account, the profile and the language skills;
a CSV file creates many (dry run first). Neither can make staff: see annotation.services.annotators."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin

from annotation.admin.imports import ImportForm, StagedImportAdminMixin, staged_import_view
from annotation.importers.annotators import annotators_import
from annotation.models import (
    Annotator,
    AnnotatorSkill,
    Batch,
    BatchStage,
    Language,
    SkillLevel,
    WrittenCaption,
)
from annotation.services.annotators import annotator_create, password_set_path
from core.admin import StyledModelAdmin, count_of, service_form_view, sortable_column


def annotator_search(path: str = "annotator") -> list[str]:
    """Admin search fields that find one annotator's rows through ``path``: their exact username or
    pseudonym (a search names a person, and never finds another whose name merely contains it)."""
    return [f"={path}__user__username", f"={path}__pseudonym"]


class AnnotatorSkillInline(admin.TabularInline):
    model = AnnotatorSkill
    extra = 1
    fields = ["language", "level"]


class AnnotatorCreateForm(forms.Form):
    """A new annotator. No staff, superuser or group field: this form cannot make anything else."""

    username = forms.CharField(
        max_length=150, help_text="What they log in with. Letters, digits and @ . + - _."
    )
    email = forms.EmailField(help_text="Where you send them the link to choose a password.")
    native = forms.ModelMultipleChoiceField(
        Language.objects.order_by("name"),
        required=False,
        label="Native in",
        help_text="Ctrl- or ⌘-click to choose several.",
    )
    fluent = forms.ModelMultipleChoiceField(
        Language.objects.order_by("name"), required=False, label="Fluent in"
    )
    reads_english = forms.BooleanField(
        required=False,
        initial=True,
        label="Reads English",
        help_text="Needed for caption campaigns: screen 1 shows English captions.",
    )

    def clean(self):
        data = super().clean()
        native, fluent = set(data.get("native") or ()), set(data.get("fluent") or ())
        if not native and not fluent:
            raise forms.ValidationError("Choose at least one language the annotator is native or fluent in.")
        both = sorted(language.code for language in native & fluent)
        if both:
            self.add_error("fluent", f"Native or fluent, not both: {', '.join(both)}.")
        return data


class AnnotatorImportForm(ImportForm):
    file = forms.FileField(
        label="CSV file",
        help_text="Header: username,email,languages,reads_english — e.g. "
        "anna-de,anna@example.org,de:native;en:fluent,yes",
    )


class AnnotatorChangeForm(forms.ModelForm):
    interface_language = forms.ChoiceField(
        required=False,
        choices=[("", "Automatic (the campaign's language where the interface has it)"), *settings.LANGUAGES],
        help_text="The annotator can change it from the top bar of their pages.",
    )

    class Meta:
        model = Annotator
        fields = ["reads_english", "interface_language"]


@admin.register(Annotator)
class AnnotatorAdmin(StagedImportAdminMixin, StyledModelAdmin):
    form = AnnotatorChangeForm
    list_display = [
        "user",
        "pseudonym",
        "reads_english",
        "languages",
        "batches_submitted",
        "captions_written",
    ]
    list_select_related = ["user"]
    list_filter = ["reads_english", "skills__language"]
    search_fields = ["user__username", "pseudonym"]
    # The account as text: a read-only foreign key would be drawn as a link to the user's admin page,
    # which a researcher may not open (no view permission on accounts).
    readonly_fields = ["account", "pseudonym", "created_at"]
    fields = ["account", "pseudonym", "reads_english", "interface_language", "created_at"]
    inlines = [AnnotatorSkillInline]
    import_tool_label = "Add annotators from a CSV file"

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_batches=count_of(Batch, "annotator", stage=BatchStage.SUBMITTED),
                n_captions=count_of(WrittenCaption, "annotator"),
            )
            # One extra query for the languages of the whole page, not one per row.
            .prefetch_related("skills__language")
        )

    @admin.display(description="user")
    def account(self, obj):
        return obj.user.get_username()

    def add_view(self, request, form_url="", extra_context=None):
        """One form: account (never staff, no password), profile and skills; then a set-password link."""

        def create(data):
            return annotator_create(
                username=data["username"],
                email=data["email"],
                skills=form_skills(data),
                reads_english=data["reads_english"],
            )

        def form_skills(data):
            return [(lang.code, SkillLevel.NATIVE) for lang in data["native"]] + [
                (lang.code, SkillLevel.FLUENT) for lang in data["fluent"]
            ]

        def done(annotator):
            link = request.build_absolute_uri(password_set_path(annotator.user))
            return (
                f"Created annotator “{annotator.user.username}” ({self.languages(annotator)}). "
                f"Send them this link to choose their password (shown once; it works once, for "
                f"{self._link_days()}): {link}"
            )

        return service_form_view(
            self,
            request,
            form_class=AnnotatorCreateForm,
            create=create,
            title="Add annotator",
            done=done,
        )

    def import_view(self, request):
        def run(paths, options, dry_run):
            return annotators_import(path=paths["file"][0], dry_run=dry_run)

        def after(report):
            from django.contrib.auth import get_user_model

            users = get_user_model().objects.filter(username__in=report.created_keys).order_by("username")
            return [
                f"{user.username}: {request.build_absolute_uri(password_set_path(user))}" for user in users
            ]

        return staged_import_view(
            self,
            request,
            kind="annotators",
            form_class=AnnotatorImportForm,
            run=run,
            title="Add annotators from a CSV file",
            intro="Every line is checked as the Add annotator form checks it; one bad line and nothing is "
            "imported. Accounts are never staff and get a one-time link to choose a password. "
            "A line for an existing annotator adds languages or changes levels (none are removed).",
            after=after,
        )

    @staticmethod
    def _link_days() -> str:
        from django.conf import settings

        days = settings.PASSWORD_RESET_TIMEOUT / 86400
        return f"{days:g} day{'s' if days != 1 else ''}"

    @admin.display(description="languages")
    def languages(self, obj):
        return ", ".join(f"{s.language.code} ({s.level})" for s in obj.skills.all())

    batches_submitted = sortable_column("n_batches", "batches submitted")
    captions_written = sortable_column("n_captions", "captions written")
