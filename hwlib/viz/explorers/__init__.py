"""Explorer widgets: change an assumption with a control and see the model answer at once.

Every explorer is an :class:`~hwlib.viz.explorers.base.Explorer`: it draws one matplotlib figure
once per background (chip, dtype, model ...) and, on every other change, moves only its dynamic
artists and re-encodes a small PNG, which keeps an update well under 100 ms. The image and the
summary live in ordinary ipywidgets, so a built page shows the saved state. Chips, models and
clusters are passed as records (``hw.chip("TPU v5e")``, ``hw.model("Llama 3 8B")``,
``hw.cluster("hgx-a100-hdr")``). Each class names the chapter that explains it.
"""

from __future__ import annotations

from hwlib.viz.explorers.base import Explorer
from hwlib.viz.explorers.collective import CollectiveExplorer
from hwlib.viz.explorers.commute import ByteEnergyExplorer, StepIntensityExplorer
from hwlib.viz.explorers.cost import CostExplorer
from hwlib.viz.explorers.counting import ModelShapeExplorer
from hwlib.viz.explorers.load import ServingLoadExplorer
from hwlib.viz.explorers.memory import KVCacheExplorer, MemoryBudgetExplorer
from hwlib.viz.explorers.roofline import RooflineExplorer
from hwlib.viz.explorers.serving import ServingExplorer
from hwlib.viz.explorers.shares import EnergyShareExplorer, RegimeExplorer
from hwlib.viz.explorers.squeeze import BatchSqueezeExplorer
from hwlib.viz.explorers.training import TrainingExplorer

__all__ = [
    "BatchSqueezeExplorer",
    "ByteEnergyExplorer",
    "CollectiveExplorer",
    "CostExplorer",
    "EnergyShareExplorer",
    "Explorer",
    "KVCacheExplorer",
    "MemoryBudgetExplorer",
    "ModelShapeExplorer",
    "RegimeExplorer",
    "RooflineExplorer",
    "ServingExplorer",
    "ServingLoadExplorer",
    "StepIntensityExplorer",
    "TrainingExplorer",
]
