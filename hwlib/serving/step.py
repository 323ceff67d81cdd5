"""Serving: one inference step of a ModelShape on one chip or on a tensor-parallel group of a cluster.

A step runs ``new_tokens`` tokens of each of ``batch`` sequences that already hold ``context_len``
tokens in the KV cache (prefill: new_tokens is the prompt and context_len 0; decode: one new
token). Every count comes from the model's transformer table (``ModelShape.table()``):

* **weights**: every matmul weight the step touches is read once (an MoE's experts only where a
  token of the batch was routed) and used by every token: 2 FLOPs per weight per token;
* **attention**: the cache is read once and the new tokens' keys and values written; each new
  token attends to the cached tokens and, causally, to the new ones before it: 4 n_h d_h L FLOPs per
  (query, key) pair;
* **activations**: each matmul's input read and output written between kernels, at the
  activation dtype.

Time is a range: the lower bound is the roofline of the totals, max(F / pi, Q / beta) on the n_chips'
summed peak and bandwidth (Williams et al. 2009; Pope et al., "Efficiently Scaling Transformer
Inference", MLSys 2023, arXiv:2211.05102, Sec. 2-3), and the upper bound sums each part's own
roofline time (no overlap between parts). Tensor parallelism splits heads and MLP columns over the
chips (Shoeybi et al., "Megatron-LM", arXiv:1909.08053, Sec. 3): two all-reduces of the activations
per layer, not overlapped with compute, on the group's topology in its cluster (``hw.group_topology``:
an NVLink switch, a TPU slice's torus axes), the same placement training uses. The tensor-parallel
degree divides the query heads, as in training; with more chips than KV heads each chip keeps a whole KV
head, so the cache is replicated. Chapter :ref:`ch-serving`; :ref:`ch-kv-cache` uses the memory term.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hwlib._checks import Number, broadcast_shape, non_negative, one_of, positive, scalar_or_array, whole_count
from hwlib.data import assumptions
from hwlib.data.records import Chip, Cluster, ModelShape, require
from hwlib.efficiency import Efficiency
from hwlib.memory import tokens_that_fit
from hwlib.placement import serving_place
from hwlib.precision import Precision, as_precision
from hwlib.serving.pricing import StepPricer
from hwlib.serving.speculative import Speculation


@dataclass(frozen=True)
class InferenceStep:
    """One inference step: FLOPs and bytes by part, the time range (s), communication, the bound that dominates.

    Floats for scalar inputs, arrays of the broadcast shape of batch and context otherwise.
    ``time_s`` is the lower bound, ``time_upper_s`` the no-overlap sum, both with ``comm_time_s``;
    ``compute_time_s`` and ``memory_time_s`` are the two roofline terms of the totals on one chip's share.
    ``bound`` is "compute", "memory" or "communication" (the largest of the three). ``forecast_time_s`` prices
    the same work at the efficiencies kernels reach and adds each layer's and sequence's overhead (``hw.Efficiency``;
    ``hwlib.pricing``), split into ``forecast_parts_s``.
    Chapters :ref:`ch-serving` and :ref:`ch-forecast`.
    """

    tokens: Number
    flops: Number
    bytes: Number
    part_flops: dict
    part_bytes: dict
    time_s: Number
    time_upper_s: Number
    compute_time_s: Number
    memory_time_s: Number
    comm_time_s: Number
    bound: object
    n_chips: int
    forecast_time_s: Number = 0.0
    forecast_parts_s: dict = field(default_factory=dict)

    @property
    def tokens_per_s(self) -> Number:
        """New tokens per second of the whole system at the lower-bound time."""
        return scalar_or_array(np.asarray(self.tokens) / np.asarray(self.time_s))

    @property
    def tokens_per_s_per_chip(self) -> Number:
        return scalar_or_array(np.asarray(self.tokens_per_s) / self.n_chips)

    @property
    def forecast_tokens_per_s(self) -> Number:
        """New tokens per second of the whole system at the forecast time."""
        return scalar_or_array(np.asarray(self.tokens) / np.asarray(self.forecast_time_s))


KV_LAYOUTS = ("heads", "batch")
"""How tensor-parallel chips split the KV cache: by its heads (Megatron's; more chips than KV heads each keep a
whole head, so the cache is stored more than once), or by the sequences of the batch (Pope et al. 2023, Sec. 3.3:
the attention of a multi-query model partitioned over the batch, the cache stored once)."""


def kv_copies(model: ModelShape, n_chips: int, kv_layout: str = "heads") -> float:
    """How many times the KV cache is stored over ``n_chips`` tensor-parallel chips: 1 up to n_kv_heads chips, or
    always with the cache split by sequence (``kv_layout="batch"``).

    By heads each chip keeps ceil(n_kv_heads / n_chips) whole heads. Chapter :ref:`ch-serving`.
    """
    model = require(ModelShape, "model", model, "hw.model('llama-3-70b')")
    one_of("kv_layout", kv_layout, KV_LAYOUTS)
    count, heads = whole_count("n_chips", n_chips), model.table().cache_heads
    return 1.0 if kv_layout == "batch" else count * -(-heads // count) / heads


def inference_step(
    model: ModelShape,
    chip: Chip | Cluster,
    batch: Number,
    context_len: Number,
    new_tokens: Number = 1,
    n_chips: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    *,
    activation_dtype: str = "bf16",
    compute_dtype: str = "bf16",
    link_latency_s: float | None = None,
    kv_layout: str = "heads",
    expert_parallel: bool = False,
    attention_dp: bool = False,
    speculation: Speculation | None = None,
    efficiency: Efficiency | None = None,
    precision: Precision | str | None = None,
) -> InferenceStep:
    """FLOPs, bytes and time of one step of ``batch`` sequences with ``context_len`` cached and ``new_tokens`` new
    tokens, on ``chip``: a chip record, or a cluster whose chip runs it.

    ``n_chips`` chips split every weight, head and FLOP by tensor parallelism, on the cluster (a chip's
    own cluster record, ``hw.clusters(chip=...)``). ``compute_dtype`` is the matmuls' peak (weight-only
    quantization still computes in bf16). ``link_latency_s`` overrides the fabric's sourced latency. ``kv_layout``
    (``KV_LAYOUTS``) splits the cache by heads or by sequences; by sequences the all-to-all that regroups queries
    and outputs is left out, as small against the step. ``expert_parallel`` spreads an MoE's experts whole over
    the chips instead of splitting each one: every MoE layer then dispatches each token's hidden state to the chips
    of its k experts and combines the results (two all-to-alls of each chip's 1/n of the tokens, k x d elements a
    token) in place of the all-reduce after its MLP; attention stays tensor-parallel, unless ``attention_dp``
    (SGLang's and TensorRT-LLM's attention data parallelism, with ``expert_parallel``): then every chip holds all
    but the routed experts whole and runs the attention of its own share of the sequences, the cache split by
    sequence and no all-reduce left. With ``speculation``
    (``hw.Speculation``) a decode step verifies k + 1 tokens of each sequence after its drafter's k single-token
    steps (their time is in the step's; its parts are the verification's), and ``tokens`` counts the tokens the
    step yields in expectation (``hw.speculative_tokens_per_step``). The forecast takes
    ``efficiency``'s overrides (else the sourced records and the calibrated fit). Vectorised over batch, context
    and new tokens. ``precision`` (an ``hw.Precision`` or a key of ``hw.PRECISIONS``) replaces the four dtypes at
    once. Chapters :ref:`ch-serving`, :ref:`ch-serving-experts` (experts, windows, attention data parallelism)
    and :ref:`ch-forecast`.
    """
    model = require(ModelShape, "model", model, "hw.model('llama-3-8b')")
    precision = as_precision(
        precision,
        weight_dtype=weight_dtype,
        kv_dtype=kv_dtype,
        activation_dtype=activation_dtype,
        compute_dtype=compute_dtype,
    )
    chip, topology = serving_place(chip, model, n_chips)
    chip.peak(precision.compute_dtype)
    count = whole_count("n_chips", n_chips)
    batch = positive("batch", batch, integral=True)
    context = non_negative("context_len", context_len, integral=True)
    new = positive("new_tokens", new_tokens, integral=True)
    broadcast_shape(batch=batch, context_len=context, new_tokens=new)
    sequences, context, new = (np.asarray(a, dtype=float) for a in (batch, context, new))
    table = model.table()
    latency = None if link_latency_s is None else float(non_negative("link_latency_s", link_latency_s))
    pricer = StepPricer(
        model,
        chip,
        topology,
        count,
        precision,
        link_latency_s=latency,
        expert_parallel=expert_parallel,
        attention_dp=attention_dp,
        efficiency=efficiency,
    )
    copies = kv_copies(model, count, "batch" if attention_dp else kv_layout)
    if speculation is not None:
        if not isinstance(speculation, Speculation):
            raise TypeError(f"speculation must be an hw.Speculation(...) or None, got {speculation!r}")
        if np.any(new != 1):
            raise ValueError("speculation is a decode step: new_tokens must be 1")
        new = np.full_like(new, speculation.draft_tokens + 1.0)
    tokens = sequences * new
    attention_flops = sequences * table.attention_flops(new, context)
    attention_bytes = sequences * table.kv_bytes(context + new, precision.kv_dtype) * copies
    priced, part_flops, part_bytes = pricer.price(tokens, sequences, attention_flops, attention_bytes)
    lower, upper, forecast = priced.bound_s, priced.no_overlap_s, priced.forecast_s
    if speculation is not None:
        drafted = _draft_s(speculation, model, chip, topology, count, sequences, context, pricer)
        lower, upper, forecast = lower + drafted[0], upper + drafted[1], forecast + drafted[2]
        tokens = sequences * speculation.tokens_per_step
    shape = np.broadcast_shapes(np.shape(lower), np.shape(tokens))
    compute_s, memory_s = priced.compute_s, priced.memory_s
    comm = sum(priced.comm_s.values(), 0.0)
    names = np.array(["compute", "memory", "communication"])
    bound = names[np.argmax(np.stack(np.broadcast_arrays(compute_s, memory_s, comm)), axis=0)]

    def full(value: object) -> Number:
        return scalar_or_array(np.broadcast_to(value, shape) if shape else np.asarray(value, dtype=float))

    return InferenceStep(
        tokens=full(tokens),
        flops=full(sum(part_flops.values())),
        bytes=full(sum(part_bytes.values())),
        part_flops={p: full(v) for p, v in part_flops.items()},
        part_bytes={p: full(v) for p, v in part_bytes.items()},
        time_s=full(lower),
        time_upper_s=full(upper),
        compute_time_s=full(compute_s),
        memory_time_s=full(memory_s),
        comm_time_s=full(comm),
        bound=str(bound) if bound.ndim == 0 else np.broadcast_to(bound, shape),
        n_chips=count,
        forecast_time_s=full(forecast),
        forecast_parts_s={p: full(v) for p, v in priced.forecast_parts_s.items()},
    )


def _draft_s(speculation, model, chip, topology, count, sequences, context, pricer):
    """Seconds of the drafter's k single-token steps before a verification: at the bound (lower and upper) and
    forecast."""
    drafter = speculation.drafter(model)
    table = drafter.table()
    draft_pricer = StepPricer(drafter, chip, topology, count, pricer.precision, efficiency=pricer.efficiency)
    totals = [0.0, 0.0, 0.0]
    for ahead in range(speculation.draft_tokens):
        priced, _, _ = draft_pricer.price(
            sequences,
            sequences,
            sequences * table.attention_flops(1, context + ahead),
            sequences * table.kv_bytes(context + ahead + 1, pricer.precision.kv_dtype),
        )
        totals = [
            total + seconds for total, seconds in zip(totals, (priced.bound_s, priced.no_overlap_s, priced.forecast_s))
        ]
    return totals


def time_to_first_token_s(
    model: ModelShape,
    chip: Chip | Cluster,
    prompt_len: Number,
    batch: Number = 1,
    n_chips: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    *,
    upper: bool = False,
    **options: object,
) -> Number:
    """Seconds from a prompt of ``prompt_len`` tokens (for each of ``batch`` sequences) to its first new token.

    The prefill step (``inference_step`` with context 0 and the prompt as new tokens), its lower
    bound or, with ``upper``, its no-overlap bound. Chapter :ref:`ch-serving`.
    """
    step = inference_step(
        model,
        chip,
        batch,
        0,
        positive("prompt_len", prompt_len, integral=True),
        n_chips,
        weight_dtype,
        kv_dtype,
        **options,
    )
    return step.time_upper_s if upper else step.time_s


def time_per_output_token_s(
    model: ModelShape,
    chip: Chip | Cluster,
    context_len: Number,
    batch: Number = 1,
    n_chips: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    *,
    upper: bool = False,
    **options: object,
) -> Number:
    """Seconds per generated token of each sequence: one decode step of ``batch`` at ``context_len``.

    Lower bound, or with ``upper`` the no-overlap bound. Chapter :ref:`ch-serving`.
    """
    step = inference_step(model, chip, batch, context_len, 1, n_chips, weight_dtype, kv_dtype, **options)
    return step.time_upper_s if upper else step.time_s


def compute_bound_batch(
    model: ModelShape,
    chip: Chip | Cluster,
    context_len: Number,
    n_chips: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    **options: object,
) -> Number:
    """The smallest decode batch whose FLOPs take at least as long as its bytes, at ``context_len``.

    inf where decode stays memory-bound at every batch (the attention over a long cache has a fixed
    intensity, about n_heads / n_kv_heads FLOPs per byte at bf16, below most ridge points). The first
    power of two that is compute-bound, then a vectorised bisection below it. Chapter :ref:`ch-serving`.
    """
    context = np.asarray(non_negative("context_len", context_len, integral=True), dtype=float)

    def compute_bound(batches: np.ndarray) -> np.ndarray:
        step = inference_step(model, chip, batches, context, 1, n_chips, weight_dtype, kv_dtype, **options)
        return np.asarray(step.compute_time_s) >= np.asarray(step.memory_time_s)

    powers = 2.0 ** np.arange(np.log2(assumptions.LARGEST_BATCH_SEARCHED) + 1)
    turned = compute_bound(powers.reshape((-1,) + (1,) * context.ndim))
    never = ~turned[-1]
    first = np.argmax(turned, axis=0)
    high = powers[first]
    low = np.where(first > 0, powers[np.maximum(first - 1, 0)], high)
    while np.any(high - low > 1):
        middle = np.floor((low + high) / 2)
        turned = compute_bound(middle)
        high, low = np.where(turned, middle, high), np.where(turned, low, middle)
    return scalar_or_array(np.where(never, np.inf, high))


def memory_bound_context(
    model: ModelShape,
    chip: Chip | Cluster,
    n_chips: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    **options: object,
) -> float:
    """The context (tokens) from which decode stays memory-bound at every batch (``compute_bound_batch`` is inf).

    Each sequence added to a large batch adds FLOPs f0 + f1 s and bytes q0 + q1 s at context s (its
    weights' share vanishes); it never pays for itself once (q0 + q1 s) / beta >= (f0 + f1 s) / pi, that
    is from s* = (f0 / pi - q0 / beta) / (q1 / beta - f1 / pi). inf where the cache is read faster than
    its attention computes. Chapter :ref:`ch-serving`.
    """
    large = 2.0**20  # every expert touched, and small enough for the differences to keep their digits
    step = inference_step(
        model,
        chip,
        np.array([[large, large + 1]] * 2),
        np.array([[0, 0], [1, 1]]),
        1,
        n_chips,
        weight_dtype,
        kv_dtype,
        **options,
    )
    compute, memory = np.asarray(step.compute_time_s), np.asarray(step.memory_time_s)
    per_sequence_compute, per_sequence_memory = compute[:, 1] - compute[:, 0], memory[:, 1] - memory[:, 0]
    f0, f1 = per_sequence_compute[0], per_sequence_compute[1] - per_sequence_compute[0]
    q0, q1 = per_sequence_memory[0], per_sequence_memory[1] - per_sequence_memory[0]
    if q1 <= f1:
        return float("inf")
    return float(max(0.0, (f0 - q0) / (q1 - f1)))


def max_batch(
    model: ModelShape,
    chip: Chip | Cluster,
    context_len: Number,
    n_chips: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    usable_fraction: float = assumptions.USABLE_HBM_FRACTION,
    kv_layout: str = "heads",
) -> Number:
    """The largest batch of sequences of ``context_len`` tokens whose KV cache fits beside the weights (0: none).

    On ``n_chips`` chips' usable HBM (the chip's ``capacity_bytes``), the cache replicated as ``kv_copies`` says
    for ``kv_layout`` (by "heads": a latent cache or fewer KV heads than chips is copied; by "batch": never).
    Chapter :ref:`ch-serving`.
    """
    model = require(ModelShape, "model", model, "hw.model('llama-3-8b')")
    count = whole_count("n_chips", n_chips)
    chip, _ = serving_place(chip, model, count)
    context = positive("context_len", context_len, integral=True)
    room = tokens_that_fit(chip, model.weight_bytes(weight_dtype), 1.0, usable_fraction, count)
    per_sequence = np.asarray(model.kv_bytes(context, kv_dtype)) * kv_copies(model, count, kv_layout)
    result = np.floor(np.asarray(room) / per_sequence).astype(np.int64)
    return int(result) if result.ndim == 0 else result
