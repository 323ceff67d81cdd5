"""The one pricer: a step's work, by part, becomes its bound, its no-overlap bound and its forecast.

A step's work on one chip (``Work``) is a few parts, each with FLOPs of one kind (``matmul``: through the weights,
priced with tile and wave quantization; ``attention``: the scores) and HBM bytes, and the collectives it runs, each
placed on its group (``hw.group_topology`` says where: in a node, across NICs, on a torus, over DCN) and told what
compute it may hide behind. Serving (``hw.inference_step``), the serving simulator (its step tables are this pricer
evaluated once per token count) and training (``hw.train_step``) all price here.

* **bound**: the roofline of the totals, max(F / pi, Q / beta) on one chip (Williams et al. 2009), the pipeline
  bubble as a share of it, and each collective at its alpha-beta time (``hw.collective_time_s``), less what hides
  behind compute (``hidden_s``).
* **no-overlap bound**: each part's own roofline, summed, with the bubble and every collective exposed.
* **forecast**: the same model at what kernels reach (``hw.Efficiency``): FLOPs at their kind's achieved rate, bytes
  at the achieved bandwidth, each part's kernels after the last's (an engine runs them one after another; at peak
  they overlap as in the bound), collectives at their scope's achieved share and never under the smallest measured
  all-reduce, elementwise passes over the activations, the slowdown of compute beside a hidden collective, each
  layer's and sequence's overhead and the unmodelled share. At ``hw.Efficiency.at_peak()`` it is the bound.

Chapters :ref:`ch-serving`, :ref:`ch-sharding` and :ref:`ch-forecast`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hwlib._checks import Number, non_negative, one_of
from hwlib.collectives import COLLECTIVES, collective_time_s
from hwlib.data import assumptions, efficiencies
from hwlib.efficiency import (
    Efficiency,
    Resolved,
    fuses_elementwise,
    hides_collectives,
    require_efficiency,
    resolve,
    small_allreduce_s,
)
from hwlib.placement import scope_of, send_time_s

FLOP_KINDS = ("matmul", "attention")
"""What a part's FLOPs are: matmuls through the weights (quantized by their shapes) or attention scores."""
OVERLAP_WINDOWS = (None, "attention", "last backward", "backward", "compute")
"""What a collective may hide behind: nothing (exposed), the attention, the backward pass of the last of the
micro-batches whose gradients accumulate (``Work.accumulation``), the whole backward pass (two thirds of the
compute) or all of it."""
BACKWARD_SHARE = 2.0 / 3.0
"""The backward pass's share of a training step's FLOPs (twice the forward), the window a gradient all-reduce
overlaps."""


@dataclass(frozen=True)
class Part:
    """One part of a step's work on one chip: ``flops`` of ``kind`` (``FLOP_KINDS``), HBM ``bytes``, for matmuls
    the useful share of their tiles (``quantized``, 1 without quantization), the share of its kind's forecast rate
    its kernels reach (``rate_share``: a routed expert's fp8 grouped GEMMs, ``hw.Efficiency.fp8_experts``), and
    whether it runs once a step after the pipeline's passes (``per_step``: the optimizer's update; the forecast's
    bubble does not stretch it)."""

    flops: Number = 0.0
    bytes: Number = 0.0
    kind: str = "matmul"
    quantized: Number = 1.0
    per_step: bool = False
    rate_share: Number = 1.0

    def __post_init__(self) -> None:
        one_of("Part.kind", self.kind, FLOP_KINDS)
        if not isinstance(self.per_step, bool):
            raise TypeError(f"Part.per_step must be True or False, got {self.per_step!r}")


@dataclass(frozen=True)
class Collective:
    """``calls`` collectives of ``kind`` ("send" for a point-to-point transfer), each of ``n_bytes``, on
    ``topology`` (None: one chip, free); ``overlaps``: what compute they may hide behind (``OVERLAP_WINDOWS``) in the
    forecast, as the usual implementation runs them, and in the bound unless ``overlaps_at_bound`` names a wider
    window that the best known implementation reaches. Collectives of the same ``part`` are reported together."""

    part: str
    kind: str
    n_bytes: Number
    topology: object
    calls: Number = 1
    overlaps: str | None = None
    overlaps_at_bound: str | None = None

    def __post_init__(self) -> None:
        one_of("Collective.kind", self.kind, (*COLLECTIVES, "send"))
        non_negative("Collective.n_bytes", self.n_bytes)
        non_negative("Collective.calls", self.calls)
        for name in ("overlaps", "overlaps_at_bound"):
            if getattr(self, name) not in OVERLAP_WINDOWS:
                raise ValueError(f"Collective.{name} must be one of {OVERLAP_WINDOWS}, got {getattr(self, name)!r}")

    @property
    def bound_overlaps(self) -> str | None:
        """What the collective hides behind in the bound."""
        return self.overlaps_at_bound or self.overlaps


@dataclass(frozen=True)
class Work:
    """A step's work on one chip: its ``parts`` (name -> ``Part``), its ``collectives``, the pipeline bubble as a
    share of compute, the activation bytes elementwise kernels pass over (training), the layers and sequences whose
    overheads a serving step pays, whether the unmodelled share (fitted on training runs) applies, and the
    micro-batches whose gradients accumulate before they are reduced once (``accumulation``), and in training the MoE
    layers and the local experts' layers that a step runs, counted per micro-batch's forward and backward
    (``moe_layer_passes``, ``expert_passes``), whose overheads software that launches kernels from the host pays."""

    parts: dict
    collectives: tuple = ()
    bubble_share: Number = 0.0
    elementwise_bytes: Number = 0.0
    layers: int = 0
    sequences: Number = 0.0
    unmodelled: bool = False
    accumulation: Number = 1
    moe_layer_passes: Number = 0.0
    expert_passes: Number = 0.0


@dataclass(frozen=True)
class Price:
    """A step's seconds on one chip. ``bound_s``, ``no_overlap_s`` and ``forecast_s`` are the totals; the
    ``*_parts_s`` dicts split the bound and the forecast into the work's parts, "pipeline bubble", each collective
    part's exposed time and (forecast) "elementwise", "overlap slowdown", "overhead" and "unmodelled"; they sum to
    their totals; ``forecast_memory_excess_s`` holds what each part's bytes add to its forecast beyond its FLOPs' time
    (0 where its FLOPs set it). ``compute_s`` and ``memory_s`` are the bound's two roofline terms
    (``forecast_compute_s`` and ``forecast_memory_s`` the forecast's, before its elementwise passes), ``comm_s`` and
    ``exposed_s`` each collective part's whole and exposed seconds at the bound, ``forecast_exposed_s`` exposed at
    the forecast."""

    compute_s: Number
    memory_s: Number
    forecast_compute_s: Number
    forecast_memory_s: Number
    bound_s: Number
    no_overlap_s: Number
    forecast_s: Number
    comm_s: dict = field(default_factory=dict)
    exposed_s: dict = field(default_factory=dict)
    forecast_exposed_s: dict = field(default_factory=dict)
    bound_parts_s: dict = field(default_factory=dict)
    forecast_parts_s: dict = field(default_factory=dict)
    forecast_memory_excess_s: dict = field(default_factory=dict)


_INSIDE = {"last backward": ("backward",)}  # windows within windows other than the whole compute


def hidden_s(comm: list, windows: dict) -> list:
    """How much of each collective hides behind compute, in order: together those sharing a window at most that
    window (``windows[overlaps]``) and, since overlapped collectives take turns on the links, all together at most
    the whole compute (``windows["compute"]``). ``comm`` holds (seconds, overlaps) pairs; broadcasts over arrays."""
    left = dict(windows)
    hidden = []
    for seconds, overlaps in comm:
        if overlaps is None:
            hidden.append(0.0)
            continue
        within = ("compute",) if overlaps == "compute" else (overlaps, *_INSIDE.get(overlaps, ()), "compute")
        hides = seconds
        for window in within:
            hides = np.minimum(hides, left[window])
        for window in within:
            left[window] = left[window] - hides
        if "last backward" in left:  # the last micro-batch's backward is part of the backward pass
            left["last backward"] = np.minimum(left["last backward"], left["backward"])
        hidden.append(hides)
    return hidden


def collective_s(collective: Collective) -> np.ndarray:
    """Seconds of one of ``collective``'s calls at the bound (0 on one chip or for no bytes)."""
    n_bytes = np.asarray(collective.n_bytes, dtype=float)
    if collective.topology is None or not np.any(n_bytes > 0):
        return np.zeros_like(n_bytes)
    if collective.kind == "send":
        return np.asarray(send_time_s(n_bytes, collective.topology))
    return np.where(n_bytes > 0, collective_time_s(collective.kind, np.maximum(n_bytes, 1.0), collective.topology), 0)


def forecast_collective_s(collective: Collective, one_s: np.ndarray, eff: Resolved, given: Efficiency) -> np.ndarray:
    """Seconds of one call at the forecast: the bound at its scope's achieved share (an all-to-all's as DeepEP
    measures it, ``efficiencies.ALL_TO_ALL_SHARE``), never under the smallest all-reduce measured over the group's
    chips (no small all-to-all was found; one hop's latency bounds both)."""
    if collective.topology is None:
        return np.zeros_like(one_s)
    scope = scope_of(collective.topology)
    if collective.kind == "all-to-all" and given.collective is None:
        share = float(efficiencies.ALL_TO_ALL_SHARE[scope].value)
    else:
        share = eff.collective_node if scope == "node" else eff.collective_network
    achieved = one_s / share
    if collective.kind == "send":
        return achieved
    floor = small_allreduce_s(collective.topology.n_chips) if given.small_allreduce_s is None else eff.small_allreduce_s
    return np.where(one_s > 0, np.maximum(achieved, floor), 0.0)


def price(work: Work, chip: object, compute_dtype: str, efficiency: Efficiency | None = None) -> Price:
    """The bound, no-overlap bound and forecast of ``work`` on ``chip`` with ``compute_dtype`` matmuls (see the
    module docstring); ``efficiency`` overrides the forecast's assumptions. Broadcasts over arrays in the work."""
    if not isinstance(work, Work):
        raise TypeError(f"work must be an hwlib.pricing.Work, got {work!r}")
    given = require_efficiency(efficiency)
    eff = resolve(chip, compute_dtype, given)
    peak, bandwidth = chip.peak(compute_dtype), chip.hbm_bytes_per_s
    parts = work.parts
    compute_s = sum(np.asarray(p.flops, dtype=float) / peak for p in parts.values())
    memory_s = sum(np.asarray(p.bytes, dtype=float) / bandwidth for p in parts.values())
    roofline = np.maximum(compute_s, memory_s)
    compute_bound = compute_s >= memory_s
    bound_parts = {
        name: np.where(compute_bound, np.asarray(p.flops) / peak, np.asarray(p.bytes) / bandwidth)
        for name, p in parts.items()
    }
    no_overlap = sum(np.maximum(np.asarray(p.flops) / peak, np.asarray(p.bytes) / bandwidth) for p in parts.values())

    rates = {"matmul": peak * eff.matmul, "attention": attention_rate(chip, compute_dtype, given) * eff.attention}
    achieved_bandwidth = bandwidth * eff.hbm
    flops_s = {
        name: np.asarray(p.flops, dtype=float)
        / (rates[p.kind] * (np.asarray(p.quantized) if eff.quantization else 1.0) * np.asarray(p.rate_share))
        for name, p in parts.items()
    }
    bytes_s = {name: np.asarray(p.bytes, dtype=float) / achieved_bandwidth for name, p in parts.items()}
    forecast_compute, forecast_memory = sum(flops_s.values()), sum(bytes_s.values())
    if given.parts_overlap:  # one roofline of the totals, as the bound
        forecast_bound = forecast_compute >= forecast_memory
        forecast_parts = {name: np.where(forecast_bound, flops_s[name], bytes_s[name]) for name in parts}
    else:  # each part's kernels after the last's, each at its own roofline
        forecast_parts = {name: np.maximum(flops_s[name], bytes_s[name]) for name in parts}
    excess = {name: np.maximum(forecast_parts[name] - flops_s[name], 0.0) for name in parts}
    unfused = 0.0 if fuses_elementwise(chip) else np.asarray(work.elementwise_bytes, dtype=float)
    elementwise = eff.elementwise_passes * unfused / achieved_bandwidth
    forecast_core = sum(forecast_parts.values()) + elementwise

    attention_s = sum(np.asarray(p.flops) / peak for p in parts.values() if p.kind == "attention")
    forecast_attention_s = sum(flops_s[name] for name, p in parts.items() if p.kind == "attention")
    bound_comm, forecast_comm = [], []
    best_overlap = hides_collectives(chip, given)
    for collective in work.collectives:
        one = collective_s(collective)
        bound_comm.append((collective.calls * one, collective.bound_overlaps))
        forecast_comm.append(
            (
                collective.calls * forecast_collective_s(collective, one, eff, given),
                collective.bound_overlaps if best_overlap else collective.overlaps,
            )
        )
    bound_hidden = hidden_s(bound_comm, windows(roofline, attention_s, work.accumulation))
    forecast_hidden = hidden_s(forecast_comm, windows(forecast_core, forecast_attention_s, work.accumulation))

    comm, exposed, forecast_exposed = {}, {}, {}
    for collective, (seconds, _), hides, (f_seconds, _), f_hides in zip(
        work.collectives, bound_comm, bound_hidden, forecast_comm, forecast_hidden
    ):
        name = collective.part
        comm[name] = comm.get(name, 0.0) + seconds
        exposed[name] = exposed.get(name, 0.0) + seconds - hides
        forecast_exposed[name] = forecast_exposed.get(name, 0.0) + f_seconds - f_hides

    bubble = work.bubble_share * roofline
    bound = roofline + bubble + sum(exposed.values(), 0.0)
    no_overlap = no_overlap + work.bubble_share * no_overlap + sum(comm.values(), 0.0)
    once = sum((forecast_parts[name] for name, p in parts.items() if p.per_step), 0.0)  # after the pipeline's passes
    forecast_bubble = work.bubble_share * (forecast_core - once)
    slowdown = eff.overlap_slowdown * sum(forecast_hidden, 0.0)
    overhead = work.layers * eff.layer_overhead_s + np.asarray(work.sequences, dtype=float) * eff.sequence_overhead_s
    moe = 0.0 if fuses_elementwise(chip) else 1.0  # XLA runs the step as one compiled program
    moe_overhead = moe * (work.moe_layer_passes * eff.moe_layer_overhead_s + work.expert_passes * eff.expert_overhead_s)
    overhead = overhead + moe_overhead
    modelled = forecast_core + forecast_bubble + sum(forecast_exposed.values(), 0.0) + slowdown + overhead
    unmodelled = eff.unmodelled_share if work.unmodelled else 0.0
    forecast = modelled / (1.0 - unmodelled)
    return Price(
        compute_s=compute_s,
        memory_s=memory_s,
        forecast_compute_s=forecast_compute,
        forecast_memory_s=forecast_memory,
        bound_s=bound,
        no_overlap_s=no_overlap,
        forecast_s=forecast,
        comm_s=comm,
        exposed_s=exposed,
        forecast_exposed_s=forecast_exposed,
        bound_parts_s={**bound_parts, "pipeline bubble": bubble, **exposed},
        forecast_parts_s={
            **forecast_parts,
            "elementwise": elementwise,
            "pipeline bubble": forecast_bubble,
            **forecast_exposed,
            "overlap slowdown": slowdown,
            "overhead": overhead,
            "unmodelled": forecast - modelled,
        },
        forecast_memory_excess_s=excess,
    )


def step_seconds(
    tokens_s: tuple, attention_s: tuple, exposed_s: Number, overhead_s: Number, overlap: bool, hidden: bool = False
) -> object:
    """Seconds of a serving step as ``price`` combines them, from the (compute, memory, sequential) seconds of its
    parts other than the attention (``sequential``: each part at its own roofline, summed) and the attention's
    (compute, memory) seconds: one roofline of the totals where the parts ``overlap``, else the parts one after
    another; then the collectives ``exposed_s`` after it, or, ``hidden`` behind it as the bound hides them, the
    slower of the two; then the overheads. The serving simulator prices each step so, from the pricer's tables over
    the step's tokens."""
    compute, memory, sequential = tokens_s
    attention_compute, attention_memory = attention_s
    if overlap:
        core = np.maximum(compute + attention_compute, memory + attention_memory)
    else:
        core = sequential + np.maximum(attention_compute, attention_memory)
    return (np.maximum(core, exposed_s) if hidden else core + exposed_s) + overhead_s


def windows(compute: Number, attention: Number, accumulation: Number = 1) -> dict:
    """What collectives may hide behind (``OVERLAP_WINDOWS``), in seconds, for a step of ``compute`` seconds of
    which ``attention`` are attention, over ``accumulation`` micro-batches. Gradients accumulated over micro-batches
    are complete only in the last one's backward pass, the one a single reduction of them can overlap (Megatron-LM's
    ``overlap_grad_reduce`` starts a bucket's reduction in the last micro-batch; PyTorch DDP's ``no_sync`` skips it
    in the others)."""
    backward = BACKWARD_SHARE * compute
    return {"compute": compute, "backward": backward, "last backward": backward / accumulation, "attention": attention}


def attention_rate(chip: object, compute_dtype: str, given: Efficiency) -> float:
    """The peak attention kernels run at: the attention dtype's (``assumptions.ATTENTION_DTYPE``: FlashAttention
    kernels run in bf16 beside fp8 matmuls), or the matmuls' own where ``Efficiency.attention_dtype`` says
    "matmul" (as at peak)."""
    dtype = given.attention_dtype or assumptions.ATTENTION_DTYPE
    return chip.peak(compute_dtype if dtype == "matmul" else dtype)
