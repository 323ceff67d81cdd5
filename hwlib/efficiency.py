"""From bound to forecast: the efficiency each term of a step reaches in practice.

A bound prices every FLOP at the dense peak, every byte at the HBM bandwidth and every collective at its links'
rate. A forecast prices the same counts at what kernels are measured to reach (``hw.Efficiency``):

* **matmuls** at the fraction of the dtype's peak large GEMMs reach on the chip (``KernelEfficiency.matmul``),
  times tile and wave quantization of the step's own shapes: a GEMM's output is cut into tiles of
  t_m x t_n, a partial tile costs a whole one, and tiles run in waves of the chip's SM count, so a last partial
  wave costs a whole one (NVIDIA, "Matrix Multiplication Background User's Guide"); in an fp8 step, a routed
  expert's grouped GEMMs at their measured speed-up over bf16 instead (``fp8_grouped_speedup``: torchao's MXFP8
  benchmarks, casts included);
* **attention** at the fraction of the bf16 peak FlashAttention-style kernels reach (they run in bf16 beside
  fp8 matmuls: ``assumptions.ATTENTION_DTYPE``);
* **collectives** at the fraction of their bound that nccl-tests and published collectives reach
  (``collective_efficiency``, from ``hw.step_measurements.COLLECTIVE_RUNS``), and never faster than the smallest
  all-reduce measured (``small_allreduce_s``); a collective hidden behind compute still slows that compute by the
  chip's measured ``overlap_slowdown`` (its kernels take the GPU's SMs and bandwidth);
* what no published measurement covers, fitted on measured runs (``hw.calibration()``): the achieved share of HBM
  bandwidth and each layer's overhead in a serving step (kernel launches and the gaps between them), on the serving
  runs; training's elementwise kernels (norms, activations, residuals) as passes over the activations, the seconds
  each MoE layer and each local expert add per micro-batch (host synchronisation and launches of routing, permutation
  and per-expert kernels, which no compiled XLA step pays), and the share of a step no kernel accounts for, on the
  training runs. Chapter :ref:`ch-forecast`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from hwlib._checks import Number, as_real_array, describe, positive
from hwlib.data import assumptions, calibrated, efficiencies, step_measurements
from hwlib.data import cluster as find_cluster
from hwlib.data.records import Chip, KernelEfficiency, require_chip
from hwlib.units import BYTES_PER_ELEMENT, element_dtype


@dataclass(frozen=True)
class Efficiency:
    """Overrides of what a forecast assumes; each None takes the sourced record or the calibrated fit.

    ``matmul``: fraction of the dtype's dense peak large matmuls reach (before tile and wave quantization);
    ``attention``: fraction of the bf16 peak attention kernels reach; ``hbm``: fraction of HBM bandwidth;
    ``collective``: fraction of the collective bound reached; ``small_allreduce_s``: the least time of an
    all-reduce (s); ``elementwise_passes``: passes of training's
    elementwise kernels over the activations the matmuls move; ``unmodelled_share``: share of a training step's
    time outside every modelled term; ``layer_overhead_s``: seconds each layer adds to every serving step;
    ``request_overhead_s``: seconds between a request's sending and its scheduling in a simulated server (its HTTP
    request, tokenization and queueing in the front end, and its first token's way back); ``walk_share``: the
    bandwidth one SM reaches walking a sequence's KV cache alone, as a multiple of its even share of HBM (an engine
    that does not split a decode's attention over SMs: ``EngineProfile.splits_attention``; inf: no such floor);
    ``moe_layer_overhead_s``: seconds each MoE layer adds to a training step per micro-batch it runs forward and
    backward (routing, the token permutation's host synchronisation and small kernels), and to a serving step that
    takes prompt tokens on an engine that launches such a step from the host (``EngineProfile.eager_prefill``);
    ``expert_overhead_s``: seconds
    each of a chip's local experts adds per MoE layer and micro-batch in an fp8 step (its own quantizers and casts);
    ``fp8_experts``: share of the fp8 matmul rate a routed expert's fp8 grouped GEMMs reach with their casts (None:
    ``fp8_expert_share``, measured);
    ``kv_fraction``: share of the memory left after the weights that a serving engine gives its KV cache;
    ``overlap_slowdown``: how much longer compute takes while a collective runs beside it (0.2: 20 % longer);
    ``quantization``: apply tile and wave quantization; ``expert_kernels``: price an MoE's routed experts as the
    step's ``experts`` says they run (capacity padding and its einsums, a grouped matmul's tiles), not dropless at
    the peak; ``attention_dtype``: the dtype whose peak attention kernels
    run at ("bf16" by default, ``assumptions.ATTENTION_DTYPE``; "matmul": the matmuls' own); ``parts_overlap``: a
    step's parts (weights, attention, activations) overlap as one roofline of their totals, as the bound assumes,
    instead of running one after another as an engine's kernels do (the default); ``best_overlap``: True, collectives
    hide where the best known implementation hides them (``Collective.overlaps_at_bound``), as in the bound; False,
    where the usual one on GPUs does (Megatron's exposed tensor-parallel all-reduces and expert all-to-alls); None
    (the default), as the chip's usual software runs them (``KernelEfficiency.hides_collectives``: XLA on TPUs hides
    them, ``hides_collectives(chip)``). Floats or arrays (a
    forecast then broadcasts over them). ``Efficiency.at_peak()`` is every term at its peak: the forecast is then the
    bound. Chapter :ref:`ch-forecast`.
    """

    matmul: Number | None = None
    attention: Number | None = None
    hbm: Number | None = None
    collective: Number | None = None
    small_allreduce_s: Number | None = None
    elementwise_passes: Number | None = None
    unmodelled_share: Number | None = None
    layer_overhead_s: Number | None = None
    sequence_overhead_s: Number | None = None
    request_overhead_s: Number | None = None
    walk_share: Number | None = None
    moe_layer_overhead_s: Number | None = None
    expert_overhead_s: Number | None = None
    fp8_experts: Number | None = None
    kv_fraction: Number | None = None
    overlap_slowdown: Number | None = None
    quantization: bool = True
    expert_kernels: bool = True
    attention_dtype: str | None = None
    parts_overlap: bool = False
    best_overlap: bool | None = None

    @classmethod
    def at_peak(cls) -> Efficiency:
        """Every rate at its peak, no floor, pass, overhead, slowdown or unmodelled share, no quantization or expert
        kernel's padding, attention at the matmuls' peak, a step's parts overlapping and collectives hidden as well
        as they can be: a forecast at these values is its bound."""
        return cls(
            matmul=1.0,
            attention=1.0,
            hbm=1.0,
            collective=1.0,
            small_allreduce_s=0.0,
            elementwise_passes=0.0,
            unmodelled_share=0.0,
            layer_overhead_s=0.0,
            sequence_overhead_s=0.0,
            request_overhead_s=0.0,
            walk_share=np.inf,
            moe_layer_overhead_s=0.0,
            expert_overhead_s=0.0,
            fp8_experts=1.0,
            overlap_slowdown=0.0,
            quantization=False,
            expert_kernels=False,
            attention_dtype="matmul",
            parts_overlap=True,
            best_overlap=True,
        )

    def __post_init__(self) -> None:
        for name in ("matmul", "attention", "hbm", "collective", "fp8_experts", "kv_fraction"):
            value = getattr(self, name)
            if value is not None:
                array = positive(f"Efficiency.{name}", value)
                if (array > 1).any():
                    raise ValueError(f"Efficiency.{name} must be a fraction in (0, 1], got {describe(value)}")
        for name in (
            "small_allreduce_s",
            "elementwise_passes",
            "layer_overhead_s",
            "sequence_overhead_s",
            "request_overhead_s",
            "moe_layer_overhead_s",
            "expert_overhead_s",
        ):
            if getattr(self, name) is not None:
                as_real_array(f"Efficiency.{name}", getattr(self, name), minimum=0.0)
        if self.walk_share is not None:
            positive("Efficiency.walk_share", self.walk_share, allow_inf=True)
        for name in ("unmodelled_share", "overlap_slowdown"):
            if getattr(self, name) is not None:
                share = as_real_array(f"Efficiency.{name}", getattr(self, name), minimum=0.0)
                if (share >= 1).any():
                    raise ValueError(f"Efficiency.{name} must be in [0, 1), got {describe(getattr(self, name))}")
        for name in ("quantization", "expert_kernels", "parts_overlap", "best_overlap"):
            value = getattr(self, name)
            if not isinstance(value, bool) and not (name == "best_overlap" and value is None):
                allowed = "True, False or None" if name == "best_overlap" else "True or False"
                raise TypeError(f"Efficiency.{name} must be {allowed}, got {describe(value)}")
        if self.attention_dtype not in (None, "matmul", *BYTES_PER_ELEMENT):
            raise ValueError(
                f"Efficiency.attention_dtype must be None, 'matmul' or a dtype {tuple(BYTES_PER_ELEMENT)}, "
                f"got {describe(self.attention_dtype)}"
            )


def require_efficiency(efficiency: object) -> Efficiency:
    """``efficiency`` as an Efficiency (None: every default), else a TypeError."""
    if efficiency is None:
        return Efficiency()
    if not isinstance(efficiency, Efficiency):
        raise TypeError(f"efficiency must be an hw.Efficiency(...) or None, got {describe(efficiency)}")
    return efficiency


def kernel_record(chip: Chip) -> KernelEfficiency:
    """The chip's kernel efficiencies: its own record, or for a chip without one (an exercise's ``custom_chip``,
    a source document's chip) the record of the vendor chip of the same name, else the most pessimistic of
    every record, field by field (``assumptions.UNRECORDED_CHIP_EFFICIENCY``)."""
    chip = require_chip(chip)
    by_key = efficiencies.BY_CHIP
    if chip.key in by_key:
        return by_key[chip.key]
    for record in by_key.values():
        if record.chip_key.lower() == chip.name.lower().replace(" ", "-"):
            return record
    return efficiencies.PESSIMISTIC


def matmul_fraction(chip: Chip, dtype: str) -> float:
    """Fraction of ``dtype``'s dense peak large matmuls reach on ``chip`` (a block-scaled format: its element
    dtype's); a dtype the record lacks takes the lowest fraction it records."""
    record, dtype = kernel_record(chip), element_dtype(dtype)
    if dtype in record.matmul:
        return float(record.matmul[dtype].value)
    return min(float(q.value) for q in record.matmul.values())


def fp8_grouped_speedup(expert_width: Number) -> float:
    """How much faster than bf16 the fp8 grouped GEMMs of routed experts ``expert_width`` wide run, forward and
    backward with their casts: on the line through the two measured widths (``efficiencies.FP8_GROUPED_GEMM_SPEEDUP``)
    in log2 of the width, the narrower the slower, never below 1. Chapter :ref:`ch-forecast`."""
    width = float(positive("expert_width", expert_width))
    measured = efficiencies.FP8_GROUPED_GEMM_SPEEDUP
    (narrow, low), (wide, high) = sorted((w, measured[w].value) for w in measured)
    return float(max(1.0, low + (high - low) * np.log2(width / narrow) / np.log2(wide / narrow)))


def fp8_expert_share(chip: Chip, expert_width: Number) -> float:
    """Share of ``chip``'s fp8 matmul rate the fp8 grouped GEMMs of routed experts ``expert_width`` wide reach:
    ``fp8_grouped_speedup`` times the chip's bf16 matmul rate over its fp8 one, at most 1. Chapter
    :ref:`ch-forecast`."""
    bf16 = chip.peak("bf16") * matmul_fraction(chip, "bf16")
    return float(min(1.0, fp8_grouped_speedup(expert_width) * bf16 / (chip.peak("fp8") * matmul_fraction(chip, "fp8"))))


def tile_quantization(
    rows: Number, columns: Number, tile: tuple[int, int], parallel_tiles: int, groups: Number = 1
) -> np.ndarray:
    """Useful share of a GEMM's work whose output is rows x columns (``groups`` of them in one grouped launch, an
    MoE's experts): partial tiles cost whole ones, and so does a partial last wave of ``parallel_tiles`` tiles.
    Kernel libraries shrink the tile's rows for few rows: the smallest power of two that holds them, from
    ``assumptions.SMALLEST_TILE_ROWS`` up to ``tile[0]``. Vectorised."""
    rows, columns = np.asarray(rows, dtype=float), np.asarray(columns, dtype=float)
    smallest = assumptions.SMALLEST_TILE_ROWS
    tile_rows = np.clip(2.0 ** np.ceil(np.log2(np.maximum(rows, 1.0))), min(smallest, tile[0]), tile[0])
    tiles = np.ceil(rows / tile_rows) * np.ceil(columns / tile[1]) * np.asarray(groups, dtype=float)
    useful = rows * columns * np.asarray(groups, dtype=float) / (tiles * tile_rows * tile[1])
    waves = tiles / parallel_tiles
    return useful * waves / np.ceil(waves)


def layer_quantization(
    chip: Chip, table: object, tokens: Number, tp: int, expert_parallel: bool = False, ep: int = 1
) -> np.ndarray:
    """Useful share of one layer's matmul work for ``tokens`` tokens on one of ``tp`` chips (the experts' grouped
    GEMM fed by ``ep`` expert-parallel ranks): the FLOP-weighted ``tile_quantization`` of its four matmuls
    (``TransformerTable.layer_matmuls``) with the chip's tile."""
    record = kernel_record(chip)
    rows, columns, shares, groups = table.layer_matmuls(tokens, tp, expert_parallel, ep)
    useful = tile_quantization(rows, columns, record.tile, int(record.parallel_tiles.value), groups)
    return 1.0 / np.sum(shares / useful, axis=-1)


def overlap_slowdown(chip: Chip) -> float:
    """How much longer compute takes on ``chip`` while a collective runs beside it (0.189: 18.9 % longer): its
    record's measured value, 0 where none applies. Chapter :ref:`ch-forecast`."""
    measured = kernel_record(chip).overlap_slowdown
    return 0.0 if measured is None else float(measured.value)


def hides_collectives(chip: Chip, efficiency: Efficiency | None = None) -> bool:
    """Whether a forecast on ``chip`` hides collectives where the bound does: ``efficiency.best_overlap`` where it
    is set, else whether the chip's usual software does (``KernelEfficiency.hides_collectives``: XLA on TPUs).
    Chapter :ref:`ch-forecast`."""
    given = require_efficiency(efficiency).best_overlap
    return bool(kernel_record(chip).hides_collectives) if given is None else given


def fuses_elementwise(chip: Chip) -> bool:
    """Whether the usual compiler on ``chip`` fuses a training step's elementwise work into its matmuls, so that the
    forecast prices no elementwise pass (``KernelEfficiency.fuses_elementwise``: XLA on TPUs). Chapter
    :ref:`ch-forecast`."""
    return bool(kernel_record(chip).fuses_elementwise)


def collective_efficiency(scope: str) -> float:
    """Fraction of ``hw.collective_time_s``'s bound that measured collectives reach: the geometric mean of
    bound over measured time of ``COLLECTIVE_RUNS`` in ``scope`` ("node": one NVLink domain or slice;
    "network": across the NICs). Chapter :ref:`ch-forecast`."""
    if scope not in COLLECTIVE_SCOPES:
        raise ValueError(f"scope must be one of {COLLECTIVE_SCOPES}, got {describe(scope)}")
    return _collective_efficiencies()[scope]


COLLECTIVE_SCOPES = ("node", "network")


def _collective_efficiencies() -> dict[str, float]:
    global _COLLECTIVE_CACHE
    if _COLLECTIVE_CACHE is None:
        from hwlib.collectives import collective_time_s
        from hwlib.placement import group_topology, scope_of

        shares: dict[str, list[float]] = {scope: [] for scope in COLLECTIVE_SCOPES}
        for run in step_measurements.COLLECTIVE_RUNS:
            group = group_topology(find_cluster(run.cluster_key), run.n_chips, 1, run.n_chips)
            shares[scope_of(group)].append(float(collective_time_s(run.kind, run.n_bytes, group)) / run.time_s)
        _COLLECTIVE_CACHE = {scope: float(np.exp(np.mean(np.log(values)))) for scope, values in shares.items()}
    return _COLLECTIVE_CACHE


_COLLECTIVE_CACHE: dict[str, float] | None = None


@dataclass(frozen=True)
class Resolved:
    """Every efficiency a forecast uses, as numbers: the overrides, else the chip's records and the fit."""

    matmul: Number
    attention: Number
    hbm: Number
    collective_node: Number
    collective_network: Number
    small_allreduce_s: Number
    elementwise_passes: Number
    unmodelled_share: Number
    layer_overhead_s: Number
    sequence_overhead_s: Number
    request_overhead_s: Number
    walk_share: Number
    moe_layer_overhead_s: Number
    expert_overhead_s: Number
    kv_fraction: Number
    overlap_slowdown: Number
    quantization: bool


def small_allreduce_s(n_chips: Number) -> np.ndarray:
    """The least time an all-reduce over ``n_chips`` chips of a node takes (s): the smallest message's measured time
    over 2 and over 8 chips (``efficiencies.SMALL_ALLREDUCE_S``), between them in log2 of the chips, flat outside;
    0 for one chip. Chapter :ref:`ch-forecast`."""
    chips = np.asarray(positive("n_chips", n_chips), dtype=float)
    known = efficiencies.SMALL_ALLREDUCE_S
    counts = sorted(known)
    floor = np.interp(np.log2(chips), np.log2(counts), [known[n].value for n in counts])
    return np.where(chips > 1, floor, 0.0)


def resolve(chip: Chip, dtype: str, efficiency: Efficiency | None = None, n_chips: Number = 1) -> Resolved:
    """The efficiencies a forecast on ``chip`` with ``dtype`` matmuls uses: ``efficiency``'s overrides, else the
    chip's ``KernelEfficiency`` record, the measured collectives (``n_chips`` in the all-reduces' group) and the
    calibrated fit (``hw.calibration()``)."""
    given = require_efficiency(efficiency)
    record = kernel_record(chip)

    def pick(value: Number | None, default: float) -> Number:
        return default if value is None else value

    return Resolved(
        matmul=pick(given.matmul, matmul_fraction(chip, dtype)),
        attention=pick(given.attention, float(record.attention.value)),
        hbm=pick(given.hbm, calibrated.HBM_FRACTION.value),
        collective_node=pick(given.collective, collective_efficiency("node")),
        collective_network=pick(given.collective, collective_efficiency("network")),
        small_allreduce_s=pick(given.small_allreduce_s, small_allreduce_s(n_chips)),
        elementwise_passes=pick(given.elementwise_passes, calibrated.ELEMENTWISE_PASSES.value),
        unmodelled_share=pick(given.unmodelled_share, calibrated.UNMODELLED_SHARE.value),
        layer_overhead_s=pick(given.layer_overhead_s, calibrated.LAYER_OVERHEAD_S.value),
        sequence_overhead_s=pick(given.sequence_overhead_s, calibrated.SEQUENCE_OVERHEAD_S.value),
        request_overhead_s=pick(given.request_overhead_s, calibrated.REQUEST_OVERHEAD_S.value),
        walk_share=pick(given.walk_share, calibrated.DECODE_WALK_SHARE.value),
        moe_layer_overhead_s=pick(given.moe_layer_overhead_s, calibrated.MOE_LAYER_OVERHEAD_S.value),
        expert_overhead_s=pick(given.expert_overhead_s, calibrated.EXPERT_OVERHEAD_S.value),
        kv_fraction=pick(given.kv_fraction, efficiencies.KV_CACHE_FRACTION.value),
        overlap_slowdown=pick(given.overlap_slowdown, overlap_slowdown(chip)),
        quantization=given.quantization,
    )


def with_fit(efficiency: Efficiency | None, **fitted: Number) -> Efficiency:
    """``efficiency`` with the fitted fields it leaves open set to ``fitted`` (the calibration's trial values)."""
    given = require_efficiency(efficiency)
    names = {field.name for field in fields(Efficiency)}
    unknown = set(fitted) - names
    if unknown:
        raise ValueError(f"unknown Efficiency fields {sorted(unknown)}")
    return replace(given, **{name: value for name, value in fitted.items() if getattr(given, name) is None})
