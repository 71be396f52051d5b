"""Admin of what campaigns are built from: languages, annotators, images, systems and their captions."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from annotation.admin.imports import ImportForm, MultipleFileField, StagedImportAdminMixin, staged_import_view
from annotation.importers import images_import, system_captions_import
from annotation.models import (
    AnnotatorSkill,
    Campaign,
    CaptioningSystem,
    Image,
    Language,
    SystemCaption,
    WrittenCaption,
)
from annotation.services.images import METADATA_FIELDS, image_place_derive, image_store, image_validate
from annotation.services.languages import XM3600_LANGUAGES, languages_add
from core.admin import ConditionFilter, CountedAdmin, StyledModelAdmin, run_service, sortable_column
from core.errors import ValidationFailed


class LanguagesAddForm(forms.Form):
    codes = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Language codes separated by spaces or commas, e.g. “de ar ja fil quz”.",
    )
    xm3600 = forms.BooleanField(required=False, label="The 36 languages of Crossmodal-3600")


@admin.register(Language)
class LanguageAdmin(CountedAdmin, StyledModelAdmin):
    list_display = ["code", "name", "direction", "tokenizer", "annotators", "campaigns", "written_captions"]
    list_filter = ["direction", "tokenizer"]
    search_fields = ["code", "name"]
    actions = ["select_images"]
    change_list_template = "admin/change_list_tools.html"

    def get_urls(self):
        return [
            path(
                "add-by-code/",
                self.admin_site.admin_view(self.add_by_code_view),
                name="annotation_language_add_by_code",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        tools = []
        if self.has_add_permission(request):
            tools.append(
                {"url": reverse("admin:annotation_language_add_by_code"), "label": "Add languages by code"}
            )
        return super().changelist_view(request, {**(extra_context or {}), "extra_tools": tools})

    def add_by_code_view(self, request):
        """Languages by code with CLDR's names, direction and default scheme (languages_add): one form
        for one or all 36 of XM3600; languages already there are left as they are."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = LanguagesAddForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            codes = form.cleaned_data["codes"].replace(",", " ").split()
            if form.cleaned_data["xm3600"]:
                codes += XM3600_LANGUAGES
            result = run_service(self, request, languages_add, codes=codes)
            if result is not None:
                added = ", ".join(f"{lang.name} ({lang.code})" for lang in result.created) or "none"
                self.message_user(
                    request,
                    f"Added {len(result.created)} language(s): {added}. "
                    f"{len(result.existing)} were already there and are unchanged.",
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(reverse("admin:annotation_language_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Add languages by code",
            "form": form,
        }
        return TemplateResponse(request, "admin/annotation/language/add_by_code.html", context)

    @admin.action(description="Select geographically diverse images for these languages", permissions=["add"])
    def select_images(self, request, queryset):
        ids = ",".join(str(pk) for pk in queryset.order_by("code").values_list("pk", flat=True))
        return HttpResponseRedirect(f"{reverse('admin:annotation_imageselection_add')}?languages={ids}")

    counts = {
        "n_annotators": (AnnotatorSkill, "language"),
        "n_campaigns": (Campaign, "language"),
        "n_written": (WrittenCaption, "language"),
    }
    annotators = sortable_column("n_annotators", "annotators")
    campaigns = sortable_column("n_campaigns", "campaigns")
    written_captions = sortable_column("n_written", "written captions")


_NO_FILE = Q(file="") | Q(file__isnull=True)


class HasFileFilter(ConditionFilter):
    title = "file"
    parameter_name = "has_file"
    conditions = (("yes", "stored", ~_NO_FILE), ("no", "missing", _NO_FILE))


def image_tag(image: Image, css_class: str):
    if not image.file:
        return "–"
    return format_html(
        '<img src="{}" class="{}" alt="{}" loading="lazy">',
        reverse("annotation:image", args=[image.pk]),
        css_class,
        image.key,
    )


class ImageUploadForm(forms.ModelForm):
    """Adds one image: the file goes through the image service, with all its checks (format
    allow-list, size, truncated files, decompression bombs, disguised SVG/HTML)."""

    upload = forms.FileField(label="image file", help_text="JPEG, PNG, WebP or GIF.")
    source_url = forms.URLField(required=False, max_length=500, assume_scheme="https")

    class Meta:
        model = Image
        fields = ["key", *METADATA_FIELDS]

    def clean_upload(self):
        upload = self.cleaned_data["upload"]
        if upload.size > settings.IMAGE_MAX_BYTES:
            raise forms.ValidationError(f"The file is larger than {settings.IMAGE_MAX_BYTES:,} bytes.")
        data = upload.read()
        try:
            validated = image_validate(data, name=upload.name)
        except ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from None
        other = (
            Image.objects.filter(content_hash=validated.content_hash).values_list("key", flat=True).first()
        )
        if other is not None:
            raise forms.ValidationError(f"This picture is already stored as image “{other}”.")
        self.file_bytes = data
        return upload


class ImageImportForm(ImportForm):
    """What ``manage.py import_images`` takes, as uploads: image files and/or metadata files."""

    files = MultipleFileField(
        required=False,
        label="Image files",
        help_text="Choose many at once. Each file is named <key>.<ext> (JPEG, PNG, WebP or GIF); "
        "at most 100 files per upload.",
    )
    metadata = forms.FileField(
        required=False,
        help_text="Optional: .txt (one key per line, XM3600 image_ids.txt), .csv or .jsonl with key, license, "
        "author, title, source_url, latitude, longitude, country, region, continent.",
    )
    attributions = forms.FileField(
        required=False, help_text="Optional: an Open Images attribution CSV (XM3600 image_attributions.csv)."
    )
    shapes = forms.FileField(
        required=False, help_text="Optional: key,width,height rows (XM3600 image_shapes.csv)."
    )

    def clean(self):
        data = super().clean()
        if not any(data.get(name) for name in ("files", "metadata", "attributions", "shapes")):
            raise forms.ValidationError("Choose image files and/or a metadata file.")
        return data


def _run_images_import(paths, options, dry_run):
    def one(name):
        return paths[name][0] if paths.get(name) else None

    folder = paths["files"][0].parent if paths.get("files") else None
    return images_import(
        folder=folder,
        metadata=one("metadata"),
        attributions=one("attributions"),
        shapes=one("shapes"),
        dry_run=dry_run,
    )


class SystemCaptionImportForm(ImportForm):
    """What ``manage.py import_system_captions`` takes: one file of a system's captions."""

    system = forms.CharField(
        max_length=200, help_text="Name of the captioning system; a new name creates the system."
    )
    file = forms.FileField(
        help_text='COCO results (.json: [{"image_id": …, "caption": …}]) or JSON lines '
        '({"image/key": …, "de": {"caption": […]}}).'
    )
    language = forms.ModelChoiceField(
        Language.objects.all(),
        required=False,
        help_text="Required for COCO results. For JSON lines: only this language (empty: every language).",
    )
    skip_unknown = forms.BooleanField(
        required=False,
        label="Skip unknown images",
        help_text="Import the other captions when some image keys are not stored (they are listed).",
    )
    language_check_reason = forms.CharField(
        label="Import anyway, because",
        max_length=500,
        required=False,
        help_text="Captions go through the script and language checks of annotators' captions; a file that "
        "fails them is refused with the counts per problem. To import it anyway, say why (recorded on the "
        "system).",
    )

    def options(self):
        language = self.cleaned_data.get("language")
        return {
            "system": self.cleaned_data["system"].strip(),
            "language": language.code if language else None,
            "skip_unknown": bool(self.cleaned_data.get("skip_unknown")),
            "language_check_reason": (self.cleaned_data.get("language_check_reason") or "").strip(),
        }


def _run_captions_import(paths, options, dry_run):
    return system_captions_import(
        path=paths["file"][0],
        system_name=options["system"],
        language_code=options["language"],
        skip_unknown=options["skip_unknown"],
        language_check_reason=options.get("language_check_reason", ""),
        dry_run=dry_run,
    )


@admin.register(Image)
class ImageAdmin(StagedImportAdminMixin, StyledModelAdmin):
    list_display = [
        "thumbnail",
        "key",
        "has_file",
        "format",
        "width",
        "height",
        "country",
        "continent",
        "license",
    ]
    list_display_links = ["thumbnail", "key"]
    list_filter = [HasFileFilter, "continent", "format", "country"]
    search_fields = ["key", "title"]
    show_full_result_count = False
    list_per_page = 50
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    # The file is shown as its stored name, never as a media URL: pictures are served only
    # through the access-checked image view.
    readonly_fields = [
        "key",
        "preview",
        "stored_as",
        "content_hash",
        "format",
        "width",
        "height",
        "country_code",
        "created_at",
    ]
    fieldsets = [
        (None, {"fields": ["key", "preview", "stored_as", "content_hash", "format", "width", "height"]}),
        ("Source and licence", {"fields": ["title", "author", "license", "source_url"]}),
        ("Place", {"fields": ["latitude", "longitude", "country_code", "country", "region", "continent"]}),
    ]
    add_fieldsets = [
        (None, {"fields": ["key", "upload"]}),
        ("Source and licence", {"fields": ["title", "author", "license", "source_url"]}),
        ("Place", {"fields": ["latitude", "longitude", "country", "region", "continent"]}),
    ]

    import_tool_label = "Import images (many files, metadata)"

    def import_view(self, request):
        return staged_import_view(
            self,
            request,
            kind="images",
            form_class=ImageImportForm,
            run=_run_images_import,
            title="Import images",
            intro="The same import as manage.py import_images: every file and line is checked first and "
            "a dry run shows what would change; nothing is written until you press Import. Importing "
            "the same files again changes nothing.",
        )

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = ImageUploadForm
        return super().get_form(request, obj, **kwargs)

    def get_fieldsets(self, request, obj=None):
        return self.add_fieldsets if obj is None else self.fieldsets

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        if change:
            # Metadata only: the file, its hash and size are read-only here. New coordinates give a
            # new country code (and fill the place fields left empty).
            if {"latitude", "longitude"} & set(form.changed_data):
                image_place_derive(image=obj, given=set(form.changed_data))
            return super().save_model(request, obj, form, change)
        metadata = {name: form.cleaned_data.get(name) for name in METADATA_FIELDS}
        result = run_service(
            self,
            request,
            image_store,
            key=obj.key,
            data=form.file_bytes,
            name=form.cleaned_data["upload"].name,
            **metadata,
        )
        if result is not None:
            stored, _ = result
            obj.pk = stored.pk
            obj._state.adding = False
            for name in ("file", "content_hash", "format", "width", "height", "created_at", "updated_at"):
                setattr(obj, name, getattr(stored, name))

    def log_addition(self, request, obj, message):
        if obj.pk is not None:
            return super().log_addition(request, obj, message)
        return None

    def response_add(self, request, obj, post_url_continue=None):
        if obj.pk is None:  # the service refused it; its message is already shown
            return HttpResponseRedirect(request.path)
        return super().response_add(request, obj, post_url_continue)

    @admin.display(description="image")
    def thumbnail(self, obj):
        return image_tag(obj, "admin-thumb")

    @admin.display(description="preview")
    def preview(self, obj):
        return image_tag(obj, "admin-preview")

    @admin.display(description="file", boolean=True, ordering="file")
    def has_file(self, obj):
        return obj.has_file

    @admin.display(description="stored as")
    def stored_as(self, obj):
        return obj.file.name if obj.file else "–"

    @admin.display(description="licence", ordering="license")
    def licence(self, obj):
        return Truncator(obj.license).chars(40)


@admin.register(CaptioningSystem)
class CaptioningSystemAdmin(CountedAdmin, StyledModelAdmin):
    list_display = ["name", "captions", "prompt_campaigns", "description_short"]
    search_fields = ["name"]
    readonly_fields = ["language_check_overrides"]

    counts = {"n_captions": (SystemCaption, "system"), "n_prompt": (Campaign, "prompt_system")}
    captions = sortable_column("n_captions", "captions")

    @admin.display(description="prompt system of", ordering="n_prompt")
    def prompt_campaigns(self, obj):
        return f"{obj.n_prompt} campaign{'s' if obj.n_prompt != 1 else ''}"

    @admin.display(description="description")
    def description_short(self, obj):
        return Truncator(obj.description).chars(80)


@admin.register(SystemCaption)
class SystemCaptionAdmin(StagedImportAdminMixin, StyledModelAdmin):
    list_display = ["image", "system", "language", "text_short"]
    list_select_related = ["image", "system", "language"]
    list_filter = ["system", "language"]
    search_fields = ["=image__key", "text"]
    autocomplete_fields = ["image"]
    show_full_result_count = False

    import_tool_label = "Import system captions (COCO results or JSON lines)"

    def import_view(self, request):
        return staged_import_view(
            self,
            request,
            kind="system-captions",
            form_class=SystemCaptionImportForm,
            run=_run_captions_import,
            title="Import system captions",
            intro="The same import as manage.py import_system_captions: the whole file is checked first and "
            "a dry run shows what would change; nothing is written until you press Import.",
        )

    @admin.display(description="text")
    def text_short(self, obj):
        return Truncator(obj.text).chars(120)
