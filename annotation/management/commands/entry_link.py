"""Entry links from the command line: create, list, revoke (the admin's Entry links page does the same)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse
from django.utils import timezone

from annotation.models import EntryLink
from annotation.workforce.admin import MTURK_QUERY, PROLIFIC_QUERY
from annotation.workforce.services import entry_link_create, entry_link_revoke, link_closed_reason
from core.commands import service_arguments, service_in_transaction
from core.errors import DomainError

# The options of ``create`` that are entry_link_create's parameters (their dest).
CREATE_OPTIONS = ("campaign_id", "label", "max_signups", "quota_batches", "completion_code", "completion_url")


def _when(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(
            f"--expires: “{text}” is not a date and time (YYYY-MM-DD or YYYY-MM-DDTHH:MM)."
        ) from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = (
        "Entry links to a campaign: `create --campaign ID [--label L] [--expires WHEN | --days N] [--cap N] "
        "[--quota N] [--completion-code C] [--completion-url URL] [--base-url https://host] [--dry-run]`, "
        "`list [--campaign ID]`, `revoke LINK_ID ...`."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Make a new link (a fresh random token).")
        create.add_argument("--campaign", type=int, required=True, dest="campaign_id")
        create.add_argument("--label", default="")
        when = create.add_mutually_exclusive_group()
        when.add_argument("--expires", help="Date and time (ISO 8601; UTC when no offset is given).")
        when.add_argument("--days", type=int, help="Expires this many days from now.")
        create.add_argument(
            "--cap", type=int, dest="max_signups", help="Sign-up cap (people admitted at most)."
        )
        create.add_argument("--quota", type=int, dest="quota_batches", help="Batches per participant.")
        create.add_argument("--completion-code", default="")
        create.add_argument("--completion-url", default="")
        create.add_argument("--base-url", default="", help="Site address to print full URLs with.")
        create.add_argument("--dry-run", action="store_true", help="Check everything, store nothing.")
        listing = sub.add_parser("list", help="Links with their state and sign-ups.")
        listing.add_argument("--campaign", type=int)
        listing.add_argument("--base-url", default="")
        revoke = sub.add_parser("revoke", help="Revoke links (idempotent).")
        revoke.add_argument("ids", type=int, nargs="+")

    def handle(self, *args, **options):
        try:
            getattr(self, f"_{options['action']}")(options)
        except DomainError as exc:
            raise CommandError(exc.message) from None

    def _url(self, link: EntryLink, base: str) -> str:
        return base.rstrip("/") + reverse("annotation:join", args=[link.token])

    def _create(self, options):
        expires = None
        if options["expires"]:
            expires = _when(options["expires"])
        elif options["days"] is not None:
            if options["days"] < 1:
                raise CommandError("--days must be at least 1.")
            expires = timezone.now() + timedelta(days=options["days"])
        link = service_in_transaction(
            lambda: entry_link_create(expires_at=expires, **service_arguments(options, CREATE_OPTIONS)),
            dry_run=options["dry_run"],
        )
        if options["dry_run"]:
            self.stdout.write("Dry run: the link would be valid; nothing stored.")
            return
        url = self._url(link, options["base_url"])
        self.stdout.write(f"Entry link {link.pk} to “{link.campaign}”: {url}")
        if options["verbosity"] >= 1:
            self.stdout.write(f"  Prolific: {url}{PROLIFIC_QUERY}")
            self.stdout.write(f"  MTurk:    {url}{MTURK_QUERY}")

    def _list(self, options):
        links = EntryLink.objects.select_related("campaign").order_by("pk")
        if options["campaign"]:
            links = links.filter(campaign_id=options["campaign"])
        for link in links:
            cap = f"/{link.max_signups}" if link.max_signups else ""
            state = link_closed_reason(link) or "admitting"
            self.stdout.write(
                f"{link.pk}\t{link.campaign}\t{link.signups}{cap} joined\t{state}\t{self._url(link, options['base_url'])}"
            )

    def _revoke(self, options):
        for link_id in options["ids"]:
            link = entry_link_revoke(link_id=link_id)
            self.stdout.write(f"Revoked entry link {link.pk} ({link}).")
