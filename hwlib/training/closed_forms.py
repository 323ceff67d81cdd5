"""Closed forms from the scaling book: the best FSDP x tensor-parallel split, and memory under k saved tensors.

Two results of Austin et al., "How to Scale Your Model" (Google DeepMind, 2025), read on 2026-12-06:

- Part 5, "How to Parallelize a Transformer for Training", section "Mixed FSDP and Tensor Parallelism",
  https://jax-ml.github.io/scaling-book/training/ (jax-ml/scaling-book, training.md, commit 0c5b5887):
  the optimal FSDP degree X_opt = sqrt(B N M_X / (F M_Y)) and the per-chip batch below which no split of
  N = X Y chips hides its communication, B / N = 4 alpha^2 / (M_X M_Y F), "2 * 2550^2 / F" on TPU v5p.
- Part 6, "Training LLaMA 3 on TPUs", https://jax-ml.github.io/scaling-book/applied-training/
  (applied-training.md, commit 345a75a7): Llama 3 70B (F = 28,672) on a v5p pod of 8960 chips at a 4M-token
  batch, "2 * 2550^2 / F = 453" tokens per chip and X_opt = sqrt(2 B N / F) = 1618; and its memory with
  four [B, D] checkpoints per layer, "~21.6TB", "21.6e12 / 96e9 = 225" v5p chips.

Both are the book's simplified model, kept apart from the transformer table on purpose so that its numbers
come out as the book prints them: a layer is an MLP of two matmuls (no attention; the gate of a gated MLP
left out unless asked for). ``hw.train_step`` prices the whole model on a mesh. Beside them, the FSDP threshold:
the tokens per chip above which a step's FSDP traffic hides behind its compute, on the transformer table and the
cluster's topology. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hwlib._checks import Number, broadcast, describe, non_negative, one_of, positive, scalar_or_array, whole_or_array
from hwlib.data import assumptions, literature
from hwlib.data.records import Chip, Cluster, ModelShape, TrainingRecipe, require, require_chip
from hwlib.data.records.layer_rules import RECOMPUTE, TRAINING_OVER_FORWARD
from hwlib.memory import chips_needed, training_state_bytes
from hwlib.placement import group_time_s, group_topology
from hwlib.training.mesh import WIRE_BYTES, Mesh, local_params
from hwlib.units import BYTES_PER_ELEMENT, dtype_bytes

LINKS_PER_AXIS = 2
"""Links a chip has along one torus axis, one to each neighbour (a 3D torus's six links, three axes)."""
MLP_MATMULS = 2
"""Matmuls per layer in the scaling book's model: W_in [D, F] and W_out [F, D] ("we will also ignore the
gating matmul")."""
GATED_MLP_MATMULS = 3
"""Matmuls per layer of a gated MLP counted whole (``include_gate=True``)."""
TP_COLLECTIVES = 2
"""Collectives of tensor parallelism per layer in the forward pass: all-gather In, reduce-scatter Out."""
FLOPS_PER_MAC = 2
"""A multiply-accumulate is two FLOPs."""


def _dense_model(model: object) -> ModelShape:
    record = require(ModelShape, "model", model, "hw.model('llama-3-70b')")
    if record.is_moe or record.d_ff is None or record.d_model is None or record.n_layers is None:
        raise ValueError(
            f"model must be a dense ModelShape with d_model, d_ff and n_layers (the closed form is the scaling "
            f"book's dense MLP), got {record.name!r}"
        )
    return record


def _one(name: str, value: object) -> float:
    if np.ndim(value):
        raise TypeError(f"{name} must be one number, got {describe(value)}")
    return float(positive(name, value))


def _axis_bytes_per_s(chip: Chip, axis_bytes_per_s: object, fsdp_axes: float, tp_axes: float) -> np.ndarray:
    """W: bytes a chip sends per second along one torus axis, both neighbours' links at the one-direction rate."""
    if axis_bytes_per_s is not None:
        return positive("axis_bytes_per_s", axis_bytes_per_s)
    links, rate = chip.ici_link_count, chip.ici_link_bytes_per_s
    if links is None or rate is None:
        raise ValueError(
            f"chip {chip.label} has no ICI link record (ici_links, ici_link_bandwidth): give axis_bytes_per_s, "
            "the bytes per second a chip sends along one mesh axis, or a chip from hw.custom_chip(..., "
            "ici_links=..., ici_link_bytes_per_s=...)"
        )
    axes = links / LINKS_PER_AXIS
    if fsdp_axes + tp_axes > axes:
        raise ValueError(
            f"fsdp_axes + tp_axes must be at most the {axes:g} torus axes of {chip.label}, got "
            f"{fsdp_axes:g} + {tp_axes:g}"
        )
    return np.asarray(LINKS_PER_AXIS * rate)


@dataclass(frozen=True)
class FsdpTpOptimum:
    """The best split of ``n_chips`` = fsdp x tp for one layer's forward pass, and whether it hides its traffic.

    ``fsdp`` is X_opt clipped to [1, N] (the communication is convex in X, so outside that range the nearer end
    is best) and ``tp`` = N / ``fsdp``, both continuous as in the book; ``fsdp_power_of_two`` is the power of two
    up to N with the least communication. ``batch_per_chip`` is B / N (tokens) and ``comm_bound_batch_per_chip``
    the per-chip batch below which no split hides its communication (tokens). ``layer_math_time_s`` and
    ``layer_comms_time_s`` are one layer's forward matmuls and its FSDP plus tensor-parallel collectives at
    ``fsdp`` (s); ``compute_bound`` is whether the first is at least the second. ``ici_intensity`` is the
    book's alpha = C / W (FLOP/B) and ``axis_bytes_per_s`` its W (B/s); ``comms_time_s(x)`` gives the
    communication at any FSDP degree x. Chapter :ref:`ch-sharding`.
    """

    fsdp: Number
    tp: Number
    fsdp_power_of_two: int | np.ndarray
    batch_per_chip: Number
    comm_bound_batch_per_chip: Number
    compute_bound: bool | np.ndarray
    layer_math_time_s: Number
    layer_comms_time_s: Number
    ici_intensity: Number
    axis_bytes_per_s: Number
    fsdp_axes: float
    tp_axes: float
    _per_fsdp_way_s: np.ndarray = field(repr=False)
    _times_fsdp_way_s: np.ndarray = field(repr=False)

    def comms_time_s(self, fsdp: Number) -> Number:
        """One layer's forward communication (s) at FSDP degree ``fsdp`` (> 0) and tp = N / ``fsdp``:
        a x + b / x, FSDP's gathers growing with x and tensor parallelism's falling. Chapter :ref:`ch-sharding`."""
        ways = positive("fsdp", fsdp)
        return scalar_or_array(self._per_fsdp_way_s * ways + self._times_fsdp_way_s / ways)


def fsdp_tp_optimum(
    batch_tokens: Number,
    n_chips: Number,
    model: ModelShape,
    chip: Chip,
    *,
    fsdp_axes: float = literature.SCALING_BOOK_FSDP_AXES.value,
    tp_axes: float = literature.SCALING_BOOK_TP_AXES.value,
    dtype: str = "bf16",
    include_gate: bool = False,
    axis_bytes_per_s: Number | None = None,
) -> FsdpTpOptimum:
    """The FSDP x tensor-parallel split of ``n_chips`` (N) that least exposes communication for a global batch of
    ``batch_tokens`` (B, tokens), after the scaling book (Part 5, "Mixed FSDP and Tensor Parallelism").

    One layer's forward pass on a chip of an X x Y mesh (X-way FSDP over ``fsdp_axes`` = M_X torus axes, Y-way
    tensor parallelism over ``tp_axes`` = M_Y), with D = ``model.d_model``, F = ``model.d_ff``, b_e the bytes of
    ``dtype``, C = ``chip.peak(dtype)`` and n_w = 2 matmuls (3 for a gated MLP with ``include_gate``):

    - math: n_w matmuls of [B/X, D] x [D, F/Y], 2 FLOPs a multiply-add: T_math = 2 n_w B D F / (N C).
    - FSDP all-gathers each weight shard [D/X, F/Y] to [D, F/Y], n_w b_e D F / Y bytes; tensor parallelism
      all-gathers In [B/X, D/Y] to [B/X, D] and reduce-scatters Out, 2 b_e B D / X bytes.
    - On a wrapped torus axis a chip sends to both neighbours at once: an all-gather of S bytes takes
      (X - 1)/X S / W ~ S / W, with W = ``axis_bytes_per_s`` = 2 x ``chip.ici_link_bytes_per_s`` (the book's
      "bidirectional" W_ici, 1.8e11 B/s on v5p), and a group over M axes runs them together (W M).
    - T_comms(X) = n_w b_e D F X / (N M_X W) + 2 b_e B D / (X M_Y W) is least at
      X_opt = sqrt(2 B N M_X / (n_w F M_Y)) (sqrt(2 B N / F) at the book's M_X = 2, M_Y = 1, n_w = 2), where its
      two terms are equal and T_comms = (2 b_e D / W) sqrt(2 n_w F B / (N M_X M_Y)).
    - T_math >= T_comms there when B / N >= 2 b_e^2 alpha^2 / (n_w F M_X M_Y), alpha = C / W: the book's
      4 alpha^2 / (M_X M_Y F) at b_e = n_w = 2, i.e. 2 alpha^2 / F, "2 * 2550^2 / F" on v5p. The dtype cancels
      (an int8 peak doubles alpha and halves b_e).

    ``batch_tokens`` and ``n_chips`` (whole) are numbers or arrays that broadcast; ``axis_bytes_per_s``
    replaces W (needed for a chip without ICI link records). The backward pass moves twice FSDP's bytes and the
    same tensor-parallel bytes for twice the FLOPs, so the forward pass binds. Chapter :ref:`ch-sharding`.
    """
    record = _dense_model(model)
    device = require_chip(chip)
    one_of("dtype", dtype, BYTES_PER_ELEMENT)
    if not isinstance(include_gate, (bool, np.bool_)):
        raise TypeError(f"include_gate must be True or False, got {include_gate!r}")
    m_x, m_y = _one("fsdp_axes", fsdp_axes), _one("tp_axes", tp_axes)
    batch, chips, rate = broadcast(
        batch_tokens=positive("batch_tokens", batch_tokens),
        n_chips=positive("n_chips", n_chips, integral=True),
        axis_bytes_per_s=_axis_bytes_per_s(device, axis_bytes_per_s, m_x, m_y),
    )
    matmuls = GATED_MLP_MATMULS if include_gate and record.mlp == "gated" else MLP_MATMULS
    d, f, b_e, peak = float(record.d_model), float(record.d_ff), dtype_bytes(dtype), device.peak(dtype)
    per_way = matmuls * b_e * d * f / (chips * m_x * rate)  # FSDP: a X
    times_way = TP_COLLECTIVES * b_e * batch * d / (m_y * rate)  # tensor parallelism: b / X
    ways = np.clip(np.sqrt(times_way / per_way), 1.0, chips)
    comms = per_way * ways + times_way / ways
    math_s = FLOPS_PER_MAC * matmuls * batch * d * f / (chips * peak)
    intensity = peak / rate
    # at X_opt T_comms = 2 sqrt(a b); T_math >= it squares to B / N >= 4 T b_e^2 alpha^2 / (p^2 n_w F M_X M_Y)
    threshold = 4.0 * TP_COLLECTIVES * b_e**2 * intensity**2 / (FLOPS_PER_MAC**2 * matmuls * f * m_x * m_y)
    powers = 2.0 ** np.arange(int(np.floor(np.log2(np.max(chips)))) + 1)
    candidates = per_way[..., None] * powers + times_way[..., None] / powers
    candidates = np.where(powers <= chips[..., None], candidates, np.inf)
    return FsdpTpOptimum(
        fsdp=scalar_or_array(ways),
        tp=scalar_or_array(chips / ways),
        fsdp_power_of_two=whole_or_array(powers[np.argmin(candidates, axis=-1)]),
        batch_per_chip=scalar_or_array(batch / chips),
        comm_bound_batch_per_chip=scalar_or_array(threshold),
        compute_bound=bool(math_s >= comms) if np.ndim(math_s) == 0 else math_s >= comms,
        layer_math_time_s=scalar_or_array(math_s),
        layer_comms_time_s=scalar_or_array(comms),
        ici_intensity=scalar_or_array(intensity),
        axis_bytes_per_s=scalar_or_array(rate),
        fsdp_axes=m_x,
        tp_axes=m_y,
        _per_fsdp_way_s=per_way,
        _times_fsdp_way_s=times_way,
    )


def comm_bound_batch_per_chip(
    model: ModelShape,
    chip: Chip,
    *,
    fsdp_axes: float = literature.SCALING_BOOK_FSDP_AXES.value,
    tp_axes: float = literature.SCALING_BOOK_TP_AXES.value,
    dtype: str = "bf16",
    include_gate: bool = False,
    axis_bytes_per_s: Number | None = None,
) -> Number:
    """Tokens per chip below which even the best FSDP x tensor-parallel split is communication-bound.

    2 b_e^2 alpha^2 / (n_w F M_X M_Y) with alpha = ``chip.peak(dtype)`` / W: the scaling book's
    4 alpha^2 / (M_X M_Y F), "2 * 2550^2 / F" on TPU v5p (453 tokens for Llama 3 70B's F = 28,672). It depends
    on no batch or chip count; the terms and options are :func:`fsdp_tp_optimum`'s. Chapter :ref:`ch-sharding`.
    """
    return fsdp_tp_optimum(
        1.0,
        1,
        model,
        chip,
        fsdp_axes=fsdp_axes,
        tp_axes=tp_axes,
        dtype=dtype,
        include_gate=include_gate,
        axis_bytes_per_s=axis_bytes_per_s,
    ).comm_bound_batch_per_chip


# --- memory under k saved [B, D] tensors per layer ---------------------------------------------


def saved_activation_bytes(
    batch_tokens: Number, saved_per_layer: Number, model: ModelShape, dtype: str = "bf16"
) -> Number:
    """Bytes of activations kept for the backward pass when each layer saves ``saved_per_layer`` (k) tensors of
    shape [B, D]: b_e k B D L, with B = ``batch_tokens`` (the global batch, tokens), D = ``model.d_model``,
    L = ``model.n_layers`` and b_e the bytes of ``dtype`` (2 for bf16).

    The scaling book's estimate (Part 6): Llama 3 70B at a 4M-token batch with k = 4
    (``literature.SCALING_BOOK_CHECKPOINTS_PER_LAYER``) keeps 2 x 8192 x 4e6 x 4 x 80 = 20.97e12 B. hwlib's
    own accounting (:func:`hw.activation_bytes <hwlib.memory.activation_bytes>`, after Korthikanti et al.
    2022) keeps the layer input alone under full recomputation, 2 s b d bytes a layer: k = 1 here, the same
    number; sequence parallelism splits that input over n_tp chips, while this closed form counts the whole
    batch. Without recomputation it keeps about 16.75 such tensors a layer for Llama 3 70B with a
    FlashAttention kernel. Neither counts the logits (``hw.logits_bytes``). Arrays broadcast.
    Chapter :ref:`ch-sharding`.
    """
    record = _dense_model(model)
    one_of("dtype", dtype, BYTES_PER_ELEMENT)
    batch, saved = broadcast(
        batch_tokens=positive("batch_tokens", batch_tokens),
        saved_per_layer=non_negative("saved_per_layer", saved_per_layer),
    )
    return scalar_or_array(dtype_bytes(dtype) * saved * batch * record.d_model * record.n_layers)


@dataclass(frozen=True)
class CheckpointedMemory:
    """HBM of a training step under k saved [B, D] tensors per layer, over all chips (B), and the chips that
    hold it: ``activation_bytes`` (:func:`saved_activation_bytes`), ``state_bytes`` (the recipe's weights,
    gradients, master copy and optimizer state), ``total_bytes`` and ``n_chips``. Chapter :ref:`ch-sharding`."""

    activation_bytes: Number
    state_bytes: float
    total_bytes: Number
    n_chips: int | np.ndarray


def checkpointed_training_memory(
    batch_tokens: Number,
    saved_per_layer: Number,
    model: ModelShape,
    chip: Chip,
    *,
    recipe: str | TrainingRecipe = "bf16_fp32_moments",
    usable_fraction: Number = assumptions.USABLE_HBM_FRACTION,
    dtype: str = "bf16",
) -> CheckpointedMemory:
    """The scaling book's memory estimate of a training step and the fewest chips whose HBM holds it.

    Saved activations (:func:`saved_activation_bytes`) plus ``model.params()`` x the ``recipe``'s bytes per
    parameter (default: the book's bf16 weights and fp32 Adam moments, 10 B, no gradients or master copy),
    held on ceil(total / (``usable_fraction`` x ``chip.capacity_bytes``)) chips (``hw.chips_needed``). The book
    fills every byte of 96 GB: its "21.6e12 / 96e9 = 225" is ``usable_fraction=1.0`` on a 96e9-byte chip with
    its rounded 21.6 TB (70e9 parameters; the unrounded 21.67e12 B needs 226). Chapter :ref:`ch-sharding`.
    """
    record = _dense_model(model)
    device = require_chip(chip)
    activations = np.asarray(saved_activation_bytes(batch_tokens, saved_per_layer, record, dtype))
    state = float(training_state_bytes(record.params(), recipe))
    total = activations + state
    return CheckpointedMemory(
        activation_bytes=scalar_or_array(activations),
        state_bytes=state,
        total_bytes=scalar_or_array(total),
        n_chips=chips_needed(total, device, usable_fraction),
    )


def fsdp_threshold_tokens(
    model: ModelShape, cluster: Cluster, mesh: Mesh, seq_len: int, dtype: str = "bf16", recompute: str = "selective"
) -> float:
    """Tokens per chip per step above which FSDP's all-gather and reduce-scatter hide behind compute, when the
    gathered weights stay for the whole step (one of each per step, as ``train_step`` assumes where they fit):
    the traffic is fixed, compute grows with the tokens. Chapter :ref:`ch-sharding`."""
    model = require(ModelShape, "model", model, "hw.model('llama-3-70b')")
    mesh = require(Mesh, "mesh", mesh, "hw.Mesh(fsdp=64)")
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('hgx-h100-ndr')")
    one_of("recompute", recompute, RECOMPUTE)
    topology = group_topology(cluster, mesh.fsdp * mesh.cp, mesh.tp, mesh.n_chips)
    shard = local_params(model, mesh) * WIRE_BYTES
    traffic = group_time_s("all-gather", shard, topology) + group_time_s("reduce-scatter", shard, topology)
    sequence = int(positive("seq_len", seq_len, integral=True))
    table = model.table()
    attention = float(table.attention_flops(sequence, 0)) / sequence  # per token
    per_token = TRAINING_OVER_FORWARD * float(table.forward_flops(1.0, attention)) + float(
        table.recompute_flops(1.0, attention, recompute)
    )
    return traffic * cluster.chip.peak(dtype) / per_token
