"""Figures of the 2025-2026 model families: what an MoE token uses, windowed and latent caches, the two ways of
computing latent attention, decode at long context, and the experts a decode step reads.

Every number comes from the model's transformer table (``ModelShape.table()``) or ``hw.inference_step``.
Chapters :ref:`ch-counting`, :ref:`ch-kv-cache`, :ref:`ch-serving` and :ref:`ch-serving-experts`.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

from hwlib._checks import positive
from hwlib.data.records import Chip, Cluster, ModelShape, require
from hwlib.serving.step import inference_step, max_batch
from hwlib.units import GiB, format_number
from hwlib.viz.style import PALETTE, new_axes

USAGE_PARTS = (
    ("routed experts", ("experts",)),
    ("shared experts", ("shared experts",)),
    ("dense MLPs", ("mlp",)),
    ("attention", ("attention",)),
    ("embedding and head", ("embedding", "lm_head", "classifier")),
    ("router, norms, vision", ("router", "norms", "positions", "vision")),
)
"""The groups :func:`plot_moe_usage` stacks, each with the ``param_breakdown`` parts it sums."""
MASK_KINDS = ("global", "sliding", "chunked")
"""The attention patterns :func:`plot_attention_masks` draws, left to right."""


def _models(models: object, need_moe: bool = False) -> tuple[ModelShape, ...]:
    records = tuple(models) if isinstance(models, (list, tuple)) else ()
    if not records or not all(isinstance(record, ModelShape) for record in records):
        raise TypeError(f"models must be a non-empty sequence of ModelShape records, got {models!r}")
    for record in records:
        if record.d_model is None:
            raise ValueError(f"model {record.name!r} gives no d_model: it has no parameter count")
        if need_moe and not record.is_moe:
            raise ValueError(f"model {record.name!r} is dense: this figure takes mixtures of experts")
    return records


def _lengths(name: str, values: object) -> np.ndarray:
    lengths = np.atleast_1d(positive(name, values, integral=True)).astype(float)
    if lengths.ndim != 1 or lengths.size < 2:
        raise ValueError(f"{name} must be at least two token counts > 0, got {values!r}")
    return np.sort(lengths)


def _token_ticks(ax: plt.Axes, values: np.ndarray) -> None:
    ticks = values[:: -(-len(values) // 6)]  # at most six labels
    ax.set_xticks(ticks, [f"{int(v):,}" for v in ticks])
    ax.minorticks_off()


def usage_parts(model: ModelShape, active: bool = False) -> dict[str, float]:
    """The model's parameters grouped as :data:`USAGE_PARTS` (all of them, or with ``active`` one token's)."""
    parts = model.param_breakdown(active)
    return {group: sum(parts.get(name, 0.0) for name in names) for group, names in USAGE_PARTS}


def plot_moe_usage(models: Sequence[ModelShape], *, ax: plt.Axes | None = None) -> plt.Axes:
    """Two bars per mixture of experts: every parameter it stores (100 %) and those one token uses (% of the
    stored), each split into routed experts, shared experts, dense MLPs, attention, embedding and head, and the
    rest. Explained in the chapter :ref:`ch-counting`.
    """
    records = _models(models, need_moe=True)
    ax = new_axes(ax, (7.5, 0.75 * len(records) + 1.4))
    rows, labels = [], []
    for record in records:
        total = record.params()
        for active in (False, True):
            rows.append([100 * value / total for value in usage_parts(record, active).values()])
            used = record.params(active=True) / total
            labels.append(
                f"{record.name}: {format_number(total / 1e9)} B stored"
                if not active
                else f"one token: {format_number(100 * used)} %"
            )
    shares = np.array(rows)
    positions = np.arange(len(rows)) + np.repeat(np.arange(len(records)) * 0.6, 2)
    left = np.zeros(len(rows))
    for index, ((group, _), colour) in enumerate(zip(USAGE_PARTS, PALETTE)):
        ax.barh(positions, shares[:, index], left=left, color=colour, height=0.8, label=group)
        left += shares[:, index]
    ax.set_yticks(positions, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set(xlim=(0, 100), xlabel="share of the parameters the model stores (%)")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8)
    return ax


def plot_kv_per_sequence(
    models: Sequence[ModelShape], contexts: Sequence[int], dtype: str = "bf16", *, ax: plt.Axes | None = None
) -> plt.Axes:
    """KV cache of one sequence (GiB, ``ModelShape.kv_bytes``) against its context, one line per model
    (at most six): a global layer's cache grows with the context, a windowed layer's stops at its window, a latent
    cache grows from fewer bytes per token. Explained in the chapter :ref:`ch-kv-cache`.
    """
    records = _models(models)
    lengths = _lengths("contexts", contexts)
    ax = new_axes(ax, (7.0, 4.4))
    for record, colour in zip(records, PALETTE):
        cache = np.asarray(record.kv_bytes(lengths, dtype)) / GiB
        ax.plot(lengths, cache, color=colour, lw=2, label=f"{record.name} ({_cache_kind(record)})")
    ax.set(xscale="log", yscale="log", xlabel="context (tokens)", ylabel=f"KV cache of one sequence, {dtype} (GiB)")
    _token_ticks(ax, lengths)
    ax.legend(loc="upper left", fontsize=8)
    return ax


def _cache_kind(model: ModelShape) -> str:
    """A few words on what the model's cache does: its attention, and its windows."""
    windows = np.array(model.windows) if model.windows else np.zeros(model.n_layers)
    local = int((windows > 0).sum())
    if not local:
        return f"{model.attention}, global"
    width = f"{int(windows.max()):,}"
    if local == model.n_layers:
        return f"{model.window_kind} {width} in every layer"
    return f"{model.window_kind} {width} in {local} of {model.n_layers} layers"


def plot_attention_masks(n_tokens: int = 10, window: int = 4, *, ax: plt.Axes | None = None) -> plt.Axes:
    """Which keys (columns) each query (row) of a causal sequence of ``n_tokens`` attends to: every earlier token
    (global), the last ``window`` (sliding), or those of its own ``window``-token chunk (chunked). The bottom row,
    the newest token, is what a decode step reads from the cache. Explained in the chapter :ref:`ch-kv-cache`.
    """
    size, width = int(positive("n_tokens", n_tokens, integral=True)), int(positive("window", window, integral=True))
    if width >= size:
        raise ValueError(f"window must be smaller than n_tokens ({size}), got {window!r}")
    query, key = np.indices((size, size))
    masks = {
        "global": key <= query,
        "sliding": (key <= query) & (key > query - width),
        "chunked": (key <= query) & (key // width == query // width),
    }
    ax = new_axes(ax, (7.5, 3.0))
    gap = 2
    for index, kind in enumerate(MASK_KINDS):
        offset = index * (size + gap)
        rows, cols = np.nonzero(masks[kind])
        ax.scatter(cols + offset, rows, marker="s", s=30, color=PALETTE[index], linewidths=0)
        empty_rows, empty_cols = np.nonzero(~masks[kind])
        ax.scatter(empty_cols + offset, empty_rows, marker="s", s=30, color="0.92", linewidths=0)
        held = int(masks[kind][-1].sum())
        title = f"{kind}: the newest token\nreads {held} of {size} keys"
        ax.text(offset + (size - 1) / 2, -1.5, title, ha="center", va="bottom", fontsize=8)
    ax.set_xlim(-1, 3 * size + 2 * gap)
    ax.set_ylim(size, -4)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel(f"keys (cached tokens), window {width}; rows: queries, oldest at the top", fontsize=8)
    return ax


def plot_mla_flops(
    model: ModelShape, context_len: int, new_tokens: Sequence[int], *, ax: plt.Axes | None = None
) -> plt.Axes:
    """Attention FLOPs per new token of one sequence's step (GFLOP, all layers) against the new tokens in the step,
    after ``context_len`` cached ones, for multi-head latent attention computed the naive way (each cached latent
    expanded to every head's keys and values) and the absorbed way (queries against the latent). Explained in the
    chapter :ref:`ch-kv-cache`.
    """
    model = require(ModelShape, "model", model, "hw.model('deepseek-v3')")
    if model.mla is None:
        raise ValueError(f"model {model.name!r} has no latent attention (ModelShape.mla)")
    lengths = _lengths("new_tokens", new_tokens)
    context = int(positive("context_len", context_len, integral=True))
    table = model.table()
    ax = new_axes(ax, (7.0, 4.2))
    for mode, colour in (("naive", PALETTE[0]), ("absorbed", PALETTE[1])):
        flops = np.asarray(table.attention_flops(lengths, context, mla=mode)) / lengths / 1e9
        ax.plot(lengths, flops, color=colour, lw=2, label=mode)
    cheaper = np.asarray(table.attention_flops(lengths, context, mla="auto")) / lengths / 1e9
    ax.plot(lengths, cheaper, color="0.2", lw=1, ls=":", label='"auto": the cheaper')
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="new tokens per sequence in the step",
        ylabel="attention FLOPs per new token (GFLOP)",
        title=f"{model.name}, {context:,} cached tokens",
    )
    _token_ticks(ax, lengths)
    ax.legend(loc="upper right", fontsize=8)
    return ax


def plot_decode_vs_context(
    models: Sequence[ModelShape],
    chip: Chip | Cluster,
    contexts: Sequence[int],
    batch: int = 1,
    n_chips: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    *,
    ax: plt.Axes | None = None,
) -> plt.Axes:
    """Time per output token (ms) of a decode step of ``batch`` sequences against their context, one colour per
    model (at most three): the bound (solid, every chip at its peak) and the forecast (dashed, ``forecast_time_s``).
    A line ends, with a dot, at the last context where ``batch`` caches still fit beside the weights. Explained in
    the chapter :ref:`ch-serving-experts`.
    """
    records = _models(models)
    lengths = _lengths("contexts", contexts)
    name = chip.chip.label if isinstance(chip, Cluster) else require(Chip, "chip", chip, "hw.chip('H200')").label
    ax = new_axes(ax, (7.0, 4.4))
    for record, colour in zip(records, PALETTE):
        fits = np.asarray(max_batch(record, chip, lengths.astype(int), n_chips, weight_dtype, kv_dtype)) >= batch
        if not fits.any():
            continue
        shown = lengths[fits]
        step = inference_step(record, chip, batch, shown, 1, n_chips, weight_dtype, kv_dtype)
        bound, forecast = np.asarray(step.time_s) * 1e3, np.asarray(step.forecast_time_s) * 1e3
        ax.plot(shown, bound, color=colour, lw=2, label=f"{record.name}: bound")
        ax.plot(shown, forecast, color=colour, lw=2, ls="--", label=f"{record.name}: forecast")
        ax.plot(shown[-1:], bound[-1:], "o", color=colour, ms=5)
        ax.plot(shown[-1:], forecast[-1:], "o", color=colour, ms=5)
    ax.set(
        xscale="log",
        xlabel="context (tokens)",
        ylabel="time per output token (ms)",
        title=f"batch {batch:,}, {n_chips} x {name}, {weight_dtype} weights, {kv_dtype} cache",
    )
    ax.set_ylim(bottom=0)
    _token_ticks(ax, lengths)
    ax.legend(loc="upper left", fontsize=8)
    return ax


def plot_experts_touched(
    models: Sequence[ModelShape], tokens: Sequence[int], *, ax: plt.Axes | None = None
) -> plt.Axes:
    """Share (%) of its matmul weights a step of ``tokens`` tokens reads (``touched_matmul_params``), one line per
    mixture of experts (at most six): tokens routed independently and uniformly touch E (1 - (1 - k/E)^T) of E
    experts a layer. Explained in the chapter :ref:`ch-serving-experts`.
    """
    records = _models(models, need_moe=True)
    counts = _lengths("tokens", tokens)
    ax = new_axes(ax, (7.0, 4.2))
    for record, colour in zip(records, PALETTE):
        table = record.table()
        share = 100 * np.asarray(table.touched_matmul_params(counts)) / table.matmul_params(active=False)
        label = f"{record.name}: {record.experts_per_token} of {record.n_experts}"
        ax.plot(counts, share, color=colour, lw=2, label=label)
    ax.set(
        xscale="log",
        ylim=(0, 102),
        xlabel="tokens in the step (batch × new tokens)",
        ylabel="matmul weights the step reads (%)",
    )
    _token_ticks(ax, counts)
    ax.legend(loc="lower right", fontsize=8, title="routed experts per token")
    return ax
