"""Serving plans built on ``hw.inference_step``: the latency-throughput curve, the fewest chips at a latency
target, and the most output tokens per second a system can reach on a whole workload.

The throughput bound of a workload of prompts of ``input_len`` tokens each answered with
``output_len`` tokens: a batch of B sequences is prefilled, then decoded output_len - 1 steps at
contexts input_len ... input_len + output_len - 2. Its time is at least the roofline of the summed
FLOPs and bytes, max(F / pi, Q / beta) (each decode step's bound is linear in the context, so the
steps at the mean context sum to no more than the steps themselves), and at least the
tensor-parallel all-reduces, which at best hide behind the rest: the most any schedule can do.
B is the batch the run states or else the largest whose cache fits at the mean context.
Replicas of ``tensor_parallel`` chips each serve their share. Chapter :ref:`ch-serving`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, broadcast, positive, scalar_or_array, whole_count
from hwlib.data import assumptions, deployment
from hwlib.data import chip as find_chip
from hwlib.data import model as find_model
from hwlib.data.records import Chip, Cluster, ModelShape, ServingRun, require
from hwlib.data.serving_measurements import MLPERF_LLAMA2_MAX_TOKENS
from hwlib.efficiency import Efficiency, resolve
from hwlib.memory import deployment_name
from hwlib.placement import chip_of
from hwlib.roofline import roofline_bound_s
from hwlib.serving.step import inference_step, kv_copies, max_batch, time_to_first_token_s


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


def _whole(counts: np.ndarray) -> int | np.ndarray:
    return int(counts) if counts.ndim == 0 else counts.astype(np.int64)


@dataclass(frozen=True)
class ServingPlan:
    """The fewest tensor-parallel chips that serve a model at a latency target (0 where none does), where they
    run, the largest batch that meets the target there (``batch``) and the largest that fits
    (``max_batch``), and at ``batch`` the times (s; inf where none) and tokens/s. Chapter :ref:`ch-serving`."""

    n_chips: Number
    deployment: object
    batch: Number
    max_batch: Number
    time_per_token_s: Number
    time_to_first_token_s: Number
    tokens_per_s: Number
    tokens_per_s_per_chip: Number


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
    **options: object,
) -> Number:
    """The largest decode batch that fits and takes at most ``tpot_target_s`` per token (0: none).

    A step's time grows with the batch, so a vectorised bisection over 1 ... ``max_batch``.
    Chapter :ref:`ch-serving`.
    """
    context = positive("context_len", context_len, integral=True)
    target = float(positive("tpot_target_s", tpot_target_s, allow_inf=True))
    fit = {} if usable_fraction is None else {"usable_fraction": usable_fraction}
    high = np.asarray(max_batch(model, chip, context, n_chips, weight_dtype, kv_dtype, **fit), dtype=float)

    def within(batches: np.ndarray) -> np.ndarray:
        step = inference_step(
            model, chip, np.maximum(batches, 1), context, 1, n_chips, weight_dtype, kv_dtype, **options
        )
        return (batches >= 1) & (np.asarray(step.time_s) <= target)

    low = np.where(within(np.ones_like(high)) & (high >= 1), 1.0, 0.0)
    high = np.where(within(high), high, np.maximum(high, 1.0))
    done = (low == 0) | within(high)
    low = np.where(done & (low > 0), high, low)
    while np.any(high - low > 1):
        middle = np.floor((low + high) / 2)
        ok = within(middle)
        low, high = np.where(ok, middle, low), np.where(ok, high, middle)
    return _whole(low.astype(np.int64))


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
    **options: object,
) -> ServingPlan:
    """The fewest chips (one ``tensor_parallel_sizes`` size) that hold the weights and at least ``batch`` caches
    of ``context_len`` tokens, decode them within ``tpot_target_s`` per token and prefill one prompt of
    ``prompt_len`` tokens (default ``context_len``) within ``ttft_target_s``; with the largest batch that
    meets the target there. Queueing, and prefills sharing the chips with decode steps, are left out.
    Vectorised over context and batch. Chapter :ref:`ch-serving`.
    """
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
    tpot, ttft, rate = np.full(shape, np.inf), np.full(shape, np.inf), np.zeros(shape)
    sizes = tensor_parallel_sizes(model, chip)
    for size in sizes:
        first = np.asarray(time_to_first_token_s(model, chip, prompt, 1, size, **dtypes, **options))
        largest = np.asarray(
            largest_batch_within(
                model,
                chip,
                context,
                targets["tpot_target_s"],
                size,
                **dtypes,
                usable_fraction=usable_fraction,
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
        tpot, ttft = np.where(new, step.time_s, tpot), np.where(new, first, ttft)
        rate = np.where(new, step.tokens_per_s, rate)
    names = np.array(["none"] + [serving_name(n, chip) for n in sizes])
    placed = names[np.searchsorted(np.array((0,) + sizes), chosen)]
    return ServingPlan(
        n_chips=_whole(chosen),
        deployment=str(placed) if placed.ndim == 0 else placed,
        batch=_whole(best),
        max_batch=_whole(holds),
        time_per_token_s=scalar_or_array(tpot),
        time_to_first_token_s=scalar_or_array(ttft),
        tokens_per_s=scalar_or_array(rate),
        tokens_per_s_per_chip=scalar_or_array(rate / np.maximum(chosen, 1)),
    )


@dataclass(frozen=True)
class ThroughputBound:
    """The most output tokens per second (system and per chip) a workload can reach, the batch per replica
    it assumes, the replicas, and the share of the time spent in prefill; beside it the forecast tokens/s at the
    batch an engine's KV-cache share holds (``forecast_batch``). Chapters :ref:`ch-serving` and
    :ref:`ch-forecast`."""

    tokens_per_s: Number
    tokens_per_s_per_chip: Number
    batch: Number
    replicas: int
    prefill_share: Number
    forecast_tokens_per_s: Number = 0.0
    forecast_tokens_per_s_per_chip: Number = 0.0
    forecast_batch: Number = 0


def throughput_bound(
    model: ModelShape,
    chip: Chip | Cluster,
    input_len: Number,
    output_len: Number,
    n_chips: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    *,
    tensor_parallel: int | None = None,
    batch: Number | None = None,
    usable_fraction: float = assumptions.BOUND_HBM_FRACTION,
    **options: object,
) -> ThroughputBound:
    """Upper bound on output tokens/s of ``n_chips`` chips serving prompts of ``input_len`` with ``output_len`` new
    tokens.

    ``tensor_parallel`` chips per replica (default all); ``batch`` per replica if the run fixes it,
    else the largest that fits at the mean context in ``usable_fraction`` of HBM. Tokens/s is 0 where
    no batch fits. Chapter :ref:`ch-serving`.
    """
    count = whole_count("n_chips", n_chips)
    group = count if tensor_parallel is None else whole_count("tensor_parallel", tensor_parallel)
    if count % group:
        raise ValueError(f"tensor_parallel must divide n_chips={count} into whole replicas, got {tensor_parallel!r}")
    prompt, answer = broadcast(
        input_len=positive("input_len", input_len, integral=True),
        output_len=positive("output_len", output_len, integral=True),
    )
    mean_context = np.floor(prompt + (answer - 2) / 2.0).clip(min=prompt)
    if batch is None:
        sequences = np.asarray(
            max_batch(model, chip, mean_context + 1, group, weight_dtype, kv_dtype, usable_fraction)
        ).astype(float)
    else:
        sequences = np.broadcast_to(positive("batch", batch, integral=True), prompt.shape).astype(float)
    runs = np.maximum(sequences, 1.0)
    compute_dtype = options.get("compute_dtype", "bf16")
    prefill = inference_step(model, chip, runs, 0, prompt, group, weight_dtype, kv_dtype, **options)
    decode = inference_step(model, chip, runs, mean_context, 1, group, weight_dtype, kv_dtype, **options)
    steps = answer - 1.0
    flops = np.asarray(prefill.flops) + steps * np.asarray(decode.flops)
    moved = np.asarray(prefill.bytes) + steps * np.asarray(decode.bytes)
    comm = np.asarray(prefill.comm_time_s) + steps * np.asarray(decode.comm_time_s)
    time = np.maximum(roofline_bound_s(flops / group, moved / group, chip_of(chip), compute_dtype), comm)
    replicas = count // group
    system = np.where(sequences > 0, replicas * runs * answer / time, 0.0)
    forecast_batch = _engine_batch(model, chip, mean_context + 1, group, weight_dtype, kv_dtype, options, batch)
    held = np.maximum(forecast_batch, 1.0)
    prefill = inference_step(model, chip, held, 0, prompt, group, weight_dtype, kv_dtype, **options)
    decode = inference_step(model, chip, held, mean_context, 1, group, weight_dtype, kv_dtype, **options)
    forecast_time = np.asarray(prefill.forecast_time_s) + steps * np.asarray(decode.forecast_time_s)
    forecast = np.where(forecast_batch > 0, replicas * held * answer / forecast_time, 0.0)
    return ThroughputBound(
        tokens_per_s=scalar_or_array(system),
        tokens_per_s_per_chip=scalar_or_array(system / count),
        batch=_whole(sequences),
        replicas=replicas,
        prefill_share=scalar_or_array(np.asarray(prefill.time_s) / time),
        forecast_tokens_per_s=scalar_or_array(forecast),
        forecast_tokens_per_s_per_chip=scalar_or_array(forecast / count),
        forecast_batch=_whole(forecast_batch),
    )


def _engine_batch(model, chip, context, group, weight_dtype, kv_dtype, options, batch) -> np.ndarray:
    """The batch a serving engine holds: the stated one, else as many sequences of ``context`` tokens as its
    KV-cache share of the memory left after the weights holds (``Efficiency.kv_fraction``)."""
    if batch is not None:
        return np.broadcast_to(np.asarray(batch, dtype=float), np.shape(context)).copy()
    placed = chip_of(chip)
    fraction = resolve(placed, options.get("compute_dtype", "bf16"), options.get("efficiency")).kv_fraction
    room = fraction * np.maximum(group * placed.capacity_bytes - model.weight_bytes(weight_dtype), 0.0)
    per_token = model.kv_bytes_per_token(kv_dtype) * kv_copies(model, group, options.get("kv_layout", "heads"))
    return np.floor(room / per_token / context)


def serving_run_bound(
    run: ServingRun, input_len: Number | None = None, efficiency: Efficiency | None = None
) -> ThroughputBound:
    """``throughput_bound`` for a measured run's chips, model, dtypes, tensor parallelism and lengths.

    Lengths the run does not state take the most generous values, the shortest contexts: a prompt of
    one token (or ``input_len``, an array to ask how long the unknown prompts could be) and, where the
    answers' length is unknown too, two new tokens. Its forecast takes ``efficiency`` (``hw.Efficiency``).
    Chapters :ref:`ch-serving` and :ref:`ch-forecast`.
    """
    run = require(ServingRun, "run", run, "hw.serving_runs()[0]")
    prompt = run.input_len if run.input_len is not None else (1 if input_len is None else input_len)
    answer = 2 if run.output_len is None else int(round(run.output_len))
    return throughput_bound(
        find_model(run.model_key),
        find_chip(run.chip_key),
        prompt,
        answer,
        run.n_chips,
        run.weight_dtype,
        run.kv_dtype,
        tensor_parallel=run.tensor_parallel,
        batch=run.batch,
        activation_dtype=run.activation_dtype,
        compute_dtype=run.compute_dtype,
        efficiency=efficiency,
    )


def max_mean_prompt(run: ServingRun, longest: int = MLPERF_LLAMA2_MAX_TOKENS.value) -> int:
    """The longest mean prompt (tokens, up to ``longest``) at which ``serving_run_bound`` still allows the run's
    measured tokens/s: what the model says about a run whose prompt lengths are not stated (0: none).

    Chapter :ref:`ch-serving`.
    """
    run = require(ServingRun, "run", run, "hw.serving_runs()[0]")
    if run.input_len is not None:
        raise ValueError(f"run {run.key!r} states its prompt length ({run.input_len} tokens): nothing to bound")
    prompts = np.arange(1, int(positive("longest", longest, integral=True)) + 1)
    allowed = np.asarray(serving_run_bound(run, input_len=prompts).tokens_per_s) >= run.tokens_per_s.value
    return int(prompts[allowed].max()) if allowed.any() else 0
