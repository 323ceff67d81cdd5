"""Serving plans built on ``hw.inference_step``: the latency-throughput curve and the fewest chips at a latency
target, judged by the forecast or the bound. The most tokens per second of a whole workload is in
``hwlib.serving.throughput``. Chapter :ref:`ch-serving`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, broadcast, one_of, positive, scalar_or_array, whole_or_array
from hwlib.data import deployment
from hwlib.data.records import Chip, Cluster, ModelShape, require
from hwlib.memory import deployment_name
from hwlib.placement import chip_of
from hwlib.serving.step import inference_step, max_batch


@dataclass(frozen=True)
class ServingCurve:
    """Decode at each batch: time per output token (s, lower and upper), tokens/s of the system and per chip,
    whether the batch's KV cache fits, and the bound. Chapter :ref:`ch-serving`."""

    batches: np.ndarray
    time_per_token_s: np.ndarray
    time_per_token_upper_s: np.ndarray
    tokens_per_s: np.ndarray
    tokens_per_s_per_chip: np.ndarray
    fits: np.ndarray
    bound: np.ndarray


def serving_curve(
    model: ModelShape,
    chip: Chip | Cluster,
    context_len: int,
    batches: Number,
    n_chips: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    *,
    usable_fraction: float | None = None,
    include_largest: bool = False,
    **options: object,
) -> ServingCurve:
    """The latency-throughput curve of decoding at ``context_len``: one inference step per batch in ``batches``
    (and, with ``include_largest``, at the largest batch that fits, where it lies among them).

    ``options`` go to ``inference_step``; ``usable_fraction`` to ``max_batch``. Chapter :ref:`ch-serving`.
    """
    sizes = np.atleast_1d(positive("batches", batches, integral=True)).astype(np.int64)
    fit = {} if usable_fraction is None else {"usable_fraction": usable_fraction}
    largest = max_batch(model, chip, context_len, n_chips, weight_dtype, kv_dtype, **fit)
    if not isinstance(include_largest, bool):
        raise TypeError(f"include_largest must be True or False, got {include_largest!r}")
    if include_largest and sizes.min() <= largest <= sizes.max():
        sizes = np.union1d(sizes, [largest])
    step = inference_step(model, chip, sizes, context_len, 1, n_chips, weight_dtype, kv_dtype, **options)
    return ServingCurve(
        batches=sizes,
        time_per_token_s=np.asarray(step.time_s),
        time_per_token_upper_s=np.asarray(step.time_upper_s),
        tokens_per_s=np.asarray(step.tokens_per_s),
        tokens_per_s_per_chip=np.asarray(step.tokens_per_s_per_chip),
        fits=sizes <= largest,
        bound=np.atleast_1d(step.bound),
    )


def tensor_parallel_sizes(model: ModelShape, chip: Chip | Cluster) -> tuple[int, ...]:
    """Chip counts one model replica can be split over by tensor parallelism on the chip's scale-up fabric.

    A TPU's slice sizes; a GPU's powers of two up to its node (one NVLink domain); only those that divide
    the query heads, the rule training follows too. Chapter :ref:`ch-serving`.
    """
    model = require(ModelShape, "model", model, "hw.model('llama-3-8b')")
    plan = deployment(chip_of(chip))
    sizes = plan.sizes if plan.kind == "slice" else tuple(2**k for k in range(int(np.log2(plan.largest)) + 1))
    return tuple(n for n in sizes if model.n_heads % n == 0)


def serving_name(n_chips: int, chip: Chip | Cluster) -> str:
    """Where ``n_chips`` tensor-parallel chips run: a slice's name, or a share of one node."""
    chip = chip_of(chip)
    plan = deployment(chip)
    node = plan.sizes[0]
    if plan.kind == "slice" or n_chips % node == 0:
        return deployment_name(n_chips, chip)
    return f"{n_chips} of {node} GPUs in one node"


PLAN_JUDGES = ("forecast", "bound")
"""What a serving plan holds to its latency targets: the forecast step times, or the bound's."""


@dataclass(frozen=True)
class ServingPlan:
    """The fewest tensor-parallel chips that serve a model at a latency target (0 where none does), where they
    run, the largest batch that meets the target there (``batch``) and the largest that fits
    (``max_batch``), and at ``batch`` the bound's times (s; inf where none) and tokens/s and the forecast's
    beside them. ``by`` says which of the two met the targets. Chapters :ref:`ch-serving` and :ref:`ch-forecast`."""

    n_chips: Number
    deployment: object
    batch: Number
    max_batch: Number
    time_per_token_s: Number
    time_to_first_token_s: Number
    tokens_per_s: Number
    tokens_per_s_per_chip: Number
    forecast_time_per_token_s: Number = np.inf
    forecast_time_to_first_token_s: Number = np.inf
    forecast_tokens_per_s: Number = 0.0
    forecast_tokens_per_s_per_chip: Number = 0.0
    by: str = "forecast"


def largest_batch_within(
    model: ModelShape,
    chip: Chip | Cluster,
    context_len: Number,
    tpot_target_s: float,
    n_chips: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    *,
    usable_fraction: float | None = None,
    by: str = "forecast",
    **options: object,
) -> Number:
    """The largest decode batch that fits and takes at most ``tpot_target_s`` per token (0: none), by the
    forecast step time (``by="bound"``: by the bound's).

    A step's time grows with the batch, so a vectorised bisection over 1 ... ``max_batch``.
    Chapters :ref:`ch-serving` and :ref:`ch-forecast`.
    """
    one_of("by", by, PLAN_JUDGES)
    context = positive("context_len", context_len, integral=True)
    target = float(positive("tpot_target_s", tpot_target_s, allow_inf=True))
    fit = {} if usable_fraction is None else {"usable_fraction": usable_fraction}
    high = np.asarray(max_batch(model, chip, context, n_chips, weight_dtype, kv_dtype, **fit), dtype=float)

    def within(batches: np.ndarray) -> np.ndarray:
        step = inference_step(
            model, chip, np.maximum(batches, 1), context, 1, n_chips, weight_dtype, kv_dtype, **options
        )
        return (batches >= 1) & (np.asarray(step.forecast_time_s if by == "forecast" else step.time_s) <= target)

    low = np.where(within(np.ones_like(high)) & (high >= 1), 1.0, 0.0)
    high = np.where(within(high), high, np.maximum(high, 1.0))
    done = (low == 0) | within(high)
    low = np.where(done & (low > 0), high, low)
    while np.any(high - low > 1):
        middle = np.floor((low + high) / 2)
        ok = within(middle)
        low, high = np.where(ok, middle, low), np.where(ok, high, middle)
    return whole_or_array(low.astype(np.int64))


def serving_chips(
    model: ModelShape,
    chip: Chip | Cluster,
    context_len: Number,
    batch: Number = 1,
    tpot_target_s: float = np.inf,
    *,
    prompt_len: Number | None = None,
    ttft_target_s: float = np.inf,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    usable_fraction: float | None = None,
    by: str = "forecast",
    **options: object,
) -> ServingPlan:
    """The fewest chips (one ``tensor_parallel_sizes`` size) that hold the weights and at least ``batch`` caches
    of ``context_len`` tokens, decode them within ``tpot_target_s`` per token and prefill one prompt of
    ``prompt_len`` tokens (default ``context_len``) within ``ttft_target_s``, by the forecast step times
    (``by="bound"``: by the bound's); with the largest batch that meets the targets there. Queueing, and prefills
    sharing the chips with decode steps, are left out. Vectorised over context and batch.
    Chapters :ref:`ch-serving` and :ref:`ch-forecast`.
    """
    one_of("by", by, PLAN_JUDGES)
    sequences, context = broadcast(
        batch=positive("batch", batch, integral=True), context_len=positive("context_len", context_len, integral=True)
    )
    targets = {
        name: float(positive(name, value, allow_inf=True))
        for name, value in (("tpot_target_s", tpot_target_s), ("ttft_target_s", ttft_target_s))
    }
    prompt = (
        context
        if prompt_len is None
        else np.broadcast_to(positive("prompt_len", prompt_len, integral=True), context.shape)
    )
    dtypes = dict(weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    shape = context.shape
    chosen, best, holds = (np.zeros(shape, dtype=np.int64) for _ in range(3))
    times = {name: np.full(shape, np.inf) for name in ("tpot", "ttft", "forecast tpot", "forecast ttft")}
    rates = {name: np.zeros(shape) for name in ("bound", "forecast")}
    sizes = tensor_parallel_sizes(model, chip)
    for size in sizes:
        prefill = inference_step(model, chip, 1, 0, prompt, size, **dtypes, **options)
        first = np.asarray(prefill.forecast_time_s if by == "forecast" else prefill.time_s)
        largest = np.asarray(
            largest_batch_within(
                model,
                chip,
                context,
                targets["tpot_target_s"],
                size,
                **dtypes,
                usable_fraction=usable_fraction,
                by=by,
                **options,
            )
        )
        new = (chosen == 0) & (largest >= sequences) & (first <= targets["ttft_target_s"])
        if not new.any():
            continue
        step = inference_step(model, chip, np.maximum(largest, 1), context, 1, size, **dtypes, **options)
        fit = {} if usable_fraction is None else {"usable_fraction": usable_fraction}
        chosen, best = np.where(new, size, chosen), np.where(new, largest, best)
        holds = np.where(new, max_batch(model, chip, context, size, **dtypes, **fit), holds)
        for name, value in (
            ("tpot", step.time_s),
            ("ttft", prefill.time_s),
            ("forecast tpot", step.forecast_time_s),
            ("forecast ttft", prefill.forecast_time_s),
        ):
            times[name] = np.where(new, value, times[name])
        rates["bound"] = np.where(new, step.tokens_per_s, rates["bound"])
        rates["forecast"] = np.where(new, step.forecast_tokens_per_s, rates["forecast"])
    names = np.array(["none"] + [serving_name(n, chip) for n in sizes])
    placed = names[np.searchsorted(np.array((0,) + sizes), chosen)]
    return ServingPlan(
        n_chips=whole_or_array(chosen),
        deployment=str(placed) if placed.ndim == 0 else placed,
        batch=whole_or_array(best),
        max_batch=whole_or_array(holds),
        time_per_token_s=scalar_or_array(times["tpot"]),
        time_to_first_token_s=scalar_or_array(times["ttft"]),
        tokens_per_s=scalar_or_array(rates["bound"]),
        tokens_per_s_per_chip=scalar_or_array(rates["bound"] / np.maximum(chosen, 1)),
        forecast_time_per_token_s=scalar_or_array(times["forecast tpot"]),
        forecast_time_to_first_token_s=scalar_or_array(times["forecast ttft"]),
        forecast_tokens_per_s=scalar_or_array(rates["forecast"]),
        forecast_tokens_per_s_per_chip=scalar_or_array(rates["forecast"] / np.maximum(chosen, 1)),
        by=by,
    )
