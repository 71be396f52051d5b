"""File imports in the admin: upload, dry run with the importer's report, then confirm.

The same importer as the management command runs twice: first with ``dry_run=True`` on the
uploaded files (every problem named by file and line, nothing written), then, when the manager
presses *Import*, for real. Between the two steps the files wait in a staging folder named by
a random token that only this session knows (``IMPORT_STAGING_DIR``); the confirm step runs
the whole validation again, so what changed in between is caught, and a token is used once.
Staged files older than a day are removed whenever something new is staged.
"""

from __future__ import annotations

import secrets
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse

from annotation.importers.report import ImportReport
from core.admin import admin_page
from core.errors import DomainError

SESSION_KEY = "staged_imports"
STALE_SECONDS = 24 * 3600


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (``<input type=file multiple>``); cleans to a list."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        if isinstance(data, list | tuple):
            return [super(MultipleFileField, self).clean(item, initial) for item in data if item]
        cleaned = super().clean(data, initial)
        return [cleaned] if cleaned else []


class ImportForm(forms.Form):
    """An upload form. ``options()`` gives its other fields as JSON-safe values for the session."""

    def options(self) -> dict:
        return {}

    def uploads(self) -> dict[str, list]:
        """The uploaded files per field name (a single file field gives a list of one or none)."""
        found = {}
        for name, field in self.fields.items():
            if isinstance(field, forms.FileField):
                value = self.cleaned_data.get(name)
                found[name] = list(value) if isinstance(value, list) else ([value] if value else [])
        return found


def _staging_root() -> Path:
    return Path(settings.IMPORT_STAGING_DIR)


def _safe_name(name: str) -> str | None:
    """The uploaded file's own name, never a path; None when it cannot be a file name here."""
    base = Path((name or "").replace("\\", "/")).name
    if not base or base.startswith(".") or "\x00" in base or len(base) > 200:
        return None
    return base


def _remove_stale() -> None:
    root = _staging_root()
    if not root.is_dir():
        return
    limit = time.time() - STALE_SECONDS
    for entry in root.iterdir():
        try:
            if entry.is_dir() and entry.stat().st_mtime < limit:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue


def _stage(form: ImportForm) -> tuple[str, dict[str, list[str]]]:
    """Write the form's uploads under a new token; returns (token, {field: [file names]})."""
    _remove_stale()
    token = secrets.token_urlsafe(18)
    folder = _staging_root() / token
    files: dict[str, list[str]] = {}
    for field, uploads in form.uploads().items():
        names = []
        (folder / field).mkdir(parents=True, exist_ok=True)
        for upload in uploads:
            name = _safe_name(upload.name)
            with open(folder / field / name, "wb") as handle:
                for part in upload.chunks():
                    handle.write(part)
            names.append(name)
        files[field] = names
    return token, files


def _paths(token: str, files: dict[str, list[str]]) -> dict[str, list[Path]]:
    folder = _staging_root() / token
    return {field: [folder / field / name for name in names] for field, names in files.items()}


def _discard(request, token: str) -> None:
    shutil.rmtree(_staging_root() / token, ignore_errors=True)
    staged = request.session.get(SESSION_KEY, {})
    if staged.pop(token, None) is not None:
        request.session[SESSION_KEY] = staged


def check_upload_names(form: ImportForm) -> None:
    """Form errors for names that cannot be staged, and for two files with the same name."""
    for field, uploads in form.uploads().items():
        seen = set()
        for upload in uploads:
            name = _safe_name(upload.name)
            if name is None:
                form.add_error(field, f"“{upload.name}” cannot be used as a file name.")
            elif name in seen:
                form.add_error(field, f"Two files are named “{name}”.")
            seen.add(name)


def staged_import_view(
    modeladmin: admin.ModelAdmin,
    request,
    *,
    kind: str,
    form_class: type[ImportForm],
    run: Callable[[dict[str, list[Path]], dict, bool], ImportReport],
    title: str,
    intro: str = "",
    after: Callable[[ImportReport], list[str]] | None = None,
):
    """The two-step import page (see the module docstring). ``run(paths, options, dry_run)``
    calls the importer; ``after(report)`` gives lines shown once after a real import (e.g.
    set-password links). Needs the add permission."""
    if not modeladmin.has_add_permission(request):
        raise PermissionDenied
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": title,
        "intro": intro,
        "opts": modeladmin.opts,
        "media": modeladmin.media,
    }
    staged = request.session.get(SESSION_KEY, {})
    token = request.POST.get("token") if request.method == "POST" else None
    if token is not None:
        entry = staged.get(token)
        if entry is None or entry.get("kind") != kind:
            modeladmin.message_user(
                request,
                "This import is no longer waiting (it was imported, cancelled or is older than a day): "
                "upload the files again.",
                level=messages.WARNING,
            )
            return redirect(request.path)
        if "_cancel" in request.POST:
            _discard(request, token)
            modeladmin.message_user(request, "Import cancelled; nothing was imported.", level=messages.INFO)
            return redirect(request.path)
        try:
            report = run(_paths(token, entry["files"]), entry["options"], False)
        except DomainError as exc:
            _discard(request, token)
            context.update(form=form_class(), problems=_problems(exc))
            return TemplateResponse(request, "admin/import_form.html", context)
        _discard(request, token)
        modeladmin.message_user(request, report.summary(), level=messages.SUCCESS)
        context.update(done=report, done_details=report.details(), done_lines=after(report) if after else [])
        return TemplateResponse(request, "admin/import_form.html", context)

    form = form_class(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        check_upload_names(form)
    if request.method == "POST" and form.is_valid():
        token, files = _stage(form)
        options = form.options()
        try:
            report = run(_paths(token, files), options, True)
        except DomainError as exc:
            shutil.rmtree(_staging_root() / token, ignore_errors=True)
            context.update(form=form, problems=_problems(exc))
            return TemplateResponse(request, "admin/import_form.html", context)
        staged[token] = {"kind": kind, "files": files, "options": options, "at": time.time()}
        request.session[SESSION_KEY] = staged
        names = [name for field_names in files.values() for name in field_names]
        context.update(token=token, report=report, details=report.details(full=True), file_names=names)
        return TemplateResponse(request, "admin/import_form.html", context)
    context["form"] = form
    return TemplateResponse(request, "admin/import_form.html", context)


def _problems(exc: DomainError) -> list[str]:
    """Every problem the importer named (by file and line), or its one message."""
    if isinstance(exc.details, list) and exc.details:
        return [str(item) for item in exc.details]
    return [exc.message]


class StagedImportAdminMixin:
    """An admin with an import page at ``import/`` (its ``import_view``, built on :func:`staged_import_view`)
    and a button to it on the list, labelled ``import_tool_label``, for those who may add."""

    change_list_template = "admin/change_list_tools.html"
    import_tool_label = ""

    def get_urls(self):
        return [admin_page(self, "import/", self.import_view, "import"), *super().get_urls()]

    def changelist_view(self, request, extra_context=None):
        tools = []
        if self.has_add_permission(request):
            opts = self.opts
            tools.append(
                {
                    "url": reverse(f"admin:{opts.app_label}_{opts.model_name}_import"),
                    "label": self.import_tool_label,
                }
            )
        return super().changelist_view(request, {**(extra_context or {}), "extra_tools": tools})
