"""A training step's overlap rule and its forecast: the step priced at what kernels reach (``hw.Efficiency``).

The bound (``hwlib.training.mesh``) and the forecast share one overlap rule (``hidden_s``); the forecast prices
matmuls at their quantized fraction of peak, attention at the fraction attention kernels reach, elementwise kernels
as passes over the activations at the achieved bandwidth, every collective at its achieved share, and adds the
bubble, the compute that hidden collectives slow down beside them, and the share of the step no term accounts for.
Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number
from hwlib.data import assumptions
from hwlib.efficiency import layer_quantization, resolve

BACKWARD_SHARE = 2.0 / 3.0
"""The backward pass's share of the FLOPs (twice the forward), the window a data-parallel all-reduce overlaps."""


def hidden_s(comm: dict, compute: Number, attention_s: Number) -> dict:
    """How much of each collective hides behind compute; broadcasts over arrays.

    Hidden time is physical: the overlapped collectives (FSDP, data parallelism, context parallelism) take turns
    on the links, so together they hide behind at most the step's compute; the data-parallel all-reduce only
    behind the backward pass (two thirds of the model's FLOPs), FSDP behind forward and backward, context
    parallelism behind attention. Tensor-parallel and expert all-to-alls and pipeline sends are exposed.
    """
    window = compute  # what compute can hide, shared by the overlapped collectives in turn
    hidden = {}
    for name, limit in (
        ("cp all-gather", attention_s),
        ("dp all-reduce", compute * BACKWARD_SHARE),
        ("fsdp all-gather + reduce-scatter", compute),
    ):
        if name in comm:
            hidden[name] = np.minimum(np.minimum(comm[name], limit), window)
            window = window - hidden[name]
    return {name: hidden.get(name, 0.0) for name in comm}


FORECAST_PARTS = (
    "matmuls",
    "attention",
    "elementwise",
    "pipeline bubble",
    "exposed communication",
    "overlap slowdown",
    "unmodelled",
)
"""The parts of a forecast step's time (``TrainStep.forecast_parts_s``); they sum to ``forecast_time_s``."""


@dataclass(frozen=True)
class StepCounts:
    """What one chip does in a step, for the forecast: FLOPs through the weights and in the attention scores
    (recomputation included), bytes of activations the matmuls read and write, the tokens of one micro-batch on
    a chip, and the bubble as a share of compute."""

    weight_flops: float
    score_flops: float
    activation_bytes: float
    micro_tokens: float
    bubble_share: float


def step_forecast(chip, dtype, table, mesh, counts, comm, scope, efficiency) -> dict:
    """Seconds of each ``FORECAST_PARTS`` and their total: the step priced at the efficiencies ``resolve`` gives
    (matmuls at their quantized fraction of peak, attention at the bf16 peak's, elementwise passes and every
    collective at their achieved rates); the overlap rules of the bound, with the forecast compute as the window."""
    eff = resolve(chip, dtype, efficiency)
    quantized = layer_quantization(chip, table, counts.micro_tokens, mesh.tp) if eff.quantization else 1.0
    matmuls = counts.weight_flops / (chip.peak(dtype) * eff.matmul * quantized)
    attention = counts.score_flops / (chip.peak(assumptions.ATTENTION_DTYPE) * eff.attention)
    elementwise = eff.elementwise_passes * counts.activation_bytes / (chip.hbm_bytes_per_s * eff.hbm)
    compute = matmuls + attention + elementwise
    rates = {"node": eff.collective_node, "network": eff.collective_network}
    achieved = {name: seconds / rates[scope[name]] for name, seconds in comm.items()}
    hidden = hidden_s(achieved, compute, attention)
    exposed = sum((achieved[name] - hidden[name] for name in achieved), 0.0)
    slowdown = eff.overlap_slowdown * sum(hidden.values(), 0.0)  # compute beside a hidden collective runs slower
    bubble = counts.bubble_share * compute
    modelled = compute + bubble + exposed + slowdown
    total = modelled / (1.0 - eff.unmodelled_share)
    return {
        "matmuls": matmuls,
        "attention": attention,
        "elementwise": elementwise,
        "pipeline bubble": bubble,
        "exposed communication": exposed,
        "overlap slowdown": slowdown,
        "unmodelled": total - modelled,
        "total": total,
    }
