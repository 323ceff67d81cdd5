"""Pricing a serving step: the one place a step's FLOPs and bytes become a bound and a forecast.

A step of T new tokens over b sequences has three parts (``PARTS``): the weights (read once, 2 FLOPs per weight
per token), the attention (the sequences' cache reads and score FLOPs, from the transformer table) and the
activations (each matmul's input and output between kernels). The bound is the roofline of their totals on the
group's summed peak and bandwidth, plus the tensor-parallel (and expert-parallel) collectives, not overlapped;
the no-overlap bound sums each part's own roofline; the forecast prices each part at what kernels reach
(``hw.Efficiency``) and adds each layer's and each sequence's overhead. ``hw.inference_step`` prices one
uniform batch; ``hw.simulate_serving`` prices each step of a schedule whose sequences differ, from tables over T
computed once. Chapters :ref:`ch-serving`, :ref:`ch-forecast` and :ref:`ch-serving-many`.
"""

from __future__ import annotations

import numpy as np

from hwlib.collectives import collective_time_s, with_latency
from hwlib.data import assumptions
from hwlib.data.records import ModelShape
from hwlib.data.records.layer_rules import EP_ALL_TO_ALLS_PER_LAYER, TP_ALLREDUCES_PER_LAYER
from hwlib.efficiency import Efficiency, layer_quantization, resolve
from hwlib.roofline import roofline_bound_s
from hwlib.units import dtype_bytes

PARTS = ("weights", "attention", "activations")


class StepPricer:
    """The prices of steps of ``model`` on ``n_chips`` chips of ``chip`` placed as ``topology`` (None for one chip),
    at the given dtypes; ``expert_parallel`` as in ``hw.inference_step``; the forecast at ``efficiency``."""

    def __init__(
        self,
        model: ModelShape,
        chip: object,
        topology: object,
        n_chips: int,
        weight_dtype: str,
        activation_dtype: str,
        compute_dtype: str,
        *,
        link_latency_s: float | None = None,
        expert_parallel: bool = False,
        efficiency: Efficiency | None = None,
    ) -> None:
        if not isinstance(expert_parallel, bool):
            raise TypeError(f"expert_parallel must be True or False, got {expert_parallel!r}")
        if expert_parallel and not model.is_moe:
            raise ValueError(f"expert_parallel needs a mixture-of-experts model; {model.name} is dense")
        if topology is not None and link_latency_s is not None:
            topology = with_latency(topology, float(link_latency_s))
        self.model, self.chip, self.topology, self.count = model, chip, topology, n_chips
        self.table = model.table()
        self.weight_dtype, self.activation_dtype = weight_dtype, activation_dtype
        self.weight_bytes, self.activation_bytes = dtype_bytes(weight_dtype), dtype_bytes(activation_dtype)
        self.compute_dtype = compute_dtype
        self.peak = chip.peak(compute_dtype)
        self.eff = resolve(chip, compute_dtype, efficiency, n_chips)
        self.expert_parallel = expert_parallel and topology is not None
        routed = self.table.n_moe_layers if self.expert_parallel else 0
        self.allreduces = TP_ALLREDUCES_PER_LAYER * self.table.n_layers - routed if topology is not None else 0
        self.alltoalls = EP_ALL_TO_ALLS_PER_LAYER * routed

    # --- the parts that follow from the step's tokens alone ---------------------------------

    def token_parts(self, tokens: np.ndarray) -> tuple[dict, dict]:
        """FLOPs and bytes of the weights and the activations of steps of ``tokens`` new tokens."""
        table = self.table
        flops = {"weights": table.weight_flops(tokens), "activations": np.zeros_like(tokens, dtype=float)}
        moved = {
            "weights": table.touched_matmul_params(tokens) * self.weight_bytes,
            "activations": tokens * table.activation_elements_per_token() * self.activation_bytes,
        }
        return flops, moved

    def collectives(self, tokens: np.ndarray) -> tuple[tuple[int, np.ndarray], ...]:
        """(how many, seconds of one) for the step's all-reduces and all-to-alls, at the bound."""
        tokens = np.asarray(tokens, dtype=float)
        if self.topology is None:
            return ((0, np.zeros_like(tokens)), (0, np.zeros_like(tokens)))
        wire = max(self.activation_bytes, dtype_bytes("bf16"))  # engines reduce in at least bf16
        per_allreduce = np.asarray(
            collective_time_s("all-reduce", tokens * self.table.tp_elements_per_token() * wire, self.topology)
        )
        per_alltoall = np.zeros_like(per_allreduce)
        if self.alltoalls:
            dispatched = tokens / self.count * self.model.experts_per_token * self.table.d_model * wire
            per_alltoall = np.asarray(collective_time_s("all-to-all", dispatched, self.topology))
        return ((self.allreduces, per_allreduce), (self.alltoalls, per_alltoall))

    def comm_s(self, collectives: tuple) -> tuple[np.ndarray, np.ndarray]:
        """Seconds of the step's collectives: at the bound, and at the achieved share, each never below the
        smallest all-reduce measured (no small all-to-all measurement was found; one hop's latency bounds both)."""
        eff = self.eff
        bound = sum(n * seconds for n, seconds in collectives)
        forecast = sum(
            n * np.maximum(seconds / eff.collective_node, eff.small_allreduce_s) for n, seconds in collectives
        )
        return bound, forecast

    def part_forecast_s(self, part: str, flops: np.ndarray, moved: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        """One part's forecast seconds: its roofline at the achieved rates (the weights' matmuls at their quantized
        fraction of the compute dtype's peak, attention at the bf16 peak's, bytes at the achieved bandwidth)."""
        eff, chip, count = self.eff, self.chip, self.count
        if part == "weights":
            quantized = (
                layer_quantization(chip, self.table, tokens, count, self.expert_parallel) if eff.quantization else 1.0
            )
            rate = self.peak * eff.matmul * quantized
        elif part == "attention":
            rate = chip.peak(assumptions.ATTENTION_DTYPE) * eff.attention
        else:
            rate = self.peak
        return np.maximum(flops / count / rate, moved / count / (chip.hbm_bytes_per_s * eff.hbm))

    def overhead_s(self, sequences: np.ndarray) -> np.ndarray:
        """Each layer's and each sequence's overhead in a step (the calibrated fit)."""
        return self.model.n_layers * self.eff.layer_overhead_s + sequences * self.eff.sequence_overhead_s

    # --- a whole step -----------------------------------------------------------------------

    def price(self, tokens, sequences, attention_flops, attention_bytes) -> dict:
        """Every number of steps of ``tokens`` new tokens over ``sequences`` sequences whose attention takes
        ``attention_flops`` and reads and writes ``attention_bytes`` (all arrays broadcast): part FLOPs and bytes,
        compute and memory seconds, the bound (lower: roofline of the totals; upper: of each part), the
        collectives and the forecast."""
        tokens = np.asarray(tokens, dtype=float)
        flops, moved = self.token_parts(tokens)
        flops["attention"], moved["attention"] = np.asarray(attention_flops), np.asarray(attention_bytes)
        flops = {p: flops[p] for p in PARTS}
        moved = {p: moved[p] for p in PARTS}
        total_flops, total_bytes = sum(flops.values()), sum(moved.values())
        compute_s = total_flops / self.count / self.peak
        memory_s = total_bytes / self.count / self.chip.hbm_bytes_per_s
        comm, comm_forecast = self.comm_s(self.collectives(tokens))
        count, chip, dtype = self.count, self.chip, self.compute_dtype
        upper = sum(roofline_bound_s(flops[p] / count, moved[p] / count, chip, dtype) for p in PARTS) + comm
        forecast = sum(self.part_forecast_s(p, flops[p], moved[p], tokens) for p in PARTS)
        return {
            "flops": flops,
            "bytes": moved,
            "total_flops": total_flops,
            "total_bytes": total_bytes,
            "compute_s": compute_s,
            "memory_s": memory_s,
            "comm_s": comm + np.zeros_like(compute_s),
            "lower_s": np.maximum(compute_s, memory_s) + comm,
            "upper_s": upper,
            "forecast_s": forecast + comm_forecast + self.overhead_s(np.asarray(sequences, dtype=float)),
        }

    def step_tables(self, max_tokens: int) -> dict:
        """What a step of T = 0 ... ``max_tokens`` new tokens costs apart from its attention, as arrays indexed by
        T: the weights' and activations' FLOPs and bytes, the bound's and the forecast's collectives and the
        forecast seconds of the weights and the activations. A schedule then prices each step in O(1)."""
        tokens = np.arange(max_tokens + 1, dtype=float)
        flops, moved = self.token_parts(tokens)
        comm, comm_forecast = self.comm_s(self.collectives(tokens))
        weights = self.part_forecast_s("weights", flops["weights"], moved["weights"], np.maximum(tokens, 1.0))
        activations = self.part_forecast_s("activations", flops["activations"], moved["activations"], tokens)
        token_forecast = weights + activations
        return {
            "flops": flops["weights"] + flops["activations"],
            "bytes": moved["weights"] + moved["activations"],
            "comm_s": comm + np.zeros_like(tokens),
            "comm_forecast_s": comm_forecast + np.zeros_like(tokens),
            "forecast_s": token_forecast,
        }
