"""The "all" column pools only what is comparable: a metric missing in some language of the column
keeps its own n and languages, and is left out of the ranking and the verdict (trust table, heatmap,
correlation tables)."""

from __future__ import annotations

import numpy as np

from evaluation.research.correlation import ALL, Comparison, correlate
from evaluation.research.meta_evaluation import Item
from evaluation.research.reports.heatmap import trust_heatmap
from evaluation.research.tables import correlation_html, correlation_text
from evaluation.research.trust_tables import Trust, trust_build, trust_html, trust_records, trust_text


def _items() -> list[Item]:
    """ROUGE-L (noisy) in de, en and fr; CIDEr (perfect) only in de."""
    rng = np.random.default_rng(7)
    items = []
    for language in ("de", "en", "fr"):
        for pair in range(2):
            for image in range(20):
                human = float(rng.choice([-2.0, -1.0, 1.0, 2.0]))
                deltas = {"ROUGE-L": human * 0.1 + float(rng.normal(0, 0.2))}
                if language == "de":
                    deltas["CIDEr"] = human * 0.5
                items.append(Item(language, f"a{pair}", f"b{pair}", f"i{image}", human, 3, deltas))
    return items


def test_all_ranks_only_metrics_present_in_every_language():
    trust = trust_build(_items(), n_boot=20, n_permutations=50)
    table = trust.table
    pooled = table.languages[ALL]
    assert pooled.verdict("CIDEr").rank is None and not pooled.verdict("CIDEr").best
    assert pooled.verdict("CIDEr").result.n == 40  # its own items, German only
    assert pooled.verdict("ROUGE-L").rank == 1 and pooled.verdict("ROUGE-L").best
    assert table.metrics == ("ROUGE-L", "CIDEr")  # comparable metrics first
    # German alone still ranks both.
    assert table.cell("CIDEr", "de").rank == 1
    page = trust_html(table)
    cider = next(row for row in page["rows"] if row["metric"] == "CIDEr")["cells"][0]
    assert cider["not_pooled"] and "n = 40, only de: not pooled, not ranked" in cider["text"]
    assert page["footer"][0]["text"] == "best: ROUGE-L"
    assert any("present in every language" in note for note in page["notes"])
    records = {(r["metric"], r["language"]): r for r in trust_records(Trust(table))}
    assert records["CIDEr", ALL]["pooled"] is False and records["CIDEr", ALL]["languages"] == ["de"]
    assert records["ROUGE-L", ALL]["pooled"] is True
    assert records["ROUGE-L", ALL]["languages"] == ["de", "en", "fr"]
    assert "only de: not pooled, not ranked" in trust_text(Trust(table))
    svg = trust_heatmap(table, "svg").decode()
    assert "only de" in svg and "not ranked" in svg


def test_every_metric_in_every_language_changes_nothing():
    items = [item for item in _items() if item.language == "de"]
    table = trust_build(items, n_boot=20, n_permutations=50).table
    assert table.languages[ALL].verdict("CIDEr").rank == 1
    assert all(cell["not_pooled"] is False for row in trust_html(table)["rows"] for cell in row["cells"])


def test_correlation_all_row_of_a_metric_in_fewer_languages_says_so():
    comparisons = []
    for language, offset in (("de", 0.0), ("en", 1.0), ("fr", 2.0)):
        for k in range(3):
            deltas = {"ROUGE-L": k + offset}
            if language == "de":
                deltas["CIDEr"] = float(k)
            comparisons.append(Comparison(f"a{k}", f"b{k}", language, 10.0 * k + offset, deltas))
    results = correlate(comparisons, n_boot=0)
    table = correlation_html(results)
    rows = {f"{dict(row['attrs'])['metric']}/{dict(row['attrs'])['language']}": row for row in table["rows"]}
    assert ("pooled", "false") in rows["CIDEr/all"]["attrs"]
    assert rows["CIDEr/all"]["cells"][1]["text"] == "all (only de: not pooled)"
    assert ("pooled", "false") not in rows["ROUGE-L/all"]["attrs"]
    assert "CIDEr is not" in table["note"]
    assert "all (only de: not pooled)" in correlation_text(results, show_p=False)
