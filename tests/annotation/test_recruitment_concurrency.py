"""RELIABILITY 23 on PostgreSQL with real parallel connections: people racing for the last places of a
capped link get exactly the cap; one crowd worker racing with themselves gets one account."""

from __future__ import annotations

import threading

import pytest

from annotation.models import Enrolment, EntryLink
from annotation.workforce.services import CrowdIdentity, entry_admit, entry_link_create
from core.errors import Conflict, NotAllowed
from tests.annotation.parallel import fail_on_db_errors, postgres_only, run_threads  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def capped(german):
    from tests import factories as f

    campaign = f.open_caption_campaign(images=3, batch_size=3, language=german)
    return entry_link_create(campaign_id=campaign.pk, max_signups=3)


def test_twenty_people_racing_for_three_places_give_three_admissions(capped):
    start = threading.Barrier(20)
    refused = []

    def person(i):
        def run():
            start.wait()
            try:
                entry_admit(
                    token=capped.token, identity=CrowdIdentity("prolific", f"pid{i:03d}", "st", f"s{i}")
                )
            except NotAllowed as exc:
                refused.append(exc.message)

        return run

    fail_on_db_errors(run_threads([person(i) for i in range(20)]))
    assert Enrolment.objects.count() == 3 and EntryLink.objects.get().signups == 3
    assert len(refused) == 17 and all("full" in m for m in refused)


def test_one_worker_twice_at_once_gets_one_account(capped):
    start = threading.Barrier(2)
    outcomes = []

    def same():
        start.wait()
        try:
            outcomes.append(
                entry_admit(token=capped.token, identity=CrowdIdentity("prolific", "pidX", "st", "s1"))
            )
        except Conflict as exc:
            outcomes.append(exc)

    fail_on_db_errors(run_threads([same, same]))
    assert Enrolment.objects.count() == 1 and EntryLink.objects.get().signups == 1
