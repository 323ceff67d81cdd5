"""A serving engine's prices: one model's steps on the engine's chips, in O(1) from the pricer's tables.

``hwlib.serving.engine`` runs the schedule; here each step it takes is priced, decode-only stretches as lines in
closed form. An engine that gives each (sequence, KV head) one thread block for a decode's attention, without
splitting its context over several (``EngineProfile.splits_attention``: TensorRT-LLM before 0.13's
``multi_block_mode``), waits in its forecast for the longest such walk: the longest sequence's cache for one KV
head at 16 bits (an fp8 cache is widened before its dot products: per token it takes as long), at the bandwidth
one SM reaches alone (``Efficiency.walk_share`` times its even share). An engine that replays captured graphs
only for decode steps (``EngineProfile.eager_prefill``) adds to each forecast step that takes prompt tokens each MoE
layer's host time (``Efficiency.moe_layer_overhead_s``). Chapter :ref:`ch-serving-measured`.
"""

from __future__ import annotations

import numpy as np

from hwlib.data import assumptions
from hwlib.efficiency import kernel_record
from hwlib.pricing import step_seconds
from hwlib.serving.pricing import StepPricer
from hwlib.serving.step import kv_copies


class Priced:
    """One model's steps on the engine's chips, priced in O(1): the pricer's step tables over the step's tokens
    (``StepPricer.step_tables``) and the attention of its sequences from the transformer table, combined as
    ``hwlib.pricing.step_seconds`` combines them. ``forecast``: price at the forecast, else at the bound."""

    def __init__(self, model, chip, topology, n_chips, precision, options, max_tokens: int) -> None:
        self.model, self.table, self.count = model, model.table(), n_chips
        self.pricer = StepPricer(
            model,
            chip,
            topology,
            n_chips,
            precision,
            expert_parallel=options["expert_parallel"],
            attention_dp=options.get("attention_dp", False),
            efficiency=options["efficiency"],
        )
        self.forecast = options["estimate"] == "forecast"
        self.estimate = "forecast" if self.forecast else "bound"
        self.overlap = not self.forecast or self.pricer.efficiency.parts_overlap
        self.tables = self.pricer.step_tables(max_tokens)[self.estimate]
        layout = "batch" if options.get("attention_dp", False) else "heads"
        self.kv_dtype, self.copies = precision.kv_dtype, kv_copies(model, n_chips, layout)
        self.per_flop, self.per_byte = self.pricer.attention_seconds(self.forecast)
        plain = not model.windows and model.causal
        self.kv_per_token = model.kv_bytes_per_token(self.kv_dtype) * self.copies if not model.windows else None
        self.pair_flops = None  # one (query, key) pair's FLOPs, all layers, where a decode step's are per pair
        self.line_from = 0.0  # the least cached context from which they are
        if plain:
            self.pair_flops = float(self.table.attention_flops(1, 0, mla="absorbed"))
            if model.mla is not None:  # a latent cache absorbs once its expansion costs more than absorbing
                extra = model.mla.pair_flops(model.n_heads, "absorbed") - model.mla.pair_flops(model.n_heads, "naive")
                spare = model.mla.expansion_flops(model.n_heads) - extra
                self.line_from = float(np.ceil(extra / spare)) if spare > 0 else np.inf
        self.eager_s = 0.0  # seconds a step that takes prompt tokens adds, launched from the host
        if self.forecast and options.get("eager_prefill", False):
            self.eager_s = self.table.n_moe_layers * float(self.pricer.eff.moe_layer_overhead_s)
        self.graphed_new = 1  # the most new tokens a sequence takes in a step that replays a captured graph
        self.walk = 0.0  # seconds per cached token of the longest decode's walk (0: the engine splits it)
        walking = self.forecast and not options.get("splits_attention", True) and self.kv_per_token is not None
        if walking:
            share = self.pricer.eff.walk_share * chip.hbm_bytes_per_s / float(kernel_record(chip).parallel_tiles.value)
            self.walk = model.kv_bytes_per_token(assumptions.ATTENTION_DTYPE) / self.table.cache_heads / share

    def table_for(self, tokens: int) -> tuple:
        """The step tables, grown to hold a step of ``tokens`` new tokens (a preempted request recomputing more
        than a step's budget)."""
        if tokens >= len(self.tables[1]):
            self.tables = self.pricer.step_tables(2 * tokens)[self.estimate]
        return self.tables

    def token_terms(self, tokens: int) -> tuple[tuple, object]:
        """The (compute, memory, sequential) seconds of a step of ``tokens`` tokens apart from its attention, and
        its exposed collectives."""
        terms, exposed = self.table_for(tokens)
        return tuple(column[tokens] for column in terms), exposed[tokens]

    def overhead_s(self, sequences: object) -> object:
        return self.pricer.overhead_s(sequences) if self.forecast else 0.0

    def attention(self, new: np.ndarray, context: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """FLOPs and bytes of the attention of sequences with ``new`` tokens after ``context`` each, summed over
        the last axis (the sequences of a step)."""
        if self.pair_flops is not None and self.model.mla is None:  # every (query, key) pair costs the same
            new, context = np.asarray(new, dtype=float), np.asarray(context, dtype=float)
            flops = self.pair_flops * np.sum(new * context + new * (new + 1) / 2, axis=-1)
        else:
            flops = np.sum(self.table.attention_flops(new, context), axis=-1)
        if self.kv_per_token is not None:
            return flops, self.kv_per_token * np.sum(context + new, axis=-1)
        return flops, np.sum(self.table.kv_bytes(context + new, self.kv_dtype), axis=-1) * self.copies

    def seconds(self, tokens: int, sequences: int, attention_flops, attention_bytes, longest=0.0) -> np.ndarray:
        """Seconds of steps of ``tokens`` new tokens over ``sequences`` sequences with this attention, the longest
        decode reading ``longest`` cached tokens."""
        terms, exposed = self.token_terms(tokens)
        memory = np.maximum(attention_bytes * self.per_byte, self.walk * np.asarray(longest, dtype=float))
        attention = (attention_flops * self.per_flop, memory)
        return step_seconds(terms, attention, exposed, self.overhead_s(sequences), self.overlap, not self.forecast)

    def step_s(self, tokens: int, sequences: int, new: np.ndarray, context: np.ndarray, verifying=None) -> np.ndarray:
        """Seconds of steps whose sequences each take ``new`` tokens after ``context`` (the last axis runs over the
        sequences; a leading one over consecutive steps); ``verifying`` is a speculative engine's (``Engine``). A
        step in which a sequence takes more tokens than a captured graph runs (``graphed_new``: a prompt or its chunk)
        adds an eager engine's host time (``eager_s``)."""
        longest, eager = 0.0, 0.0
        if self.eager_s and np.any(np.asarray(new) > self.graphed_new):
            eager = self.eager_s
        if self.walk:
            new, context = np.broadcast_arrays(np.asarray(new, dtype=float), np.asarray(context, dtype=float))
            longest = np.max(np.where(new == 1, context + 1, 0.0), axis=-1, initial=0.0)
        return self.seconds(tokens, sequences, *self.attention(new, context), longest) + eager

    def in_line(self, context: np.ndarray) -> bool:
        """Whether decode steps from ``context`` take attention FLOPs per (query, key) pair (``pair_flops``): no
        window, and a latent cache's sequences past ``line_from``."""
        return self.pair_flops is not None and (np.size(context) == 0 or float(np.min(context)) >= self.line_from)

    def decode_line(self, context: np.ndarray) -> tuple[float, float, int] | None:
        """(first, growth, steps): the next ``steps`` consecutive decode steps from ``context`` take first + growth
        x i seconds (the i-th from 0), as each reads one more token per sequence, while the same roofline term
        stays the larger; None where the steps are not a line (windows, or a latent cache before it absorbs)."""
        b = context.size
        (compute, memory, sequential), exposed = self.token_terms(b)
        if not self.in_line(context) or (not self.forecast and float(exposed) > 0):  # the bound's max: not a line
            return None
        reads = float(context.sum()) + b  # tokens whose keys and values the first step reads
        per_compute, per_memory = self.pair_flops * self.per_flop, self.kv_per_token * self.per_byte
        fixed = float(exposed) + float(self.overhead_s(b))
        if self.walk and self.overlap:  # the roofline's memory term and the walk: a max, not a line
            return None
        if not self.overlap:  # the attention after the other parts: the larger of the reads' line and the walk's
            per_read = max(per_compute, per_memory)
            lines = sorted([(per_read * reads, per_read * b), (self.walk * (float(context.max()) + 1), self.walk)])
            (other, other_growth), (first, growth) = lines
            steps = np.inf if other_growth <= growth else int((first - other) / (other_growth - growth)) + 1
            return float(sequential) + first + fixed, growth, steps
        c0, c1 = float(compute) + per_compute * reads, per_compute * b
        m0, m1 = float(memory) + per_memory * reads, per_memory * b
        (first, growth), (other, other_growth) = ((c0, c1), (m0, m1)) if c0 >= m0 else ((m0, m1), (c0, c1))
        steps = np.inf if other_growth <= growth else int((first - other) / (other_growth - growth)) + 1
        return first + fixed, growth, steps

    def decode_s(self, context: np.ndarray, steps: int) -> np.ndarray:
        """Seconds of ``steps`` consecutive decode steps of one token per sequence, the first at ``context``."""
        b = context.size
        if not self.in_line(context):
            return np.atleast_1d(self.step_s(b, b, np.ones(b), context + np.arange(steps)[:, None]))
        ahead = np.arange(steps) + 1.0
        reads = float(context.sum()) + b * ahead  # tokens whose keys and values each step reads
        longest = float(context.max()) + ahead
        return np.atleast_1d(self.seconds(b, b, self.pair_flops * reads, self.kv_per_token * reads, longest))
