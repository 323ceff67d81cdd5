"""A serving step's work, for the one pricer (``hwlib.pricing``).

A step of T new tokens over b sequences has three parts (``PARTS``): the weights (read once, 2 FLOPs per weight
per token), the attention (the sequences' cache reads and score FLOPs, from the transformer table) and the
activations (each matmul's input and output between kernels), and the tensor-parallel all-reduces (and an MoE's
expert-parallel all-to-alls), exposed, on the group's placement. ``hw.inference_step`` prices one uniform batch;
``hw.simulate_serving`` prices each step of a schedule from ``step_tables``, the same pricer evaluated once per
token count. Chapters :ref:`ch-serving`, :ref:`ch-forecast` and :ref:`ch-serving-many`.
"""

from __future__ import annotations

import numpy as np

from hwlib.collectives import with_latency
from hwlib.data.records import ModelShape
from hwlib.data.records.layer_rules import EP_ALL_TO_ALLS_PER_LAYER, FORWARD_FLOPS_PER_PARAM
from hwlib.efficiency import Efficiency, layer_quantization, require_efficiency, resolve
from hwlib.precision import Precision
from hwlib.pricing import Collective, Part, Work, attention_rate, price
from hwlib.units import dtype_bytes

PARTS = ("weights", "attention", "activations")


def held_weight_bytes(model: ModelShape, weight_dtype: str, n_chips: int, attention_dp: bool = False) -> float:
    """Bytes of weights ``n_chips`` chips hold together: the model once, and under attention data parallelism
    everything but the routed experts once more on every chip after the first."""
    whole = float(model.params()) - float(model.table().expert_params()) * model.n_experts if attention_dp else 0.0
    return float(model.weight_bytes(weight_dtype)) + (n_chips - 1) * whole * dtype_bytes(weight_dtype)


class StepPricer:
    """Steps of ``model`` on ``n_chips`` chips of ``chip`` placed as ``topology`` (None for one chip) at
    ``precision``, priced by ``hwlib.pricing.price``; ``expert_parallel`` and ``attention_dp`` as in
    ``hw.inference_step``; the forecast at ``efficiency``."""

    def __init__(
        self,
        model: ModelShape,
        chip: object,
        topology: object,
        n_chips: int,
        precision: Precision,
        *,
        link_latency_s: float | None = None,
        expert_parallel: bool = False,
        attention_dp: bool = False,
        efficiency: Efficiency | None = None,
    ) -> None:
        for name, flag in (("expert_parallel", expert_parallel), ("attention_dp", attention_dp)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        if expert_parallel and not model.is_moe:
            raise ValueError(f"expert_parallel needs a mixture-of-experts model; {model.name} is dense")
        if attention_dp and not expert_parallel:
            raise ValueError("attention_dp needs expert_parallel=True: the routed experts are what the chips split")
        if expert_parallel and n_chips > model.n_experts:
            raise ValueError(
                f"expert_parallel over n_chips={n_chips} leaves chips without an expert: {model.name} has "
                f"{model.n_experts} routed experts per layer"
            )
        if topology is not None and link_latency_s is not None:
            topology = with_latency(topology, float(link_latency_s))
        self.model, self.chip, self.topology, self.count = model, chip, topology, n_chips
        self.table = model.table()
        self.precision = precision
        self.weight_bytes = dtype_bytes(precision.weight_dtype)
        self.activation_bytes = dtype_bytes(precision.activation_dtype)
        self.efficiency = require_efficiency(efficiency)
        self.eff = resolve(chip, precision.compute_dtype, self.efficiency)
        self.expert_parallel = expert_parallel and topology is not None
        self.attention_dp = attention_dp and topology is not None
        routed = self.table.n_moe_layers if self.expert_parallel else 0
        self.allreduces = (
            self.table.tp_allreduces_per_layer * self.table.n_layers - routed
            if topology is not None and not self.attention_dp
            else 0
        )
        self.replicated = self.table.matmul_params(active=False) - self.table.expert_params() * model.n_experts
        # an MLA's down-projections stay whole on every tensor-parallel chip (vLLM's fused_qkv_a_proj, disable_tp)
        whole = model.mla is not None and topology is not None and not self.attention_dp
        self.unsplit = model.mla.down_params(model.d_model) * model.n_layers if whole else 0.0
        self.alltoalls = EP_ALL_TO_ALLS_PER_LAYER * routed

    def collectives(self, tokens: np.ndarray) -> tuple[Collective, ...]:
        """The step's all-reduces and all-to-alls, reduced in at least bf16 as engines do: after the step's work in
        the forecast, and in the bound behind it, as engines that overlap or fuse them with the matmuls run them
        (the bound takes the slower of the two)."""
        if self.topology is None:
            return ()
        wire = max(self.activation_bytes, dtype_bytes("bf16"))
        found = []
        if self.allreduces:
            reduced = tokens * self.table.tp_elements_per_token() * wire
            found.append(
                Collective("tp all-reduce", "all-reduce", reduced, self.topology, self.allreduces, None, "compute")
            )
        if self.alltoalls:
            dispatched = tokens / self.count * self.model.experts_per_token * self.table.d_model * wire
            dispatch = Collective(
                "ep all-to-all", "all-to-all", dispatched, self.topology, self.alltoalls, None, "compute"
            )
            found.append(dispatch)
        return tuple(found)

    def work(self, tokens, sequences, attention_flops, attention_bytes) -> Work:
        """One chip's share of steps of ``tokens`` new tokens over ``sequences`` sequences whose attention takes
        ``attention_flops`` and moves ``attention_bytes`` (whole-group counts; arrays broadcast)."""
        table, count = self.table, self.count
        tokens = np.asarray(tokens, dtype=float)
        quantized = (
            layer_quantization(self.chip, table, np.maximum(tokens, 1.0), count, self.expert_parallel)
            if self.eff.quantization
            else 1.0
        )
        touched = table.touched_matmul_params(tokens)
        read = self.replicated + (touched - self.replicated) / count if self.attention_dp else touched / count
        unsplit = self.unsplit * (1.0 - 1.0 / count)  # what each chip adds to its share of the unsplit weights
        flops = table.weight_flops(tokens) / count + FORWARD_FLOPS_PER_PARAM * unsplit * tokens
        parts = {
            "weights": Part(flops, (read + unsplit) * self.weight_bytes, "matmul", quantized),
            "attention": Part(
                np.asarray(attention_flops, dtype=float) / count,
                np.asarray(attention_bytes, dtype=float) / count,
                "attention",
            ),
            "activations": Part(0.0, tokens * table.activation_elements_per_token() * self.activation_bytes / count),
        }
        return Work(parts, self.collectives(tokens), layers=self.model.n_layers, sequences=sequences)

    def price(self, tokens, sequences, attention_flops, attention_bytes):
        """``hwlib.pricing.Price`` of these steps (see ``work``), and their parts' whole-group FLOPs and bytes."""
        work = self.work(tokens, sequences, attention_flops, attention_bytes)
        priced = price(work, self.chip, self.precision.compute_dtype, self.efficiency)
        flops = {name: np.asarray(part.flops) * self.count for name, part in work.parts.items()}
        moved = {name: np.asarray(part.bytes) * self.count for name, part in work.parts.items()}
        return priced, flops, moved

    def attention_seconds(self, forecast: bool) -> tuple[float, float]:
        """Seconds per whole-group attention FLOP and per byte the attention moves, on one chip's share: at the
        bound, or at the forecast's achieved rates."""
        chip, count, dtype = self.chip, self.count, self.precision.compute_dtype
        if not forecast:
            return 1.0 / (count * chip.peak(dtype)), 1.0 / (count * chip.hbm_bytes_per_s)
        rate = attention_rate(chip, dtype, self.efficiency) * self.eff.attention
        return 1.0 / (count * rate), 1.0 / (count * chip.hbm_bytes_per_s * self.eff.hbm)

    def step_tables(self, max_tokens: int) -> dict:
        """The price of a step of T = 0 ... ``max_tokens`` new tokens apart from its attention, as arrays indexed by
        T, at the bound and at the forecast: (compute, memory, sequential) seconds of the weights and activations
        (``hwlib.pricing.step_seconds``) and the collectives (all of them at the bound, which hides them behind the
        step's work; those left exposed in the forecast). A schedule's step adds its attention."""
        tokens = np.arange(max_tokens + 1, dtype=float)
        priced, _, _ = self.price(tokens, 0.0, 0.0, 0.0)
        zeros = np.zeros_like(tokens)
        token_parts = [name for name in PARTS if name != "attention"]
        sequential = sum(priced.forecast_parts_s[name] for name in token_parts) + zeros
        compute, memory = priced.compute_s + zeros, priced.memory_s + zeros
        return {
            "bound": ((compute, memory, np.maximum(compute, memory)), sum(priced.comm_s.values(), zeros)),
            "forecast": (
                (priced.forecast_compute_s + zeros, priced.forecast_memory_s + zeros, sequential),
                sum(priced.forecast_exposed_s.values(), zeros),
            ),
        }

    def overhead_s(self, sequences: object) -> np.ndarray:
        """Each layer's and each sequence's overhead in a forecast step (the calibrated fit)."""
        return self.model.n_layers * self.eff.layer_overhead_s + np.asarray(sequences) * self.eff.sequence_overhead_s
