"""The batch-size squeeze: per-step fixed costs of data parallelism and the time-optimal global batch.

One data-parallel step on N devices pays, besides the compute on its B / N tokens, two costs
that do not depend on the batch:

* the optimizer update, b_opt bytes per parameter through HBM, sharded over the N devices
  (``hwlib.layer_model.optimizer_bytes``; ZeRO stage 1, Rajbhandari et al. 2020, Sec. 5.1);
* the gradient all-reduce. A ring all-reduce moves 2 (N - 1) / N times the gradient bytes
  over each device's link in each direction (Patarasuk and Yuan, "Bandwidth optimal
  all-reduce algorithms for clusters of workstations", JPDC 69(2), 2009), which with
  bf16 gradients is b_ar = 4 bytes per parameter (``hwlib.layer_model.allreduce_time_s``).
  Beyond one node the all-reduce is **hierarchical**: reduce-scatter inside each node of G
  devices over the node fabric, all-reduce of each device's 1 / G shard across the M = N / G
  nodes over its own NIC, all-gather inside the node. This is the hierarchical all-reduce
  of Horovod (Sergeev and Del Balso, arXiv:1802.05799, 2018), which runs NCCL
  reduce-scatter, MPI all-reduce, NCCL all-gather (horovod/horovod pull request 411, 2018),
  and the decomposition of Cho et al. ("BlueConnect", SysML 2019):
  t = b_ar P (G - 1) / G / W_node + b_ar (P / G) (M - 1) / M / W_net.

Expressed in tokens, the fixed time is T_fixed = t_fixed peak / (6 P) token-equivalents per
device (6 P FLOPs per token for forward and backward; Kaplan et al. 2020, Sec. 2.1).

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

Explained in the chapter "The batch-size squeeze" (book/batch_squeeze.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from hwlib._checks import Number, broadcast, non_negative, positive, scalar_or_array
from hwlib.fabrics import Cluster
from hwlib.hardware import READ_ON, Chip, Sourced, require_chip
from hwlib.layer_model import B_AR, B_OPT, allreduce_time_s, optimizer_bytes

CRITICAL_BATCH_DOC002 = Sourced(
    1e6, "tokens", "002_501c62d3c87c2a8c.txt (table_squeeze)", READ_ON, "Bcrit = 1e6",
    "Hard-coded, no source given. Kaplan et al.'s fit gives about this value at a WebText2 "
    "loss near 3 nats.")
"""Document 002's critical batch size (tokens), the default of every function here."""

KAPLAN_CRITICAL_BATCH = MappingProxyType({
    "b_star": Sourced(2e8, "tokens", "Kaplan et al. 2020, arXiv:2001.08361, Sec. 5.1, Eq. 5.1", READ_ON,
                      "B_* ~ 2e8 tokens",
                      "Figure 10's legend prints the fit as B_crit = 2.1e8 tokens L^-4.8 (seen in a stored "
                      "description of the figure); the paper's table of fits is not among stored copies."),
    "alpha_b": Sourced(0.21, "1", "Kaplan et al. 2020, arXiv:2001.08361, Sec. 5.1, Eq. 5.1", READ_ON,
                       "alpha_B ~ 0.21", "1 / 0.21 = 4.8, the exponent of Figure 10's legend."),
})
"""Kaplan et al.'s power law for the critical batch size in the loss L (nats)."""

FLOPS_PER_PARAM_TOKEN = 6.0
"""Training FLOPs per parameter per token: 2 forward + 4 backward (Kaplan et al. 2020, Sec. 2.1)."""


def _count(name: str, value: object) -> np.ndarray:
    return positive(name, value, integral=True)


def hierarchical_allreduce_time_s(
    n_params: Number,
    n_devices: Number,
    node_bytes_per_s: Number,
    network_bytes_per_s: Number | None,
    node_size: Number,
    b_ar: Number = B_AR,
) -> Number:
    """Seconds of a hierarchical all-reduce of the gradients on ``n_devices`` in nodes of ``node_size``.

    Inside a node the G = min(N, node_size) devices reduce-scatter and all-gather over the
    node fabric (b_ar P (G - 1) / G / W_node); across the M = N / G nodes each device
    all-reduces its 1 / G shard over its own NIC (b_ar (P / G)(M - 1) / M / W_net). Bandwidths
    are per device per direction (B/s); N beyond one node must be a whole number of nodes.
    Equals the flat ring ``allreduce_time_s`` for N <= node_size, and is never slower than a
    flat ring over the NICs when W_node >= W_net. Chapter "The batch-size squeeze".
    """
    params, devices, node_bw, size, per_param = broadcast(
        n_params=positive("n_params", n_params), n_devices=_count("n_devices", n_devices),
        node_bytes_per_s=positive("node_bytes_per_s", node_bytes_per_s),
        node_size=_count("node_size", node_size), b_ar=non_negative("b_ar", b_ar))
    group = np.minimum(devices, size)
    nodes = devices / group
    if (nodes != np.round(nodes)).any():
        bad = devices[nodes != np.round(nodes)].flat[0]
        raise ValueError(f"n_devices beyond one node must be a whole number of nodes of node_size, got {bad:g}")
    inside = np.asarray(allreduce_time_s(params, group, node_bw, per_param))
    if (nodes > 1).any():
        if network_bytes_per_s is None:
            raise ValueError("network_bytes_per_s is needed when n_devices exceeds node_size "
                             "(the all-reduce leaves the node)")
        network = positive("network_bytes_per_s", network_bytes_per_s)
        across = np.asarray(allreduce_time_s(params / group, nodes, network, per_param))
    else:
        across = np.zeros_like(inside)
    return scalar_or_array(inside + across)


def optimal_batch_tokens(critical_batch_tokens: Number, n_devices: Number, fixed_cost_tokens: Number) -> Number:
    """Time-optimal global batch (tokens): B_opt = sqrt(B_crit N T_fixed).

    Minimises S (t_fixed + B t_token / N) with S = S_min (1 + B_crit / B) (McCandlish et al.
    2018, Eq. 2.11). Chapter "The batch-size squeeze".
    """
    crit, devices, fixed = broadcast(
        critical_batch_tokens=positive("critical_batch_tokens", critical_batch_tokens),
        n_devices=_count("n_devices", n_devices),
        fixed_cost_tokens=non_negative("fixed_cost_tokens", fixed_cost_tokens))
    return scalar_or_array(np.sqrt(crit * devices * fixed))


def critical_batch_from_loss(loss_nats: Number) -> Number:
    """Kaplan et al.'s critical batch (tokens) at loss L (nats): B_* / L^(1 / alpha_B), B_* = 2e8, alpha_B = 0.21.

    A fit to WebText2 language models (Kaplan et al. 2020, Sec. 5.1, Eq. 5.1); it grows as
    training lowers the loss. Chapter "The batch-size squeeze".
    """
    loss = positive("loss_nats", loss_nats)
    b_star, alpha = KAPLAN_CRITICAL_BATCH["b_star"].value, KAPLAN_CRITICAL_BATCH["alpha_b"].value
    return scalar_or_array(b_star / loss ** (1.0 / alpha))


def steps_to_target(batch_tokens: Number, min_steps: Number,
                    critical_batch_tokens: Number = CRITICAL_BATCH_DOC002.value) -> Number:
    """Optimizer steps to reach a target loss at global batch B: S = S_min (1 + B_crit / B).

    McCandlish et al. 2018, Eq. 2.11 with E = B S. Chapter "The batch-size squeeze".
    """
    batch, steps, crit = broadcast(batch_tokens=positive("batch_tokens", batch_tokens),
                                   min_steps=positive("min_steps", min_steps),
                                   critical_batch_tokens=positive("critical_batch_tokens", critical_batch_tokens))
    return scalar_or_array(steps * (1.0 + crit / batch))


def tokens_to_target(batch_tokens: Number, min_tokens: Number,
                     critical_batch_tokens: Number = CRITICAL_BATCH_DOC002.value) -> Number:
    """Training tokens to reach a target loss at global batch B: E = E_min (1 + B / B_crit).

    McCandlish et al. 2018, Eq. 2.11 with E = B S. Chapter "The batch-size squeeze".
    """
    batch, tokens, crit = broadcast(batch_tokens=positive("batch_tokens", batch_tokens),
                                    min_tokens=positive("min_tokens", min_tokens),
                                    critical_batch_tokens=positive("critical_batch_tokens", critical_batch_tokens))
    return scalar_or_array(tokens * (1.0 + batch / crit))


@dataclass(frozen=True)
class BatchSqueeze:
    """Per-step fixed costs on N devices and the time-optimal global batch they imply.

    Times in seconds per step, batches in tokens. ``fixed_cost_tokens`` is T_fixed, the
    fixed time in token-equivalents per device; ``optimal_batch_tokens`` is B_opt,
    ``tokens_per_device`` is B_opt / N; ``optimal_time_ratio`` is the time to target at
    B_opt over the ideal (no fixed cost, no wasted examples). Floats for scalar inputs,
    arrays of the broadcast shape otherwise. Chapter "The batch-size squeeze".
    """

    n_devices: Number
    n_params: Number
    critical_batch_tokens: Number
    allreduce_time_s: Number
    optimizer_time_s: Number
    fixed_time_s: Number
    token_time_s: Number
    fixed_cost_tokens: Number
    optimal_batch_tokens: Number
    tokens_per_device: Number
    optimal_step_time_s: Number
    optimal_time_ratio: Number


def batch_squeeze(
    chip: Chip,
    params: Number,
    n_devices: Number,
    fabric_bytes_per_s: Number,
    critical_batch_tokens: Number = CRITICAL_BATCH_DOC002.value,
    b_opt: Number = B_OPT,
    b_ar: Number = B_AR,
    *,
    node_size: Number | None = None,
    node_bytes_per_s: Number | None = None,
    flops_per_token: Number | None = None,
    dtype: str = "bf16",
) -> BatchSqueeze:
    """Fixed per-step costs of data parallelism on ``n_devices`` of ``chip`` and the time-optimal batch.

    ``params`` P (parameters whose gradients and optimizer state move), ``fabric_bytes_per_s``
    per device per direction (B/s). Without ``node_size`` the all-reduce is one flat ring
    over that fabric, as in document 002's Table 6; with it, the all-reduce is hierarchical:
    ``node_bytes_per_s`` inside nodes of ``node_size`` devices, ``fabric_bytes_per_s`` (one NIC
    per device) across them. ``flops_per_token`` defaults to 6 P. Returns T_fixed =
    (t_allreduce + t_optimizer) peak / flops_per_token and B_opt = sqrt(B_crit N T_fixed).
    Broadcasts over params, n_devices, bandwidths, critical_batch_tokens, b_opt and b_ar.
    Document 002, Table 6 (``table_squeeze``); chapter "The batch-size squeeze".
    """
    chip = require_chip(chip)
    peak = chip.peak(dtype)
    P, N, bandwidth, crit = broadcast(
        params=positive("params", params), n_devices=_count("n_devices", n_devices),
        fabric_bytes_per_s=positive("fabric_bytes_per_s", fabric_bytes_per_s),
        critical_batch_tokens=positive("critical_batch_tokens", critical_batch_tokens))
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
    per_device = best / N
    values = {
        "n_devices": N, "n_params": P, "critical_batch_tokens": crit, "allreduce_time_s": allreduce,
        "optimizer_time_s": optimizer, "fixed_time_s": fixed, "token_time_s": token,
        "fixed_cost_tokens": fixed_tokens, "optimal_batch_tokens": best, "tokens_per_device": per_device,
        "optimal_step_time_s": fixed + per_device * token,
        "optimal_time_ratio": (1.0 + np.sqrt(N * fixed_tokens / crit)) ** 2,
    }
    shape = np.broadcast_shapes(*(np.shape(v) for v in values.values()))
    return BatchSqueeze(**{k: scalar_or_array(np.broadcast_to(v, shape)) for k, v in values.items()})


def _require_cluster(cluster: object) -> Cluster:
    if not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a Cluster record such as hw.cluster('hgx-h100-ndr'), got {cluster!r}")
    return cluster


def cluster_squeeze(
    cluster: Cluster,
    params: Number,
    n_devices: Number,
    critical_batch_tokens: Number = CRITICAL_BATCH_DOC002.value,
    b_opt: Number = B_OPT,
    b_ar: Number = B_AR,
    *,
    flops_per_token: Number | None = None,
    dtype: str = "bf16",
) -> BatchSqueeze:
    """``batch_squeeze`` on a :class:`~hwlib.fabrics.Cluster`: its chip, node fabric, node size and network.

    A cluster without a node size (document 002's assumption) runs one flat ring over its
    node fabric; one without a network covers at most one domain (ValueError beyond it).
    Chapter "The batch-size squeeze".
    """
    cluster = _require_cluster(cluster)
    devices = _count("n_devices", n_devices)
    if cluster.max_devices is not None and (devices > cluster.max_devices).any():
        raise ValueError(f"n_devices must be at most {cluster.max_devices} on {cluster.name} "
                         f"(one {cluster.node_fabric.name} domain; no network modelled), got {n_devices!r}")
    options = dict(critical_batch_tokens=critical_batch_tokens, b_opt=b_opt, b_ar=b_ar,
                   flops_per_token=flops_per_token, dtype=dtype)
    if cluster.node_size is None or cluster.network is None:
        return batch_squeeze(cluster.chip, params, devices, cluster.node_fabric.bytes_per_s, **options)
    return batch_squeeze(cluster.chip, params, devices, cluster.network.bytes_per_s, node_size=cluster.node_size,
                         node_bytes_per_s=cluster.node_fabric.bytes_per_s, **options)


@dataclass(frozen=True)
class TimeToTarget:
    """Steps, tokens and wall-clock time to a target loss at global batch B (see ``time_to_target``).

    ``ideal_time_s`` is E_min t_token / N, the time with no fixed cost and no wasted
    examples; ``ratio`` = ``time_s`` / ``ideal_time_s``. Chapter "The batch-size squeeze".
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
    over B lies at ``squeeze.optimal_batch_tokens``. Chapter "The batch-size squeeze".
    """
    if not isinstance(squeeze, BatchSqueeze):
        raise TypeError(f"squeeze must be a BatchSqueeze record from hw.batch_squeeze, got {squeeze!r}")
    crit = np.asarray(squeeze.critical_batch_tokens)
    batch, target = broadcast(batch_tokens=positive("batch_tokens", batch_tokens),
                              min_tokens=positive("min_tokens", min_tokens))
    try:
        shape = np.broadcast_shapes(batch.shape, crit.shape)
    except ValueError as error:
        raise ValueError(f"batch_tokens of shape {batch.shape} must broadcast with the squeeze's shape "
                         f"{crit.shape}; add an axis, e.g. batch_tokens[:, None]") from error
    steps = np.asarray(steps_to_target(batch, target / crit, crit))
    devices = np.asarray(squeeze.n_devices, dtype=float)
    token = np.asarray(squeeze.token_time_s)
    step_time = np.asarray(squeeze.fixed_time_s) + batch / devices * token
    time = steps * step_time
    ideal = target * token / devices
    values = {"batch_tokens": batch, "steps": steps, "tokens": steps * batch, "step_time_s": step_time,
              "time_s": time, "ideal_time_s": ideal, "ratio": time / ideal}
    return TimeToTarget(**{k: scalar_or_array(np.broadcast_to(v, shape)) for k, v in values.items()})


SQUEEZE_COLUMNS = {
    "fixed_cost_tokens": "T_fixed (tok-eq/device)",
    "optimal_batch_tokens": "B_opt (M tokens)",
    "tokens_per_device": "T_dev,opt (tok/device)",
    "allreduce_time_s": "all-reduce (ms)",
    "optimizer_time_s": "optimizer (ms)",
    "optimal_time_ratio": "time at B_opt / ideal",
}
"""Columns of ``squeeze_table``: BatchSqueeze field -> column label (units in the label)."""


def squeeze_table(
    clusters: tuple[Cluster, ...] | list[Cluster],
    params: float,
    n_devices: Number = (8, 64, 256, 1024),
    critical_batch_tokens: float = CRITICAL_BATCH_DOC002.value,
    *,
    parity_column: bool = False,
    **options: object,
) -> "pd.DataFrame":  # noqa: F821
    """Document 002's Table 6 for any clusters: one row per (cluster, N), columns ``SQUEEZE_COLUMNS``.

    B_opt in millions of tokens, times in ms. ``parity_column=True`` adds the document's
    "comm parity at" column, which is T_fixed again. ``options`` go to ``cluster_squeeze``.
    Chapter "The batch-size squeeze".
    """
    import pandas as pd

    records = tuple(clusters) if isinstance(clusters, (list, tuple)) else ()
    if not records or not all(isinstance(c, Cluster) for c in records):
        raise TypeError(f"clusters must be a non-empty sequence of Cluster records, got {clusters!r}")
    if not isinstance(parity_column, bool):
        raise TypeError(f"parity_column must be True or False, got {parity_column!r}")
    devices = np.atleast_1d(_count("n_devices", n_devices))
    frames = []
    for record in records:
        squeeze = cluster_squeeze(record, params, devices, critical_batch_tokens, **options)
        scale = {"optimal_batch_tokens": 1e-6, "allreduce_time_s": 1e3, "optimizer_time_s": 1e3}
        frame = pd.DataFrame({label: np.asarray(getattr(squeeze, name)) * scale.get(name, 1.0)
                              for name, label in SQUEEZE_COLUMNS.items()})
        if parity_column:
            frame["comm parity at (tok/device)"] = np.asarray(squeeze.fixed_cost_tokens)
        frame.index = pd.MultiIndex.from_product([[record.name], devices.astype(int)], names=["system", "N"])
        frames.append(frame)
    return pd.concat(frames)
