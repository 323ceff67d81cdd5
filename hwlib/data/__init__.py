"""hwlib's data: record types and one module per source of numbers, with one lookup per record kind.

Each record kind has a singular lookup that raises a KeyError with close matches, and a plural
listing: ``chip``/``chips``, ``fabric``/``fabrics``, ``cluster``/``clusters``, ``model``/``models``,
``recipe``/``recipes``, ``deployment``/``deployments``. The sources are ``vendor_tpus`` and
``vendor_gpus`` (gathered in ``vendor_chips``), ``vendor_fabrics`` and ``vendor_systems`` (vendors'
pages), ``literature`` (papers), ``model_shapes`` (published model shapes), ``doc000`` and ``doc002``
(the two source documents).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable

from hwlib._checks import describe, one_of, positive
from hwlib.data import (
    assumptions,
    doc000,
    doc002,
    literature,
    model_shapes,
    serving_measurements,
    step_measurements,
    training_measurements,
    vendor_chips,
    vendor_fabrics,
    vendor_other_systems,
    vendor_systems,
)
from hwlib.data.records import (
    READ_ON,
    SOURCES,
    Chip,
    Cluster,
    Deployment,
    Fabric,
    ModelShape,
    Scenario,
    ServingRun,
    Sourced,
    TrainingRecipe,
    TrainingRun,
    require_chip,
)

_CHIPS: tuple[Chip, ...] = (*vendor_chips.CHIPS, *doc000.CHIPS, *doc002.CHIPS)
_FABRICS: tuple[Fabric, ...] = (*vendor_fabrics.FABRICS, *vendor_other_systems.FABRICS, *doc002.FABRICS)
_CLUSTERS: tuple[Cluster, ...] = (*doc002.CLUSTERS, *vendor_systems.CLUSTERS, *vendor_other_systems.CLUSTERS)
_MODELS: tuple[ModelShape, ...] = (*model_shapes.MODELS, *doc000.MODELS, doc002.MODEL)
_RECIPES: tuple[TrainingRecipe, ...] = (literature.RECIPES[0], doc000.MIXED_BF16, *literature.RECIPES[1:])
_DEPLOYMENTS: tuple[Deployment, ...] = vendor_systems.DEPLOYMENTS


@functools.lru_cache(maxsize=4096)
def normalise_name(name: str) -> str:
    """Lower-case, drop punctuation and a leading vendor or 'tpu': 'TPU v5e' -> 'v5e'."""
    text = re.sub(r"[^a-z0-9]", "", name.lower())
    return re.sub(r"^(google|nvidia|amd)", "", text).removeprefix("tpu") or text


def _find(
    kind: str, name: object, records: Iterable, names_of, source: str | None = None, parameter: str = "name"
) -> object:
    if not isinstance(name, str):
        raise TypeError(f"{parameter} must be a {kind} {parameter} string, got {name!r}")
    records = tuple(records)
    wanted = normalise_name(name)
    matches = [r for r in records if wanted in {normalise_name(n) for n in names_of(r)}]
    chosen = [r for r in matches if source is None or getattr(r, "source", None) == source]
    if chosen:
        return chosen[0]
    if matches:
        elsewhere = sorted({r.source for r in matches})
        raise KeyError(f"{kind} {name!r} has no record from source {source!r}; it has records from {elsewhere}")
    known = sorted({names_of(r)[0] for r in records if source is None or getattr(r, "source", None) == source})
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.4)
    hint = f"; did you mean {close}?" if close else ""
    raise KeyError(f"unknown {kind} {name!r}{hint} Known: {known}")


def chip(name: str, source: str = "vendor") -> Chip:
    """The record of chip ``name`` ("v5e", "TPU v5e", "H100", ...) from ``source`` (one of ``SOURCES``).

    An unknown name raises KeyError with close matches. Chapter :ref:`ch-rooflines`.
    """
    one_of("source", source, SOURCES)
    return _find("chip", name, _CHIPS, lambda r: (r.name, r.key, *r.aliases), source)


def chips(source: str | None = None) -> tuple[Chip, ...]:
    """Every chip record in catalogue order, or only those from ``source`` (one of ``SOURCES``)."""
    if source is None:
        return _CHIPS
    one_of("source", source, SOURCES)
    return tuple(r for r in _CHIPS if r.source == source)


def fabric(name: str, source: str = "vendor") -> Fabric:
    """The fabric ``name`` ("nvlink4", "NDR", "ICI v5p", ...) from ``source`` ("vendor" or "doc002").

    Chapter :ref:`ch-batch-squeeze`.
    """
    one_of("source", source, ("vendor", "doc002"))
    return _find("fabric", name, _FABRICS, lambda r: (r.key, r.name, *r.aliases), source)


def fabrics(source: str | None = None, kind: str | None = None, chip: Chip | None = None) -> tuple[Fabric, ...]:
    """Every fabric, or those from ``source``, of ``kind`` ("scale-up"/"scale-out") and serving ``chip``.

    A fabric serves a chip when its ``chip_keys`` name the chip's key or are empty (any chip).
    """
    if source is not None:
        one_of("source", source, ("vendor", "doc002"))
    if kind is not None:
        one_of("kind", kind, ("scale-up", "scale-out"))
    key = None if chip is None else require_chip(chip).key
    return tuple(
        r
        for r in _FABRICS
        if (source is None or r.source == source)
        and (kind is None or r.kind == kind)
        and (key is None or not r.chip_keys or key in r.chip_keys)
    )


def _given(name: str, value: object, unit: str) -> Sourced | None:
    """``value`` as a number the reader gives (an exercise's input), checked positive and finite."""
    if value is None:
        return None
    positive(name, value)
    if not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be one number, got {describe(value)}")
    return Sourced(float(value), unit, "given", READ_ON, note="given inline by the reader")


def custom_chip(
    name: str,
    *,
    peak_flops_per_s: float | dict[str, float],
    hbm_bytes_per_s: float,
    hbm_bytes: float,
    on_chip_bytes: float | None = None,
    tdp_w: float | None = None,
    static_power_w: float | None = None,
    hbm_energy_j_per_byte: float | None = None,
    flop_energy_j: float | None = None,
    ici_link_bytes_per_s: float | None = None,
    ici_links: int | None = None,
) -> Chip:
    """A chip from numbers stated inline (an exercise's inputs, a reader's own assumptions).

    ``peak_flops_per_s`` is the dense BF16 peak (FLOP/s), or a mapping from dtype to peak;
    rates per second, sizes in bytes, energies in J per byte / per FLOP, powers in W. The
    record's source is "given". Used by every chapter's exercises.
    """
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"name must be a non-empty string, got {describe(name)}")
    peaks = peak_flops_per_s if isinstance(peak_flops_per_s, dict) else {"bf16": peak_flops_per_s}
    if not peaks:
        raise ValueError("peak_flops_per_s must give at least one dtype's peak, got {}")
    fields = dict(
        hbm_visible=None,
        on_chip=_given("on_chip_bytes", on_chip_bytes, "B"),
        tdp=_given("tdp_w", tdp_w, "W"),
        static_power=_given("static_power_w", static_power_w, "W"),
        hbm_energy=_given("hbm_energy_j_per_byte", hbm_energy_j_per_byte, "J/B"),
        flop_energy=_given("flop_energy_j", flop_energy_j, "J/FLOP"),
        ici_link_bandwidth=_given("ici_link_bytes_per_s", ici_link_bytes_per_s, "B/s"),
        ici_links=_given("ici_links", ici_links, "links"),
    )
    return Chip(
        key=normalise_name(name),
        name=name,
        vendor="",
        source="given",
        hbm=_given("hbm_bytes", hbm_bytes, "B"),
        hbm_bandwidth=_given("hbm_bytes_per_s", hbm_bytes_per_s, "B/s"),
        peak_flops={dtype: _given(f"peak_flops_per_s[{dtype!r}]", value, "FLOP/s") for dtype, value in peaks.items()},
        **fields,
    )


def custom_fabric(
    name: str,
    *,
    bytes_per_s: float,
    kind: str = "scale-up",
    domain_size: int | None = None,
    latency_s: float | None = None,
) -> Fabric:
    """A fabric from numbers stated inline: ``bytes_per_s`` per chip per direction (B/s).

    ``domain_size`` is the chips one scale-up domain joins (None: unbounded); ``latency_s``
    one ring step's latency. Chapter :ref:`ch-batch-squeeze` and the sharding exercises.
    """
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"name must be a non-empty string, got {describe(name)}")
    one_of("kind", kind, ("scale-up", "scale-out"))
    return Fabric(
        key=normalise_name(name),
        name=name,
        kind=kind,
        source="given",
        bandwidth=_given("bytes_per_s", bytes_per_s, "B/s"),
        directions=1,
        domain_size=_given("domain_size", domain_size, "chips"),
        latency=_given("latency_s", latency_s, "s"),
    )


def cluster(key: str) -> Cluster:
    """The cluster ``key`` (e.g. "hgx-h100-ndr"); KeyError lists them. Chapter :ref:`ch-batch-squeeze`."""
    return _find("cluster", key, _CLUSTERS, lambda r: (r.key, r.name), parameter="key")


def clusters(chip: Chip | None = None) -> tuple[Cluster, ...]:
    """Every cluster: document 002's two flat assumptions, then the real systems; with ``chip``, those built of
    that chip (the first is where ``hw.inference_step`` places a chip's tensor-parallel group)."""
    if chip is None:
        return _CLUSTERS
    chip = require_chip(chip)
    return tuple(record for record in _CLUSTERS if record.chip == chip)


def model(name: str) -> ModelShape:
    """The shape of model ``name`` (its key, "llama-3-8b", or its name, "Llama 3 8B").

    Unknown names raise KeyError with close matches. Chapter :ref:`ch-kv-cache`.
    """
    return _find("model", name, _MODELS, lambda r: (r.key, r.name))


def models(source: str | None = None) -> tuple[ModelShape, ...]:
    """Every model shape: the published ones, then document 000's geometry and document 002's model.

    ``source`` (one of ``SOURCES``) keeps only those from it: "vendor" the shapes their publishers
    give (config files, model cards, papers), "doc000" or "doc002" a source document's.
    """
    if source is None:
        return _MODELS
    one_of("source", source, SOURCES)
    return {"vendor": model_shapes.MODELS, "doc000": doc000.MODELS, "doc002": (doc002.MODEL,)}[source]


def recipe(key: str | TrainingRecipe) -> TrainingRecipe:
    """The training-state recipe ``key`` (e.g. "zero_mixed_adam"), or ``key`` itself if it is one.

    Chapter :ref:`ch-hbm-budgets`.
    """
    if isinstance(key, TrainingRecipe):
        return key
    return _find("recipe", key, _RECIPES, lambda r: (r.key, r.label), parameter="key")


def recipes() -> tuple[TrainingRecipe, ...]:
    """Every training-state recipe, in the order tables show them."""
    return _RECIPES


def deployment(chip: Chip) -> Deployment:
    """The sizes ``chip`` is sold in (slice shapes or 8-GPU nodes). Chapter :ref:`ch-hbm-budgets`."""
    record = require_chip(chip)
    for plan in _DEPLOYMENTS:
        if record.key in plan.chip_keys:
            return plan
    known = sorted(key for plan in _DEPLOYMENTS for key in plan.chip_keys)
    raise KeyError(f"no deployment sizes for chip {record.label!r}; known for chip keys {known}")


def deployments() -> tuple[Deployment, ...]:
    """Every deployment record."""
    return _DEPLOYMENTS


def training_runs() -> tuple[TrainingRun, ...]:
    """Every published, measured training run (``data/training_measurements.py``). Chapter :ref:`ch-sharding`."""
    return training_measurements.RUNS


def serving_runs() -> tuple[ServingRun, ...]:
    """Every published, measured serving run (``data/serving_measurements.py``). Chapter :ref:`ch-serving`."""
    return serving_measurements.RUNS


__all__ = [
    "assumptions",
    "Chip",
    "Cluster",
    "Deployment",
    "Fabric",
    "ModelShape",
    "Scenario",
    "ServingRun",
    "Sourced",
    "TrainingRecipe",
    "TrainingRun",
    "chip",
    "chips",
    "cluster",
    "clusters",
    "custom_chip",
    "custom_fabric",
    "deployment",
    "deployments",
    "doc000",
    "doc002",
    "fabric",
    "fabrics",
    "literature",
    "model",
    "models",
    "recipe",
    "recipes",
    "serving_measurements",
    "step_measurements",
    "serving_runs",
    "training_measurements",
    "training_runs",
]
