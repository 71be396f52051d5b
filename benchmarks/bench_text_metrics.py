"""Benchmark the text metrics against the COCO reference code, and at XM3600 scale.

    .venv/bin/python benchmarks/bench_text_metrics.py [--sizes 5000 50000] [--skip-reference-above N]

Part 1 replicates the coco-fakecap set (1,000 images, 5,005 references; ../shared/data) to each
size with new image ids; replica r pairs each image with the candidate of the image r places further
on, so the replicas differ. On the same tokens it times pycocoevalcap 1.2 (Bleu(4), Rouge, Cider,
the last being CIDEr-D) and ours, end to end from token lists (interning included), prints the
times and the ratio per metric, and checks the per-caption scores agree (max abs difference).
Both sides run ``--repeat`` times on the same tokens and each side's best run is compared (the
reference takes seconds to minutes per run: ``--repeat 1`` for a quick look).

Part 3 (raw text, end to end) scores generated raw English captions (tests/evaluation/ptb_captions.py:
COCO-style templates, 70% plain, the rest with clitics, hyphens, numbers, quotes, abbreviations) at each
size, 1 candidate + 5 references per image. Reference: pycocoevalcap's PTBTokenizer (the Java jar, one
JVM for the references and one for the candidates, as COCOEvalCap calls it) then its Cider (CIDEr-D),
and its Bleu(4) + Rouge up to ``--skip-reference-above`` images. Ours: the platform's path for raw English,
``score_texts(language="en")`` (scheme ``coco-ptb``: ``ptb.tokenize_many_ids`` then the same scorers as
``score_tokens``). Tokenisation is included in both columns; both sides run ``--repeat`` times on the same
inputs, alternating (ours from a cold cache each time); each side's first and best runs are printed.

Part 2 is an XM3600-scale run: 3,600 images x 36 languages x 4 systems, 2 references per image
and language, synthetic captions built from the COCO vocabulary (zh, ja and th written without
spaces in made-up characters, so they use the char scheme). It scores all seven metrics
from raw text (preprocessing included) in a fresh process and prints total time and peak memory.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.tokenisation import WRITTEN_WITHOUT_SPACES, primary_subtag  # noqa: E402
from evaluation.metrics.text import ptb  # noqa: E402
from evaluation.metrics.text.bleu import bleu  # noqa: E402
from evaluation.metrics.text.cider import cider, cider_d  # noqa: E402
from evaluation.metrics.text.rouge import rouge_l  # noqa: E402
from evaluation.metrics.text.schemes import scheme  # noqa: E402
from evaluation.metrics.text.scoring import score_texts, score_tokens  # noqa: E402


def bench_scheme(language: str) -> str:
    # The platform's pure-Python schemes (as measured before schemes existed): English's default,
    # coco-ptb, is timed by its own benchmark.
    return "char" if primary_subtag(language) in WRITTEN_WITHOUT_SPACES else "whitespace"


DATA = ROOT.parent / "shared" / "data" / "coco-fakecap"
RESULTS = DATA / "captions_val2014_fakecap_results.json"
REFERENCES = DATA / "captions_val2014_fakecap_subset_refs_tokenized.json"

# The 36 languages of XM3600 (paper 000); zh, ja and th use the char scheme.
XM3600_LANGUAGES = (
    "ar",
    "bn",
    "cs",
    "da",
    "de",
    "el",
    "en",
    "es",
    "fa",
    "fi",
    "fil",
    "fr",
    "hi",
    "hr",
    "hu",
    "id",
    "it",
    "iw",
)
XM3600_LANGUAGES += (
    "ja",
    "ko",
    "mi",
    "nl",
    "no",
    "pl",
    "pt",
    "quz",
    "ro",
    "ru",
    "sv",
    "sw",
    "te",
    "th",
    "tr",
    "uk",
    "vi",
    "zh",
)


def load_coco() -> tuple[list[int], list[list[str]], dict[int, list[list[str]]]]:
    results = json.loads(RESULTS.read_text())
    annotations = json.loads(REFERENCES.read_text())["annotations"]
    references: dict[int, list[list[str]]] = {}
    for annotation in annotations:
        references.setdefault(annotation["image_id"], []).append(annotation["caption"].split(" "))
    ids = [item["image_id"] for item in results]
    return ids, [item["caption"].split(" ") for item in results], references


def replicate(size: int, ids, captions, references):
    candidates, refs = {}, {}
    for index in range(size):
        replica, position = divmod(index, len(ids))
        key = replica * 10_000_000 + ids[position]
        candidates[key] = captions[(position + replica) % len(ids)]
        refs[key] = references[ids[position]]
    return candidates, refs


def peak_rss_mib() -> float:
    """High-water resident memory of this process (VmHWM; ru_maxrss survives exec on Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(function: Callable[[], object], repeat: int = 1) -> tuple[object, float]:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        value = function()
        best = min(best, time.perf_counter() - start)
    return value, best


def max_diff(ours: dict, keys: list, theirs) -> float:
    return max(abs(ours[key] - float(value)) for key, value in zip(keys, theirs))


def coco_part(sizes: list[int], skip_reference_above: int, repeat: int) -> None:
    if not RESULTS.exists():
        print(f"coco-fakecap data not found at {DATA}; skipping part 1")
        return
    try:
        from pycocoevalcap.bleu.bleu import Bleu
        from pycocoevalcap.cider.cider import Cider
        from pycocoevalcap.rouge.rouge import Rouge
    except ImportError:
        Bleu = Cider = Rouge = None  # noqa: N806
    ids, captions, references = load_coco()
    print(
        "== Part 1: coco-fakecap replicated; reference = pycocoevalcap 1.2, ours = evaluation.metrics.text =="
    )
    print(f"{'images':>7} {'metric':<8} {'reference s':>12} {'ours s':>8} {'ratio':>7} {'max |diff|':>11}")
    for size in sizes:
        candidates, refs = replicate(size, ids, captions, references)
        keys = list(candidates)
        res = {key: [" ".join(tokens)] for key, tokens in candidates.items()}
        gts = {key: [" ".join(tokens) for tokens in refs[key]] for key in keys}
        run_reference = Bleu is not None and size <= skip_reference_above

        ours_bleu, t_bleu = timed(lambda c=candidates, r=refs: bleu(c, r), repeat)
        ours_rouge, t_rouge = timed(lambda c=candidates, r=refs: rouge_l(c, r), repeat)
        ours_cider_d, t_cider_d = timed(lambda c=candidates, r=refs: cider_d(c, r), repeat)
        _, t_cider = timed(lambda c=candidates, r=refs: cider(c, r), repeat)
        _, t_all = timed(lambda c=candidates, r=refs: score_tokens(c, r), repeat)

        rows = []
        if run_reference:
            (ref_bleu, ref_bleu_each), r_bleu = timed(
                lambda g=gts, r=res: Bleu(4).compute_score(g, r, verbose=0), repeat
            )
            bleu_diff = max(max_diff(ours_bleu.per_caption[k], keys, ref_bleu_each[k]) for k in range(4))
            (_, ref_rouge_each), r_rouge = timed(lambda g=gts, r=res: Rouge().compute_score(g, r), repeat)
            (_, ref_cider_each), r_cider = timed(lambda g=gts, r=res: Cider().compute_score(g, r), repeat)
            rows += [
                ("BLEU-1..4", r_bleu, t_bleu, bleu_diff),
                ("ROUGE-L", r_rouge, t_rouge, max_diff(ours_rouge.per_caption, keys, ref_rouge_each)),
                ("CIDEr-D", r_cider, t_cider_d, max_diff(ours_cider_d.per_caption, keys, ref_cider_each)),
            ]
            assert all(row[3] <= 1e-9 for row in rows), f"scores differ from the reference: {rows}"
            assert max(abs(a - b) for a, b in zip(ours_bleu.scores, ref_bleu)) <= 1e-12
        else:
            rows += [("BLEU-1..4", None, t_bleu, None), ("ROUGE-L", None, t_rouge, None)]
            rows += [("CIDEr-D", None, t_cider_d, None)]
        rows += [("CIDEr", None, t_cider, None), ("all 7", None, t_all, None)]
        for name, reference_time, our_time, diff in rows:
            ref_text = f"{reference_time:12.3f}" if reference_time is not None else f"{'skipped':>12}"
            ratio = f"{reference_time / our_time:6.1f}x" if reference_time is not None else f"{'':>7}"
            diff_text = f"{diff:11.1e}" if diff is not None else f"{'':>11}"
            print(f"{size:>7} {name:<8} {ref_text} {our_time:8.3f} {ratio} {diff_text}")
    print(f"peak RSS of part 1 (the reference's included): {peak_rss_mib():.0f} MiB")


# --------------------------------------------------------------------------------------------------
# Part 3: raw text end to end, PTB tokenisation included.


def ours_from_raw(candidates, references, keys, metrics):
    """The platform's path for raw English, ``score_texts(language="en")`` (scheme ``coco-ptb``, which
    goes through ``score_ptb_texts``: references and candidates as two files, in ``keys`` order, as
    COCOEvalCap tokenises them), from a cold tokeniser cache."""
    ptb.clear_cache()
    return score_texts({key: candidates[key] for key in keys}, references, language="en", metrics=metrics)


def raw_part(sizes: list[int], skip_reference_above: int, repeat: int) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.evaluation import ptb_captions
    from tests.evaluation.java_ptb import java_missing_reason

    missing = java_missing_reason()
    print("== Part 3: raw English captions, tokenisation included; reference = pycocoevalcap 1.2 ")
    print(
        "   (Java PTBTokenizer, JVM start-up included, + Python scorers), ours = score_texts(language='en')"
        " (scheme coco-ptb: ptb.tokenize_many_ids + the same scorers as score_tokens) =="
    )
    if missing:
        print(f"   reference skipped: {missing}")
    print(
        f"   each side runs {repeat} time(s) on the same input, alternating; 'first' = each side's first run"
        " in this process, 'best' = each side's best run"
    )
    print(
        f"{'images':>7} {'metrics':<14} {'ref first s':>11} {'ours first s':>12} {'ratio':>7}"
        f" {'ref best s':>10} {'ours best s':>11} {'ratio':>7} {'max |diff|':>11}"
    )
    for size in sizes:
        candidates, references = ptb_captions.images(size, references=5, seed=size, plain=0.7)
        keys = list(candidates)
        groups = [("CIDEr-D", ["CIDEr-D"])]
        if size <= skip_reference_above:
            groups.append(("BLEU+ROUGE-L", ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L"]))
        for label, metrics in groups:
            ours_times: list[float] = []
            reference_times: list[float] = []
            report = theirs = None
            for _ in range(repeat):
                start = time.perf_counter()
                report = ours_from_raw(candidates, references, keys, metrics)
                ours_times.append(time.perf_counter() - start)
                if not missing:
                    start = time.perf_counter()
                    theirs = pycocoevalcap_from_raw(candidates, references, keys, label)
                    reference_times.append(time.perf_counter() - start)
            line = f"{size:>7} {label:<14} "
            if reference_times:
                diff = max(max_diff(report.per_caption[name], keys, theirs[name]) for name in metrics)
                line += (
                    f"{reference_times[0]:11.2f} {ours_times[0]:12.3f} {reference_times[0] / ours_times[0]:6.1f}x"
                    f" {min(reference_times):10.2f} {min(ours_times):11.3f}"
                    f" {min(reference_times) / min(ours_times):6.1f}x {diff:11.1e}"
                )
            else:
                line += (
                    f"{'skipped':>11} {ours_times[0]:12.3f} {'':>7} {'skipped':>10} {min(ours_times):11.3f}"
                )
            print(line)


def pycocoevalcap_from_raw(candidates, references, keys, label):
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    gts = PTBTokenizer().tokenize({key: [{"caption": text} for text in references[key]] for key in keys})
    res = PTBTokenizer().tokenize({key: [{"caption": candidates[key]}] for key in keys})
    if label == "CIDEr-D":
        return {"CIDEr-D": Cider().compute_score(gts, res)[1]}
    _, bleu_each = Bleu(4).compute_score(gts, res, verbose=0)
    out = {f"BLEU-{k + 1}": bleu_each[k] for k in range(4)}
    out["ROUGE-L"] = Rouge().compute_score(gts, res)[1]
    return out


# --------------------------------------------------------------------------------------------------
# Part 2: XM3600 scale, synthetic.

_SCRIPT_RANGES = {"zh": (0x4E00, 0x9FFF), "ja": (0x3041, 0x30FF), "th": (0x0E01, 0x0E2E)}


def synthetic_languages(n_languages: int, n_images: int, n_systems: int, seed: int = 0):
    """{language: (image keys, {system: candidates}, references)} with raw-text captions."""
    _, captions, references = load_coco()
    words = [word for refs in references.values() for ref in refs for word in ref]
    words += [word for caption in captions for word in caption]
    rng = random.Random(seed)
    keys = [f"img{index:05d}" for index in range(n_images)]
    languages = {}
    for language in (XM3600_LANGUAGES * (n_languages // len(XM3600_LANGUAGES) + 1))[:n_languages]:
        spell = _speller(language, rng)
        joiner = "" if bench_scheme(language) == "char" else " "

        def caption(base: list[str], change: float, spell=spell, joiner=joiner) -> str:
            out = [rng.choice(words) if rng.random() < change else word for word in base]
            text = joiner.join(spell(word) for word in out)
            return text[:1].upper() + text[1:] + rng.choice([".", "", "!", " ."])

        refs, systems = {}, {f"system{s}": {} for s in range(n_systems)}
        for key in keys:
            base = [rng.choice(words) for _ in range(rng.randint(6, 14))]
            refs[key] = [caption(base, 0.3), caption(base, 0.4)]
            for s, system in enumerate(systems.values()):
                system[key] = caption(base, 0.3 + 0.1 * s)
        languages[language] = (keys, systems, refs)
    return languages


def _speller(language: str, rng: random.Random) -> Callable[[str], str]:
    if language not in _SCRIPT_RANGES:
        return lambda word: word
    low, high = _SCRIPT_RANGES[language]
    table: dict[str, str] = {}

    def spell(word: str) -> str:
        if word not in table:
            table[word] = "".join(chr(rng.randint(low, high)) for _ in range(rng.randint(1, 3)))
        return table[word]

    return spell


def xm3600_part(n_images: int, n_languages: int, n_systems: int) -> None:
    start = time.perf_counter()
    languages = synthetic_languages(n_languages, n_images, n_systems)
    generated = time.perf_counter() - start
    rss_before = peak_rss_mib()
    n_captions = sum(len(refs) * 2 + len(refs) * len(systems) for _, systems, refs in languages.values())
    print(f"== Part 2: XM3600 scale: {n_images} images x {n_languages} languages x {n_systems} systems, ")
    print(f"   2 references each; {n_captions:,} captions generated in {generated:.1f} s ==")
    start = time.perf_counter()
    checksum = 0.0
    for language, (_keys, systems, refs) in languages.items():
        chosen = bench_scheme(language)
        for candidates in systems.values():
            report = score_texts(candidates, refs, language=language, scheme=chosen)
            checksum += report.corpus["CIDEr-D"]
    total = time.perf_counter() - start
    runs = n_languages * n_systems
    print(f"   all 7 metrics, preprocessing included: {total:.1f} s total, {total / runs * 1000:.0f} ms per")
    print(f"   (language, system) run; mean CIDEr-D {checksum / runs:.3f}")
    peak = peak_rss_mib()
    print(f"   peak RSS {peak:.0f} MiB (of which {rss_before:.0f} MiB before scoring: interpreter + data)")
    start = time.perf_counter()
    for language, (_keys, systems, refs) in languages.items():
        chosen = scheme(bench_scheme(language))
        for captions in [*systems.values(), refs]:
            for texts in captions.values():
                for text in [texts] if isinstance(texts, str) else texts:
                    chosen.tokenize(text)
    print(
        f"   of the total, preprocessing alone (normalise + tokenise every caption): {time.perf_counter() - start:.1f} s"
    )
    language, (_keys, systems, refs) = next(iter(languages.items()))
    tracemalloc.start()
    score_texts(next(iter(systems.values())), refs, language=language, scheme=bench_scheme(language))
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"   tracemalloc peak of one run: {traced / 2**20:.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 50000])
    parser.add_argument(
        "--skip-reference-above",
        type=int,
        default=5000,
        metavar="N",
        help="do not run the (slow) reference on more than N images (default 5000)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs per side (default 3): part 1 compares each side's best, part 3 prints first and best",
    )
    parser.add_argument("--xm-images", type=int, default=3600)
    parser.add_argument("--xm-languages", type=int, default=36)
    parser.add_argument("--xm-systems", type=int, default=4)
    parser.add_argument("--skip-xm", action="store_true", help="skip part 2")
    parser.add_argument("--skip-raw", action="store_true", help="skip part 3 (raw text, PTB tokenisation)")
    parser.add_argument("--raw-only", action="store_true", help="run part 3 only")
    parser.add_argument("--xm-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    xm_args = [str(args.xm_images), str(args.xm_languages), str(args.xm_systems)]
    if args.xm_only:
        xm3600_part(*map(int, xm_args))
        return
    if args.raw_only:
        raw_part(args.sizes, args.skip_reference_above, args.repeat)
        return
    coco_part(args.sizes, args.skip_reference_above, args.repeat)
    if not args.skip_raw:
        raw_part(args.sizes, args.skip_reference_above, args.repeat)
    if not args.skip_xm:
        # A fresh process, so that its peak memory is the XM3600 run's own.
        command = [sys.executable, __file__, "--xm-only", "--xm-images", xm_args[0]]
        command += ["--xm-languages", xm_args[1], "--xm-systems", xm_args[2]]
        subprocess.run(command, check=True)


if __name__ == "__main__":
    main()
