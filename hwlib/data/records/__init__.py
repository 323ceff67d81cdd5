"""Record types: one frozen dataclass per kind of thing hwlib knows, and the quoted number.

A :class:`Sourced` is one number in plain SI units (bytes, bytes/s, FLOP/s, W, J) with
its unit, the source and the date it was read, the text as the source printed it, and a
note where sources disagree (astropy.constants keeps constants this way). Records group
them and offer each as a plain float whose name carries its unit (``chip.hbm_bytes``), so
code reads one field one way. The numbers themselves live in the source modules beside
this one (``vendor_chips``, ``vendor_systems``, ``literature``, ``model_shapes``, ``doc000``,
``doc002``). Explained in the introduction and the chapter :ref:`ch-rooflines`.
"""

from hwlib.data.records.hardware import (
    CHIP_FAMILIES,
    ENERGY_FIELDS,
    FABRIC_KINDS,
    FABRIC_TOPOLOGIES,
    Chip,
    Cluster,
    Deployment,
    Fabric,
    require,
    require_chip,
    require_chips,
)
from hwlib.data.records.kernels import ExpertKernel, KernelEfficiency
from hwlib.data.records.latent_attention import LatentAttention
from hwlib.data.records.model_shape import ModelShape
from hwlib.data.records.quantities import READ_ON, SOURCES, Sourced, cite
from hwlib.data.records.workloads import (
    FORECAST_DOMAINS,
    LOAD_METRICS,
    MICRO_BATCH_KINDS,
    MODEL_KINDS,
    TRAINING_PARTS,
    CollectiveRun,
    DecodeRun,
    ForecastError,
    LoadRun,
    Scenario,
    ServingRun,
    SpeculationRun,
    TrainingRecipe,
    TrainingRun,
)

__all__ = [
    "CHIP_FAMILIES",
    "ENERGY_FIELDS",
    "FABRIC_KINDS",
    "FABRIC_TOPOLOGIES",
    "FORECAST_DOMAINS",
    "LOAD_METRICS",
    "MICRO_BATCH_KINDS",
    "MODEL_KINDS",
    "READ_ON",
    "SOURCES",
    "TRAINING_PARTS",
    "Chip",
    "Cluster",
    "CollectiveRun",
    "DecodeRun",
    "Deployment",
    "ExpertKernel",
    "Fabric",
    "ForecastError",
    "KernelEfficiency",
    "LatentAttention",
    "LoadRun",
    "ModelShape",
    "Scenario",
    "ServingRun",
    "Sourced",
    "SpeculationRun",
    "TrainingRecipe",
    "TrainingRun",
    "cite",
    "require",
    "require_chip",
    "require_chips",
]
