"""The report's languages are kept in the database as pieces and read back by the next report."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation.models import ReportPiece
from evaluation.research.reports.pieces import report_pieces, report_pieces_prune
from evaluation.research.trust_tables import trust_build
from tests.evaluation.test_trust_pieces import _selection

pytestmark = pytest.mark.django_db


def test_a_second_report_reads_every_language_from_the_table():
    comparisons, items = _selection(languages=("de", "fr"))
    first = trust_build(items, comparisons, n_boot=100, n_permutations=100, pieces=report_pieces())
    assert sorted(ReportPiece.objects.values_list("language", flat=True)) == ["de", "fr"]
    again = trust_build(items, comparisons, n_boot=100, n_permutations=100, pieces=report_pieces())
    assert again == first == trust_build(items, comparisons, n_boot=100, n_permutations=100)
    assert ReportPiece.objects.count() == 2


def test_writing_a_piece_twice_keeps_one_row_and_pruning_removes_unread_ones():
    store = report_pieces()
    comparisons, items = _selection(languages=("de",))
    trust_build(items, comparisons, n_boot=50, n_permutations=50, pieces=store)
    key = ReportPiece.objects.get().key
    store[key] = store.get(key)  # a concurrent worker's write of the same key
    assert ReportPiece.objects.count() == 1
    assert report_pieces_prune() == 0
    ReportPiece.objects.update(updated_at=timezone.now() - timedelta(days=31))
    assert report_pieces_prune() == 1
    assert not ReportPiece.objects.exists()


def test_pieces_unread_for_a_month_are_pruned_and_the_admin_lists_the_rest(db, pm_client):
    from datetime import timedelta

    from django.urls import reverse
    from django.utils import timezone

    from evaluation.models import ReportPiece
    from evaluation.research.reports.pieces import report_pieces

    old = ReportPiece.objects.create(key="a" * 64, language="de", payload=b"")
    fresh = ReportPiece.objects.create(key="b" * 64, language="ar", payload=b"")
    ReportPiece.objects.filter(pk=old.pk).update(updated_at=timezone.now() - timedelta(days=31))
    report_pieces()  # what every computation asks for first
    assert list(ReportPiece.objects.values_list("pk", flat=True)) == [fresh.pk]
    page = pm_client.get(reverse("admin:evaluation_reportpiece_changelist"))
    assert page.status_code == 200 and "b" * 12 in page.content.decode()
