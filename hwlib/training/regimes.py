"""A whole model's training step per chip: layers, optimizer update and gradient all-reduce.

One data-parallel step on N chips runs ``micro_batches`` visits of the layers (``hw.layer_step``),
then an optimizer update of b_opt bytes per parameter through HBM, sharded over the N chips
(ZeRO stage 1; Rajbhandari et al., SC 2020, Sec. 5.1), then a ring all-reduce of the gradients
(``hw.allreduce_time_s``), not overlapped with compute: document 002's ``worked_example``
(Table 5), re-derived here. Parameters are 12 d^2 per layer plus 2 V d for untied input and
output embeddings (Kaplan et al. 2020, Sec. 2.1). Explained in the chapter :ref:`ch-seven-b-regimes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, broadcast, non_negative, one_of, positive, scalar_or_array
from hwlib.collectives import allreduce_time_s
from hwlib.data import clusters, doc002
from hwlib.data import fabrics as find_fabrics
from hwlib.data.records import ENERGY_FIELDS, FABRIC_KINDS, Chip, Fabric, ModelShape, Scenario, require_chip
from hwlib.data.records.layer_rules import FORWARD_FLOPS_PER_PARAM, TRAINING_OVER_FORWARD
from hwlib.layer_model import PARAMS_PER_LAYER_PER_D2, layer_step
from hwlib.roofline import roofline_bound_s

EMBEDDING_MATRICES = 2
"""Untied input and output embeddings: 2 V d parameters."""


def transformer_params(d: Number | ModelShape, n_layers: Number | None = None, vocab: Number = 0) -> Number:
    """Parameters of a GELU-MLP, multi-head transformer: 12 d^2 L + 2 V d (untied embeddings; Kaplan et al. 2020).

    A ModelShape in place of ``d`` gives its own count (``model.params()``). Document 002's Table 5 uses
    V = 50000; its Table 6 uses V = 0. Chapter :ref:`ch-seven-b-regimes`.
    """
    if isinstance(d, ModelShape):
        if n_layers is not None:
            raise TypeError("give a ModelShape or d and n_layers, not both")
        return d.params()
    if n_layers is None:
        raise TypeError("n_layers is needed unless d is a ModelShape such as hw.model('llama-3-8b')")
    width, layers, words = broadcast(
        d=positive("d", d),
        n_layers=positive("n_layers", n_layers, integral=True),
        vocab=non_negative("vocab", vocab, integral=True),
    )
    return scalar_or_array(PARAMS_PER_LAYER_PER_D2 * width**2 * layers + EMBEDDING_MATRICES * words * width)


def optimizer_bytes(n_params: Number, n_chips: Number = 1, b_opt: Number = doc002.B_OPT) -> Number:
    """HBM bytes per chip of one optimizer update sharded over ``n_chips``: b_opt P / N.

    Chapter :ref:`ch-seven-b-regimes`.
    """
    params, chips, size = broadcast(
        n_params=positive("n_params", n_params),
        n_chips=positive("n_chips", n_chips, integral=True),
        b_opt=non_negative("b_opt", b_opt),
    )
    return scalar_or_array(size * params / chips)


@dataclass(frozen=True, eq=False)
class TrainingStep:
    """One optimizer step on one chip: its tokens (``tokens_per_step``), seconds and their parts; joules on demand.

    ``time_s`` = ``layers_time_s`` + ``optimizer_time_s`` + ``allreduce_time_s``; ``slowdown`` =
    ``time_s`` / (FLOPs / peak). The energy properties (``energy_j`` = ``arithmetic_j`` + ``hbm_j``
    + ``static_j``) need the chip's energy parameters. Chapter :ref:`ch-seven-b-regimes`.
    """

    chip: Chip
    tokens_per_step: Number
    flops: Number
    hbm_bytes: Number
    intensity: Number
    time_s: Number
    layers_time_s: Number
    optimizer_time_s: Number
    allreduce_time_s: Number
    ideal_time_s: Number
    slowdown: Number
    _layer_hbm_bytes: Number
    _optimizer_bytes: Number

    @property
    def arithmetic_j(self) -> Number:
        return scalar_or_array(np.asarray(self.flops) * self.chip.require(*ENERGY_FIELDS).flop_energy_j)

    @property
    def hbm_j(self) -> Number:
        moved = np.asarray(self._layer_hbm_bytes) + np.asarray(self._optimizer_bytes)
        return scalar_or_array(moved * self.chip.require(*ENERGY_FIELDS).hbm_energy_j_per_byte)

    @property
    def static_j(self) -> Number:
        return scalar_or_array(np.asarray(self.time_s) * self.chip.require(*ENERGY_FIELDS).static_power_w)

    @property
    def energy_j(self) -> Number:
        return scalar_or_array(np.asarray(self.arithmetic_j) + np.asarray(self.hbm_j) + np.asarray(self.static_j))

    @property
    def time_per_token_s(self) -> Number:
        return scalar_or_array(np.asarray(self.time_s) / np.asarray(self.tokens_per_step))

    @property
    def energy_per_token_j(self) -> Number:
        return scalar_or_array(np.asarray(self.energy_j) / np.asarray(self.tokens_per_step))

    @property
    def power_w(self) -> Number:
        """Average power over the step, energy / time (W)."""
        return scalar_or_array(np.asarray(self.energy_j) / np.asarray(self.time_s))

    def energy_shares(self) -> dict[str, Number]:
        """Arithmetic, HBM and static energy over the total."""
        total = np.asarray(self.energy_j)
        return {
            name: scalar_or_array(np.asarray(getattr(self, name)) / total)
            for name in ("arithmetic_j", "hbm_j", "static_j")
        }


def training_step(
    d: Number | ModelShape,
    T: Number,
    chip: Chip,
    n_layers: Number | None = None,
    *,
    micro_batches: Number = 1,
    n_chips: Number = 1,
    fabric_bytes_per_s: Number | None = None,
    n_params: Number | None = None,
    seq_len: Number | None = None,
    b_w: Number = doc002.B_W,
    a: Number = doc002.A,
    b_opt: Number = doc002.B_OPT,
    b_ar: Number = doc002.B_AR,
    on_chip_fraction: float = doc002.L2_FRACTION,
    power_cap: bool = False,
) -> TrainingStep:
    """One data-parallel training step per chip: ``micro_batches`` visits of ``n_layers`` layers on T tokens each,
    a sharded optimizer update (b_opt P / N bytes at HBM) and a gradient all-reduce over the fabric, not overlapped.

    ``d`` may be a dense ModelShape (its own layers, count and parameters). ``n_params`` defaults to 12 d^2 L;
    ``fabric_bytes_per_s`` (per chip per direction) is needed
    where ``n_chips`` > 1. Static power runs for the whole step. Broadcasts over every numeric
    argument. Document 002, Table 5; chapter :ref:`ch-seven-b-regimes`.
    """
    chip = require_chip(chip)
    if isinstance(d, ModelShape):
        if n_layers is not None:
            raise TypeError("give a ModelShape or d and n_layers, not both")
        n_layers = d.n_layers
        n_params = d.params() if n_params is None else n_params
    elif n_layers is None:
        raise TypeError("n_layers is needed unless d is a ModelShape such as hw.model('llama-3-8b')")
    layers = positive("n_layers", n_layers, integral=True)
    visits = positive("micro_batches", micro_batches, integral=True)
    chips = positive("n_chips", n_chips, integral=True)
    params = transformer_params(d, layers) if n_params is None else positive("n_params", n_params)
    if fabric_bytes_per_s is None:
        if np.any(chips > 1):
            raise ValueError("fabric_bytes_per_s is needed when n_chips > 1, e.g. hw.fabric('ib-ndr').bytes_per_s")
        fabric_bytes_per_s = 1.0
    layer = layer_step(
        d, T, chip, b_w=b_w, a=a, seq_len=seq_len, on_chip_fraction=on_chip_fraction, power_cap=power_cap
    )
    repeat = layers * visits
    opt_bytes = np.asarray(optimizer_bytes(params, chips, b_opt))
    opt_time = opt_bytes / chip.hbm_bytes_per_s
    ar_time = np.asarray(allreduce_time_s(params, chips, fabric_bytes_per_s, b_ar))
    head_flops, head_bytes, head_time = _output_head(d, T, chip, b_w)
    layers_time = np.asarray(layer.time_s) * repeat + head_time * visits
    time = layers_time + opt_time + ar_time
    flops = np.asarray(layer.flops) * repeat + head_flops * visits
    layer_bytes = (np.asarray(layer.weight_hbm_bytes) + np.asarray(layer.activation_hbm_bytes)) * repeat
    layer_bytes = layer_bytes + head_bytes * visits
    ideal = flops / chip.peak("bf16")
    values = {
        "tokens_per_step": np.asarray(positive("T", T)) * visits,
        "flops": flops,
        "hbm_bytes": layer_bytes + opt_bytes,
        "intensity": flops / (layer_bytes + opt_bytes),
        "time_s": time,
        "layers_time_s": layers_time,
        "optimizer_time_s": opt_time,
        "allreduce_time_s": ar_time,
        "ideal_time_s": ideal,
        "slowdown": time / ideal,
        "_layer_hbm_bytes": layer_bytes,
        "_optimizer_bytes": opt_bytes,
    }
    shape = np.broadcast_shapes(*(np.shape(v) for v in values.values()))
    return TrainingStep(chip=chip, **{name: scalar_or_array(np.broadcast_to(v, shape)) for name, v in values.items()})


def _output_head(d: Number | ModelShape, T: Number, chip: Chip, b_w: Number) -> tuple[Number, Number, Number]:
    """(FLOPs, weight-side HBM bytes, roofline time) of a ModelShape's output head on T tokens, forward and
    backward: 6 FLOPs and b_w bytes per head weight (the embedding matrix where the head is tied to it); none for
    the source documents' layers, whose counts leave it out."""
    if not isinstance(d, ModelShape):
        return 0.0, 0.0, 0.0
    table = d.table()
    head = table.matmul_params(active=False) - table.n_layers * table.layer_params()
    flops = TRAINING_OVER_FORWARD * FORWARD_FLOPS_PER_PARAM * head * np.asarray(positive("T", T))
    weight_bytes = np.asarray(non_negative("b_w", b_w)) * head
    return flops, weight_bytes, np.asarray(roofline_bound_s(flops, weight_bytes, chip))


def regime_fabric(chip: Chip, kind: str) -> Fabric:
    """The fabric a regime of ``kind`` ("scale-up" or "scale-out") runs over for ``chip``.

    Document 002's own fabric for its records (its numbers go with its other numbers); for a vendor chip, the
    node fabric or network of its cluster (``hw.clusters(chip=...)``). Chapter :ref:`ch-seven-b-regimes`.
    """
    chip = require_chip(chip)
    one_of("kind", kind, FABRIC_KINDS)
    if chip.source == "doc002":
        return find_fabrics(source="doc002", kind=kind, chip=chip)[0]
    for system in clusters(chip=chip):
        fabric = system.node_fabric if kind == "scale-up" else system.network
        if fabric is not None:
            return fabric
    raise KeyError(f"no {kind} fabric known for chip {chip.label}; pass fabrics={{'{kind}': hw.fabric(...)}}")


def regime_steps(
    chip: Chip,
    scenarios: tuple[Scenario, ...] = doc002.SCENARIOS,
    *,
    d: int | ModelShape = doc002.D_MODEL,
    n_layers: int | None = doc002.N_LAYERS,
    seq_len: int = doc002.SEQ_LEN,
    vocab: int = doc002.VOCAB,
    fabrics: Mapping[str, Fabric] | None = None,
    **options: object,
) -> TrainingStep:
    """The training steps of ``scenarios`` on ``chip`` in one vectorised call (arrays in scenario order).

    Parameters count embeddings (``vocab``) as document 002's Table 5 does; ``d`` may be a dense ModelShape
    (``d=hw.model("llama-3-8b")``: its own layers and count; ``n_layers`` and ``vocab`` are then unused). ``fabrics``
    maps a
    scenario's fabric kind to a Fabric (default: ``regime_fabric``); ``options`` go to
    ``training_step`` (b_w, a, b_opt, b_ar, on_chip_fraction, power_cap).
    Chapter :ref:`ch-seven-b-regimes`.
    """
    chip = require_chip(chip)
    if not scenarios or not all(isinstance(s, Scenario) for s in scenarios):
        raise TypeError(f"scenarios must be a non-empty sequence of Scenario records, got {scenarios!r}")
    chosen = dict(fabrics or {})
    bandwidth = np.array(
        [
            1.0 if s.fabric is None else (chosen.get(s.fabric) or regime_fabric(chip, s.fabric)).bytes_per_s
            for s in scenarios
        ]
    )
    shape = isinstance(d, ModelShape)
    return training_step(
        d,
        np.array([s.T for s in scenarios]),
        chip,
        None if shape else n_layers,
        micro_batches=np.array([s.micro_batches for s in scenarios]),
        n_chips=np.array([s.n_chips for s in scenarios]),
        fabric_bytes_per_s=bandwidth,
        n_params=d.params() if shape else transformer_params(d, n_layers, vocab),
        seq_len=seq_len,
        **options,
    )
