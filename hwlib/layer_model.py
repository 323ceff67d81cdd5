"""The compute-to-commute model of one transformer layer's training step, vectorised over d and T.

One layer of hidden size d holds P = 12 d^2 parameters (4 d^2 attention projections, 8 d^2 for
an MLP with 4 d hidden units; Kaplan et al., "Scaling laws for neural language models", 2020,
Sec. 2.1). One micro-batch of T tokens that visits the weights once costs

* FLOPs F = 72 d^2 T: forward 2 P T = 24 d^2 T, backward twice that (input and weight
  gradients), plus 12 s d T for attention scores over a sequence of s tokens when ``seq_len``
  is given (forward 4 s d, backward ~8 s d with recomputation);
* weight-side HBM bytes Q_W = P (b_w + 6 T / sqrt(Z)): b_w bytes per parameter per visit, plus
  the re-blocking term of Hong and Kung ("I/O complexity: the red-blue pebble game", STOC
  1981): a GEMM of M N K multiply-adds with an on-chip memory of Z elements moves at least
  M N K / sqrt(Z) elements, here three GEMMs per weight of 2-byte elements, with Z the bf16
  elements in ``on_chip_fraction`` of the chip's on-chip memory (L2, VMEM). Where no source
  gives that memory, the term is left out and the result says so (``reblocking`` False);
* inter-kernel activation bytes Q_A = a d T (a bytes per token per unit d between fused kernels);
* time: a GEMM phase, the roofline time of (F, Q_W) (``hw.roofline_time_s``'s formula), plus a
  memory-bound element-wise phase Q_A / beta;
* energy, only where the chip has energy parameters: F e_flop + (Q_W + Q_A) e_hbm + p_static t.

Setting the intensity F / (Q_W + Q_A) equal to the ridge point I* gives the fewest tokens per
weight visit that leave the HBM wall, T_min = 12 b_w d I* / (72 d - a_eff I*) with
a_eff = a + 72 d / sqrt(Z), and the smallest hidden size for which any T does,
d_min = a I* / (72 (1 - I* / sqrt(Z))). All of it, with document 002's defaults, is that
document's section 3, re-derived here.

Explained in the chapters :ref:`ch-compute-and-commute` and :ref:`ch-elementwise-tax`.
"""

from __future__ import annotations

import numpy as np

from hwlib._checks import Number, broadcast_shape, fraction, non_negative, positive, scalar_or_array
from hwlib.bands import fill_in_bands, new_block
from hwlib.data import doc002
from hwlib.data.records import ENERGY_FIELDS, Chip, ModelShape, require_chip
from hwlib.data.records.layer_rules import (
    FORWARD_FLOPS_PER_PARAM,
    SCORE_FLOPS_PER_HEAD_DIM,
    TRAINING_OVER_FORWARD,
    attended_pairs,
)
from hwlib.roofline import ridge_point, roofline_bound_s

UNIT_LAYER = ModelShape(
    key="gelu-mha-layer",
    name="one GELU-MLP (4d), multi-head layer, per d^2",
    n_layers=1,
    d_model=1,
    n_heads=1,
    n_kv_heads=1,
    head_dim=1,
    d_ff=4,
    mlp="gelu",
    vocab=1,
    tied_embeddings=True,
    norm="none",
    norms_per_layer=0,
)
"""The source documents' layer as a ModelShape of width 1, so that its counts are per d^2."""
PARAMS_PER_LAYER_PER_D2 = UNIT_LAYER.param_breakdown()["attention"] + UNIT_LAYER.param_breakdown()["mlp"]
"""Parameters of that layer per d^2: 4 attention + 8 MLP = 12 (from the model-shape code)."""
FLOPS_PER_TOKEN_PER_D2 = TRAINING_OVER_FORWARD * FORWARD_FLOPS_PER_PARAM * PARAMS_PER_LAYER_PER_D2
"""Training FLOPs of that layer per token per d^2: 3 x 2 x 12 = 72."""
SCORE_FLOPS_PER_TOKEN_PER_SD = TRAINING_OVER_FORWARD * SCORE_FLOPS_PER_HEAD_DIM
"""Attention-score FLOPs per token per (s d), non-causal as in document 002: 3 x 4 = 12."""
REBLOCKING_STREAMS = 6.0
"""Hong-Kung term: 3 GEMMs per weight x 2 bytes per element, per sqrt(Z) tokens."""


def blocking_elements(chip: Chip, on_chip_fraction: float = doc002.L2_FRACTION) -> float:
    """Z: bf16 elements in ``on_chip_fraction`` of ``chip``'s on-chip memory; inf where none is sourced.

    An infinite Z drops the re-blocking term. Chapter :ref:`ch-compute-and-commute`.
    """
    chip = require_chip(chip)
    share = fraction("on_chip_fraction", on_chip_fraction)
    if share.ndim:
        raise TypeError(f"on_chip_fraction must be a single number in (0, 1], got {on_chip_fraction!r}")
    if chip.on_chip_bytes is None:
        return float("inf")
    return float(share) * chip.on_chip_bytes / doc002.BLOCK_ELEMENT_BYTES


def _reblocking_note(chip: Chip) -> str:
    if chip.on_chip_bytes is None:
        return f"re-blocking term left out: no on-chip memory size is sourced for {chip.label}"
    return f"re-blocking term with {chip.on_chip.quoted!r} of on-chip memory"


def params_per_layer(d: Number) -> Number:
    """Parameters of one GELU-MLP, multi-head layer, 12 d^2. Chapter :ref:`ch-compute-and-commute`."""
    return scalar_or_array(PARAMS_PER_LAYER_PER_D2 * positive("d", d) ** 2)


def layer_geometry(d: Number | ModelShape) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(parameters per layer, hidden size, query width n_h d_h) of a hidden size ``d`` or a dense ModelShape.

    A number d is the source documents' layer (12 d^2 parameters, query width d); a ModelShape gives
    its own per-layer attention and MLP parameters (``TransformerTable.layer_params``). Chapter
    :ref:`ch-compute-and-commute`.
    """
    if isinstance(d, ModelShape):
        table = d.table()
        return np.asarray(table.layer_params()), np.asarray(float(table.d_model)), np.asarray(float(table.q_width))
    width = positive("d", d)
    return PARAMS_PER_LAYER_PER_D2 * width * width, width, width


def _attended(d: Number | ModelShape, seq_len: Number, causal: bool | None) -> np.ndarray:
    """Keys each token attends to in a sequence of ``seq_len``: all s, or causally (s + 1) / 2. ``causal`` None:
    the record's convention, a ModelShape's own (``ModelShape.causal``), the whole matrix for a number d (the
    source documents' layer, ``doc002.CAUSAL``)."""
    if causal is None:
        causal = d.causal if isinstance(d, ModelShape) else doc002.CAUSAL
    sequence = np.asarray(positive("seq_len", seq_len), dtype=float)
    return attended_pairs(sequence, 0, causal) / sequence


def layer_flops(d: Number | ModelShape, T: Number, seq_len: Number | None = None, causal: bool | None = None) -> Number:
    """FLOPs of one layer's forward + backward for T tokens: 72 d^2 T (+ 12 s d T with ``seq_len`` = s, the whole
    score matrix; ``causal`` counts half of it, as the book's models do, see ``_attended``).

    For a ModelShape: 6 x its per-layer parameters x T (+ 12 attended n_h d_h T). Chapter
    :ref:`ch-compute-and-commute`; the XLA check and the training step call it.
    """
    params, _, query = layer_geometry(d)
    tokens = positive("T", T)
    broadcast_shape(d=params, T=tokens)
    flops = (FLOPS_PER_TOKEN_PER_D2 / PARAMS_PER_LAYER_PER_D2 * params) * tokens
    if seq_len is not None:
        flops = flops + (SCORE_FLOPS_PER_TOKEN_PER_SD * _attended(d, seq_len, causal) * query) * tokens
    return scalar_or_array(flops)


TIME_FIELDS = (
    "flops",
    "weight_hbm_bytes",
    "activation_hbm_bytes",
    "intensity",
    "time_s",
    "gemm_time_s",
    "elementwise_time_s",
)
ENERGY_PARTS = ("arithmetic_j", "hbm_weights_j", "hbm_activations_j", "static_j")
FIELDS = (*TIME_FIELDS, *ENERGY_PARTS, "energy_j")


class LayerStep:
    """One layer x one micro-batch: FLOPs, HBM bytes (B), FLOP/byte, seconds and, where the chip has them, joules.

    Fields are floats for scalar inputs and numpy arrays (the broadcast shape of the inputs)
    otherwise: ``flops``, ``weight_hbm_bytes``, ``activation_hbm_bytes``, ``intensity``, ``time_s`` =
    ``gemm_time_s`` + ``elementwise_time_s``. ``reblocking`` says whether the Hong-Kung term is in
    ``weight_hbm_bytes`` (``note`` says why not). The energy fields (``energy_j`` = ``arithmetic_j`` +
    ``hbm_weights_j`` + ``hbm_activations_j`` + ``static_j``) need the chip's energy parameters:
    reading one on a chip without them raises a ValueError naming what is missing.
    Chapter :ref:`ch-compute-and-commute`.
    """

    def __init__(self, chip: Chip, block: np.ndarray, reblocking: bool, note: str) -> None:
        self.chip, self.reblocking, self.note, self._block = chip, reblocking, note, block

    def __getattr__(self, name: str) -> Number:
        if name not in FIELDS:
            raise AttributeError(f"LayerStep has no field {name!r}; fields: {FIELDS}")
        if name not in TIME_FIELDS:
            self.chip.require(*ENERGY_FIELDS)
        return scalar_or_array(self._block[FIELDS.index(name), ...])

    def energy_shares(self) -> dict[str, Number]:
        """Each energy part over the total (fractions summing to 1)."""
        total = np.asarray(self.energy_j)
        return {name: scalar_or_array(np.asarray(getattr(self, name)) / total) for name in ENERGY_PARTS}

    @property
    def power_w(self) -> Number:
        """Average power over the step, energy / time (W)."""
        return scalar_or_array(np.asarray(self.energy_j) / np.asarray(self.time_s))

    def __repr__(self) -> str:
        return f"LayerStep(shape={np.shape(self._block[0, ...])}, chip={self.chip.label!r})"


def _fill(out: np.ndarray, factors: dict[str, np.ndarray], chip: Chip, power_cap: bool) -> None:
    """Write every field of a LayerStep into ``out`` (one row of ``out`` per field) from the per-parameter factors."""
    flops, weight_bytes, activation_bytes, intensity, time, gemm, elementwise = (out[i, ...] for i in range(7))
    params, tokens = factors["params"], factors["tokens"]
    np.multiply(params, factors["flops_per_param"], out=flops)
    np.multiply(params, factors["bytes_per_param"], out=weight_bytes)
    np.multiply(factors["act_width"], tokens, out=activation_bytes)
    np.multiply(params, factors["gemm_per_param"], out=gemm)
    np.multiply(factors["act_width_per_bandwidth"], tokens, out=elementwise)
    energy = all(getattr(chip, name) is not None for name in ENERGY_FIELDS)
    if power_cap:
        budget = chip.tdp_w - chip.static_power_w
        np.maximum(gemm, (flops * chip.flop_energy_j + weight_bytes * chip.hbm_energy_j_per_byte) / budget, out=gemm)
        np.maximum(elementwise, activation_bytes * chip.hbm_energy_j_per_byte / budget, out=elementwise)
    np.add(weight_bytes, activation_bytes, out=intensity)
    np.divide(flops, intensity, out=intensity)
    np.add(gemm, elementwise, out=time)
    if energy:
        arithmetic, hbm_weights, hbm_activations, static, total = (out[i, ...] for i in range(7, 12))
        np.multiply(flops, chip.flop_energy_j, out=arithmetic)
        np.multiply(weight_bytes, chip.hbm_energy_j_per_byte, out=hbm_weights)
        np.multiply(activation_bytes, chip.hbm_energy_j_per_byte, out=hbm_activations)
        np.multiply(time, chip.static_power_w, out=static)
        np.add(arithmetic, hbm_weights, out=total)
        total += hbm_activations
        total += static


def layer_step(
    d: Number | ModelShape,
    T: Number,
    chip: Chip,
    b_w: Number = doc002.B_W,
    a: Number = doc002.A,
    seq_len: Number | None = None,
    on_chip_fraction: float = doc002.L2_FRACTION,
    power_cap: bool = False,
    dtype: str = "bf16",
    causal: bool | None = None,
) -> LayerStep:
    """FLOPs, HBM bytes and time (s) of one layer's forward + backward on T tokens, and energy (J) where known.

    ``d`` hidden size (or a dense ModelShape: its own layer), ``T`` tokens per weight visit, ``b_w``
    weight-side bytes per parameter per visit, ``a`` activation bytes per token per unit d,
    ``seq_len`` adds attention-score FLOPs (over the whole score matrix, or its causal half: ``causal``, whose
    default is the record's convention, causal for a ModelShape), ``on_chip_fraction`` of the on-chip memory holds GEMM
    blocks. Works for every chip: time needs only peak and bandwidth (and on-chip memory for the
    re-blocking term). ``power_cap=True`` stretches each phase so that its average power stays
    within the TDP (document 002 has no cap; it needs the energy parameters). Broadcasts over d,
    T, b_w and a: give d a column and T a row for a grid.
    Document 002, section 3; chapter :ref:`ch-compute-and-commute`.
    """
    chip = require_chip(chip)
    if not isinstance(power_cap, bool):
        raise TypeError(f"power_cap must be True or False, got {power_cap!r}")
    if power_cap:
        chip.require(*ENERGY_FIELDS)
    params, width, query = layer_geometry(d)
    tokens = positive("T", T)
    bytes_w, act = non_negative("b_w", b_w), non_negative("a", a)
    shape = broadcast_shape(d=width, T=tokens, b_w=bytes_w, a=act)
    z = blocking_elements(chip, on_chip_fraction)
    # Per parameter first, on the small inputs; each field is then one product with the parameter
    # count, so a (d column) x (T row) grid costs one pass per field, all in one allocation.
    flops_per_param = (FLOPS_PER_TOKEN_PER_D2 / PARAMS_PER_LAYER_PER_D2) * tokens
    if seq_len is not None:
        scores = SCORE_FLOPS_PER_TOKEN_PER_SD * _attended(d, seq_len, causal) * query * tokens
        flops_per_param = flops_per_param + scores / params
        shape = np.broadcast_shapes(shape, np.shape(flops_per_param))
    bytes_per_param = bytes_w + REBLOCKING_STREAMS / np.sqrt(z) * tokens
    act_width = act * width
    factors = {
        "params": params,
        "tokens": tokens,
        "flops_per_param": flops_per_param,
        "bytes_per_param": bytes_per_param,
        "act_width": act_width,
        "gemm_per_param": roofline_bound_s(flops_per_param, bytes_per_param, chip, dtype),
        "act_width_per_bandwidth": act_width * (1.0 / chip.hbm_bytes_per_s),
    }
    block = fill_in_bands(_fill, new_block((len(FIELDS), *shape)), factors, chip, power_cap)
    return LayerStep(chip, block, bool(np.isfinite(z)), _reblocking_note(chip))


def t_min(
    d: Number | ModelShape,
    chip: Chip,
    b_w: Number = doc002.B_W,
    a: Number = doc002.A,
    on_chip_fraction: float = doc002.L2_FRACTION,
    dtype: str = "bf16",
) -> Number:
    """Fewest tokens per weight visit whose HBM intensity reaches the ridge point; inf where none does.

    T_min = 12 b_w d I* / (72 d - a_eff I*), a_eff = a + 72 d / sqrt(Z): intensity
    F / (Q_W + Q_A) >= I* solved for T (attention-score FLOPs left out, as in the document). For a
    ModelShape with P_L parameters per layer, 12 d becomes c = P_L / d. Without a sourced on-chip
    memory, Z is infinite and a_eff = a. Works for every chip.
    Document 002, section 3; chapter :ref:`ch-compute-and-commute`.
    """
    chip = require_chip(chip)
    params, width, _ = layer_geometry(d)
    bytes_w, act = non_negative("b_w", b_w), non_negative("a", a)
    broadcast_shape(d=width, b_w=bytes_w, a=act)
    beta, z = ridge_point(chip, dtype), blocking_elements(chip, on_chip_fraction)
    per_width = params / width  # 12 d for the source documents' layer
    flops_per_width = FLOPS_PER_TOKEN_PER_D2 / PARAMS_PER_LAYER_PER_D2 * per_width
    denominator = flops_per_width - (act + flops_per_width / np.sqrt(z)) * beta
    safe = np.where(denominator > 0, denominator, 1.0)
    tokens = np.where(denominator > 0, bytes_w * per_width * beta / safe, np.inf)
    return scalar_or_array(tokens)


def _headroom(chip: Chip, on_chip_fraction: float, dtype: str) -> float:
    """1 - I* / sqrt(Z): the share of the step's intensity the re-blocking term leaves."""
    return 1.0 - ridge_point(chip, dtype) / np.sqrt(blocking_elements(chip, on_chip_fraction))


def d_min(
    chip: Chip, a: Number = doc002.A, on_chip_fraction: float = doc002.L2_FRACTION, dtype: str = "bf16"
) -> Number:
    """Hidden size below which no T reaches the ridge point: a I* / (72 (1 - I* / sqrt(Z))); inf if none.

    Document 002, section 3; chapter :ref:`ch-compute-and-commute`.
    """
    chip = require_chip(chip)
    act = non_negative("a", a)
    headroom = _headroom(chip, on_chip_fraction, dtype)
    if headroom <= 0:
        return scalar_or_array(np.full(act.shape, np.inf))
    return scalar_or_array(act * ridge_point(chip, dtype) / (FLOPS_PER_TOKEN_PER_D2 * headroom))


def t_min_large_d(
    chip: Chip,
    b_w: Number = doc002.B_W,
    on_chip_fraction: float = doc002.L2_FRACTION,
    include_reblocking: bool = True,
    dtype: str = "bf16",
) -> Number:
    """Limit of T_min as d grows: b_w I* / (6 (1 - I* / sqrt(Z))), or b_w I* / 6 without the re-blocking term.

    Document 002's Table 2 prints b_w I* / 6 = 2 I* (at b_w = 12) as "T_min(inf d)"; with its own
    re-blocking term the limit is larger. Chapter :ref:`ch-compute-and-commute`.
    """
    chip = require_chip(chip)
    if not isinstance(include_reblocking, bool):
        raise TypeError(f"include_reblocking must be True or False, got {include_reblocking!r}")
    bytes_w = non_negative("b_w", b_w)
    headroom = _headroom(chip, on_chip_fraction, dtype) if include_reblocking else 1.0
    if headroom <= 0:
        return scalar_or_array(np.full(bytes_w.shape, np.inf))
    per_param = FLOPS_PER_TOKEN_PER_D2 / PARAMS_PER_LAYER_PER_D2
    return scalar_or_array(bytes_w * ridge_point(chip, dtype) / (per_param * headroom))


def elementwise_time_ratio(d: Number, chip: Chip, a: Number = doc002.A, dtype: str = "bf16") -> Number:
    """Element-wise time over GEMM time when the GEMMs are compute-bound: a I* / (72 d).

    Document 002's Table 4; a ratio, not a share of the step. Chapter :ref:`ch-elementwise-tax`.
    """
    width, act = positive("d", d), non_negative("a", a)
    broadcast_shape(d=width, a=act)
    return scalar_or_array(act * ridge_point(chip, dtype) / (FLOPS_PER_TOKEN_PER_D2 * width))


def elementwise_time_share(d: Number, chip: Chip, a: Number = doc002.A, dtype: str = "bf16") -> Number:
    """Share of the step's time in the element-wise phase: r / (1 + r), r = ``elementwise_time_ratio``.

    Chapter :ref:`ch-elementwise-tax`.
    """
    ratio = np.asarray(elementwise_time_ratio(d, chip, a, dtype))
    return scalar_or_array(ratio / (1.0 + ratio))


def activation_energy_ratio(d: Number, chip: Chip, a: Number = doc002.A) -> Number:
    """HBM activation energy over arithmetic energy: a e_hbm / (72 d e_flop); needs energy parameters.

    Document 002's Table 4 (printed as a percentage). Chapter :ref:`ch-elementwise-tax`.
    """
    chip = require_chip(chip).require("hbm_energy", "flop_energy")
    width, act = positive("d", d), non_negative("a", a)
    broadcast_shape(d=width, a=act)
    return scalar_or_array(act * chip.hbm_energy_j_per_byte / (FLOPS_PER_TOKEN_PER_D2 * width * chip.flop_energy_j))
