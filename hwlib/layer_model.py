"""The compute-to-commute model of one transformer layer's training step, vectorised over d and T.

One layer of hidden size d holds P = 12 d^2 parameters (4 d^2 attention projections, 8 d^2
for an MLP with 4 d hidden units; Kaplan et al., "Scaling laws for neural language
models", 2020, section 2.1). One micro-batch of T tokens that visits the weights once costs

* FLOPs F = 72 d^2 T: forward 2 P T = 24 d^2 T, backward twice that (input and weight
  gradients), plus 12 s d T for attention scores over a sequence of s tokens when ``seq_len``
  is given (forward 4 s d, backward ~8 s d with recomputation);
* weight-side HBM bytes B_W = P (b_w + 6 T / sqrt(Z)): b_w bytes per parameter per visit
  (bf16 weights read forward 2 + backward 2, fp32 gradient read-modify-write 8), plus the
  re-blocking term of Hong and Kung ("I/O complexity: the red-blue pebble game", STOC 1981):
  a GEMM of M N K multiply-adds with an on-chip memory of Z elements moves at least
  M N K / sqrt(Z) elements, here three GEMMs per weight of 2-byte elements, with Z the bf16
  elements in ``l2_fraction`` of the L2;
* inter-kernel activation bytes B_A = a d T (a bytes per token per unit d through HBM between
  fused kernels);
* time: a GEMM phase max(F / peak, B_W / bandwidth) plus a memory-bound element-wise phase
  B_A / bandwidth;
* energy: F e_flop + B_W e_hbm + B_A e_hbm + p_static x time.

Setting the intensity F / (B_W + B_A) equal to the time balance beta gives the fewest
tokens per weight visit that leave the HBM wall, T_min = 12 b_w d beta / (72 d - a_eff beta)
with a_eff = a + 72 d / sqrt(Z), and the smallest hidden size for which any T does,
d_min = a beta / (72 (1 - beta / sqrt(Z))).

All of it, with the defaults b_w = 12, a = 200, l2_fraction = 0.5, is document 002
(``002_501c62d3c87c2a8c.txt``, section 3: ``layer_step``, ``T_min``, ``d_min``; section 4:
Tables 2-5), re-derived here. Per-step costs (optimizer update, gradient all-reduce) follow
its ``worked_example``: b_opt = 30 bytes/param of HBM traffic for an Adam update with fp32
master weights (Rajbhandari et al., "ZeRO", SC 2020, section 3.1, for the state layout),
b_ar = 4 bytes/param over the data-parallel fabric for a ring all-reduce of bf16 gradients
(2 (N-1)/N x 2 bytes per direction; Patarasuk and Yuan, JPDC 69(2), 2009).

Explained in the chapters "The training step as compute and commute"
(book/compute_and_commute.md), "The element-wise tax and where the joules go"
(book/elementwise_tax.md) and "A 7B model, regime by regime" (book/seven_b_regimes.md).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from types import MappingProxyType

import numpy as np

from hwlib._checks import Number, broadcast, fraction, non_negative, one_of, positive, scalar_or_array
from hwlib.energy import require_energy
from hwlib.hardware import READ_ON, Chip, Sourced, require_chip

DOC002 = "002_501c62d3c87c2a8c.txt (section 3, traffic constants)"

TRAFFIC_CONSTANTS = MappingProxyType({
    "b_w": Sourced(12.0, "B/param per micro-batch", DOC002, READ_ON, "B_W_DEFAULT = 12",
                   "bf16 weights read forward 2 + backward 2, fp32 gradient read-modify-write 8"),
    "a": Sourced(200.0, "B/token/layer per unit d", DOC002, READ_ON, "A_DEFAULT = 200",
                 "inter-kernel activation traffic of a fused FlashAttention layer, counted in the "
                 "document's report (not included)"),
    "b_opt": Sourced(30.0, "B/param per step", DOC002, READ_ON, "B_OPT_DEFAULT = 30",
                     "Adam update: fp32 master + m + v read and written, bf16 copy written"),
    "b_ar": Sourced(4.0, "B/param per step", DOC002, READ_ON, "B_AR_DEFAULT = 4",
                    "ring all-reduce of bf16 gradients: 2 x 2 bytes per parameter per direction"),
})
"""Document 002's traffic constants, each with its unit and meaning."""

B_W = TRAFFIC_CONSTANTS["b_w"].value
A = TRAFFIC_CONSTANTS["a"].value
B_OPT = TRAFFIC_CONSTANTS["b_opt"].value
B_AR = TRAFFIC_CONSTANTS["b_ar"].value
L2_FRACTION = 0.5
"""Share of the L2 that holds a GEMM's blocks (document 002's default ``l2_frac``)."""

BYTES_PER_L2_ELEMENT = 2.0
"""L2 blocks hold bf16 elements (document 002: ``Z = l2_frac * l2 / 2``)."""

# --- fabrics ----------------------------------------------------------------------------

_DOC002_GPUS = "002_501c62d3c87c2a8c.txt (GPUS: 'fabric: per-direction B/s for NVLink and one IB NIC')"
_UNVERIFIED = "Not verified against a stored copy of the vendor page."

FABRICS = ("nvlink", "ib")
"""Data-parallel fabrics the per-step model knows: NVLink within a node, one InfiniBand NIC per GPU."""

FABRIC_BANDWIDTH = MappingProxyType({
    ("a100-80gb", "nvlink"): Sourced(300e9, "B/s", _DOC002_GPUS, READ_ON, "nvlink=300e9",
                                     "per direction: half of NVIDIA's 600 GB/s bidirectional total "
                                     "(hw.chip('A100-80GB').interconnect)"),
    ("a100-80gb", "ib"): Sourced(25e9, "B/s", _DOC002_GPUS, READ_ON, "ib=25e9",
                                 f"one HDR InfiniBand NIC, 200 Gb/s per direction. {_UNVERIFIED}"),
    ("a100-40gb", "nvlink"): Sourced(300e9, "B/s", _DOC002_GPUS, READ_ON, "nvlink=300e9",
                                     "per direction: half of NVIDIA's 600 GB/s bidirectional total"),
    ("a100-40gb", "ib"): Sourced(25e9, "B/s", _DOC002_GPUS, READ_ON, "ib=25e9",
                                 f"one HDR InfiniBand NIC, 200 Gb/s per direction. {_UNVERIFIED}"),
    ("h100-sxm", "nvlink"): Sourced(450e9, "B/s", _DOC002_GPUS, READ_ON, "nvlink=450e9",
                                    "per direction: half of NVIDIA's 900 GB/s bidirectional total"),
    ("h100-sxm", "ib"): Sourced(50e9, "B/s", _DOC002_GPUS, READ_ON, "ib=50e9",
                                f"one NDR InfiniBand NIC, 400 Gb/s per direction. {_UNVERIFIED}"),
    ("b200", "nvlink"): Sourced(900e9, "B/s", _DOC002_GPUS, READ_ON, "nvlink=900e9",
                                "per direction: half of NVIDIA's 1.8 TB/s bidirectional total"),
    ("b200", "ib"): Sourced(50e9, "B/s", _DOC002_GPUS, READ_ON, "ib=50e9",
                            f"one NDR InfiniBand NIC, 400 Gb/s per direction. {_UNVERIFIED}"),
})
"""Per-direction data-parallel fabric bandwidth per GPU as document 002 gives it (B/s).

The NVLink values are half the vendor's bidirectional totals stored as each vendor chip's
``interconnect``; a later chapter's fabric catalogue supersedes this small table."""


def fabric_bytes_per_s(chip: Chip, fabric: str) -> float:
    """Per-direction bandwidth (B/s) per GPU of ``fabric`` ("nvlink" or "ib") for ``chip``, from document 002.

    Chapter "A 7B model, regime by regime".
    """
    chip = require_chip(chip)
    one_of("fabric", fabric, FABRICS)
    if (chip.key, fabric) not in FABRIC_BANDWIDTH:
        known = sorted({key for key, _ in FABRIC_BANDWIDTH})
        raise KeyError(f"no {fabric} bandwidth stored for chip {chip.label}; known chips: {known}")
    return float(FABRIC_BANDWIDTH[(chip.key, fabric)].value)


# --- the layer model --------------------------------------------------------------------


def _chip(chip: object) -> Chip:
    chip = require_energy(chip)
    if chip.l2 is None:
        raise ValueError(f"chip {chip.label} has no l2: the re-blocking term needs the L2 size")
    return chip


def l2_elements(chip: Chip, l2_fraction: float = L2_FRACTION) -> float:
    """Z: bf16 elements that fit in ``l2_fraction`` of ``chip``'s L2 (the Hong-Kung block size).

    Chapter "The training step as compute and commute".
    """
    if require_chip(chip).l2 is None:
        raise ValueError(f"chip {chip.label} has no l2 size: the re-blocking term needs it")
    share = fraction("l2_fraction", l2_fraction)
    if share.ndim:
        raise TypeError(f"l2_fraction must be a single number in (0, 1], got {l2_fraction!r}")
    return float(share) * chip.l2.value / BYTES_PER_L2_ELEMENT


def params_per_layer(d: Number) -> Number:
    """Parameters of one transformer layer, 12 d^2 (4 d^2 attention + 8 d^2 MLP; Kaplan et al. 2020, 2.1).

    Chapter "The training step as compute and commute".
    """
    return scalar_or_array(12.0 * positive("d", d) ** 2)


def layer_flops(d: Number, T: Number, seq_len: Number | None = None) -> Number:
    """FLOPs of one layer's forward + backward for T tokens: 72 d^2 T (+ 12 s d T with ``seq_len`` = s).

    The 72 counts forward 24 d^2 T and backward 48 d^2 T (weight and input gradients).
    Chapter "The training step as compute and commute".
    """
    width, tokens = broadcast(d=positive("d", d), T=positive("T", T))
    flops = 72.0 * width**2 * tokens
    if seq_len is not None:
        flops = flops + 12.0 * positive("seq_len", seq_len) * width * tokens
    return scalar_or_array(flops)


@dataclass(frozen=True)
class LayerStep:
    """One layer x one micro-batch: FLOPs, HBM bytes (B), FLOP/byte, seconds and joules.

    Fields are floats for scalar inputs and numpy arrays (the broadcast shape of d and T)
    otherwise. ``energy_j`` = ``arithmetic_j`` + ``hbm_weights_j`` + ``hbm_activations_j`` +
    ``static_j``; ``time_s`` = ``gemm_time_s`` + ``elementwise_time_s``.
    Chapter "The training step as compute and commute".
    """

    flops: Number
    weight_bytes: Number
    activation_bytes: Number
    intensity: Number
    time_s: Number
    gemm_time_s: Number
    elementwise_time_s: Number
    energy_j: Number
    arithmetic_j: Number
    hbm_weights_j: Number
    hbm_activations_j: Number
    static_j: Number

    ENERGY_PARTS = ("arithmetic_j", "hbm_weights_j", "hbm_activations_j", "static_j")

    def energy_shares(self) -> dict[str, Number]:
        """Each energy part over the total (fractions summing to 1)."""
        return {name: scalar_or_array(np.asarray(getattr(self, name)) / np.asarray(self.energy_j))
                for name in self.ENERGY_PARTS}

    @property
    def power_w(self) -> Number:
        """Average power over the step, energy / time (W)."""
        return scalar_or_array(np.asarray(self.energy_j) / np.asarray(self.time_s))


def _weight_bytes(width: np.ndarray, tokens: np.ndarray, b_w: np.ndarray, z: float) -> np.ndarray:
    return 12.0 * width**2 * (b_w + 6.0 * tokens / np.sqrt(z))


def layer_step(
    d: Number,
    T: Number,
    chip: Chip,
    b_w: Number = B_W,
    a: Number = A,
    seq_len: Number | None = None,
    l2_fraction: float = L2_FRACTION,
    power_cap: bool = False,
    dtype: str = "bf16",
) -> LayerStep:
    """FLOPs, HBM bytes, time (s) and energy (J) of one layer's forward + backward on T tokens.

    ``d`` hidden size, ``T`` tokens per weight visit (micro-batch x sequence length), ``b_w``
    weight-side bytes per parameter per visit, ``a`` activation bytes per token per unit d,
    ``seq_len`` adds attention-score FLOPs, ``l2_fraction`` of the L2 holds GEMM blocks.
    ``power_cap=True`` stretches each phase so that its average power stays within the
    chip's TDP (document 002 has no cap). Broadcasts over d, T, b_w and a.
    Document 002, section 3 (``layer_step``); chapter "The training step as compute and commute".
    """
    chip = _chip(chip)
    if not isinstance(power_cap, bool):
        raise TypeError(f"power_cap must be True or False, got {power_cap!r}")
    width, tokens, bytes_w, act = broadcast(
        d=positive("d", d), T=positive("T", T), b_w=non_negative("b_w", b_w), a=non_negative("a", a)
    )
    z = float(l2_elements(chip, l2_fraction))
    flops = np.asarray(layer_flops(width, tokens, seq_len), dtype=float)
    weight_bytes = _weight_bytes(width, tokens, bytes_w, z)
    activation_bytes = act * width * tokens
    peak, bandwidth = chip.peak(dtype), chip.hbm_bytes_per_s
    e_flop, e_hbm, p_static = chip.flop_energy.value, chip.hbm_energy.value, chip.static_power.value
    arithmetic = flops * e_flop
    hbm_weights = weight_bytes * e_hbm
    hbm_activations = activation_bytes * e_hbm
    gemm = np.maximum(flops / peak, weight_bytes / bandwidth)
    elementwise = activation_bytes / bandwidth
    if power_cap:
        dynamic_budget = chip.tdp.value - p_static
        gemm = np.maximum(gemm, (arithmetic + hbm_weights) / dynamic_budget)
        elementwise = np.maximum(elementwise, hbm_activations / dynamic_budget)
    time = gemm + elementwise
    static = p_static * time
    values = {
        "flops": flops, "weight_bytes": weight_bytes, "activation_bytes": activation_bytes,
        "intensity": flops / (weight_bytes + activation_bytes), "time_s": time, "gemm_time_s": gemm,
        "elementwise_time_s": elementwise, "energy_j": arithmetic + hbm_weights + hbm_activations + static,
        "arithmetic_j": arithmetic, "hbm_weights_j": hbm_weights, "hbm_activations_j": hbm_activations,
        "static_j": static,
    }
    return LayerStep(**{name: scalar_or_array(value) for name, value in values.items()})


def layer_intensity(d: Number, T: Number, chip: Chip, b_w: Number = B_W, a: Number = A,
                    l2_fraction: float = L2_FRACTION) -> Number:
    """HBM intensity F / (B_W + B_A) of one layer's training step (FLOP/byte); see ``layer_step``.

    Chapter "The training step as compute and commute".
    """
    return layer_step(d, T, chip, b_w=b_w, a=a, l2_fraction=l2_fraction).intensity


def _beta(chip: Chip, dtype: str) -> float:
    return chip.peak(dtype) / chip.hbm_bytes_per_s


def t_min(d: Number, chip: Chip, b_w: Number = B_W, a: Number = A, l2_fraction: float = L2_FRACTION,
          dtype: str = "bf16") -> Number:
    """Fewest tokens per weight visit whose HBM intensity reaches the time balance; inf where none does.

    T_min = 12 b_w d beta / (72 d - a_eff beta), a_eff = a + 72 d / sqrt(Z): intensity
    F / (B_W + B_A) >= beta solved for T (attention-score FLOPs left out, as in the document).
    Document 002, section 3 (``T_min``); chapter "The training step as compute and commute".
    """
    chip = _chip(chip)
    width, bytes_w, act = broadcast(d=positive("d", d), b_w=non_negative("b_w", b_w), a=non_negative("a", a))
    beta, z = _beta(chip, dtype), float(l2_elements(chip, l2_fraction))
    denominator = 72.0 * width - (act + 72.0 * width / np.sqrt(z)) * beta
    with np.errstate(divide="ignore"):
        tokens = np.where(denominator > 0, 12.0 * bytes_w * width * beta / np.where(denominator > 0, denominator, 1.0),
                          np.inf)
    return scalar_or_array(tokens)


def d_min(chip: Chip, a: Number = A, l2_fraction: float = L2_FRACTION, dtype: str = "bf16") -> Number:
    """Hidden size below which no T reaches the time balance: a beta / (72 (1 - beta / sqrt(Z))); inf if none.

    At this d the activation and re-blocking traffic alone already hold the intensity at beta.
    Document 002, section 3 (``d_min``); chapter "The training step as compute and commute".
    """
    chip = _chip(chip)
    act = non_negative("a", a)
    beta, z = _beta(chip, dtype), float(l2_elements(chip, l2_fraction))
    headroom = 1.0 - beta / np.sqrt(z)
    return scalar_or_array(np.where(headroom > 0, act * beta / (72.0 * max(headroom, 1e-300)), np.inf))


def t_min_large_d(chip: Chip, b_w: Number = B_W, l2_fraction: float = L2_FRACTION, include_l2: bool = True,
                  dtype: str = "bf16") -> Number:
    """Limit of T_min as d grows: b_w beta / (6 (1 - beta / sqrt(Z))), or b_w beta / 6 without the L2 term.

    Document 002's Table 2 prints b_w beta / 6 = 2 beta (at b_w = 12) as "T_min(inf d)"; with
    its own re-blocking term the limit is larger (``include_l2=True``, the model's true limit).
    Chapter "The training step as compute and commute".
    """
    chip = _chip(chip)
    if not isinstance(include_l2, bool):
        raise TypeError(f"include_l2 must be True or False, got {include_l2!r}")
    bytes_w = non_negative("b_w", b_w)
    beta, z = _beta(chip, dtype), float(l2_elements(chip, l2_fraction))
    headroom = 1.0 - beta / np.sqrt(z) if include_l2 else 1.0
    return scalar_or_array(np.where(headroom > 0, bytes_w * beta / (6.0 * max(headroom, 1e-300)), np.inf))


# --- the element-wise tax ---------------------------------------------------------------


def elementwise_time_ratio(d: Number, chip: Chip, a: Number = A, dtype: str = "bf16") -> Number:
    """Element-wise time over GEMM time when the GEMMs are compute-bound: a beta / (72 d).

    Document 002's Table 4 (``table_elementwise_tax``); a ratio, not a share of the step.
    Chapter "The element-wise tax and where the joules go".
    """
    chip = _chip(chip)
    width, act = broadcast(d=positive("d", d), a=non_negative("a", a))
    return scalar_or_array(act * _beta(chip, dtype) / (72.0 * width))


def elementwise_time_share(d: Number, chip: Chip, a: Number = A, dtype: str = "bf16") -> Number:
    """Share of the step's time spent in the element-wise phase: r / (1 + r), r = ``elementwise_time_ratio``.

    Chapter "The element-wise tax and where the joules go".
    """
    ratio = np.asarray(elementwise_time_ratio(d, chip, a, dtype))
    return scalar_or_array(ratio / (1.0 + ratio))


def activation_energy_ratio(d: Number, chip: Chip, a: Number = A) -> Number:
    """HBM activation energy over arithmetic energy: a e_hbm / (72 d e_flop) = a beta_E / (72 d).

    Document 002's Table 4 (printed as a percentage). Chapter "The element-wise tax and where the joules go".
    """
    chip = _chip(chip)
    width, act = broadcast(d=positive("d", d), a=non_negative("a", a))
    return scalar_or_array(act * chip.hbm_energy.value / (72.0 * width * chip.flop_energy.value))


# --- the whole model, per step ----------------------------------------------------------


def transformer_params(d: Number, n_layers: Number, vocab: Number = 0) -> Number:
    """Parameters of a transformer: 12 d^2 L + 2 V d (untied input and output embeddings; Kaplan et al. 2020).

    Document 002's Table 5 uses V = 50000; its Table 6 uses V = 0. Chapter "A 7B model, regime by regime".
    """
    width, layers, words = broadcast(d=positive("d", d), n_layers=positive("n_layers", n_layers, integral=True),
                                     vocab=non_negative("vocab", vocab, integral=True))
    return scalar_or_array(12.0 * width**2 * layers + 2.0 * words * width)


def optimizer_bytes(n_params: Number, n_devices: Number = 1, b_opt: Number = B_OPT) -> Number:
    """HBM bytes per device of one optimizer update sharded over ``n_devices``: b_opt P / N.

    Chapter "A 7B model, regime by regime".
    """
    params, devices, size = broadcast(n_params=positive("n_params", n_params),
                                      n_devices=positive("n_devices", n_devices, integral=True),
                                      b_opt=non_negative("b_opt", b_opt))
    return scalar_or_array(size * params / devices)


def allreduce_time_s(n_params: Number, n_devices: Number, fabric_bytes_per_s: Number, b_ar: Number = B_AR) -> Number:
    """Seconds of a ring all-reduce of the gradients: b_ar P (N - 1) / N / fabric bandwidth (0 for N = 1).

    ``fabric_bytes_per_s`` is per direction per device (``fabric_bytes_per_s(chip, fabric)``).
    Chapter "A 7B model, regime by regime".
    """
    params, devices, bandwidth, size = broadcast(
        n_params=positive("n_params", n_params), n_devices=positive("n_devices", n_devices, integral=True),
        fabric_bytes_per_s=positive("fabric_bytes_per_s", fabric_bytes_per_s), b_ar=non_negative("b_ar", b_ar))
    return scalar_or_array(size * params * (devices - 1.0) / devices / bandwidth)


@dataclass(frozen=True)
class TrainingStep:
    """One optimizer step on one device: its tokens, seconds, joules and their parts.

    ``time_s`` = ``layers_time_s`` + ``optimizer_time_s`` + ``allreduce_time_s``; ``energy_j`` =
    ``arithmetic_j`` + ``hbm_j`` + ``static_j``. ``slowdown`` = ``time_s`` / (FLOPs / peak).
    Chapter "A 7B model, regime by regime".
    """

    tokens: Number
    flops: Number
    hbm_bytes: Number
    intensity: Number
    time_s: Number
    layers_time_s: Number
    optimizer_time_s: Number
    allreduce_time_s: Number
    ideal_time_s: Number
    slowdown: Number
    energy_j: Number
    arithmetic_j: Number
    hbm_j: Number
    static_j: Number

    @property
    def time_per_token_s(self) -> Number:
        return scalar_or_array(np.asarray(self.time_s) / np.asarray(self.tokens))

    @property
    def energy_per_token_j(self) -> Number:
        return scalar_or_array(np.asarray(self.energy_j) / np.asarray(self.tokens))

    @property
    def power_w(self) -> Number:
        """Average power over the step, energy / time (W)."""
        return scalar_or_array(np.asarray(self.energy_j) / np.asarray(self.time_s))

    def energy_shares(self) -> dict[str, Number]:
        """Arithmetic, HBM and static energy over the total."""
        return {name: scalar_or_array(np.asarray(getattr(self, name)) / np.asarray(self.energy_j))
                for name in ("arithmetic_j", "hbm_j", "static_j")}


def training_step(
    d: Number,
    T: Number,
    chip: Chip,
    n_layers: Number,
    *,
    micro_batches: Number = 1,
    n_devices: Number = 1,
    fabric_bytes_per_s: Number | None = None,
    n_params: Number | None = None,
    seq_len: Number | None = None,
    b_w: Number = B_W,
    a: Number = A,
    b_opt: Number = B_OPT,
    b_ar: Number = B_AR,
    l2_fraction: float = L2_FRACTION,
    power_cap: bool = False,
) -> TrainingStep:
    """One data-parallel training step per device: ``micro_batches`` visits of ``n_layers`` layers on T tokens each,
    then a sharded optimizer update (b_opt P / N bytes at HBM) and a gradient all-reduce over the fabric,
    not overlapped with compute.

    ``n_params`` defaults to 12 d^2 L; ``fabric_bytes_per_s`` is needed where ``n_devices`` > 1.
    Static power runs for the whole step. Broadcasts over every numeric argument.
    Document 002, Table 5 (``worked_example``); chapter "A 7B model, regime by regime".
    """
    chip = _chip(chip)
    layers = positive("n_layers", n_layers, integral=True)
    visits = positive("micro_batches", micro_batches, integral=True)
    devices = positive("n_devices", n_devices, integral=True)
    params = transformer_params(d, layers) if n_params is None else positive("n_params", n_params)
    if fabric_bytes_per_s is None:
        if np.any(devices > 1):
            raise ValueError("fabric_bytes_per_s is needed when n_devices > 1, e.g. hw.fabric_bytes_per_s(chip, 'ib')")
        fabric_bytes_per_s = 1.0
    layer = layer_step(d, T, chip, b_w=b_w, a=a, seq_len=seq_len, l2_fraction=l2_fraction, power_cap=power_cap)
    repeat = layers * visits
    opt_bytes = np.asarray(optimizer_bytes(params, devices, b_opt))
    opt_time = opt_bytes / chip.hbm_bytes_per_s
    ar_time = np.asarray(allreduce_time_s(params, devices, fabric_bytes_per_s, b_ar))
    layers_time = np.asarray(layer.time_s) * repeat
    time = layers_time + opt_time + ar_time
    flops = np.asarray(layer.flops) * repeat
    hbm_bytes = (np.asarray(layer.weight_bytes) + np.asarray(layer.activation_bytes)) * repeat + opt_bytes
    arithmetic = np.asarray(layer.arithmetic_j) * repeat
    hbm = (np.asarray(layer.hbm_weights_j) + np.asarray(layer.hbm_activations_j)) * repeat \
        + opt_bytes * chip.hbm_energy.value
    static = chip.static_power.value * time
    ideal = flops / chip.peak("bf16")
    tokens = np.asarray(positive("T", T)) * visits
    values = {
        "tokens": tokens, "flops": flops, "hbm_bytes": hbm_bytes, "intensity": flops / hbm_bytes,
        "time_s": time, "layers_time_s": layers_time, "optimizer_time_s": opt_time, "allreduce_time_s": ar_time,
        "ideal_time_s": ideal, "slowdown": time / ideal, "energy_j": arithmetic + hbm + static,
        "arithmetic_j": arithmetic, "hbm_j": hbm, "static_j": static,
    }
    shape = np.broadcast_shapes(*(np.shape(v) for v in values.values()))
    return TrainingStep(**{name: scalar_or_array(np.broadcast_to(v, shape)) for name, v in values.items()})


LAYER_STEP_FIELDS = tuple(f.name for f in fields(LayerStep))


# --- the document's tables, computed ----------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """One row of document 002's Table 5: T tokens per micro-batch, micro-batches per step, devices, fabric.

    Chapter "A 7B model, regime by regime".
    """

    name: str
    tokens: int
    micro_batches: int
    n_devices: int
    fabric: str | None = None


DOC002_SCENARIOS = (
    Scenario("online, 1 token/step, 1 GPU", 1, 1, 1),
    Scenario("1 sequence (2048 tok)/step, 1 GPU", 2048, 1, 1),
    Scenario("1 seq/GPU, 8 GPUs NVLink (DP)", 2048, 1, 8, "nvlink"),
    Scenario("1 seq/GPU, 64 GPUs over IB (DP)", 2048, 1, 64, "ib"),
    Scenario("8 seq/GPU (grad-accum), 64 GPUs IB", 2048, 8, 64, "ib"),
    Scenario("64 seq/GPU (grad-accum), 64 GPUs IB", 2048, 64, 64, "ib"),
)
"""The six regimes of document 002's Table 5 (``worked_example``)."""

DOC002_MODEL = MappingProxyType({"d": 4096, "n_layers": 32, "seq_len": 2048, "vocab": 50000})
"""Document 002's 7B-class model: hidden size, layers, sequence length, vocabulary ("rough")."""


def balance_table(chips: tuple[Chip, ...] | list[Chip], b_w: float = B_W, a: float = A,
                  l2_fraction: float = L2_FRACTION) -> "pd.DataFrame":  # noqa: F821
    """Document 002's Table 2 plus the true large-d limit of T_min: one row per chip.

    Columns: peak (TFLOP/s), HBM (TB/s), time and energy balance (FLOP/byte), d_min, the
    document's "T_min(inf d) = 2 beta" (b_w beta / 6) and the limit with the L2 term.
    Chapter "The training step as compute and commute".
    """
    import pandas as pd

    from hwlib.energy import machine_balance

    rows = []
    for record in chips:
        balance = machine_balance(record)
        rows.append({
            "chip": record.label, "peak (TFLOP/s)": record.peak("bf16") / 1e12,
            "HBM (TB/s)": record.hbm_bytes_per_s / 1e12, "time balance (FLOP/B)": balance.time,
            "energy balance (FLOP/B)": balance.energy, "d_min": d_min(record, a=a, l2_fraction=l2_fraction),
            'document: "T_min(inf d) = 2 beta"': t_min_large_d(record, b_w=b_w, include_l2=False),
            "large-d limit of T_min": t_min_large_d(record, b_w=b_w, l2_fraction=l2_fraction),
        })
    return pd.DataFrame(rows).set_index("chip")


def t_min_table(ds: Number, chips: tuple[Chip, ...] | list[Chip], b_w: float = B_W, a: float = A,
                l2_fraction: float = L2_FRACTION) -> "pd.DataFrame":  # noqa: F821
    """Document 002's Table 3: T_min (tokens per weight visit) for each d (rows) and chip (columns); inf = never.

    Chapter "The training step as compute and commute".
    """
    import pandas as pd

    widths = np.atleast_1d(positive("ds", ds))
    return pd.DataFrame({record.label: t_min(widths, record, b_w=b_w, a=a, l2_fraction=l2_fraction)
                         for record in chips}, index=pd.Index(widths.astype(int), name="d"))


def elementwise_tax_table(ds: Number, chips: tuple[Chip, ...] | list[Chip], a: float = A) -> "pd.DataFrame":  # noqa: F821
    """Document 002's Table 4 with the share beside the ratio: per d (rows), for each chip, element-wise time over
    GEMM time, the element-wise share of step time, and HBM-activation over arithmetic energy (%).

    Chapter "The element-wise tax and where the joules go".
    """
    import pandas as pd

    widths = np.atleast_1d(positive("ds", ds))
    columns = {}
    for record in chips:
        columns[(record.label, "time ratio")] = elementwise_time_ratio(widths, record, a=a)
        columns[(record.label, "time share (%)")] = 100 * np.asarray(elementwise_time_share(widths, record, a=a))
        columns[(record.label, "energy ratio (%)")] = 100 * np.asarray(activation_energy_ratio(widths, record, a=a))
    return pd.DataFrame(columns, index=pd.Index(widths.astype(int), name="d"))


def regime_steps(chip: Chip, scenarios: tuple[Scenario, ...] = DOC002_SCENARIOS, *, d: int = 4096,
                 n_layers: int = 32, seq_len: int = 2048, vocab: int = 50000, **options: object) -> TrainingStep:
    """The training steps of ``scenarios`` on ``chip`` in one vectorised call (arrays in scenario order).

    Parameters count embeddings (``vocab``) as document 002's Table 5 does; ``options`` go to
    ``training_step`` (b_w, a, b_opt, b_ar, l2_fraction, power_cap).
    Chapter "A 7B model, regime by regime".
    """
    chip = _chip(chip)
    if not scenarios or not all(isinstance(s, Scenario) for s in scenarios):
        raise TypeError(f"scenarios must be a non-empty sequence of Scenario records, got {scenarios!r}")
    bandwidth = np.array([1.0 if s.fabric is None else fabric_bytes_per_s(chip, s.fabric) for s in scenarios])
    return training_step(
        d, np.array([s.tokens for s in scenarios]), chip, n_layers,
        micro_batches=np.array([s.micro_batches for s in scenarios]),
        n_devices=np.array([s.n_devices for s in scenarios]), fabric_bytes_per_s=bandwidth,
        n_params=transformer_params(d, n_layers, vocab), seq_len=seq_len, **options)


def regime_table(chip: Chip, scenarios: tuple[Scenario, ...] = DOC002_SCENARIOS, *, d: int = 4096,
                 n_layers: int = 32, seq_len: int = 2048, vocab: int = 50000, **options: object) -> "pd.DataFrame":  # noqa: F821
    """Document 002's Table 5: per-token time and energy of each scenario on ``chip`` (see ``regime_steps``).

    Chapter "A 7B model, regime by regime".
    """
    import pandas as pd

    step = regime_steps(chip, scenarios, d=d, n_layers=n_layers, seq_len=seq_len, vocab=vocab, **options)
    shares = step.energy_shares()
    return pd.DataFrame({
        "tok/step/GPU": step.tokens, "ms/token": 1e3 * np.asarray(step.time_per_token_s),
        "mJ/token": 1e3 * np.asarray(step.energy_per_token_j), "arith %": 100 * shares["arithmetic_j"],
        "HBM %": 100 * shares["hbm_j"], "static %": 100 * shares["static_j"], "I (FLOP/B)": step.intensity,
        "slowdown": step.slowdown,
    }, index=pd.Index([s.name for s in scenarios], name="scenario"))
