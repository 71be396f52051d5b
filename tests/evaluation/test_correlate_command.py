"""`manage.py correlate --comparisons FILE.csv`: text, CSV and JSON output, and its errors (no database)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

TABLE4 = Path(__file__).parent / "data" / "xm3600_table4.csv"
COEFFICIENTS = ("pearson", "spearman", "kendall_tau_b", "kendall_tau_c")


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("correlate", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_json_has_every_metric_language_and_coefficient():
    out, _ = run("--comparisons", str(TABLE4), "--format", "json", "--bootstrap", "200")
    data = json.loads(out)
    assert list(data) == ["cider_xm600", "cider_xm3600", "cider_coco_dev"]
    for by_language in data.values():
        assert list(by_language) == ["all", "en", "es", "hi", "zh"]
        for language, cell in by_language.items():
            assert cell["n"] == (48 if language == "all" else 12)
            for name in COEFFICIENTS:
                lo, hi = cell[f"{name}_ci"]
                assert lo - 1e-9 <= cell[name] <= hi + 1e-9
                assert 0 <= cell[f"{name}_p"] <= 1
            assert cell["p_n"] == cell["n"] // 2
            assert "not independent" in cell["note"]
            assert cell["kendall_tau_c_variant"] == "scipy (m=min distinct)"
    # Seed 000, Table 6.
    assert round(data["cider_xm600"]["all"]["pearson"], 2) == 0.89
    assert round(data["cider_xm3600"]["en"]["kendall_tau_b"], 2) == 0.80


def test_one_direction_counts_each_comparison_once():
    out, _ = run("--comparisons", str(TABLE4), "--format", "json", "--bootstrap", "0", "--one-direction")
    pooled = json.loads(out)["cider_xm600"]["all"]
    assert pooled["n"] == 24
    assert round(pooled["pearson"], 2) == 0.76
    assert pooled["pearson_ci"] is None
    assert pooled["mirrored"] is False


def test_same_seed_same_output_other_seed_other_intervals():
    args = ("--comparisons", str(TABLE4), "--format", "json", "--bootstrap", "200")
    first, _ = run(*args, "--seed", "4")
    again, _ = run(*args, "--seed", "4")
    other, _ = run(*args, "--seed", "5")
    assert first == again
    assert (
        json.loads(first)["cider_xm600"]["all"]["pearson_ci"]
        != json.loads(other)["cider_xm600"]["all"]["pearson_ci"]
    )


def test_text_is_an_aligned_table():
    out, _ = run("--comparisons", str(TABLE4), "--bootstrap", "100")
    lines = out.splitlines()
    header, rule, *rest = lines
    rows = rest[: rest.index("")]
    assert header.split()[:3] == ["metric", "language", "N"]
    assert len(rows) == 15
    assert rows[0].split()[:4] == ["cider_xm600", "all", "48", "0.892"]
    assert rows[1].split()[:4] == ["cider_xm600", "en", "12", "0.972"]
    # Right-aligned numbers: the N column and the end of each coefficient column line up with the rule.
    ends = [i for i, ch in enumerate(rule) if ch == "-" and (i + 1 == len(rule) or rule[i + 1] == " ")]
    for row in rows:
        for end in ends[2:]:
            assert row[end] in "0123456789]a", row  # "n/a" ends in "a"
    footer = " ".join(rest[rest.index("") + 1 :])
    assert "mirrored points are not independent" in footer
    assert "100 resamples" in footer
    assert "tau_c: scipy (m=min distinct), for the coefficient, its p-value and its interval" in footer


def test_text_shows_p_values_at_verbosity_2():
    out, _ = run("--comparisons", str(TABLE4), "--bootstrap", "0", "--verbosity", "2")
    assert "pearson p" in out.splitlines()[0]
    quiet, _ = run("--comparisons", str(TABLE4), "--bootstrap", "0")
    assert "pearson p" not in quiet


def test_csv_keeps_numbers_and_neutralises_formula_text(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text(
        "m1,m2,language,delta_sxs,delta_=cmd\n"
        "a,b,-de,10,-0.1\n"
        "a,c,-de,20,-0.2\n"
        "a,d,-de,30,-0.35\n"
        "a,e,-de,40,-0.3\n",
        encoding="utf-8",
    )
    out, _ = run("--comparisons", str(path), "--format", "csv", "--bootstrap", "50")
    assert "\r\n" in out  # RFC 4180 line ends
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["metric"], r["language"]) for r in rows] == [("'=cmd", "all"), ("'=cmd", "'-de")]
    cell = rows[1]
    assert float(cell["n"]) == 8
    assert float(cell["pearson"]) < 0
    assert not cell["pearson"].startswith("'")  # negative numbers stay numbers
    assert float(cell["pearson_ci_lo"]) <= float(cell["pearson"]) <= float(cell["pearson_ci_hi"])
    assert cell["mirrored"] == "true"
    assert cell["kendall_tau_c_variant"] == "scipy (m=min distinct)"


def test_csv_leaves_undefined_cells_empty(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("m1,m2,language,delta_sxs,delta_cider\na,b,de,10,0.1\na,c,de,20,0.2\n", encoding="utf-8")
    out, _ = run("--comparisons", str(path), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows[0]["pearson"] == "" and rows[0]["pearson_ci_lo"] == "" and rows[0]["pearson_p"] == ""
    text, _ = run("--comparisons", str(path))
    assert "n/a" in text


def test_unknown_column_is_reported_on_stderr(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text(
        "m1,m2,language,delta_sxs,delta_cider,comment\na,b,de,10,0.1,x\na,c,de,20,0.2,y\na,d,de,5,0.0,z\n",
        encoding="utf-8",
    )
    out, err = run("--comparisons", str(path), "--format", "json", "--bootstrap", "0")
    assert "ignoring unknown column comment" in err
    assert json.loads(out)["cider"]["de"]["n"] == 6


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "m1,m2,language,delta_sxs,delta_cider\na,b,de,1,0.1\na,c,de,oops,0.2\n",
            "line 3: delta_sxs is not a number",
        ),
        ("", "line 1: empty file"),
        ("m1,m2,language,delta_cider\na,b,de,0.1\n", "line 1: missing column delta_sxs"),
        (
            "m1,m2,language,delta_sxs,delta_cider\na,b,de,1,0.1\na,b,de,2,0.2\n",
            "line 3: b vs a in de is already on line 2",
        ),
        (
            "m1,m2,language,delta_sxs,delta_cider\na,b,de,1,0.1\nb,a,de,-1,-0.1\n",
            "entered in both directions",
        ),
    ],
)
def test_errors_name_the_line_and_reason(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CommandError, match=message):
        run("--comparisons", str(path))


def test_missing_file_and_bad_bootstrap(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        run("--comparisons", str(tmp_path / "nope.csv"))
    with pytest.raises(CommandError, match="--bootstrap"):
        run("--comparisons", str(TABLE4), "--bootstrap", "-1")


# --- correlate --comparisons: pairwise accuracy; correlate --judgments: the item-level verdict ------


def test_json_adds_pairwise_accuracy_to_each_metric_and_language():
    out, _ = run("--comparisons", str(TABLE4), "--format", "json", "--bootstrap", "100")
    data = json.loads(out)
    # Seed 000 Table 4 (see test_meta_evaluation for the hand count).
    assert data["cider_xm3600"]["all"]["pairwise_accuracy"] == 1.0
    assert data["cider_xm600"]["all"]["pairwise_accuracy"] == 22 / 24
    assert data["cider_coco_dev"]["zh"]["pairwise_accuracy"] == 4 / 6
    lo, hi = data["cider_coco_dev"]["all"]["pairwise_accuracy_ci"]
    assert lo < 16 / 24 < hi
    assert data["cider_xm600"]["en"]["soft_pairwise_accuracy"] is None  # no judgments behind a CSV row
    text, _ = run("--comparisons", str(TABLE4), "--bootstrap", "0")
    assert "pairwise acc" in text and "0.917" in text


def _judgments_file(tmp_path, languages=("de", "ja", "sw"), images=30):
    import numpy as np

    rng = np.random.default_rng(11)
    lines = ["language,image,m1,m2,rater,human,CIDEr-D,noise"]
    for language in languages:
        for m1, m2 in (("s1", "s2"), ("s1", "s3"), ("s2", "s3")):
            for image in range(images):
                latent = rng.normal()
                cider, noise = round(latent + rng.normal(scale=0.3), 4), round(rng.normal(), 4)
                for rater in range(3):
                    human = int(np.clip(np.round(latent * 1.5 + rng.normal(scale=0.6)), -3, 3))
                    lines.append(f"{language},img{image},{m1},{m2},r{rater},{human},{cider},{noise}")
    path = tmp_path / "judgments.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_judgments_json_has_acc23_epsilon_items_intervals_and_ranks(tmp_path):
    path = _judgments_file(tmp_path)
    args = ("--judgments", str(path), "--format", "json", "--bootstrap", "200", "--permutations", "200")
    out, _ = run(*args)
    data = json.loads(out)
    assert set(data) == {"CIDEr-D", "noise", "_settings", "_languages"}
    for metric in ("CIDEr-D", "noise"):
        assert list(data[metric]) == ["all", "de", "ja", "sw"]
        for language, cell in data[metric].items():
            assert cell["n_items"] == (270 if language == "all" else 90)
            assert 0 <= cell["acc23"] <= 1 and cell["epsilon"] >= 0
            lo, hi = cell["acc23_ci"]
            assert lo <= cell["acc23"] <= hi
            assert cell["rank"] in (1, 2)
            assert cell["pairwise_accuracy"] is not None and cell["soft_pairwise_accuracy"] is not None
    assert all(
        data["CIDEr-D"][code]["rank"] == 1 and data["CIDEr-D"][code]["best"] for code in data["CIDEr-D"]
    )
    assert all(data["noise"][code]["rank"] == 2 for code in data["noise"])
    assert data["CIDEr-D"]["de"]["p_better_than"]["noise"] < 0.05
    assert data["_settings"]["n_permutations"] == 200 and data["_languages"]["de"]["status"] == "ranked"
    assert run(*args)[0] == out  # the same seed gives the same numbers


def test_judgments_text_and_csv(tmp_path):
    path = _judgments_file(tmp_path, languages=("de",), images=3)
    text, _ = run("--judgments", str(path), "--bootstrap", "50", "--permutations", "50")
    assert text.startswith("Which metric to trust")
    assert "too few items (9)" in text  # 9 items < 10: no test, said with the count
    assert "System level" in text and "soft pairwise" in text
    rows = list(
        csv.DictReader(io.StringIO(run("--judgments", str(path), "--format", "csv", "--bootstrap", "0")[0]))
    )
    assert {(row["metric"], row["language"]) for row in rows} == {
        (m, code) for m in ("CIDEr-D", "noise") for code in ("all", "de")
    }
    assert rows[0]["n_items"] == "9" and rows[0]["status"] == "too_few" and rows[0]["rank"] == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("language,image,m1,m2,rater,human,CIDEr\nde,i1,a,b,r1,5,0.1\n", "line 2: human must be an integer"),
        ("language,image,m1,m2,rater,human,CIDEr\nde,i1,a,b,r1,1,high\n", "line 2: CIDEr is not a number"),
        (
            "language,image,m1,m2,rater,human,CIDEr\nde,i1,a,b,r1,1,0.1\nde,i1,a,b,r2,1,0.2\n",
            "line 3: CIDEr of image i1",
        ),
    ],
)
def test_judgments_errors_name_the_line_and_print_nothing(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    with pytest.raises(CommandError, match=message):
        call_command("correlate", "--judgments", str(path), stdout=out)
    assert out.getvalue() == ""


def test_judgments_is_the_whole_selection(tmp_path):
    path = _judgments_file(tmp_path, languages=("de",), images=2)
    with pytest.raises(CommandError, match="--comparisons cannot be combined with --judgments"):
        run("--judgments", str(path), "--comparisons", str(TABLE4))
    with pytest.raises(CommandError, match="--permutations must be at least 1"):
        run("--judgments", str(path), "--permutations", "0")
