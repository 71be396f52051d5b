"""Texts packed without padding, and the text pass compiled (docs/clip-on-gpu.md), built and checked on a
CPU: the packing plan as pure logic, the packed-mask and variable-length paths of open_clip's causal text
tower against its own full-context ``encode_text`` (fp32, 1e-5), the choice of when to pack, and the
``torch.compile`` wiring. The CUDA-only kernel (``varlen_attn``) is replaced here by the per-segment
reference it must equal; tiny random models (tests/evaluation/clip_tiny.py)."""

import numpy as np
import pytest

from evaluation.metrics.clip import InMemoryEmbeddingCache, embed_texts
from evaluation.metrics.clip import compiled as clip_compiled
from evaluation.metrics.clip.compiled import compile_choice_check, compiled, compiled_rows, pad_rows
from evaluation.metrics.clip.device import CUDA_WIDTH_BUCKETS
from evaluation.metrics.clip.packing import (
    PACKING_MIN_SAVING,
    block_causal_mask,
    pack_rows,
    packed_features,
    packed_pass,
    packed_positions,
    packed_rows_per_pass,
    packing_choice_check,
    packing_kind,
    padded_positions,
    segment_attention,
    use_packing,
    varlen_available,
    varlen_pass,
    varlen_supported,
)
from evaluation.metrics.clip.texts import _lengths
from tests.evaluation.test_clip_gpu_paths import clip_tower, hf_tower
from tests.evaluation.test_clip_speed import Widths, _full_context, _texts

__all__ = ["clip_tower", "hf_tower"]  # the fixtures

# --- the plan: pure logic -----------------------------------------------------------------------------


def test_pack_rows_places_every_text_once_within_its_row_without_overlap():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 78, 500)
    row, offset, rows = pack_rows(lengths, 77)
    assert row.min() == 0 and row.max() == rows - 1
    for r in range(rows):
        spans = sorted((offset[i], offset[i] + lengths[i]) for i in np.flatnonzero(row == r))
        assert spans[0][0] == 0 and spans[-1][1] <= 77
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))  # contiguous: the filler is at the end
    # Best fit, longest first, on caption-like lengths: rows at least 98% full.
    captions = np.random.default_rng(2).lognormal(np.log(18), 0.45, 2000).clip(4, 77).astype(int)
    assert pack_rows(captions, 77)[2] <= 1.02 * captions.sum() / 77
    assert pack_rows([40, 40, 37, 37, 3], 77)[2] == 3  # 40+37, 40+37, 3
    assert pack_rows([], 77)[2] == 0
    for bad in ([0, 3], [78]):
        with pytest.raises(ValueError, match="between 1 and the row width 77"):
            pack_rows(bad, 77)


def test_packing_is_chosen_on_cuda_where_it_removes_enough_padding():
    spread = np.sort(np.random.default_rng(1).lognormal(np.log(18), 0.45, 4096).clip(4, 77).astype(int))[::-1]
    padded = padded_positions(spread, 1024, CUDA_WIDTH_BUCKETS, 77)
    # Sorted batches already pad little (here 22% over the texts' own positions); packing fills its rows.
    assert spread.sum() < packed_positions(spread, 77) <= 1.03 * spread.sum()
    assert packed_positions(spread, 77) <= (1 - PACKING_MIN_SAVING) * padded
    assert use_packing("auto", "cuda", "clip", spread, 1024, 77)
    assert use_packing("auto", "cuda:0", "clip", spread, 1024, 77)
    # Never on a CPU by default, never for a tower it would change, never when asked not to.
    assert not use_packing("auto", "cpu", "clip", spread, 1024, 77)
    assert not use_packing("auto", "cuda", None, spread, 1024, 77)
    assert not use_packing("on", "cpu", None, spread, 1024, 77)
    assert not use_packing("off", "cuda", "clip", spread, 1024, 77)
    assert use_packing("on", "cpu", "clip", spread, 64, 77)
    # Every text as long as a bucket, 4 of them fill a row: no padding for packing to remove.
    even = np.full(4096, 16)
    assert padded_positions(even, 1024, CUDA_WIDTH_BUCKETS, 77) == 4096 * 16
    assert not use_packing("auto", "cuda", "clip", even, 1024, 77)
    assert packed_rows_per_pass(1024) == 256 and packed_rows_per_pass(2) == 1
    assert packing_choice_check("on") == "on"
    with pytest.raises(ValueError, match="choose auto, on or off"):
        packing_choice_check("yes")


def test_the_block_causal_mask_lets_a_position_see_its_own_texts_earlier_positions_only():
    import torch

    segments = torch.tensor([[0, 0, 1, 1, -1], [2, 2, 2, -1, -1]])
    mask = block_causal_mask(segments, heads=2)
    assert mask.shape == (4, 5, 5)
    assert torch.equal(mask[0], mask[1]) and torch.equal(mask[2], mask[3])  # one copy per head
    seen = (mask[0] == 0).int().tolist()
    assert seen == [
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [0, 0, 1, 0, 0],
        [0, 0, 1, 1, 0],
        [0, 0, 0, 0, 1],  # the filler sees itself: finite, never read
    ]
    assert (mask[2] == 0).int()[4].tolist() == [0, 0, 0, 1, 1]


# --- the packed tower against open_clip's own computation ------------------------------------------------


def _tokens(loaded, texts):
    tokens = loaded.tokenizer(texts)
    return tokens, _lengths(loaded.model, "clip-causal", tokens).numpy()


def test_packed_rows_give_the_full_context_embeddings(clip_tower):
    import torch
    import torch.nn.functional as F

    texts = _texts(60)  # the last one longer than the context: a full row of its own
    tokens, lengths = _tokens(clip_tower, texts)
    assert lengths.max() == 77
    with torch.inference_mode():
        got = F.normalize(packed_pass(clip_tower.model, tokens, lengths), dim=-1).numpy()
        row, offset, rows = pack_rows(lengths, 77)
        filled = packed_pass(clip_tower.model, tokens, lengths, (row, offset, rows + 3))  # filler rows
    assert rows < len(texts) / 2  # several texts per row
    expected = _full_context(clip_tower, texts)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    np.testing.assert_allclose(F.normalize(filled, dim=-1).numpy(), expected, atol=1e-5)


def test_variable_length_attention_gives_the_full_context_embeddings(clip_tower):
    import torch
    import torch.nn.functional as F

    texts = _texts(40)
    tokens, lengths = _tokens(clip_tower, texts)
    assert varlen_supported(clip_tower.model)
    with torch.inference_mode():
        got = varlen_pass(clip_tower.model, tokens, lengths, attention=segment_attention)
        # In passes of at most 1 row of tokens (77): one text per pass where two do not fit.
        passes = packed_features(clip_tower.model, tokens, lengths, 4, attention=segment_attention)
    expected = _full_context(clip_tower, texts)
    np.testing.assert_allclose(F.normalize(got, dim=-1).numpy(), expected, atol=1e-5)
    np.testing.assert_allclose(F.normalize(passes, dim=-1).numpy(), expected, atol=1e-5)


def test_the_varlen_kernel_is_only_taken_on_cuda_in_half_precision():
    import torch

    assert not varlen_available("cpu", torch.bfloat16)
    assert not varlen_available("cuda", torch.float32)


def test_a_packed_call_gives_the_padded_calls_numbers_in_fewer_rows(clip_tower, monkeypatch):
    texts = _texts(80)
    expected = _full_context(clip_tower, texts)
    packed = clip_tower.with_text_pass(packing="on")
    widths = Widths(packed, monkeypatch)
    cache = InMemoryEmbeddingCache()
    got = embed_texts(packed, texts, batch_size=16, cache=cache)  # passes of 4 rows of 77
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert set(widths.widths) == {77} and widths.rows < len(texts) / 2
    assert len(cache) == len(set(texts))
    # The padded call: a row per text.
    widths.rows, widths.widths = 0, []
    np.testing.assert_allclose(embed_texts(clip_tower, texts, batch_size=16), expected, atol=1e-5)
    assert widths.rows == len(texts)


def test_the_xlmr_tower_packed_gives_the_full_context_embeddings_in_fewer_rows(hf_tower, monkeypatch):
    # The default model's kind: bidirectional attention within each text, RoBERTa's position ids, the mean
    # over each text's own positions.
    texts = _texts(40)
    expected = _full_context(hf_tower, texts)
    rows = []
    original = hf_tower.model.text.transformer.forward

    def spy(*args, **kwargs):
        rows.append(tuple(kwargs["input_ids"].shape))
        return original(*args, **kwargs)

    monkeypatch.setattr(hf_tower.model.text.transformer, "forward", spy)
    got = embed_texts(hf_tower.with_text_pass(packing="on"), texts, batch_size=16)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert {width for _, width in rows} == {77} and sum(r for r, _ in rows) < len(texts) / 2


def test_only_the_towers_packing_leaves_exact_are_packed(clip_tower, hf_tower, monkeypatch):
    assert packing_kind(clip_tower.model, "clip-causal") == "clip"
    assert packing_kind(hf_tower.model, "hf-mask") == "hf-mean"
    # A CLS pooler, or attention that does not take the 4D mask as it is: kept padded, numbers unchanged.
    from open_clip.hf_model import ClsPooler

    monkeypatch.setattr(hf_tower.model.text, "pooler", ClsPooler())
    assert packing_kind(hf_tower.model, "hf-mask") is None
    monkeypatch.undo()
    monkeypatch.setattr(hf_tower.model.text.transformer.config, "_attn_implementation", "eager")
    assert packing_kind(hf_tower.model, "hf-mask") is None
    assert packing_kind(hf_tower.model, "full") is None


def test_packed_bf16_stays_within_the_autocast_tolerance_of_fp32(clip_tower):
    from evaluation.metrics.clip import AUTOCAST_TOLERANCE

    texts = _texts(24)
    expected = _full_context(clip_tower, texts)
    got = embed_texts(clip_tower.with_autocast("bf16").with_text_pass(packing="on"), texts, batch_size=8)
    assert np.abs(got @ got.T - expected @ expected.T).max() <= AUTOCAST_TOLERANCE


# --- the compiled pass --------------------------------------------------------------------------------


def test_compiled_row_counts_are_a_few_buckets():
    assert [compiled_rows(n, 1024) for n in (1, 3, 17, 700, 1024)] == [1, 4, 32, 768, 1024]
    assert compiled_rows(50, 64) == 64 and compiled_rows(70, 64) == 70  # never above the batch, nor below n
    assert compile_choice_check("reduce-overhead") == "reduce-overhead"
    with pytest.raises(ValueError, match="choose off, compile or reduce-overhead"):
        compile_choice_check("max")


def test_pad_rows_repeats_the_last_row():
    import torch

    batch = torch.arange(6).view(3, 2)
    assert pad_rows(batch, 5).tolist() == [[0, 1], [2, 3], [4, 5], [4, 5], [4, 5]]
    assert pad_rows(batch, 3) is batch


@pytest.mark.parametrize(
    ("packing", "mode"), [("off", "compile"), ("on", "compile"), ("on", "reduce-overhead")]
)
def test_the_compiled_pass_gives_the_same_numbers_with_a_few_shapes(clip_tower, monkeypatch, packing, mode):
    # The wiring, with torch.compile's eager backend (no code generation): one compiled function per model
    # and mode, kept; fixed row counts; the same embeddings.
    monkeypatch.setattr(clip_compiled, "COMPILE_BACKEND", "eager")
    texts = _texts(50)
    expected = _full_context(clip_tower, texts)
    loaded = clip_tower.with_text_pass(packing=packing, compile=mode)
    shapes = []
    original = loaded.model.transformer.forward

    def spy(x, *args, **kwargs):
        shapes.append(tuple(x.shape[:2]))
        return original(x, *args, **kwargs)

    monkeypatch.setattr(loaded.model.transformer, "forward", spy)
    got = embed_texts(loaded, texts, batch_size=16)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    if packing == "on":  # every pass 16 / 4 rows of the context, the last one filled up
        assert set(shapes) == {(4, 77)}
    else:  # row counts from the few buckets (or the batch size), never fewer rows than texts
        assert {rows for rows, _ in shapes} <= {1, 2, 4, 8, 16} and sum(r for r, _ in shapes) >= len(texts)
    first = compiled(loaded.model, clip_compiled.pad_rows, mode)
    assert compiled(loaded.model, clip_compiled.pad_rows, mode) is first
    assert compiled(loaded.model, clip_compiled.pad_rows, "off") is clip_compiled.pad_rows


@pytest.mark.slow
def test_the_compiled_pass_with_inductor_on_a_cpu(clip_tower):
    # One packed shape, compiled by inductor with gcc (about a minute on two cores): the same numbers as
    # open_clip's own pass.
    pytest.importorskip("torch._inductor")
    texts = _texts(12)
    loaded = clip_tower.with_text_pass(packing="on", compile="compile")
    got = embed_texts(loaded, texts, batch_size=64)
    np.testing.assert_allclose(got, _full_context(clip_tower, texts), atol=1e-5)


def test_the_text_pass_choices_are_kept_checked_and_left_out_of_the_cache_key(clip_tower):
    assert (clip_tower.text_packing, clip_tower.text_compile) == ("auto", "off")
    packed = clip_tower.with_text_pass(packing="on")
    both = packed.with_text_pass(compile="reduce-overhead")
    assert (both.text_packing, both.text_compile) == ("on", "reduce-overhead")
    assert both.model is clip_tower.model and both.embedding_key == clip_tower.embedding_key
    with pytest.raises(ValueError, match="choose auto, on or off"):
        clip_tower.with_text_pass(packing="yes")
    with pytest.raises(ValueError, match="choose off, compile or reduce-overhead"):
        clip_tower.with_text_pass(compile="max-autotune")
