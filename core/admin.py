"""What every app's admin shares: per-row counts without N+1, domain errors as messages, the page whose
only write is one service call, durations as a manager reads them, the stylesheet, and read-only records.

Nothing is registered here: each app's ``admin`` module registers its own models."""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, IntegerField, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone
from django.utils.formats import date_format

from core.errors import DomainError


def count_of(model, fk: str, **filters) -> Coalesce:
    """A correlated ``COUNT`` for each row of the outer query, through the foreign key ``fk``.

    Unlike ``Count("relation")`` several of these on one queryset do not multiply each
    other through joins, and the outer query needs no GROUP BY: the changelist stays one
    query whatever the number of rows below each object.
    """
    counted = (
        model.objects.filter(**{fk: OuterRef("pk")}, **filters)
        .order_by()
        .values(fk)
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def sortable_column(attribute: str, description: str):
    """A changelist column showing each row's ``attribute`` (a field, or a per-row count made with
    :func:`count_of` in the admin's queryset) under the heading ``description``, sortable by it."""

    @admin.display(description=description, ordering=attribute)
    def column(modeladmin, obj):
        return getattr(obj, attribute)

    return column


def date_column(field: str, description: str, date_format_name: str):
    """A changelist column showing the datetime ``field`` in the local time zone, as the Django date format
    ``date_format_name`` writes it, sortable by it."""

    @admin.display(description=description, ordering=field)
    def column(modeladmin, obj):
        return date_format(timezone.localtime(getattr(obj, field)), date_format_name)

    return column


class CountedAdmin:
    """A changelist with per-row counts (mixed in before the ModelAdmin): ``counts`` maps each
    annotation to the arguments of :func:`count_of`, ``(model, fk)`` or ``(model, fk, filters)``;
    show one with :func:`sortable_column`."""

    counts: dict[str, tuple] = {}

    def get_queryset(self, request):
        annotations = {
            name: count_of(model, fk, **(filters[0] if filters else {}))
            for name, (model, fk, *filters) in self.counts.items()
        }
        return super().get_queryset(request).annotate(**annotations)


def admin_page(modeladmin: admin.ModelAdmin, route: str, view: Callable, suffix: str):
    """A page of ``modeladmin`` at ``route`` below its list, behind the admin's login and staff check, named
    ``admin:<app>_<model>_<suffix>`` as the admin names its own pages."""
    opts = modeladmin.opts
    return path(
        route, modeladmin.admin_site.admin_view(view), name=f"{opts.app_label}_{opts.model_name}_{suffix}"
    )


def run_service(modeladmin: admin.ModelAdmin, request, service: Callable, **kwargs):
    """Call a service; a DomainError becomes an ERROR message instead of a 500. Returns the result or None."""
    try:
        return service(**kwargs)
    except DomainError as exc:
        modeladmin.message_user(request, exc.message, level=messages.ERROR)
        return None


def run_service_each(
    modeladmin: admin.ModelAdmin, request, service: Callable, objects, arguments: Callable
) -> list:
    """Call ``service(**arguments(obj))`` for each of ``objects`` in order (an admin action on the selected
    rows); each DomainError becomes an ERROR message and the others still run. Returns the objects it
    worked on, for the action's one success message."""
    return [obj for obj in objects if run_service(modeladmin, request, service, **arguments(obj)) is not None]


def seconds_display(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class ReadOnlyAdminMixin:
    """A record that services write and the admin only shows: it cannot be added or changed here. With
    ``deletable = False`` it cannot be deleted either (the record is evidence others rely on); otherwise
    deleting follows the user's permission. Works for model admins and inlines alike."""

    deletable = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return self.deletable and super().has_delete_permission(request, obj)


class ServiceCheckedForm(forms.BaseForm):
    """A form (mixed in before ``forms.Form`` or ``forms.ModelForm``) whose fields, once they pass, are
    checked by a service: ``check(cleaned_data)`` calls it and may keep what it returns; the
    DomainError it raises becomes the form's error."""

    def check(self, data: dict) -> None:
        raise NotImplementedError

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        try:
            self.check(data)
        except DomainError as exc:
            raise forms.ValidationError(exc.message) from None
        return data


class ConditionFilter(admin.SimpleListFilter):
    """A list filter whose ``conditions`` are ``(value, label, condition)``: choosing one shows the
    rows that meet its condition (a ``Q``)."""

    conditions: tuple[tuple[str, str, Q], ...] = ()

    def lookups(self, request, model_admin):
        return [(value, label) for value, label, _condition in self.conditions]

    def queryset(self, request, queryset):
        for value, _label, condition in self.conditions:
            if self.value() == value:
                return queryset.filter(condition)
        return queryset


class StyledModelAdmin(admin.ModelAdmin):
    """Loads the admin's own stylesheet (CSP ``style-src 'self'``: classes, never inline styles)."""

    class Media:
        css = {"all": ["css/admin.css"]}


def service_form_view(
    modeladmin: admin.ModelAdmin,
    request,
    *,
    form_class,
    create: Callable,
    title: str,
    done: Callable[[object], str],
    initial: dict | None = None,
    submit_label: str = "Create",
):
    """An admin page whose form's only write is one service call, in one transaction.

    ``create(cleaned_data)`` calls the service and returns the object; its DomainError becomes the
    form's error (nothing is stored). On success the addition is logged, ``done(obj)`` gives the
    success message and the user goes to the object's change page. Needs the add permission.
    """
    if not modeladmin.has_add_permission(request):
        raise PermissionDenied
    form = form_class(request.POST or None, request.FILES or None, initial=initial or None)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                obj = create(form.cleaned_data)
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            modeladmin.log_addition(request, obj, [{"added": {}}])
            modeladmin.message_user(request, done(obj), level=messages.SUCCESS)
            opts = modeladmin.opts
            return redirect(f"admin:{opts.app_label}_{opts.model_name}_change", obj.pk)
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": title,
        "form": form,
        "opts": modeladmin.opts,
        "media": modeladmin.media + form.media,
        "submit_label": submit_label,
    }
    return TemplateResponse(request, "admin/service_form.html", context)
