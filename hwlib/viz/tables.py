"""Tables the chapters render from hwlib's data and models: pandas DataFrames, never retyped numbers.

Every table of the book is built here, with units in its column labels. pandas is imported
with this module, which ``import hwlib`` loads only when a table is first asked for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from hwlib._checks import as_real_array, positive
from hwlib.data import doc002
from hwlib.data import fabrics as all_fabrics
from hwlib.data.records import ENERGY_FIELDS, Chip, Cluster, Fabric, Scenario, require_chip, require_chips
from hwlib.energy import add_equivalents, byte_costs, machine_balance
from hwlib.layer_model import (
    activation_energy_ratio,
    d_min,
    elementwise_time_ratio,
    elementwise_time_share,
    layer_flops,
    t_min,
    t_min_large_d,
)
from hwlib.measure.timing import Measurement
from hwlib.measure.xla import xla_layer_flops, xla_matmul_cost, xla_stream_cost
from hwlib.naming import SYMBOLS
from hwlib.roofline import ridge_point
from hwlib.training.regimes import regime_steps
from hwlib.training.squeeze import CRITICAL_BATCH, cluster_squeeze
from hwlib.units import GB, TERA, GiB, MiB, format_quantity


def printed_capacity(chip: Chip) -> str:
    """The HBM capacity in the unit its source prints, e.g. '16 GiB' or '80 GB'. Chapter :ref:`ch-rooflines`."""
    chip = require_chip(chip)
    binary = "gib" in chip.hbm.quoted.lower()
    return f"{chip.hbm_bytes / (GiB if binary else GB):,.4g} {'GiB' if binary else 'GB'}"


def chip_table(chips: Sequence[Chip], dtype: str = "bf16") -> pd.DataFrame:
    """One row per chip: dense ``dtype`` peak, HBM as printed (in its printed unit) and as a program sees it,
    bandwidth, ridge point, and the on-chip memory the layer model's re-blocking term uses (NaN where none is
    sourced). Chapter :ref:`ch-rooflines` and the hardware appendix.
    """
    rows = [
        {
            "chip": record.label,
            f"{dtype} peak (TFLOP/s)": record.peak(dtype) / TERA,
            "HBM as printed": printed_capacity(record),
            "HBM a program sees (GiB)": record.capacity_bytes / GiB,
            "HBM bandwidth (GB/s)": record.hbm_bytes_per_s / GB,
            "ridge point (FLOP/byte)": ridge_point(record, dtype),
            "on-chip memory (MiB)": record.on_chip_bytes / MiB if record.on_chip_bytes else np.nan,
        }
        for record in require_chips(chips)
    ]
    return pd.DataFrame(rows).set_index("chip")


def provenance_table(chip: Chip) -> pd.DataFrame:
    """Every sourced number of one record: value, unit, text as quoted, source, date read, note.

    The hardware appendix.
    """
    rows = [
        {
            "field": name,
            "value": q.value,
            "as a number": format_quantity(q.value, q.unit),
            "quoted": q.quoted,
            "source": q.source,
            "read on": q.read_on,
            "note": q.note,
        }
        for name, q in require_chip(chip).sourced_values().items()
    ]
    return pd.DataFrame(rows).set_index("field")


def _short_source(source: str) -> str:
    """The URL in ``source``, or the document's file name."""
    found = re.search(r"https?://\S+", source)
    return found.group(0) if found else source.split(" (", 1)[0]


def fabric_table(records: Sequence[Fabric] | None = None) -> pd.DataFrame:
    """One row per fabric: kind, the quote and its direction convention, GB/s per direction, domain, the latency of
    one ring step where sourced, source.

    Chapter :ref:`ch-batch-squeeze`.
    """
    records = all_fabrics() if records is None else tuple(records) if isinstance(records, (list, tuple)) else ()
    if not records or not all(isinstance(record, Fabric) for record in records):
        raise TypeError(f"records must be a non-empty sequence of Fabric records, got {records!r}")
    return pd.DataFrame(
        {
            "kind": [r.kind for r in records],
            "quoted": [r.bandwidth.quoted for r in records],
            "quote is": ["both directions summed" if r.directions == 2 else "per direction" for r in records],
            "per direction (GB/s)": [r.bytes_per_s / GB for r in records],
            "domain (chips)": [r.domain_chips if r.domain_chips is not None else "" for r in records],
            "ring-step latency (µs)": [f"{r.latency_s * 1e6:g}" if r.latency is not None else "" for r in records],
            "source": [_short_source(r.bandwidth.source) for r in records],
        },
        index=pd.Index([r.label for r in records], name="fabric"),
    )


def byte_cost_table() -> pd.DataFrame:
    """Document 002's Table 1: pJ and int8-add equivalents per row, with notes. Chapter :ref:`ch-moving-bytes`."""
    rows = byte_costs()
    joules = np.array([row.joules for row in rows])
    return pd.DataFrame(
        {"energy (pJ)": joules * 1e12, "int8 adds": add_equivalents(joules), "note": [row.note for row in rows]},
        index=pd.Index([row.item for row in rows], name="item"),
    )


def balance_table(
    chips: Sequence[Chip], b_w: float = doc002.B_W, a: float = doc002.A, on_chip_fraction: float = doc002.L2_FRACTION
) -> pd.DataFrame:
    """Document 002's Table 2 plus the true large-d limit of T_min: one row per chip.

    Columns: peak (TFLOP/s), HBM (TB/s), time balance, energy balance where the chip has energy
    parameters (FLOP/byte), d_min, the document's "T_min(inf d) = 2 beta" (b_w I* / 6), the limit
    with the re-blocking term, and whether the chip's on-chip memory is sourced.
    Chapter :ref:`ch-compute-and-commute`.
    """
    rows = []
    for record in require_chips(chips):
        balance = machine_balance(record)
        has_energy = record.hbm_energy is not None and record.flop_energy is not None
        rows.append(
            {
                "chip": record.label,
                "peak (TFLOP/s)": record.peak("bf16") / TERA,
                "HBM (TB/s)": record.hbm_bytes_per_s / 1e12,
                "time balance (FLOP/B)": balance.time,
                "energy balance (FLOP/B)": balance.energy if has_energy else np.nan,
                "d_min": d_min(record, a=a, on_chip_fraction=on_chip_fraction),
                'document: "T_min(inf d) = 2 beta"': t_min_large_d(record, b_w=b_w, include_reblocking=False),
                "large-d limit of T_min": t_min_large_d(record, b_w=b_w, on_chip_fraction=on_chip_fraction),
                "on-chip memory (MB)": record.on_chip_bytes / 1e6 if record.on_chip_bytes else np.nan,
            }
        )
    return pd.DataFrame(rows).set_index("chip")


def t_min_table(
    ds: object = doc002.TABLE3_WIDTHS,
    chips: Sequence[Chip] = doc002.CHIPS,
    b_w: float = doc002.B_W,
    a: float = doc002.A,
    on_chip_fraction: float = doc002.L2_FRACTION,
) -> pd.DataFrame:
    """Document 002's Table 3: T_min (tokens per weight visit) per d (rows) and chip (columns); inf = never.

    Chapter :ref:`ch-compute-and-commute`.
    """
    widths = np.atleast_1d(positive("ds", ds))
    return pd.DataFrame(
        {
            record.label: t_min(widths, record, b_w=b_w, a=a, on_chip_fraction=on_chip_fraction)
            for record in require_chips(chips)
        },
        index=pd.Index(widths.astype(int), name="d"),
    )


def elementwise_tax_table(
    ds: object = doc002.TABLE4_WIDTHS, chips: Sequence[Chip] = doc002.CHIPS[::2], a: float = doc002.A
) -> pd.DataFrame:
    """Document 002's Table 4 with the share beside the ratio: per d (rows), for each chip, element-wise over GEMM
    time, the element-wise share of step time (%), and HBM-activation over arithmetic energy (%, where the chip has
    energy parameters). Chapter :ref:`ch-elementwise-tax`.
    """
    widths = np.atleast_1d(positive("ds", ds))
    columns = {}
    for record in require_chips(chips):
        columns[(record.label, "time ratio")] = elementwise_time_ratio(widths, record, a=a)
        columns[(record.label, "time share (%)")] = 100 * np.asarray(elementwise_time_share(widths, record, a=a))
        if record.hbm_energy is not None and record.flop_energy is not None:
            columns[(record.label, "energy ratio (%)")] = 100 * np.asarray(activation_energy_ratio(widths, record, a=a))
    return pd.DataFrame(columns, index=pd.Index(widths.astype(int), name="d"))


def regime_table(chip: Chip, scenarios: Sequence[Scenario] = doc002.SCENARIOS, **options: object) -> pd.DataFrame:
    """Document 002's Table 5: per-token time (ms) of each scenario on ``chip``, and where its chip has energy
    parameters the energy (mJ) and its shares. ``options`` go to ``hw.regime_steps``.

    Chapter :ref:`ch-seven-b-regimes`.
    """
    step = regime_steps(chip, tuple(scenarios), **options)
    columns = {"tokens/step/chip": step.tokens_per_step, "time (ms/token)": 1e3 * np.asarray(step.time_per_token_s)}
    if all(getattr(step.chip, name) is not None for name in ENERGY_FIELDS):
        shares = step.energy_shares()
        columns.update(
            {
                "energy (mJ/token)": 1e3 * np.asarray(step.energy_per_token_j),
                "arithmetic (%)": 100 * shares["arithmetic_j"],
                "HBM (%)": 100 * shares["hbm_j"],
                "static (%)": 100 * shares["static_j"],
            }
        )
    columns.update({"intensity (FLOP/B)": step.intensity, "slowdown": step.slowdown})
    return pd.DataFrame(columns, index=pd.Index([s.name for s in scenarios], name="scenario"))


SQUEEZE_COLUMNS = {
    "fixed_cost_tokens": "T_fixed (token-equivalents/chip)",
    "optimal_batch_tokens": "B_opt (M tokens)",
    "tokens_per_chip": "B_opt / N (tokens/chip)",
    "allreduce_time_s": "all-reduce (ms)",
    "optimizer_time_s": "optimizer (ms)",
    "optimal_time_ratio": "time at B_opt / ideal",
}
"""Columns of ``squeeze_table``: BatchSqueeze field -> column label (units in the label)."""


def squeeze_table(
    clusters: Sequence[Cluster],
    n_params: float,
    n_chips: object = doc002.TABLE6_CHIP_COUNTS,
    critical_batch_tokens: float = CRITICAL_BATCH,
    *,
    parity_column: bool = False,
    **options: object,
) -> pd.DataFrame:
    """Document 002's Table 6 for any clusters: one row per (cluster, N), columns ``SQUEEZE_COLUMNS``.

    ``parity_column=True`` adds the document's "comm parity at" column, which is T_fixed again.
    ``options`` go to ``hw.cluster_squeeze``. Chapter :ref:`ch-batch-squeeze`.
    """
    records = tuple(clusters) if isinstance(clusters, (list, tuple)) else ()
    if not records or not all(isinstance(c, Cluster) for c in records):
        raise TypeError(f"clusters must be a non-empty sequence of Cluster records, got {clusters!r}")
    if not isinstance(parity_column, bool):
        raise TypeError(f"parity_column must be True or False, got {parity_column!r}")
    chips = np.atleast_1d(positive("n_chips", n_chips, integral=True))
    scale = {"optimal_batch_tokens": 1e-6, "allreduce_time_s": 1e3, "optimizer_time_s": 1e3}
    frames = []
    for record in records:
        squeeze = cluster_squeeze(record, n_params, chips, critical_batch_tokens, **options)
        frame = pd.DataFrame(
            {
                label: np.asarray(getattr(squeeze, name)) * scale.get(name, 1.0)
                for name, label in SQUEEZE_COLUMNS.items()
            }
        )
        if parity_column:
            frame["comm parity at (tokens/chip)"] = np.asarray(squeeze.fixed_cost_tokens)
        frame.index = pd.MultiIndex.from_product([[record.name], chips.astype(int)], names=["system", "N"])
        frames.append(frame)
    return pd.concat(frames)


def _measurements(measurements: object) -> list[Measurement]:
    records = list(measurements) if isinstance(measurements, (list, tuple)) else None
    if not records or not all(isinstance(record, Measurement) for record in records):
        raise TypeError(f"measurements must be a non-empty sequence of Measurement records, got {measurements!r}")
    return records


def measurements_table(measurements: Sequence[Measurement]) -> pd.DataFrame:
    """One row per measurement: hwlib's counts, intensity, median time, spread, FLOP/s and bytes/s.

    Chapter :ref:`ch-own-roofline`.
    """
    rows = [
        {
            "kernel": record.name,
            "FLOPs": record.flops,
            "bytes (minimum)": record.n_bytes,
            "intensity (FLOP/byte)": record.intensity,
            "median time (ms)": record.median_s * 1e3,
            "slowest / fastest": record.spread,
            "achieved GFLOP/s": record.flops_per_s / 1e9,
            "achieved GB/s": record.bytes_per_s / 1e9,
        }
        for record in _measurements(measurements)
    ]
    return pd.DataFrame(rows).set_index("kernel")


def xla_counts_table(measurements: Sequence[Measurement]) -> pd.DataFrame:
    """For each measured kernel: hwlib's FLOPs and bytes beside XLA's, and their ratios (one compilation each).

    Chapter :ref:`ch-own-roofline`.
    """
    rows = []
    for record in _measurements(measurements):
        cost = (
            xla_matmul_cost(*record.shape, dtype=record.dtype)
            if record.kernel == "matmul"
            else xla_stream_cost(record.shape[0], dtype=record.dtype)
        )
        rows.append(
            {
                "kernel": record.name,
                "hwlib FLOPs": record.flops,
                "XLA FLOPs": cost.flops,
                "XLA / hwlib FLOPs": cost.flops / record.flops,
                "hwlib bytes (minimum)": record.n_bytes,
                "XLA bytes accessed": cost.bytes_accessed,
                "XLA / hwlib bytes": cost.bytes_accessed / record.n_bytes,
            }
        )
    return pd.DataFrame(rows).set_index("kernel")


def xla_layer_table(ds: object, Ts: object, weights_only: bool = True) -> pd.DataFrame:
    """One row per (d, T): hwlib's 72 d^2 T and XLA's count (MFLOP), the gaps, and (``weights_only``) XLA without
    the input gradient.

    ``ds`` and ``Ts`` are broadcast together; each pair is one compilation, two with ``weights_only``.
    Chapter :ref:`ch-compute-and-commute`.
    """
    widths = as_real_array("ds", ds, minimum=0.0, strictly_above=True, integral=True)
    tokens = as_real_array("Ts", Ts, minimum=0.0, strictly_above=True, integral=True)
    try:
        widths, tokens = np.broadcast_arrays(np.atleast_1d(widths), np.atleast_1d(tokens))
    except ValueError as error:
        raise ValueError(f"ds and Ts must broadcast together, got shapes {np.shape(ds)} and {np.shape(Ts)}") from error
    if not isinstance(weights_only, bool):
        raise TypeError(f"weights_only must be True or False, got {weights_only!r}")
    rows = []
    for width, count in zip(widths.astype(int), tokens.astype(int)):  # one XLA compilation per shape
        model = float(layer_flops(width, count))
        xla = xla_layer_flops(width, count)
        row = {
            "d": width,
            "T": count,
            "hwlib (MFLOP)": model / 1e6,
            "XLA (MFLOP)": xla / 1e6,
            "extra per token per d (FLOP)": (xla - model) / (count * width),
            "relative gap": xla / model - 1.0,
        }
        if weights_only:
            without = xla_layer_flops(width, count, input_gradient=False)
            row.update({"XLA weights only (MFLOP)": without / 1e6, "weights only / hwlib": without / model})
        rows.append(row)
    return pd.DataFrame(rows).set_index(["d", "T"])


def symbol_table() -> pd.DataFrame:
    """Every quantity the book names: its name in hwlib, its symbol (LaTeX) and unit. The glossary appendix."""
    return pd.DataFrame(SYMBOLS, columns=["quantity", "name in hwlib", "symbol", "unit"]).set_index("quantity")
