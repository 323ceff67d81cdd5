"""A mesh of data, FSDP, tensor, context, pipeline and expert parallelism, and how it lies on a cluster.

A ``Mesh`` splits ``n_chips = dp x fsdp x tp x cp x pp`` chips; ``ep`` experts groups are carved
out of the data-parallel ``dp x fsdp`` ranks. Groups are laid out innermost first in the order
tp, cp, fsdp, dp, pp (Megatron-LM's; Narayanan et al. 2021, arXiv:2104.04473, Sec. 3), so a
group of size k at stride s (the product of the groups inside it) stays in one node when s k is at
most the node size, crosses only NICs when s is a whole node, and is a hierarchy between; on a TPU
slice the groups take the torus axes in the same order. A training step on a mesh is
``hwlib.training.step``. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import as_real_array, describe
from hwlib.data.assumptions import GRADIENT_ACCUMULATOR_BYTES
from hwlib.data.records import ModelShape
from hwlib.units import dtype_bytes

MESH_AXES = ("dp", "fsdp", "tp", "pp", "ep", "cp")
"""A mesh's axes, as ``Mesh`` names them, the CLI's ``--mesh`` takes them and results list them."""
LAYOUT = ("tp", "cp", "fsdp", "dp", "pp")
"""The axes laid out on the chips from innermost (fastest links) to outermost; ``ep`` reuses the data-parallel
ranks."""
WIRE_BYTES = dtype_bytes("bf16")
"""Weights, gradients and activations cross the links in bf16."""


@dataclass(frozen=True)
class Mesh:
    """Degrees of data (dp), fully sharded data (fsdp, ZeRO-3), tensor (tp), pipeline (pp), expert (ep) and
    context (cp) parallelism. Chapter :ref:`ch-sharding`."""

    dp: int = 1
    fsdp: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    cp: int = 1

    def __post_init__(self) -> None:
        for name in MESH_AXES:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Mesh.{name} must be a whole number >= 1, got {value!r}")
        if (self.dp * self.fsdp) % self.ep:
            raise ValueError(
                f"Mesh.ep={self.ep} must divide dp x fsdp = {self.dp * self.fsdp} (experts are "
                "sharded over the data-parallel ranks)"
            )

    @property
    def n_chips(self) -> int:
        return self.dp * self.fsdp * self.tp * self.cp * self.pp

    @property
    def data_parallel(self) -> int:
        return self.dp * self.fsdp

    def __str__(self) -> str:
        parts = [f"{name}={getattr(self, name)}" for name in MESH_AXES if getattr(self, name) > 1]
        return " ".join(parts) or "one chip"


def stride_groups(mesh: Mesh) -> dict[str, tuple[int, int]]:
    """Each axis's (size, stride) in the layout tp, cp, fsdp, dp, pp."""
    stride, groups = 1, {}
    for name in LAYOUT:
        size = getattr(mesh, name)
        groups[name] = (size, stride)
        stride *= size
    return groups


def fsdp_shards(mesh: Mesh) -> int:
    """The ranks ZeRO-3 shards the state over: fsdp, and the context-parallel ranks too, as torchtitan folds them
    into its FSDP mesh; none under plain data parallelism (dp > 1, fsdp 1: Megatron's DDP keeps the weights whole on
    the context-parallel ranks and all-reduces their gradients over dp x cp)."""
    return mesh.fsdp * mesh.cp if mesh.fsdp > 1 or mesh.dp == 1 else 1


def local_params(model: ModelShape, mesh: Mesh) -> float:
    """Parameters one tensor- and pipeline-parallel rank holds before ZeRO: its share, experts over ep as well
    (the FSDP shard before its split over fsdp x cp). Chapter :ref:`ch-sharding`."""
    dense, experts = split_params(model)
    return (dense + experts / mesh.ep) / (mesh.tp * mesh.pp)


def accumulator_bytes(model: ModelShape, mesh: Mesh, micro_batches: int) -> tuple[float, float]:
    """HBM bytes one chip's weight-gradient GEMMs move into their accumulators in a step, (the dense weights', the
    local experts'): ``assumptions.GRADIENT_ACCUMULATOR_BYTES`` per local weight per micro-batch. Chapter
    :ref:`ch-forecast`."""
    dense, experts = split_params(model)
    per_weight = GRADIENT_ACCUMULATOR_BYTES * micro_batches / (mesh.tp * mesh.pp)
    return dense * per_weight, experts / mesh.ep * per_weight


def split_params(model: ModelShape) -> tuple[float, float]:
    """(dense, expert) parameters: the experts of an MoE are sharded over ep, the rest is not."""
    if not model.is_moe:
        return float(model.params()), 0.0
    experts = model.param_breakdown()["experts"]
    return float(model.params() - experts), float(experts)


def routing_imbalance_of(model: ModelShape, routing_imbalance: object) -> float:
    """``hw.train_step``'s ``routing_imbalance``, validated: one number >= 1, and 1 for a dense model."""
    if np.ndim(routing_imbalance):
        raise TypeError(f"routing_imbalance must be one number >= 1, got {describe(routing_imbalance)}")
    value = float(as_real_array("routing_imbalance", routing_imbalance, minimum=1.0))
    if value != 1.0 and not model.is_moe:
        raise ValueError(f"routing_imbalance must be 1 for a dense model ({model.name}), got {value!r}")
    return value


def expert_split(model: ModelShape, imbalance: float) -> tuple[float, float]:
    """The busiest rank's matmul work as shares of the balanced step's: (the dense matmuls', the routed experts'), the
    experts' share of a token's matmul weights slowed by ``imbalance`` (0 for a dense model)."""
    if not model.is_moe:
        return 1.0, 0.0
    experts = model.param_breakdown(active=True)["experts"] / model.matmul_params(active=True)
    return 1.0 - experts, experts * imbalance
