"""Collectives: the time of a gradient all-reduce, on a flat ring and hierarchically across nodes.

A ring all-reduce of G bytes on N chips moves 2 (N - 1) / N x G bytes over each chip's link in
each direction (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
workstations", JPDC 69(2), 2009); with bf16 gradients that is b_ar = 4 bytes per parameter
(document 002's B_AR). Beyond one node the all-reduce is **hierarchical**: reduce-scatter inside
each node of n chips over the node fabric, all-reduce of each chip's 1 / n shard across the
M = N / n nodes over its own NIC, all-gather inside the node (Horovod's hierarchical all-reduce,
Sergeev and Del Balso, arXiv:1802.05799, 2018; the decomposition of Cho et al., "BlueConnect",
SysML 2019). Bandwidths are per chip per direction. A ring's 2 (N - 1) steps each also wait one
link latency alpha (the alpha-beta cost of Thakur, Rabenseifner and Gropp, "Optimization of
collective communication operations in MPICH", IJHPCA 19(1), 2005, Sec. 4): 0 unless given.
Explained in the chapters "A 7B model, regime by regime", "The batch-size squeeze" and "Serving a model".
"""

from __future__ import annotations

import numpy as np

from hwlib._checks import Number, broadcast, non_negative, positive, scalar_or_array
from hwlib.data import doc002


def allreduce_time_s(n_params: Number, n_chips: Number, fabric_bytes_per_s: Number,
                     b_ar: Number = doc002.B_AR, *, latency_s: Number = 0.0) -> Number:
    """Seconds of a ring all-reduce: b_ar P (N - 1) / N / fabric bandwidth + 2 (N - 1) latency_s (0 for N = 1).

    ``fabric_bytes_per_s`` is per direction per chip (``hw.fabric(...).bytes_per_s``); ``n_params``
    counts elements (gradients, or activations in "Serving a model"). Chapter "A 7B model, regime by regime".
    """
    params, chips, bandwidth, size, alpha = broadcast(
        n_params=positive("n_params", n_params), n_chips=positive("n_chips", n_chips, integral=True),
        fabric_bytes_per_s=positive("fabric_bytes_per_s", fabric_bytes_per_s), b_ar=non_negative("b_ar", b_ar),
        latency_s=non_negative("latency_s", latency_s))
    return scalar_or_array(size * params * (chips - 1.0) / chips / bandwidth + 2.0 * (chips - 1.0) * alpha)


def hierarchical_allreduce_time_s(n_params: Number, n_chips: Number, node_bytes_per_s: Number,
                                  network_bytes_per_s: Number | None, node_size: Number,
                                  b_ar: Number = doc002.B_AR) -> Number:
    """Seconds of a hierarchical all-reduce of the gradients on ``n_chips`` in nodes of ``node_size``.

    Inside a node the n = min(N, node_size) chips reduce-scatter and all-gather over the node
    fabric (b_ar P (n - 1) / n / W_node); across the M = N / n nodes each chip all-reduces its
    1 / n shard over its own NIC (b_ar (P / n)(M - 1) / M / W_net). N beyond one node must be a
    whole number of nodes. Equals the flat ring for N <= node_size. Chapter "The batch-size squeeze".
    """
    params, chips, node_bw, size, per_param = broadcast(
        n_params=positive("n_params", n_params), n_chips=positive("n_chips", n_chips, integral=True),
        node_bytes_per_s=positive("node_bytes_per_s", node_bytes_per_s),
        node_size=positive("node_size", node_size, integral=True), b_ar=non_negative("b_ar", b_ar))
    group = np.minimum(chips, size)
    nodes = chips / group
    if (nodes != np.round(nodes)).any():
        bad = chips[nodes != np.round(nodes)].flat[0]
        raise ValueError(f"n_chips beyond one node must be a whole number of nodes of node_size, got {bad:g}")
    inside = np.asarray(allreduce_time_s(params, group, node_bw, per_param))
    if (nodes > 1).any():
        if network_bytes_per_s is None:
            raise ValueError("network_bytes_per_s is needed when n_chips exceeds node_size (the all-reduce "
                             "leaves the node)")
        network = positive("network_bytes_per_s", network_bytes_per_s)
        across = np.asarray(allreduce_time_s(params / group, nodes, network, per_param))
    else:
        across = np.zeros_like(inside)
    return scalar_or_array(inside + across)
