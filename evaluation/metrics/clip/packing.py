"""Texts packed without padding into the text tower: same embeddings, fewer token positions.

Length-sorted batches are trimmed to their longest text (:mod:`.texts`), but within a batch the shorter
texts are still padded to that width, and on CUDA the width is rounded up to a bucket (:mod:`.device`):
at a GPU's batch of 1024 texts about a fifth of the positions a pass computes is padding. Two kinds of
tower allow removing it exactly (:func:`packing_kind`): open_clip's own CLIP text tower (causal mask,
pooled at its EOT / first token), in two ways below, and a RoBERTa / XLM-R tower with the mean pooler
(the default model), by packed rows with a block-diagonal *bidirectional* mask, each text's position
ids as RoBERTa numbers them when padded (``padding_idx + 1 + column``) and the mean over each text's own
positions (:func:`hf_packed_pass`; the 4D mask goes to transformers' SDPA attention as it is).

Packed rows (:func:`pack_rows`, :func:`packed_pass`)
    Several texts share one row of the context width: each text's position ids restart at 0, and the
    attention mask is block-diagonal causal (a position sees the earlier positions of its own text
    only). Every per-position step (embedding, layer norms, the MLP, the projections) is the same
    computation on the same inputs as in a padded row, and attention is a softmax over exactly the
    same keys (the masked ones get weight 0), so each text's pooled feature is the padded tower's up
    to float rounding (the tests hold it to 1e-5 in fp32). The rows' tail, where no text fits, is a
    filler segment of its own (finite, never read). Rows have the context's width and a pass has a
    fixed number of rows (:func:`packed_rows_per_pass`), so every pass has the same shape: what CUDA
    graphs and ``torch.compile(dynamic=False)`` need. The mask path runs anywhere (it is the CPU
    reference); on CUDA its SDPA call takes the memory-efficient kernel (the flash kernel takes no mask).

Variable-length attention (:func:`varlen_pass`)
    The texts of a pass are concatenated into one sequence with no filler at all and attention is
    computed per text from the cumulative lengths (``torch.nn.attention.varlen.varlen_attn``: flash
    attention, CUDA and half precision only; the call is guarded by :func:`varlen_available`). The
    layer code around the kernel (the block's layer norms, its packed q/k/v projection, the output
    projection, layer scales and MLP) is checked on a CPU with :func:`segment_attention` in the
    kernel's place, against the padded tower.

When (:func:`use_packing`, ``CLIP_TEXT_PACKING``)
    ``auto`` (default) packs on CUDA where the tower allows it and packing removes at least
    :data:`PACKING_MIN_SAVING` of the positions the padded batches would compute (bucket rounding
    included: :func:`padded_positions`); never on a CPU, where sorted batches trimmed to their longest
    text already pad little and the block masks cost more attention than the padding they save. ``on``
    packs wherever the tower allows it (tests, benchmarks); ``off`` never packs. In a packed run the
    varlen kernel is used where :func:`varlen_available` says so (CUDA, bf16/fp16), the packed mask
    otherwise.

torch is imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .choices import choice_check

__all__ = [
    "PACKED_TEXTS_PER_ROW",
    "PACKING_CHOICES",
    "PACKING_MIN_SAVING",
    "block_causal_mask",
    "pack_rows",
    "packing_kind",
    "packed_features",
    "packed_pass",
    "packed_positions",
    "packed_rows_per_pass",
    "packing_choice_check",
    "padded_positions",
    "segment_attention",
    "use_packing",
    "varlen_available",
    "varlen_pass",
    "varlen_supported",
]

PACKING_CHOICES = ("auto", "on", "off")
# Packing pays on CUDA when it removes at least this share of the positions the padded batches compute:
# below it, the block mask's extra attention and the packing itself are not worth it. An estimate, not
# yet measured on a GPU (benchmarks/bench_text_pass.py measures both sides): on caption-like lengths
# (log-normal, median 18 tokens) at the CUDA batch of 1024 with buckets, packing removes about 16%.
PACKING_MIN_SAVING = 0.1
# A packed pass holds batch_size / PACKED_TEXTS_PER_ROW rows of the context width: about the positions a
# padded batch of batch_size captions of 77 / 4 ≈ 19 tokens holds (a caption's median length).
PACKED_TEXTS_PER_ROW = 4
# How full packed rows are taken to be when deciding (best fit, longest first, on caption-like lengths).
PACKED_FILL = 0.97


def packing_choice_check(value: object) -> str:
    """``value`` if it is ``"auto"``, ``"on"`` or ``"off"``; ValueError naming the choices otherwise."""
    return choice_check(value, PACKING_CHOICES, "CLIP text packing", "auto, on or off")


# --- pure planning --------------------------------------------------------------------------------


def pack_rows(lengths: Sequence[int] | np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Place texts of ``lengths`` token positions in rows of ``width``: best fit, longest first.

    Returns ``(row, offset, rows)``: text ``i`` occupies ``[offset[i], offset[i] + lengths[i])`` of row
    ``row[i]``; ``rows`` is the number of rows. Texts never overlap or cross a row's end. ValueError
    for a length below 1 or above ``width``."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(lengths) and (lengths.min() < 1 or lengths.max() > width):
        raise ValueError(f"lengths must be between 1 and the row width {width}")
    row = np.empty(len(lengths), dtype=np.int64)
    offset = np.empty(len(lengths), dtype=np.int64)
    # open[free]: rows with exactly `free` positions left (a stack); best fit takes the smallest free >= length.
    open_rows: list[list[int]] = [[] for _ in range(width + 1)]
    used: list[int] = []
    for i in np.argsort(-lengths, kind="stable"):
        n = int(lengths[i])
        free = next((f for f in range(n, width + 1) if open_rows[f]), None)
        if free is None:
            r = len(used)
            used.append(0)
        else:
            r = open_rows[free].pop()
        row[i], offset[i] = r, used[r]
        used[r] += n
        open_rows[width - used[r]].append(r)
    return row, offset, len(used)


def padded_positions(
    lengths: np.ndarray, batch_size: int, buckets: Sequence[int] | None, context: int
) -> int:
    """Token positions the padded path computes for ``lengths``: sorted longest first, each width rounded
    up to its bucket (when ``buckets``), cut by :func:`.texts.length_batches`, each batch as wide as its
    first text."""
    from .device import bucket_widths
    from .texts import length_batches

    widths = np.sort(np.asarray(lengths, dtype=np.int64))[::-1]
    if buckets:
        widths = bucket_widths(widths, buckets, context)
    return int(sum((end - start) * widths[start] for start, end in length_batches(widths, batch_size)))


def packed_positions(lengths: np.ndarray, width: int) -> int:
    """Token positions the packed path computes: its rows (:func:`pack_rows`) times their width."""
    return pack_rows(lengths, width)[2] * width


_HF_PACKED_MODEL_TYPES = ("roberta", "xlm-roberta")  # position ids: padding_idx + 1 + column


def packing_kind(model, trimming: str) -> str | None:
    """How ``model``'s text tower is packed: ``"clip"`` (the causal CLIP tower), ``"hf-mean"`` (a
    RoBERTa / XLM-R tower of open_clip's ``HFTextEncoder`` with the mean pooler and the SDPA attention,
    the default model's kind), or None (kept padded). ``trimming``: :func:`.texts.text_trimming`."""
    if trimming == "clip-causal":
        return "clip"
    text = getattr(model, "text", None)
    if (
        trimming == "hf-mask"
        and type(getattr(text, "pooler", None)).__name__ == "MeanPooler"
        and getattr(text.config, "model_type", None) in _HF_PACKED_MODEL_TYPES
        and getattr(text.transformer.config, "_attn_implementation", None) == "sdpa"
    ):
        return "hf-mean"
    return None


def use_packing(
    choice: str,
    device: object,
    kind: str | None,
    lengths: np.ndarray,
    batch_size: int,
    context: int,
) -> bool:
    """Whether a slice of texts of ``lengths`` is embedded packed (module doc, "When"); ``kind``:
    :func:`packing_kind` (None: never).

    Decided on estimates that cost microseconds, not on the plans themselves (the batch cut alone takes
    a large part of a second for a slice of 16,384 texts): the padded side as each text's width rounded up
    to its bucket (a lower bound: the batch cut pads further), the packed side as rows
    :data:`PACKED_FILL` full (best fit fills caption-like lengths to 98%)."""
    from .device import bucket_widths, device_type, width_buckets

    if choice == "off" or kind is None or len(lengths) == 0:
        return False
    if choice == "on":
        return True
    if device_type(device) != "cuda":
        return False
    lengths = np.asarray(lengths, dtype=np.int64)
    buckets = width_buckets(device)
    padded = int(bucket_widths(lengths, buckets, context).sum()) if buckets else int(lengths.sum())
    packed = int(np.ceil(lengths.sum() / (context * PACKED_FILL))) * context
    return packed <= (1 - PACKING_MIN_SAVING) * padded


def packed_rows_per_pass(batch_size: int) -> int:
    """Rows of the context width per packed pass (:data:`PACKED_TEXTS_PER_ROW`), at least 1."""
    return max(1, batch_size // PACKED_TEXTS_PER_ROW)


# --- the packed tower -----------------------------------------------------------------------------


def block_causal_mask(segments, heads: int):
    """The additive attention mask of packed rows: ``(rows * heads, width, width)`` float, 0 where
    position ``i`` may see ``j`` (``j <= i`` in the same segment) and -inf elsewhere; ``segments`` is
    ``(rows, width)`` (a segment id per position). The layout ``nn.MultiheadAttention`` and open_clip's
    custom attention take for a per-row mask."""
    import torch

    width = segments.shape[1]
    causal = torch.ones(width, width, dtype=torch.bool, device=segments.device).tril()
    allowed = (segments[:, :, None] == segments[:, None, :]) & causal
    mask = torch.zeros(allowed.shape, dtype=torch.float32, device=segments.device)
    mask.masked_fill_(~allowed, float("-inf"))
    return mask.repeat_interleave(heads, dim=0)


def _heads(model) -> int:
    attn = model.transformer.resblocks[0].attn
    return int(attn.num_heads)


def _project(model, x):
    import torch.nn as nn

    if model.text_projection is None:
        return x
    if isinstance(model.text_projection, nn.Linear):
        return model.text_projection(x)
    return x @ model.text_projection


def _packed_hidden(model, tokens, positions, mask):
    """The tower on packed rows up to its final layer norm: ``(rows, width, d)``. What
    ``CLIP_COMPILE`` compiles (fixed shapes in, fixed shapes out)."""
    cast_dtype = model.transformer.get_cast_dtype()
    x = model.token_embedding(tokens).to(cast_dtype)
    x = x + model.positional_embedding[positions].to(cast_dtype)
    x = model.transformer(x, attn_mask=mask)
    return model.ln_final(x)


def _token_places(lengths: np.ndarray, row: np.ndarray, offset: np.ndarray, context: int):
    """Where each token of each text goes in the flattened packed rows: ``(starts, counts, text_of,
    column, target)`` as CPU tensors: each text's first place and length, then per token its text, its
    column in the text and its place in the rows."""
    import torch

    starts = torch.from_numpy(np.asarray(row * context + offset, dtype=np.int64))
    counts = torch.from_numpy(np.asarray(lengths, dtype=np.int64))
    text_of = torch.repeat_interleave(torch.arange(len(lengths)), counts)
    column = torch.arange(int(counts.sum())) - torch.repeat_interleave(
        torch.cumsum(counts, 0) - counts, counts
    )
    target = torch.repeat_interleave(starts, counts) + column
    return starts, counts, text_of, column, target


def packed_pass(
    model,
    tokens,
    lengths: np.ndarray,
    placement: tuple[np.ndarray, np.ndarray, int] | None = None,
    *,
    hidden: Callable | None = None,
):
    """The causal CLIP tower's features of ``tokens`` (``(n, >= max(lengths))``, a text's pooled token at
    column ``lengths[i] - 1``) computed packed in rows of the context width: ``(n, embed_dim)``.

    ``placement``: ``(row, offset, rows)`` as :func:`pack_rows` gives it (``rows`` may exceed what the
    texts use: the rest are filler rows, so a compiled pass keeps one shape); None packs the texts here.
    ``hidden``: the function computing the rows (:func:`_packed_hidden`, or its compiled form)."""
    import torch

    context = model.positional_embedding.shape[0]
    row, offset, rows = placement if placement is not None else pack_rows(lengths, context)
    device = tokens.device
    starts, counts, text_of, column, target = _token_places(lengths, row, offset, context)
    positions = torch.arange(rows * context) % context  # filler positions keep their own column
    segments = torch.full((rows * context,), -1, dtype=torch.long)  # filler: a segment of its own per row
    positions[target] = column
    segments[target] = text_of
    positions, segments = (t.view(rows, context).to(device, non_blocking=True) for t in (positions, segments))
    packed = torch.zeros(rows * context, dtype=tokens.dtype, device=device)
    packed[target.to(device)] = tokens[text_of.to(device), column.to(device)]
    mask = block_causal_mask(segments, _heads(model))
    x = (hidden or _packed_hidden)(model, packed.view(rows, context), positions, mask)
    pooled = x.reshape(rows * context, -1)[(starts + counts - 1).to(device)]
    return _project(model, pooled)


def block_mask(segments):
    """The attention mask of packed rows for a bidirectional tower: ``(rows, 1, width, width)`` bool, True
    where positions ``i`` and ``j`` are in the same segment (the 4D mask transformers passes on as it is)."""
    return (segments[:, :, None] == segments[:, None, :])[:, None]


def _hf_packed_hidden(model, tokens, positions, mask):
    """The HF tower's last hidden state on packed rows: ``(rows, width, d)`` (what ``CLIP_COMPILE`` compiles)."""
    return model.text.transformer(
        input_ids=tokens, attention_mask=mask, position_ids=positions
    ).last_hidden_state


def hf_packed_pass(
    model,
    tokens,
    lengths: np.ndarray,
    placement: tuple[np.ndarray, np.ndarray, int] | None = None,
    *,
    hidden: Callable | None = None,
):
    """A RoBERTa / XLM-R mean-pooled tower's features of ``tokens`` (``(n, context)``, text ``i`` in its
    first ``lengths[i]`` columns, padding after) computed packed: ``(n, embed_dim)``.

    Each text keeps the position ids it has padded (``padding_idx + 1 + column``: RoBERTa numbers the
    non-pad positions from the mask), attends to its own positions only (:func:`block_mask`, both ways:
    the tower is not causal), and is mean-pooled over its own positions, as open_clip's ``MeanPooler``
    pools over the non-pad ones. ``placement`` and ``hidden`` as in :func:`packed_pass`."""
    import torch

    context = tokens.shape[1]
    row, offset, rows = placement if placement is not None else pack_rows(lengths, context)
    device = tokens.device
    starts, counts, text_of, column, target = _token_places(lengths, row, offset, context)
    first_position = model.text.transformer.embeddings.padding_idx + 1
    positions = torch.full((rows * context,), first_position, dtype=torch.long)
    segments = torch.full((rows * context,), -1, dtype=torch.long)  # filler: a segment of its own per row
    positions[target] = column + first_position
    segments[target] = text_of
    positions, segments = (t.view(rows, context).to(device, non_blocking=True) for t in (positions, segments))
    pad = model.text.config.pad_token_id
    packed = torch.full((rows * context,), pad, dtype=tokens.dtype, device=device)
    text_of, column, target = text_of.to(device), column.to(device), target.to(device)
    packed[target] = tokens[text_of, column]
    x = (hidden or _hf_packed_hidden)(model, packed.view(rows, context), positions, block_mask(segments))
    per_token = x.reshape(rows * context, -1)[target]
    sums = per_token.new_zeros((len(lengths), per_token.shape[1])).index_add_(0, text_of, per_token)
    pooled = sums / counts.to(device=device, dtype=sums.dtype)[:, None]
    return model.text.proj(pooled)


def packed_features(
    model,
    tokens,
    lengths: np.ndarray,
    batch_size: int,
    *,
    compile_mode: str = "off",
    attention=None,
    kind: str = "clip",
):
    """The tower's features of ``tokens`` (rows of the full context, ``lengths`` as
    :func:`.texts._lengths` gives them), packed: ``(n, embed_dim)`` in row order, on the tokens' device.
    ``kind``: :func:`packing_kind`; an ``hf-mean`` tower always takes the packed mask.

    With the varlen kernel (:func:`varlen_available`, or ``attention`` given: tests pass
    :func:`segment_attention`) the texts go through in passes of at most
    :func:`packed_rows_per_pass` x context tokens, concatenated; otherwise all texts are packed into rows
    at once (:func:`pack_rows`) and the rows go through :func:`packed_rows_per_pass` at a time, under
    ``compile_mode`` (:mod:`.compiled`; the last pass filled with filler rows when compiled, so every
    pass has one shape)."""
    import torch

    from .compiled import compiled

    context = tokens.shape[1]
    per_pass = packed_rows_per_pass(batch_size)
    lengths = np.asarray(lengths, dtype=np.int64)
    varlen = kind == "clip" and (
        attention is not None
        or (varlen_available(tokens.device, model.transformer.get_cast_dtype()) and varlen_supported(model))
    )
    if varlen:
        budget, pieces, start = per_pass * context, [], 0
        ends = np.cumsum(lengths)
        while start < len(lengths):
            base = ends[start - 1] if start else 0
            end = max(start + 1, int(np.searchsorted(ends, base + budget, side="right")))
            pieces.append(varlen_pass(model, tokens[start:end], lengths[start:end], attention=attention))
            start = end
        return torch.cat(pieces)
    row, offset, rows = pack_rows(lengths, context)
    one_pass = packed_pass if kind == "clip" else hf_packed_pass
    hidden = compiled(model, _packed_hidden if kind == "clip" else _hf_packed_hidden, compile_mode)
    out = None
    for first in range(0, rows, per_pass):
        chosen = np.flatnonzero((row >= first) & (row < first + per_pass))
        pass_rows = per_pass if compile_mode != "off" else min(per_pass, rows - first)
        index = torch.from_numpy(chosen).to(tokens.device)
        features = one_pass(
            model,
            tokens[index],
            lengths[chosen],
            (row[chosen] - first, offset[chosen], pass_rows),
            hidden=hidden,
        )
        if out is None:
            out = features.new_empty((len(lengths), features.shape[1]))
        out[index] = features
    return out


# --- variable-length attention --------------------------------------------------------------------


def varlen_available(device: object, dtype) -> bool:
    """Whether torch's variable-length flash attention can run: CUDA, bf16 or fp16, and the module present."""
    import torch

    from .device import device_type

    if device_type(device) != "cuda" or dtype not in (torch.bfloat16, torch.float16):
        return False
    try:
        from torch.nn.attention.varlen import varlen_attn  # noqa: F401
    except ImportError:
        return False
    return True


def segment_attention(q, k, v, cu_seqlens, max_len: int):
    """Causal attention within each segment of the concatenated ``(tokens, heads, head_dim)`` q/k/v, the
    segments given by their cumulative lengths: what ``varlen_attn(..., window_size=(-1, 0))`` computes,
    one segment at a time (the CPU reference for :func:`varlen_pass`)."""
    import torch.nn.functional as F

    out = q.new_empty(q.shape)
    bounds = cu_seqlens.tolist()
    for start, end in zip(bounds[:-1], bounds[1:]):
        a, b, c = (t[start:end].transpose(0, 1) for t in (q, k, v))
        out[start:end] = F.scaled_dot_product_attention(a, b, c, is_causal=True).transpose(0, 1)
    return out


def _cuda_varlen_attention(q, k, v, cu_seqlens, max_len: int):
    import torch
    from torch.nn.attention.varlen import varlen_attn

    cu = cu_seqlens.to(torch.int32)
    q, k, v = (t.contiguous() for t in (q, k, v))  # views into the packed q/k/v projection
    return varlen_attn(q, k, v, cu, cu, max_len, max_len, window_size=(-1, 0))


def varlen_supported(model) -> bool:
    """Whether :func:`varlen_pass` can run ``model``'s blocks: open_clip's default residual blocks
    (``nn.MultiheadAttention`` with one packed q/k/v projection, no cross-attention)."""
    from open_clip.transformer import ResidualAttentionBlock

    return all(
        type(block) is ResidualAttentionBlock
        and not hasattr(block, "ln_1_kv")
        and getattr(block.attn, "_qkv_same_embed_dim", False)
        for block in model.transformer.resblocks
    )


def varlen_pass(model, tokens, lengths: np.ndarray, *, attention: Callable | None = None):
    """The causal CLIP tower's features of ``tokens`` with the texts concatenated, no padding at all:
    ``(n, embed_dim)``. ``attention(q, k, v, cu_seqlens, max_len)`` is the per-segment causal attention:
    torch's varlen flash kernel by default (CUDA, half precision: :func:`varlen_available`),
    :func:`segment_attention` on a CPU."""
    import torch
    import torch.nn.functional as F

    attention = attention or _cuda_varlen_attention
    device = tokens.device
    counts = torch.from_numpy(lengths)
    n = len(lengths)
    first = torch.cumsum(counts, 0) - counts
    column = torch.arange(int(counts.sum())) - torch.repeat_interleave(first, counts)
    text_of = torch.repeat_interleave(torch.arange(n), counts)
    cu_seqlens = torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(counts, 0)]).to(device)
    column, text_of = column.to(device), text_of.to(device)
    cast_dtype = model.transformer.get_cast_dtype()
    x = model.token_embedding(tokens[text_of, column]).to(cast_dtype)
    x = x + model.positional_embedding[column].to(cast_dtype)
    total = x.shape[0]
    for block in model.transformer.resblocks:
        attn = block.attn
        heads = attn.num_heads
        qkv = F.linear(block.ln_1(x), attn.in_proj_weight, attn.in_proj_bias)
        q, k, v = qkv.view(total, 3, heads, -1).unbind(1)
        out = attention(q, k, v, cu_seqlens, int(lengths.max()))
        x = x + block.ls_1(attn.out_proj(out.reshape(total, -1)))
        x = x + block.ls_2(block.mlp(block.ln_2(x)))
    x = model.ln_final(x)
    return _project(model, x[cu_seqlens[1:] - 1])
