"""The one tables module: the HTML cells use the same columns and number formats as text and CSV."""

from __future__ import annotations

from django.template.loader import render_to_string

from evaluation.human import QUALITY_COLUMNS
from evaluation.human.quality import QualityRow
from evaluation.research.correlation import Comparison, correlate
from evaluation.research.tables import correlation_html, format_table, html_table

ROW = QualityRow("de", 10, 8, 62.5, 87.5, 12.5, None, 2, 30)


def test_html_cells_are_the_text_cells():
    table = html_table([ROW], QUALITY_COLUMNS, attributes=[("language", "language")])
    assert [h["text"] for h in table["headers"]] == [header for _, header, _ in QUALITY_COLUMNS]
    texts = [c["text"] for c in table["rows"][0]["cells"]]
    assert texts == format_table([ROW], QUALITY_COLUMNS).splitlines()[-1].split()
    assert texts[-2] == "n/a"  # nei_rate undefined
    assert [c["numeric"] for c in table["rows"][0]["cells"]][:2] == [False, True]
    assert table["rows"][0]["attrs"] == [("language", "de")]


def test_interval_column_and_the_include():
    rows = [
        {"name": "a<b", "lo": -1.25, "hi": 3.5, "in": True},
        {"name": "c", "lo": None, "hi": None, "in": False},
    ]
    table = html_table(
        rows, [("name", "name", ""), (("lo", "hi"), "95% interval", ".1f"), ("in", "used", "")]
    )
    assert [r["cells"][1]["text"] for r in table["rows"]] == ["[-1.2, 3.5]", "n/a"]
    assert [r["cells"][2]["text"] for r in table["rows"]] == ["yes", "no"]
    html = render_to_string("partials/table.html", {"table": table, "id": "t", "empty": "none"})
    assert '<table id="t">' in html and "<td>a&lt;b</td>" in html  # escaped
    assert '<th class="num">95% interval</th>' in html
    empty = render_to_string(
        "partials/table.html", {"table": html_table([], [("name", "name", "")]), "empty": "none"}
    )
    assert '<td colspan="1">none</td>' in empty


def test_correlation_rows_carry_metric_and_language():
    comparisons = [
        Comparison(f"a{i}", f"b{i}", "de", d, {"CIDEr": m})
        for i, (d, m) in enumerate([(10, 0.1), (20, 0.3), (-5, -0.2)])
    ]
    results = correlate(comparisons, n_boot=0)
    table = correlation_html(results)
    by_key = {tuple(v for _, v in row["attrs"]): row for row in table["rows"]}
    assert set(by_key) == {("CIDEr", "all"), ("CIDEr", "de")}
    cells = [c["text"] for c in by_key[("CIDEr", "de")]["cells"]]
    assert cells[:4] == ["CIDEr", "de", "6", "3"]
    assert cells[4] == f"{results['CIDEr']['de'].pearson:.3f}"
