"""Serving: one inference step of a ModelShape on one chip or over n_chips with tensor parallelism.

A step runs ``new_tokens`` tokens of each of ``batch`` sequences that already hold ``context_len``
tokens in the KV cache (prefill: new_tokens is the prompt and context_len 0; decode: one new
token). Its parts, each with FLOPs and HBM bytes:

* **weights**: every matmul weight the step touches is read once (an MoE's experts only where a
  token of the batch was routed, in expectation E (1 - (1 - k/E)^tokens) of E experts per layer)
  and used by every token: 2 FLOPs per weight per token;
* **attention**: the cache is read once and the new tokens' keys and values written; each new
  token attends to the cached tokens and, causally, to the new ones before it: 4 n_h d_h L FLOPs per
  attended token;
* **activations**: each matmul's input read and output written between kernels, at the
  activation dtype.

Time is a range: the lower bound is the roofline of the totals, max(F / pi, Q / beta) on the n_chips'
summed peak and bandwidth (Williams et al. 2009; Pope et al., "Efficiently Scaling Transformer
Inference", MLSys 2023, arXiv:2211.05102, Sec. 2-3), and the upper bound sums each part's own
roofline time (no overlap between parts). Tensor parallelism adds two all-reduces of the
activations per layer (Shoeybi et al., "Megatron-LM", arXiv:1909.08053, Sec. 3) as a ring over the
chips' scale-up fabric (``hw.allreduce_time_s``); link latency is not modelled. Chapter "Serving a
model" (to come); used by "KV-cache precision".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import (
    Number,
    broadcast,
    non_negative,
    one_of,
    positive,
    scalar_or_array,
)
from hwlib.collectives import allreduce_time_s
from hwlib.data import doc000, fabrics
from hwlib.data.records import Chip, ModelShape, require, require_chip
from hwlib.memory import tokens_that_fit
from hwlib.roofline import roofline_bound_s
from hwlib.units import BYTES_PER_ELEMENT, dtype_bytes

PARTS = ("weights", "attention", "activations")
ALLREDUCES_PER_LAYER = 2
"""Megatron's tensor-parallel layer: one all-reduce after attention, one after the MLP."""
RING_BYTES_PER_ELEMENT_FACTOR = 2.0
"""A ring all-reduce sends each element twice per direction: b_ar = 2 x element size."""


@dataclass(frozen=True)
class InferenceStep:
    """One inference step: FLOPs and bytes by part, the time range (s), communication, the bound that dominates.

    Floats for scalar inputs, arrays of the broadcast shape of batch and context otherwise.
    ``time_s`` is the lower bound, ``time_upper_s`` the no-overlap sum, both with ``comm_time_s``.
    ``bound`` is "compute", "memory" or "communication" (the largest of the three lower-bound terms).
    Chapter "Serving a model".
    """

    tokens: Number
    flops: Number
    bytes: Number
    part_flops: dict
    part_bytes: dict
    time_s: Number
    time_upper_s: Number
    comm_time_s: Number
    bound: object
    n_chips: int

    @property
    def tokens_per_s(self) -> Number:
        """New tokens per second of the whole system at the lower-bound time."""
        return scalar_or_array(np.asarray(self.tokens) / np.asarray(self.time_s))

    @property
    def tokens_per_s_per_chip(self) -> Number:
        return scalar_or_array(np.asarray(self.tokens_per_s) / self.n_chips)


def _fabric_bytes_per_s(chip: Chip) -> float:
    """Per-direction bandwidth of the chip's scale-up fabric: its vendor fabric record, else half its interconnect."""
    scale_up = fabrics(source="vendor", kind="scale-up", chip=chip)
    if scale_up:
        return scale_up[0].bytes_per_s
    if chip.interconnect_bytes_per_s is None:
        raise ValueError(f"chip {chip.label} has no interconnect: tensor parallelism over n_chips > 1 needs one")
    return chip.interconnect_bytes_per_s / 2


def inference_step(model: ModelShape, chip: Chip, batch: Number, context_len: Number, new_tokens: Number = 1,
                   n_chips: int = 1, weight_dtype: str = "bf16", kv_dtype: str = "bf16", *,
                   activation_dtype: str = "bf16", compute_dtype: str = "bf16") -> InferenceStep:
    """FLOPs, bytes and time of one step of ``batch`` sequences with ``context_len`` cached and ``new_tokens`` new tokens.

    ``n_chips`` chips split every weight, head and FLOP by tensor parallelism. ``compute_dtype`` is the
    matmuls' peak (weight-only quantization still computes in bf16). Vectorised over batch, context and
    new tokens. Chapter "Serving a model".
    """
    model = require(ModelShape, "model", model, "hw.model('llama-3-8b')")
    chip = require_chip(chip)
    for name, dtype in (("weight_dtype", weight_dtype), ("kv_dtype", kv_dtype), ("activation_dtype", activation_dtype)):
        one_of(name, dtype, BYTES_PER_ELEMENT)
    chip.peak(compute_dtype)
    if np.ndim(n_chips):
        raise TypeError(f"n_chips must be one whole number of chips (one sharding per step), got {n_chips!r}")
    count = int(positive("n_chips", n_chips, integral=True))
    sequences, context, new = broadcast(batch=positive("batch", batch, integral=True),
                                        context_len=non_negative("context_len", context_len, integral=True),
                                        new_tokens=positive("new_tokens", new_tokens, integral=True))
    tokens = sequences * new
    parts = model.param_breakdown(active=False)
    active = model.matmul_params(active=True)
    if model.is_moe:
        per_expert = parts["experts"] / (model.n_experts + model.n_shared_experts)
        share = 1.0 - (1.0 - model.experts_per_token / model.n_experts) ** tokens
        touched = model.matmul_params(active=False) - per_expert * model.n_experts * (1.0 - share)
    else:
        touched = np.full(tokens.shape, model.matmul_params(active=False))
    weight_flops = 2.0 * active * tokens
    weight_bytes = touched * dtype_bytes(weight_dtype)
    query = model.n_heads * model.head_dim
    attended = new * context + new * (new + 1) / 2.0
    attention_flops = 4.0 * model.n_layers * query * attended * sequences
    kv_per_token = model.kv_bytes_per_token(kv_dtype)
    attention_bytes = sequences * (context * kv_per_token + new * kv_per_token)
    kv_width = model.n_kv_heads * model.head_dim
    width = model.d_ff if not model.is_moe else model.d_ff_expert * (model.experts_per_token + model.n_shared_experts)
    mlp_out = (2 if model.mlp == "gated" else 1) * width
    per_layer = (model.d_model + query + 2 * kv_width) + (query + model.d_model) + (model.d_model + mlp_out) \
        + (width + model.d_model)
    activation_bytes = tokens * model.n_layers * per_layer * dtype_bytes(activation_dtype)
    flops = {"weights": weight_flops, "attention": attention_flops, "activations": np.zeros_like(weight_flops)}
    moved = {"weights": weight_bytes, "attention": attention_bytes, "activations": activation_bytes}
    total_flops, total_bytes = sum(flops.values()), sum(moved.values())
    peak, bandwidth = count * chip.peak(compute_dtype), count * chip.hbm_bytes_per_s
    compute_s, memory_s = total_flops / peak, total_bytes / bandwidth
    if count > 1:
        message = tokens * model.d_model * dtype_bytes(activation_dtype)
        per_allreduce = np.asarray(allreduce_time_s(message, count, _fabric_bytes_per_s(chip),
                                                    RING_BYTES_PER_ELEMENT_FACTOR))
        comm = ALLREDUCES_PER_LAYER * model.n_layers * per_allreduce
    else:
        comm = np.zeros_like(compute_s)
    lower = roofline_bound_s(total_flops / count, total_bytes / count, chip, compute_dtype) + comm
    upper = sum(roofline_bound_s(flops[p] / count, moved[p] / count, chip, compute_dtype) for p in PARTS) + comm
    names = np.array(["compute", "memory", "communication"])
    bound = names[np.argmax(np.stack(np.broadcast_arrays(compute_s, memory_s, comm)), axis=0)]
    return InferenceStep(
        tokens=scalar_or_array(tokens), flops=scalar_or_array(total_flops), bytes=scalar_or_array(total_bytes),
        part_flops={p: scalar_or_array(v) for p, v in flops.items()},
        part_bytes={p: scalar_or_array(v) for p, v in moved.items()},
        time_s=scalar_or_array(lower), time_upper_s=scalar_or_array(upper), comm_time_s=scalar_or_array(comm),
        bound=str(bound) if bound.ndim == 0 else bound, n_chips=count)


def max_batch(model: ModelShape, chip: Chip, context_len: Number, n_chips: int = 1, weight_dtype: str = "bf16",
              kv_dtype: str = "bf16", usable_fraction: float = doc000.USABLE_FRACTION) -> Number:
    """The largest batch of sequences of ``context_len`` tokens whose KV cache fits beside the weights (0: none).

    On ``n_chips`` chips' usable HBM (``chip.capacity_bytes``). Chapter "Serving a model".
    """
    model = require(ModelShape, "model", model, "hw.model('llama-3-8b')")
    context = positive("context_len", context_len, integral=True)
    room = tokens_that_fit(chip, model.weight_bytes(weight_dtype), model.kv_bytes_per_token(kv_dtype),
                           usable_fraction, n_chips)
    result = np.floor(np.asarray(room) / context).astype(np.int64)
    return int(result) if result.ndim == 0 else result


@dataclass(frozen=True)
class ServingCurve:
    """Decode at each batch: time per output token (s, lower and upper), tokens/s of the system and per chip,
    whether the batch's KV cache fits, and the bound. Chapter "Serving a model"."""

    batches: np.ndarray
    time_per_token_s: np.ndarray
    time_per_token_upper_s: np.ndarray
    tokens_per_s: np.ndarray
    tokens_per_s_per_chip: np.ndarray
    fits: np.ndarray
    bound: np.ndarray


def serving_curve(model: ModelShape, chip: Chip, context_len: int, batches: Number, n_chips: int = 1,
                  weight_dtype: str = "bf16", kv_dtype: str = "bf16", **options: object) -> ServingCurve:
    """The latency-throughput curve of decoding at ``context_len``: one inference step per batch in ``batches``.

    ``options`` go to ``inference_step``. Chapter "Serving a model".
    """
    sizes = np.atleast_1d(positive("batches", batches, integral=True)).astype(np.int64)
    step = inference_step(model, chip, sizes, context_len, 1, n_chips, weight_dtype, kv_dtype, **options)
    largest = max_batch(model, chip, context_len, n_chips, weight_dtype, kv_dtype)
    return ServingCurve(batches=sizes, time_per_token_s=np.asarray(step.time_s),
                        time_per_token_upper_s=np.asarray(step.time_upper_s),
                        tokens_per_s=np.asarray(step.tokens_per_s), tokens_per_s_per_chip=np.asarray(step.tokens_per_s_per_chip),
                        fits=sizes <= largest, bound=np.atleast_1d(step.bound))
