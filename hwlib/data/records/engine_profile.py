"""A serving engine's documented defaults, as ``hw.simulate_serving(engine=...)`` takes them: its scheduler's limits
by the chip's memory, whether it chunks prompts into decode steps, whether it reserves a request's whole answer at
admission, and how much memory it gives its KV cache. Chapter :ref:`ch-serving-many`.
"""

from __future__ import annotations

from dataclasses import dataclass

from hwlib._checks import describe, whole_count
from hwlib.data.records.hardware import require_chip
from hwlib.units import GiB

MEMORY_RULES = ("total", "free")
"""How an engine sizes its KV cache: "total", a fraction of the device's memory for the weights and the cache
together (less what it reserves); "free", a fraction of the memory the weights leave."""


@dataclass(frozen=True)
class EngineTier:
    """The limits an engine sets on chips of at least ``min_memory_gib`` GiB whose name does not contain
    ``not_named``: running requests (``max_sequences``), tokens a step takes (``max_batch_tokens``) and the memory it
    keeps out of its cache's pool for activations and graphs (``reserved_gib``)."""

    min_memory_gib: float
    max_sequences: int
    max_batch_tokens: int
    reserved_gib: float = 0.0
    not_named: str = ""


@dataclass(frozen=True)
class EngineProfile:
    """A serving engine's defaults at one ``version``: its ``tiers`` (the first that the chip matches applies), whether
    prompts are prefilled in chunks beside the decodes (``chunked_prefill``; else a step that takes prompts decodes
    nothing), whether it admits a request only with room for its whole answer (``reserve_output``), and its cache's
    ``memory_rule`` (``MEMORY_RULES``) and ``memory_fraction``, and whether it stands for a whole server whose front
    end takes its time per request before the engine schedules it (``front_end``: ``Efficiency.request_overhead_s``),
    and whether its decode attention splits a sequence's context over several thread blocks (``splits_attention``:
    flash-decoding, TensorRT-LLM's ``multi_block_mode``; else one block walks each (sequence, KV head), and the
    forecast waits for the longest walk: ``Efficiency.walk_share``), and whether a step that takes prompt tokens runs
    without a captured graph, the host launching its kernels one by one (``eager_prefill``: each MoE layer then adds
    ``Efficiency.moe_layer_overhead_s``, the router's and permutation's host time that training pays per micro-batch;
    decode steps replay captured graphs and do not).
    ``source``: where each default is read (file, line, commit); ``note``: what the simulation does not follow."""

    key: str
    name: str
    version: str
    tiers: tuple[EngineTier, ...]
    chunked_prefill: bool
    reserve_output: bool
    memory_rule: str
    memory_fraction: float
    source: str
    note: str = ""
    front_end: bool = True
    splits_attention: bool = True
    eager_prefill: bool = False

    def __post_init__(self) -> None:
        if self.memory_rule not in MEMORY_RULES:
            raise ValueError(
                f"EngineProfile.memory_rule must be one of {MEMORY_RULES}, got {describe(self.memory_rule)}"
            )
        if not self.tiers or self.tiers[-1].min_memory_gib != 0:
            raise ValueError(f"EngineProfile {self.key!r} needs a last tier for every chip (min_memory_gib=0)")

    @property
    def label(self) -> str:
        """The profile as answers name it, e.g. "vLLM 0.11.0 defaults"."""
        return f"{self.name} {self.version} defaults" if self.version else self.name

    def tier(self, chip: object) -> EngineTier:
        """The tier that applies to one ``chip`` (by its memory a program sees and its name)."""
        chip = require_chip(chip)
        memory = chip.capacity_bytes / GiB
        for tier in self.tiers:
            named = tier.not_named and tier.not_named.lower() in chip.name.lower()
            if memory >= tier.min_memory_gib and not named:
                return tier
        return self.tiers[-1]

    def kv_fraction(self, chip: object, n_chips: int, weight_bytes: float) -> float:
        """The share of the memory the weights leave on ``n_chips`` chips that this engine gives its KV cache (0 where
        none is left)."""
        chip = require_chip(chip)
        memory = whole_count("n_chips", n_chips) * chip.capacity_bytes
        free = memory - weight_bytes
        if free <= 0:
            return 0.0
        if self.memory_rule == "free":
            return self.memory_fraction
        reserved = n_chips * self.tier(chip).reserved_gib * GiB
        return max(0.0, min(1.0, (self.memory_fraction * memory - reserved - weight_bytes) / free))
