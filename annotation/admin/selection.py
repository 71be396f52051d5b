"""Admin of the geographically diverse image selection (seed 000, sec. 2.2).

- **Language areas**: where a language is spoken, beyond CLDR's countries (regions such as
  Telangana for Telugu), checked against the geography's region names.
- **Image selections**: the *Select images* page (the same service as ``manage.py select_images``,
  with a preview that stores nothing), and per selection the per-language level table, the map
  (PNG, SVG), CSV exports and, per language, a link that opens the caption campaign form with that
  language's images.
"""

from __future__ import annotations

import csv
import io

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from annotation.models import ImageSelection, Language, LanguageArea, SelectedLanguage
from annotation.selection import figures, geography
from annotation.selection.algorithm import LEVELS
from annotation.selectors import selection_points
from annotation.services.selection import (
    MAX_PER_LANGUAGE,
    POOL_HELP,
    image_selection_run,
    language_area_validate,
)
from core.admin import ServiceCheckedForm, StyledModelAdmin, admin_page
from core.csv_cells import csv_safe
from core.errors import DomainError

# --- Language areas ---------------------------------------------------------------------------


def _level_figures(s) -> tuple:
    """One language's figures as the level table and its CSV show them: pool, target, the images taken
    at each level (region, country, continent, anywhere: ``LEVELS``), and the shortfall."""
    return (s.pool, s.target, s.n_region, s.n_country, s.n_continent, s.n_global, s.shortfall)


class LanguageAreaForm(ServiceCheckedForm, forms.ModelForm):
    class Meta:
        model = LanguageArea
        fields = ["language", "country_code", "region", "excluded", "note"]

    def check(self, data):
        data["country_code"], data["region"] = language_area_validate(
            country_code=data.get("country_code", ""),
            region=data.get("region", ""),
            excluded=data.get("excluded", False),
        )


@admin.register(LanguageArea)
class LanguageAreaAdmin(StyledModelAdmin):
    form = LanguageAreaForm
    list_display = ["language", "country_code", "region", "excluded", "note"]
    list_filter = ["language", "excluded"]
    search_fields = ["language__code", "language__name", "country_code", "region"]


# --- Selections -------------------------------------------------------------------------------


class SelectionForm(forms.Form):
    name = forms.CharField(
        max_length=200, help_text="A name to find the image sets by (no spaces to use it in a pool query)."
    )
    languages = forms.ModelMultipleChoiceField(
        Language.objects.all(),
        widget=forms.CheckboxSelectMultiple,
        help_text="The languages to select images for.",
    )
    per_language = forms.IntegerField(
        min_value=1, max_value=MAX_PER_LANGUAGE, initial=100, label="Images per language"
    )
    seed = forms.IntegerField(
        required=False,
        min_value=0,
        help_text="Breaks ties; empty: drawn at random and stored with the selection.",
    )
    pool_query = forms.CharField(required=False, max_length=500, label="Pool", help_text=POOL_HELP)
    min_share = forms.FloatField(
        min_value=0,
        max_value=100,
        initial=geography.MIN_SHARE,
        label="Minimum population share (%)",
        help_text="A country counts for a language when CLDR lists it as (regionally) official there, spoken by "
        "at least this share of the people. Regions come from the language areas.",
    )
    preview = forms.BooleanField(
        required=False, initial=True, label="Preview only", help_text="Show the level table; store nothing."
    )


def level_rows(selection: ImageSelection) -> list[SelectedLanguage]:
    return list(selection.languages.select_related("language").order_by("order"))


@admin.register(ImageSelection)
class ImageSelectionAdmin(StyledModelAdmin):
    list_display = ["name", "created_at", "per_language", "seed", "pool_size", "languages_shown", "missing"]
    search_fields = ["name"]
    readonly_fields = [
        "name",
        "created_at",
        "per_language",
        "seed",
        "pool_query",
        "pool_size",
        "min_share",
        "geography",
        "level_table",
        "map_and_exports",
    ]
    fields = readonly_fields

    def has_change_permission(self, request, obj=None):
        return False  # a selection is a record: reproduce it from its seed rather than edit it

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("languages__language")

    @admin.display(description="languages")
    def languages_shown(self, obj):
        return ", ".join(s.language.code for s in sorted(obj.languages.all(), key=lambda s: s.order))

    @admin.display(description="missing images")
    def missing(self, obj):
        return sum(s.shortfall for s in obj.languages.all())

    @admin.display(description="per-language levels")
    def level_table(self, obj):
        rows = level_rows(obj)
        campaign_add = reverse("admin:annotation_campaign_add")
        body = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
            "<td>{}</td><td>{}</td></tr>",
            (
                (
                    s.order,
                    str(s.language),
                    *_level_figures(s),
                    format_html('<a href="{}?from_selection={}">caption campaign</a>', campaign_add, s.pk),
                )
                for s in rows
            ),
        )
        return format_html(
            '<table class="selection-levels"><thead><tr><th>order</th><th>language</th><th>pool</th>'
            "<th>target</th><th>region</th><th>country</th><th>continent</th><th>global</th><th>missing</th>"
            "<th></th></tr></thead><tbody>{}</tbody></table>",
            body,
        )

    @admin.display(description="map and exports")
    def map_and_exports(self, obj):
        def url(name, *args):
            return reverse(f"admin:annotation_imageselection_{name}", args=[obj.pk, *args])

        return format_html(
            '<p><a href="{}">map (PNG)</a> · <a href="{}">map (SVG)</a> · '
            '<a href="{}">images (CSV)</a> · <a href="{}">level table (CSV)</a></p>'
            '<img class="selection-map" src="{}" alt="Map of the selected images">',
            url("map", "png"),
            url("map", "svg"),
            url("images"),
            url("levels"),
            url("map", "png"),
        )

    def get_urls(self):
        return [
            admin_page(self, "<id:pk>/change/map/<str:fmt>/", self.map_view, "map"),
            admin_page(self, "<id:pk>/change/images-csv/", self.images_csv_view, "images"),
            admin_page(self, "<id:pk>/change/levels-csv/", self.levels_csv_view, "levels"),
            *super().get_urls(),
        ]

    def _selection(self, request, pk: int) -> ImageSelection:
        if not self.has_view_permission(request):
            raise PermissionDenied
        selection = ImageSelection.objects.filter(pk=pk).first()
        if selection is None:
            raise Http404("No such selection.")
        return selection

    def map_view(self, request, pk: int, fmt: str):
        selection = self._selection(request, pk)
        if fmt not in figures.FORMATS:
            raise Http404("The map is PNG or SVG.")
        points = [
            figures.Point(
                language=p["language_set__language__code"],
                level=p["level"],
                latitude=p["image__latitude"],
                longitude=p["image__longitude"],
            )
            for p in selection_points(selection_id=selection.pk)
        ]
        data = figures.selection_map(
            points, title=f"Image selection “{selection.name}” (seed {selection.seed})", fmt=fmt
        )
        response = HttpResponse(data, content_type="image/png" if fmt == "png" else "image/svg+xml")
        response["Content-Disposition"] = f'inline; filename="selection-{selection.pk}-map.{fmt}"'
        return response

    def _csv(self, name: str, header: list[str], rows) -> HttpResponse:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow([csv_safe(v) if isinstance(v, str) else ("" if v is None else v) for v in row])
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response

    def images_csv_view(self, request, pk: int):
        selection = self._selection(request, pk)
        columns = [
            "language",
            "rank",
            "image_key",
            "level",
            "latitude",
            "longitude",
            "country_code",
            "region",
            "continent",
        ]
        rows = (
            (
                p["language_set__language__code"],
                p["rank"],
                p["image__key"],
                p["level"],
                p["image__latitude"],
                p["image__longitude"],
                p["image__country_code"],
                p["image__region"],
                p["image__continent"],
            )
            for p in selection_points(selection_id=selection.pk)
        )
        return self._csv(f"selection-{selection.pk}-images.csv", columns, rows)

    def levels_csv_view(self, request, pk: int):
        selection = self._selection(request, pk)
        columns = ["order", "language", "pool", "target", *LEVELS, "missing", "seed"]
        rows = ((s.order, s.language.code, *_level_figures(s), selection.seed) for s in level_rows(selection))
        return self._csv(f"selection-{selection.pk}-levels.csv", columns, rows)

    def add_view(self, request, form_url="", extra_context=None):
        """The Select images page: preview (dry run) or select and store, through the service."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        initial = {}
        if request.method == "GET" and request.GET.get("languages"):
            initial["languages"] = [v for v in request.GET["languages"].split(",") if v.isdigit()]
        form = SelectionForm(request.POST or None, initial=initial or None)
        report = None
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                with transaction.atomic():
                    report = image_selection_run(
                        name=data["name"],
                        language_codes=[lang.code for lang in data["languages"]],
                        per_language=data["per_language"],
                        pool_query=data["pool_query"] or "",
                        seed=data["seed"],
                        min_share=data["min_share"],
                        dry_run=data["preview"],
                    )
            except DomainError as exc:
                form.add_error(None, exc.message)
            else:
                if not report.dry_run:
                    selection = ImageSelection.objects.get(pk=report.selection_id)
                    self.log_addition(request, selection, [{"added": {}}])
                    level = messages.WARNING if report.shortfall else messages.SUCCESS
                    self.message_user(
                        request,
                        " ".join(report.lines()[:1] + report.lines()[2 + len(report.rows) :]),
                        level=level,
                    )
                    return redirect("admin:annotation_imageselection_change", selection.pk)
                # The preview's seed is kept, so storing it gives exactly what was shown.
                form = SelectionForm(
                    initial={
                        **data,
                        "languages": list(data["languages"]),
                        "seed": report.seed,
                        "preview": False,
                    }
                )
        context = {
            **self.admin_site.each_context(request),
            "title": "Select images per language",
            "form": form,
            "opts": self.opts,
            "media": self.media + form.media,
            "report": report,
            "levels": LEVELS,
        }
        return TemplateResponse(request, "admin/annotation/imageselection/select.html", context)
