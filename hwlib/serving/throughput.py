"""The most output tokens per second a system can reach on a whole workload, and measured serving runs beside it.

The throughput bound of a workload of prompts of ``input_len`` tokens each answered with
``output_len`` tokens: a batch of B sequences is prefilled, then decoded output_len - 1 steps at
contexts input_len ... input_len + output_len - 2. Its time is at least the roofline of the summed
FLOPs and bytes, max(F / pi, Q / beta) (each decode step's bound is linear in the context, so the
steps at the mean context sum to no more than the steps themselves), and at least the
tensor-parallel all-reduces, which at best hide behind the rest: the most any schedule can do.
B is the batch the run states or else the largest whose cache fits at the mean context.
Replicas of ``tensor_parallel`` chips each serve their share. Chapters :ref:`ch-serving` and :ref:`ch-forecast`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, broadcast, positive, scalar_or_array, whole_count, whole_or_array
from hwlib.data import assumptions
from hwlib.data import chip as find_chip
from hwlib.data import model as find_model
from hwlib.data.records import Chip, Cluster, ModelShape, ServingRun, require
from hwlib.data.serving_measurements import MLPERF_LLAMA2_MAX_TOKENS
from hwlib.efficiency import Efficiency, resolve
from hwlib.placement import chip_of
from hwlib.roofline import roofline_bound_s
from hwlib.serving.step import inference_step, kv_copies, max_batch


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
    engine_prefill = inference_step(model, chip, held, 0, prompt, group, weight_dtype, kv_dtype, **options)
    engine_decode = inference_step(model, chip, held, mean_context, 1, group, weight_dtype, kv_dtype, **options)
    forecast_time = np.asarray(engine_prefill.forecast_time_s) + steps * np.asarray(engine_decode.forecast_time_s)
    forecast = np.where(forecast_batch > 0, replicas * held * answer / forecast_time, 0.0)
    return ThroughputBound(
        tokens_per_s=scalar_or_array(system),
        tokens_per_s_per_chip=scalar_or_array(system / count),
        batch=whole_or_array(sequences),
        replicas=replicas,
        prefill_share=scalar_or_array(np.asarray(prefill.time_s) / time),
        forecast_tokens_per_s=scalar_or_array(forecast),
        forecast_tokens_per_s_per_chip=scalar_or_array(forecast / count),
        forecast_batch=whole_or_array(forecast_batch),
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
