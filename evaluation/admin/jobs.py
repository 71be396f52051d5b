"""What the admins that start a job share (metric runs, retrieval checks, fine-tuning runs).

The add form plans the job to validate it; saving stores that same plan through the job's service
(planned once), which queues the work when the admin's transaction commits. A job, once stored, is
read-only. A dead broker answers at that commit: the manager gets its message and the job's page (or
the list), never an error page."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.urls import reverse

from evaluation.metrics.runs import JobsUnavailable


class PlannedJobAdminMixin:
    """Mixed into a ``ModelAdmin`` whose add form has a ``plan``. Set ``job_start_form`` and
    ``job_start_fields`` (the add page), ``job_fields`` (what a stored job's page shows, read-only),
    ``job_store`` (``store(plan=..., user=...) -> job``) and ``job_id_detail`` (the key under which
    ``JobsUnavailable`` names the stored job)."""

    job_start_form = None
    job_start_fields: list[str] = []
    job_fields: list[str] = []
    job_store: Callable = None  # type: ignore[assignment]
    job_id_detail = "run_id"

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = self.job_start_form
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        return self.job_start_fields if obj is None else self.job_fields

    def get_readonly_fields(self, request, obj=None):
        return self.job_fields if obj is not None else []

    def save_model(self, request, obj, form, change):
        if change:
            return
        job = self.job_store(plan=form.plan, user=request.user)
        obj.pk, obj.name = job.pk, job.name

    def save_related(self, request, form, formsets, change):
        # The service stored everything the job needs; the add form has nothing more to save.
        if change:
            super().save_related(request, form, formsets, change)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except JobsUnavailable as exc:
            self.message_user(request, exc.message, level=messages.ERROR)
            meta = self.model._meta
            job_id = (exc.details or {}).get(self.job_id_detail)
            if job_id:
                return HttpResponseRedirect(
                    reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[job_id])
                )
            return HttpResponseRedirect(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
