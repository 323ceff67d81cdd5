"""The batch-size squeeze: per-step fixed costs of data parallelism and the time-optimal global batch.

One data-parallel step on N chips pays, besides the compute on its B / N tokens, two costs
that do not depend on the batch:

* the optimizer update, b_opt bytes per parameter through HBM, sharded over the N chips
  (``hw.optimizer_bytes``; ZeRO stage 1, Rajbhandari et al. 2020, Sec. 5.1);
* the gradient all-reduce, a flat ring or hierarchical across nodes (``hw.allreduce_time_s``,
  ``hw.hierarchical_allreduce_time_s``).

Expressed in tokens, the fixed time is T_fixed = t_fixed pi / (6 P) token-equivalents per
chip (6 P FLOPs per token for forward and backward; Kaplan et al. 2020, Sec. 2.1).

How many steps a batch needs comes from McCandlish et al., "An empirical model of
large-batch training" (arXiv:1812.06162, 2018, Sec. 2.2, Eq. 2.11-2.12): to reach a given
loss, steps S and examples (here tokens) E = B S trade off as (S / S_min - 1)(E / E_min - 1) = 1,
with the critical batch B_crit = E_min / S_min. Hence S = S_min (1 + B_crit / B) and
E = E_min (1 + B / B_crit). B_crit grows as the loss falls; Kaplan et al. (arXiv:2001.08361,
2020, Sec. 5.1, Eq. 5.1) fit B_crit(L) = B_* / L^(1 / alpha_B) with B_* = 2e8 tokens and
alpha_B = 0.21 (L in nats on WebText2).

With a step time of t_fixed + (B / N) t_token, the time to target S (t_fixed + B t_token / N)
is smallest at B_opt = sqrt(B_crit N T_fixed), where it is (1 + sqrt(N T_fixed / B_crit))^2
times the ideal E_min t_token / N. Document 002's Table 6 (``table_squeeze``) evaluates
B_opt with B_crit = 1e6 tokens.

Explained in the chapter :ref:`ch-batch-squeeze` (book/batch_squeeze.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwlib._checks import Number, broadcast, non_negative, positive, scalar_or_array
from hwlib.collectives import allreduce_time_s, hierarchical_allreduce_time_s
from hwlib.data import doc002, literature
from hwlib.data.records import Chip, Cluster, require, require_chip
from hwlib.layer_model import FLOPS_PER_TOKEN_PER_D2, PARAMS_PER_LAYER_PER_D2
from hwlib.training.regimes import optimizer_bytes

FLOPS_PER_PARAM_TOKEN = FLOPS_PER_TOKEN_PER_D2 / PARAMS_PER_LAYER_PER_D2
"""Training FLOPs per parameter per token: 2 forward + 4 backward (Kaplan et al. 2020, Sec. 2.1)."""
CRITICAL_BATCH = doc002.CRITICAL_BATCH.value


def _count(name: str, value: object) -> np.ndarray:
    return positive(name, value, integral=True)


def optimal_batch_tokens(critical_batch_tokens: Number, n_chips: Number, fixed_cost_tokens: Number) -> Number:
    """Time-optimal global batch (tokens): B_opt = sqrt(B_crit N T_fixed).

    Minimises S (t_fixed + B t_token / N) with S = S_min (1 + B_crit / B) (McCandlish et al.
    2018, Eq. 2.11). Chapter :ref:`ch-batch-squeeze`.
    """
    crit, chips, fixed = broadcast(
        critical_batch_tokens=positive("critical_batch_tokens", critical_batch_tokens),
        n_chips=_count("n_chips", n_chips),
        fixed_cost_tokens=non_negative("fixed_cost_tokens", fixed_cost_tokens),
    )
    return scalar_or_array(np.sqrt(crit * chips * fixed))


def critical_batch_from_loss(loss_nats: Number) -> Number:
    """Kaplan et al.'s critical batch (tokens) at loss L (nats): B_* / L^(1 / alpha_B), B_* = 2e8, alpha_B = 0.21.

    A fit to WebText2 language models (Kaplan et al. 2020, Sec. 5.1, Eq. 5.1); it grows as
    training lowers the loss. Chapter :ref:`ch-batch-squeeze`.
    """
    loss = positive("loss_nats", loss_nats)
    b_star, alpha = (literature.KAPLAN_CRITICAL_BATCH[k].value for k in ("b_star", "alpha_b"))
    return scalar_or_array(b_star / loss ** (1.0 / alpha))


def steps_to_target(batch_tokens: Number, min_steps: Number, critical_batch_tokens: Number = CRITICAL_BATCH) -> Number:
    """Optimizer steps to reach a target loss at global batch B: S = S_min (1 + B_crit / B).

    McCandlish et al. 2018, Eq. 2.11 with E = B S. Chapter :ref:`ch-batch-squeeze`.
    """
    batch, steps, crit = broadcast(
        batch_tokens=positive("batch_tokens", batch_tokens),
        min_steps=positive("min_steps", min_steps),
        critical_batch_tokens=positive("critical_batch_tokens", critical_batch_tokens),
    )
    return scalar_or_array(steps * (1.0 + crit / batch))


def tokens_to_target(
    batch_tokens: Number, min_tokens: Number, critical_batch_tokens: Number = CRITICAL_BATCH
) -> Number:
    """Training tokens to reach a target loss at global batch B: E = E_min (1 + B / B_crit).

    McCandlish et al. 2018, Eq. 2.11 with E = B S. Chapter :ref:`ch-batch-squeeze`.
    """
    batch, tokens, crit = broadcast(
        batch_tokens=positive("batch_tokens", batch_tokens),
        min_tokens=positive("min_tokens", min_tokens),
        critical_batch_tokens=positive("critical_batch_tokens", critical_batch_tokens),
    )
    return scalar_or_array(tokens * (1.0 + batch / crit))


@dataclass(frozen=True)
class BatchSqueeze:
    """Per-step fixed costs on N chips and the time-optimal global batch they imply.

    Times in seconds per step, batches in tokens. ``fixed_cost_tokens`` is T_fixed, the
    fixed time in token-equivalents per chip; ``optimal_batch_tokens`` is B_opt,
    ``tokens_per_chip`` is B_opt / N; ``optimal_time_ratio`` is the time to target at
    B_opt over the ideal (no fixed cost, no wasted examples). Floats for scalar inputs,
    arrays of the broadcast shape otherwise. Chapter :ref:`ch-batch-squeeze`.
    """

    n_chips: Number
    n_params: Number
    critical_batch_tokens: Number
    allreduce_time_s: Number
    optimizer_time_s: Number
    fixed_time_s: Number
    token_time_s: Number
    fixed_cost_tokens: Number
    optimal_batch_tokens: Number
    tokens_per_chip: Number
    optimal_step_time_s: Number
    optimal_time_ratio: Number


def batch_squeeze(
    chip: Chip,
    n_params: Number,
    n_chips: Number,
    fabric_bytes_per_s: Number,
    critical_batch_tokens: Number = CRITICAL_BATCH,
    b_opt: Number = doc002.B_OPT,
    b_ar: Number = doc002.B_AR,
    *,
    node_size: Number | None = None,
    node_bytes_per_s: Number | None = None,
    flops_per_token: Number | None = None,
    dtype: str = "bf16",
) -> BatchSqueeze:
    """Fixed per-step costs of data parallelism on ``n_chips`` of ``chip`` and the time-optimal batch.

    ``n_params`` P (parameters whose gradients and optimizer state move), ``fabric_bytes_per_s``
    per chip per direction (B/s). Without ``node_size`` the all-reduce is one flat ring
    over that fabric, as in document 002's Table 6; with it, the all-reduce is hierarchical:
    ``node_bytes_per_s`` inside nodes of ``node_size`` chips, ``fabric_bytes_per_s`` (one NIC
    per chip) across them. ``flops_per_token`` defaults to 6 P. Returns T_fixed =
    (t_allreduce + t_optimizer) peak / flops_per_token and B_opt = sqrt(B_crit N T_fixed).
    Broadcasts over n_params, n_chips, bandwidths, critical_batch_tokens, b_opt and b_ar.
    Document 002, Table 6 (``table_squeeze``); chapter :ref:`ch-batch-squeeze`.
    """
    chip = require_chip(chip)
    peak = chip.peak(dtype)
    P, N, bandwidth, crit = broadcast(
        n_params=positive("n_params", n_params),
        n_chips=_count("n_chips", n_chips),
        fabric_bytes_per_s=positive("fabric_bytes_per_s", fabric_bytes_per_s),
        critical_batch_tokens=positive("critical_batch_tokens", critical_batch_tokens),
    )
    if node_size is None:
        if node_bytes_per_s is not None:
            raise ValueError("node_bytes_per_s is used only with node_size (a hierarchical all-reduce)")
        allreduce = np.asarray(allreduce_time_s(P, N, bandwidth, b_ar))
    else:
        if node_bytes_per_s is None:
            raise ValueError("node_bytes_per_s is needed with node_size (the node fabric's bandwidth)")
        allreduce = np.asarray(hierarchical_allreduce_time_s(P, N, node_bytes_per_s, bandwidth, node_size, b_ar))
    optimizer = np.asarray(optimizer_bytes(P, N, b_opt)) / chip.hbm_bytes_per_s
    flops = FLOPS_PER_PARAM_TOKEN * P if flops_per_token is None else positive("flops_per_token", flops_per_token)
    fixed = allreduce + optimizer
    token = flops / peak
    fixed_tokens = fixed / token
    best = np.asarray(optimal_batch_tokens(crit, N, fixed_tokens))
    per_chip = best / N
    values = {
        "n_chips": N,
        "n_params": P,
        "critical_batch_tokens": crit,
        "allreduce_time_s": allreduce,
        "optimizer_time_s": optimizer,
        "fixed_time_s": fixed,
        "token_time_s": token,
        "fixed_cost_tokens": fixed_tokens,
        "optimal_batch_tokens": best,
        "tokens_per_chip": per_chip,
        "optimal_step_time_s": fixed + per_chip * token,
        "optimal_time_ratio": (1.0 + np.sqrt(N * fixed_tokens / crit)) ** 2,
    }
    shape = np.broadcast_shapes(*(np.shape(v) for v in values.values()))
    return BatchSqueeze(**{k: scalar_or_array(np.broadcast_to(v, shape)) for k, v in values.items()})


def cluster_squeeze(
    cluster: Cluster,
    n_params: Number,
    n_chips: Number,
    critical_batch_tokens: Number = CRITICAL_BATCH,
    b_opt: Number = doc002.B_OPT,
    b_ar: Number = doc002.B_AR,
    *,
    flops_per_token: Number | None = None,
    dtype: str = "bf16",
) -> BatchSqueeze:
    """``batch_squeeze`` on a :class:`~hwlib.data.records.Cluster`: its chip, node fabric, node size and network.

    A cluster without a node size (document 002's assumption) runs one flat ring over its
    node fabric; one without a network covers at most one domain (ValueError beyond it); a TPU
    cluster's data-centre network (``dcn``) joins whole slices of the largest size as its network.
    Chapter :ref:`ch-batch-squeeze`.
    """
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('hgx-h100-ndr')")
    chips = _count("n_chips", n_chips)
    network = cluster.network if cluster.dcn is None else cluster.dcn
    if cluster.max_chips is not None and (chips > cluster.max_chips).any():
        why = f"one {cluster.node_fabric.name} domain; no network modelled" if network is None else "a stated limit"
        raise ValueError(f"n_chips must be at most {cluster.max_chips} on {cluster.name} ({why}), got {n_chips!r}")
    options = dict(
        critical_batch_tokens=critical_batch_tokens,
        b_opt=b_opt,
        b_ar=b_ar,
        flops_per_token=flops_per_token,
        dtype=dtype,
    )
    if cluster.node_size is None or network is None:
        return batch_squeeze(cluster.chip, n_params, chips, cluster.node_fabric.bytes_per_s, **options)
    return batch_squeeze(
        cluster.chip,
        n_params,
        chips,
        network.bytes_per_s,
        node_size=cluster.node_size,
        node_bytes_per_s=cluster.node_fabric.bytes_per_s,
        **options,
    )


@dataclass(frozen=True)
class TimeToTarget:
    """Steps, tokens and wall-clock time to a target loss at global batch B (see ``time_to_target``).

    ``ideal_time_s`` is E_min t_token / N, the time with no fixed cost and no wasted
    examples; ``ratio`` = ``time_s`` / ``ideal_time_s``. Chapter :ref:`ch-batch-squeeze`.
    """

    batch_tokens: Number
    steps: Number
    tokens: Number
    step_time_s: Number
    time_s: Number
    ideal_time_s: Number
    ratio: Number


def time_to_target(squeeze: BatchSqueeze, batch_tokens: Number, min_tokens: Number) -> TimeToTarget:
    """Time to a target loss at global batch B (tokens) for the fixed costs of ``squeeze``.

    Steps S = S_min (1 + B_crit / B) with S_min = E_min / B_crit (McCandlish et al. 2018,
    Eq. 2.11-2.12); each step takes t_fixed + (B / N) t_token. ``min_tokens`` E_min is the
    tokens a tiny-batch run needs. Broadcasts ``batch_tokens`` against the squeeze's arrays
    (give B a trailing axis, e.g. ``B[:, None]``, to sweep several N at once). The minimum
    over B lies at ``squeeze.optimal_batch_tokens``. Chapter :ref:`ch-batch-squeeze`.
    """
    if not isinstance(squeeze, BatchSqueeze):
        raise TypeError(f"squeeze must be a BatchSqueeze record from hw.batch_squeeze, got {squeeze!r}")
    crit = np.asarray(squeeze.critical_batch_tokens)
    batch, target = broadcast(
        batch_tokens=positive("batch_tokens", batch_tokens), min_tokens=positive("min_tokens", min_tokens)
    )
    try:
        shape = np.broadcast_shapes(batch.shape, crit.shape)
    except ValueError as error:
        raise ValueError(
            f"batch_tokens of shape {batch.shape} must broadcast with the squeeze's shape "
            f"{crit.shape}; add an axis, e.g. batch_tokens[:, None]"
        ) from error
    steps = np.asarray(steps_to_target(batch, target / crit, crit))
    chips = np.asarray(squeeze.n_chips, dtype=float)
    token = np.asarray(squeeze.token_time_s)
    step_time = np.asarray(squeeze.fixed_time_s) + batch / chips * token
    time = steps * step_time
    ideal = target * token / chips
    values = {
        "batch_tokens": batch,
        "steps": steps,
        "tokens": steps * batch,
        "step_time_s": step_time,
        "time_s": time,
        "ideal_time_s": ideal,
        "ratio": time / ideal,
    }
    return TimeToTarget(**{k: scalar_or_array(np.broadcast_to(v, shape)) for k, v in values.items()})
