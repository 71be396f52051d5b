"""What every job's admin shares: the start form's save path, and the columns and action of a stored job.

:class:`PlannedJobAdminMixin`: the add form plans the job to validate it; saving stores that same plan
through the kind's service (planned once), which queues the work when the admin's transaction commits.
A stored job is read-only. A dead broker answers at that commit: the manager gets its message and the
job's page (or the list), never an error page.

:class:`JobAdminMixin`: progress, duration, who started it, the liveness of its units (alive, orphaned)
and the Resume action, the same for every kind.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from core.admin import seconds_display
from core.errors import DomainError, JobsUnavailable
from core.jobs.engine import job_resume
from core.jobs.kinds import JobKind
from core.jobs.local import local_runner_enabled
from core.jobs.models import JobStatus


def unit_liveness(unit) -> str:
    """A running unit's worker as a manager reads it: alive (last beat n s ago) or orphaned."""
    silent = unit.silent_seconds()
    if silent is None:
        return "–"
    if unit.is_orphaned():
        return f"orphaned: no heartbeat for {silent:.0f} s"
    return f"alive (last heartbeat {silent:.0f} s ago)"


class PlannedJobAdminMixin:
    """Mixed into a ``ModelAdmin`` whose add form has a ``plan``. Set ``job_start_form`` and
    ``job_start_fields`` (the add page), ``job_fields`` (what a stored job's page shows, read-only) and
    ``job_store`` (``store(plan=..., user=...) -> job``). A planned job is named on its add page, so its
    list opens a job from its id or its name and narrows by status (a kind may add filters)."""

    list_display_links = ["id", "name"]
    list_filter = ["status"]
    job_start_form = None
    job_start_fields: list[str] = []
    job_fields: list[str] = []
    job_store: Callable = None  # type: ignore[assignment]

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
        if local_runner_enabled():
            # The embedded default: the job runs beside this server, after this page has returned.
            self.message_user(
                request,
                f"{job.name} runs in the background on this server: its page shows its status and "
                "progress, and reloads itself until it ends.",
            )

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
            job_id = (exc.details or {}).get("job_id")
            if job_id:
                return HttpResponseRedirect(
                    reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[job_id])
                )
            return HttpResponseRedirect(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))


# A job's page reloads itself this often while the job is pending, queued or running, so that its
# status and progress move without the manager reloading (a meta refresh: no script).
JOB_PAGE_REFRESH_SECONDS = 5


class JobAdminMixin:
    """Columns and the Resume action of a stored job. Set ``job_kind``; ``job_resume_service``
    (``resume(job_id=...) -> ResumeResult``) when the kind's resume says more than the engine's.
    The page of an unfinished job reloads itself every :data:`JOB_PAGE_REFRESH_SECONDS`."""

    job_kind: JobKind = None  # type: ignore[assignment]
    job_resume_service: Callable | None = None
    actions = ["resume"]
    change_form_template = "admin/job_change_form.html"

    def change_view(self, request, object_id, form_url="", extra_context=None):
        job = self.get_object(request, object_id)
        if job is not None and job.status in (JobStatus.PENDING, JobStatus.QUEUED, JobStatus.RUNNING):
            extra_context = {**(extra_context or {}), "refresh_seconds": JOB_PAGE_REFRESH_SECONDS}
        return super().change_view(request, object_id, form_url, extra_context)

    # Who started the job and when each step of its life happened: the tail of every kind's fields.
    LIFECYCLE_FIELDS = (
        "started_by",
        "created_at",
        "queued_at",
        "started_at",
        "finished_at",
        "duration",
        "timings",
    )

    def _resume_one(self, request, job_id: int):
        service = self.job_resume_service or (lambda **kw: job_resume(self.job_kind, **kw))
        try:
            return service(job_id=job_id)
        except DomainError as exc:
            self.message_user(request, exc.message, level=messages.ERROR)
            return None

    @admin.action(description="Resume: queue again what is not done", permissions=["change"])
    def resume(self, request, queryset):
        requeued = 0
        for job in queryset:
            result = self._resume_one(request, job.pk)
            if result is not None:
                requeued += result.requeued
        noun = self.job_kind.unit_noun
        self.message_user(
            request, f"{requeued} {noun}{'' if requeued == 1 else 's'} queued again.", level=messages.INFO
        )

    @admin.display(description="progress")
    def progress(self, job):
        if self.job_kind.single:
            return job.status
        return f"{job.chunks_done}/{job.chunks_total}"

    @admin.display(description="duration")
    def duration(self, job):
        return seconds_display(job.duration_seconds)

    # The account as text: a read-only foreign key is drawn as a link to the user's admin page, which
    # researchers may not open (they have no view permission on accounts).
    @admin.display(description="started by")
    def started_by(self, job):
        return job.created_by.get_username() if job.created_by_id else "–"

    @admin.display(description="worker")
    def liveness(self, job):
        """The job's running units: alive or orphaned (and what happens to orphans next)."""
        kind = self.job_kind
        if kind.single:
            return unit_liveness(job)
        running = list(kind.units_of(job.pk).filter(status=kind.unit_model.UNIT_RUNNING))
        if not running:
            return "–"
        orphans = [unit for unit in running if unit.is_orphaned()]
        alive = len(running) - len(orphans)
        noun = kind.unit_noun
        if not orphans:
            return f"{alive} {noun}{'' if alive == 1 else 's'} running, worker alive"
        what = (
            "queued again by the next sweep"
            if job.status in (JobStatus.QUEUED, JobStatus.RUNNING)
            else "resume the job"
        )
        lines = [(kind.unit_label(unit), f"{unit.silent_seconds():.0f}") for unit in orphans]
        return format_html(
            "{} orphaned {}{} (the worker stopped beating; {}){}:<br>{}",
            len(orphans),
            noun,
            "" if len(orphans) == 1 else "s",
            what,
            f"; {alive} more running, worker alive" if alive else "",
            format_html_join(mark_safe("<br>"), "{}: no heartbeat for {} s", lines),  # noqa: S308
        )
