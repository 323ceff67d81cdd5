"""Collectives: all-gather, reduce-scatter, all-reduce and all-to-all on rings, tori, switches and hierarchies.

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
``collective_time_s`` applies the same ring steps to every collective on the topologies built by
``ring``, ``torus`` (a ring per axis, all axes at once as TPU ICI allows: Austin et al., "How to
Scale Your Model", 2025, Sharding), ``switch`` and ``hierarchy`` (levels in series or pipelined).
Explained in the chapters :ref:`ch-seven-b-regimes`, :ref:`ch-batch-squeeze`, :ref:`ch-serving`
and :ref:`ch-sharding`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hwlib._checks import Number, broadcast, non_negative, one_of, positive, scalar_or_array
from hwlib.data import doc002


def allreduce_time_s(
    n_params: Number,
    n_chips: Number,
    fabric_bytes_per_s: Number,
    b_ar: Number = doc002.B_AR,
    *,
    latency_s: Number = 0.0,
) -> Number:
    """Seconds of a ring all-reduce: b_ar P (N - 1) / N / fabric bandwidth + 2 (N - 1) latency_s (0 for N = 1).

    ``fabric_bytes_per_s`` is per direction per chip (``hw.fabric(...).bytes_per_s``); ``n_params``
    counts elements (gradients, or activations in :ref:`ch-serving`). Chapter :ref:`ch-seven-b-regimes`.
    """
    params, chips, bandwidth, size, alpha = broadcast(
        n_params=positive("n_params", n_params),
        n_chips=positive("n_chips", n_chips, integral=True),
        fabric_bytes_per_s=positive("fabric_bytes_per_s", fabric_bytes_per_s),
        b_ar=non_negative("b_ar", b_ar),
        latency_s=non_negative("latency_s", latency_s),
    )
    # a ring all-reduce sends each byte twice: b_ar P = 2 x (bytes of the array)
    hops, moved = _ring_terms("all-reduce", size * params / 2.0, chips, bandwidth, alpha)
    return scalar_or_array(hops + moved)


def hierarchical_allreduce_time_s(
    n_params: Number,
    n_chips: Number,
    node_bytes_per_s: Number,
    network_bytes_per_s: Number | None,
    node_size: Number,
    b_ar: Number = doc002.B_AR,
    *,
    pipelined: bool = False,
) -> Number:
    """Seconds of a hierarchical all-reduce of the gradients on ``n_chips`` in nodes of ``node_size``.

    Inside a node the n = min(N, node_size) chips reduce-scatter and all-gather over the node
    fabric (b_ar P (n - 1) / n / W_node); across the M = N / n nodes each chip all-reduces its
    1 / n shard over its own NIC (b_ar (P / n)(M - 1) / M / W_net). The levels run in series
    (document 002's model, the default) or, ``pipelined`` chunk by chunk, in the time of the slower.
    N beyond one node must be a whole number of nodes. Equals the flat ring for N <= node_size.
    Chapter :ref:`ch-batch-squeeze`.
    """
    params, chips, node_bw, size, per_param = broadcast(
        n_params=positive("n_params", n_params),
        n_chips=positive("n_chips", n_chips, integral=True),
        node_bytes_per_s=positive("node_bytes_per_s", node_bytes_per_s),
        node_size=positive("node_size", node_size, integral=True),
        b_ar=non_negative("b_ar", b_ar),
    )
    group = np.minimum(chips, size)
    nodes = chips / group
    if (nodes != np.round(nodes)).any():
        bad = chips[nodes != np.round(nodes)].flat[0]
        raise ValueError(f"n_chips beyond one node must be a whole number of nodes of node_size, got {bad:g}")
    inside = np.asarray(allreduce_time_s(params, group, node_bw, per_param))
    if (nodes > 1).any():
        if network_bytes_per_s is None:
            raise ValueError(
                "network_bytes_per_s is needed when n_chips exceeds node_size (the all-reduce leaves the node)"
            )
        network = positive("network_bytes_per_s", network_bytes_per_s)
        across = np.asarray(allreduce_time_s(params / group, nodes, network, per_param))
    else:
        across = np.zeros_like(inside)
    return scalar_or_array(np.maximum(inside, across) if _flag("pipelined", pipelined) else inside + across)


# --- collectives on topologies: the alpha-beta model --------------------------------------------

COLLECTIVES = ("all-gather", "reduce-scatter", "all-reduce", "all-to-all")
"""The collectives ``collective_time_s`` models. ``n_bytes`` is the whole array one chip ends with (all-gather),
starts with (reduce-scatter), holds (all-reduce) or sends out in pieces (all-to-all)."""


@dataclass(frozen=True)
class Ring:
    """``n_chips`` in a ring; each link carries ``link_bytes_per_s`` per direction and waits ``latency_s`` per step.

    ``bidirectional``: both directions of every link carry half the data (two rings). Chapter :ref:`ch-sharding`.
    """

    n_chips: int
    link_bytes_per_s: float
    latency_s: float = 0.0
    bidirectional: bool = False
    where: str = ""


@dataclass(frozen=True)
class Torus:
    """A torus of ``shape`` (one ring per axis line; ``wraparound`` per axis, else a line with half the
    bandwidth), links in both directions at ``link_bytes_per_s`` each way. ``multi_axis``: a collective over
    several axes splits its array over them and runs every axis at once, as TPU ICI allows. Chapter
    :ref:`ch-sharding`.
    """

    shape: tuple[int, ...]
    link_bytes_per_s: float
    latency_s: float = 0.0
    wraparound: tuple[bool, ...] = ()
    multi_axis: bool = True
    where: str = ""

    @property
    def n_chips(self) -> int:
        return int(np.prod(self.shape))


@dataclass(frozen=True)
class Switch:
    """``n_chips`` on one switch (an NVLink/NVSwitch domain): each chip injects ``bytes_per_s`` per direction.

    NCCL runs rings over it: ``latency_s`` per ring step. Where the switch reduces (NVLink SHARP, InfiniBand
    SHARP), ``reduction_latency_s`` is that all-reduce's latency: it sends each chip's array in once and takes
    the sum out once, G / bytes_per_s after that latency, against a ring's 2 (p - 1) / p G / bytes_per_s after
    2 (p - 1) steps; an all-reduce takes the faster of the two, as NCCL picks. Chapter :ref:`ch-sharding`.
    """

    n_chips: int
    bytes_per_s: float
    latency_s: float = 0.0
    reduction_latency_s: float | None = None
    where: str = ""


@dataclass(frozen=True)
class Hierarchy:
    """Domains of ``inner`` joined by ``outer`` (one chip of each domain per outer collective, every chip with
    its own NIC). ``pipelined``: the levels overlap chunk by chunk, as NCCL's ring and tree algorithms run
    them; the slower level's bytes set the time, plus both levels' step latencies; else they run one after
    the other (the source documents' form). Chapter :ref:`ch-sharding`.
    """

    inner: object
    outer: object
    pipelined: bool = False
    where: str = ""

    @property
    def n_chips(self) -> int:
        return self.inner.n_chips * self.outer.n_chips


TOPOLOGIES = (Ring, Torus, Switch, Hierarchy)


def ring(n_chips: int, link_bytes_per_s: float, latency_s: float = 0.0, bidirectional: bool = False) -> Ring:
    """A ring of ``n_chips`` (per-direction link bandwidth in B/s, latency per step in s)."""
    return Ring(
        _count("n_chips", n_chips),
        _rate("link_bytes_per_s", link_bytes_per_s),
        _latency(latency_s),
        _flag("bidirectional", bidirectional),
    )


def torus(
    shape: tuple[int, ...],
    link_bytes_per_s: float,
    latency_s: float = 0.0,
    wraparound: bool | tuple[bool, ...] = True,
    multi_axis: bool = True,
) -> Torus:
    """A torus of ``shape`` chips (per-direction link bandwidth in B/s, latency per hop in s)."""
    if not isinstance(shape, (tuple, list)) or not shape:
        raise TypeError(f"shape must be a tuple of axis sizes such as (4, 4, 8), got {shape!r}")
    axes = tuple(_count("shape", size) for size in shape)
    wraps = (wraparound,) * len(axes) if isinstance(wraparound, bool) else tuple(wraparound)
    if len(wraps) != len(axes) or not all(isinstance(w, bool) for w in wraps):
        raise ValueError(f"wraparound must be True/False or one per axis of {axes}, got {wraparound!r}")
    return Torus(
        axes, _rate("link_bytes_per_s", link_bytes_per_s), _latency(latency_s), wraps, _flag("multi_axis", multi_axis)
    )


def switch(
    n_chips: int, bytes_per_s: float, latency_s: float = 0.0, reduction_latency_s: float | None = None
) -> Switch:
    """``n_chips`` on one switch (per-chip per-direction bandwidth in B/s, latency per ring step in s); with
    ``reduction_latency_s`` (s) the switch reduces all-reduces in the network."""
    reduction = None if reduction_latency_s is None else float(non_negative("reduction_latency_s", reduction_latency_s))
    return Switch(_count("n_chips", n_chips), _rate("bytes_per_s", bytes_per_s), _latency(latency_s), reduction)


def hierarchy(inner: object, outer: object, pipelined: bool = False) -> Hierarchy:
    """Domains of ``inner`` joined by ``outer``, the two levels in series or ``pipelined``."""
    for name, level in (("inner", inner), ("outer", outer)):
        if not isinstance(level, (Ring, Torus, Switch)):
            raise TypeError(f"{name} must be a ring, torus or switch (hw.ring, hw.torus, hw.switch), got {level!r}")
    return Hierarchy(inner, outer, _flag("pipelined", pipelined))


def with_latency(topology: object, latency_s: float) -> object:
    """``topology`` with every level's step latency set to ``latency_s`` (s)."""
    if isinstance(topology, Hierarchy):
        return replace(
            topology, inner=with_latency(topology.inner, latency_s), outer=with_latency(topology.outer, latency_s)
        )
    if not isinstance(topology, (Ring, Torus, Switch)):
        raise TypeError(f"topology must be built by hw.ring, hw.torus, hw.switch or hw.hierarchy, got {topology!r}")
    return replace(topology, latency_s=_latency(latency_s))


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or np.ndim(value):
        raise TypeError(f"{name} must be one whole number of chips, got {value!r}")
    return int(positive(name, value, integral=True))


def _rate(name: str, value: object) -> float:
    return float(positive(name, value))


def _latency(value: object) -> float:
    return float(non_negative("latency_s", value))


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def _ring_terms(
    kind: str, n_bytes: np.ndarray, chips: int, bandwidth: float, latency: float
) -> tuple[np.ndarray, np.ndarray]:
    """(latency, bandwidth) seconds on a ring of ``chips`` whose chips each send ``bandwidth`` B/s around it.

    Arrays broadcast (``allreduce_time_s`` passes many chip counts at once)."""
    if kind == "all-to-all":  # pieces of n / p travel p / 4 hops on average over links used both ways
        return (chips - 1.0) * latency + 0.0 * n_bytes, n_bytes * chips / 4.0 / bandwidth
    steps = 2.0 if kind == "all-reduce" else 1.0  # an all-reduce is a reduce-scatter then an all-gather
    return steps * (chips - 1.0) * latency + 0.0 * n_bytes, steps * (chips - 1.0) / chips * n_bytes / bandwidth


def _torus_terms(kind: str, n_bytes: np.ndarray, topology: Torus) -> tuple[np.ndarray, np.ndarray]:
    """A ring per axis: the bandwidth terms telescope to those of one ring of all p chips at one axis's rate,
    divided by the number of axes when they all run at once; latency adds axis by axis. An all-to-all is priced
    at each axis's bisection: p Q / (8 beta_link) on a ring of p chips, p Q / (4 beta_link) on a line (the middle
    link carries (p / 2)^2 pieces of Q / p in each direction)."""
    axes = [(size, wrap) for size, wrap in zip(topology.shape, topology.wraparound) if size > 1]
    if not axes:
        return np.zeros_like(n_bytes), np.zeros_like(n_bytes)
    steps = 2.0 if kind == "all-reduce" else 1.0
    latency = np.full_like(n_bytes, steps * sum(size - 1.0 for size, _ in axes) * topology.latency_s)
    # with wraparound each axis is a ring used in both directions; a line without it, in effect one direction
    rates = [topology.link_bytes_per_s * (2.0 if wrap else 1.0) for _, wrap in axes]
    if kind == "all-to-all":  # the bisection bound of each axis, over 2 directions of D axes
        # an axis of a chips cut in half: (a / 2)^2 pieces of n / a cross the cut each way, a n / 4 bytes, over
        # 2 links per direction with wraparound (a ring), over 1 on a line; as a / 4 (ring) or a / 2 (line)
        # "hops" of the whole array at the 2 directions' rate: a n / (8 beta_link) on a ring, a n / (4 beta_link)
        # on a line (the average path, a / 3 hops on a line, would undercount its middle link)
        hops = sum(size / 4.0 if wrap else size / 2.0 for size, wrap in axes)
        return latency, n_bytes * hops / (2.0 * len(axes) * topology.link_bytes_per_s)
    chips = topology.n_chips
    parallel = len(axes) if topology.multi_axis else 1
    return latency, steps * (chips - 1.0) / chips * n_bytes / (parallel * min(rates))


def _terms(kind: str, n_bytes: np.ndarray, topology: object) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(topology, Ring):
        both = topology.bidirectional or kind == "all-to-all"
        return _ring_terms(
            kind, n_bytes, topology.n_chips, topology.link_bytes_per_s * (2.0 if both else 1.0), topology.latency_s
        )
    if isinstance(topology, Switch):
        if kind == "all-to-all":  # every chip sends (p - 1) / p of its array straight through the switch
            share = (topology.n_chips - 1.0) / topology.n_chips
            return np.full_like(n_bytes, topology.latency_s), share * n_bytes / topology.bytes_per_s
        ring = _ring_terms(kind, n_bytes, topology.n_chips, topology.bytes_per_s, topology.latency_s)
        if kind == "all-reduce" and topology.reduction_latency_s is not None and topology.n_chips > 1:
            reduced = (np.full_like(n_bytes, topology.reduction_latency_s), n_bytes / topology.bytes_per_s)
            faster = _sum(reduced) < _sum(ring)
            return np.where(faster, reduced[0], ring[0]), np.where(faster, reduced[1], ring[1])
        return ring
    if isinstance(topology, Torus):
        return _torus_terms(kind, n_bytes, topology)
    raise TypeError(f"topology must be built by hw.ring, hw.torus, hw.switch or hw.hierarchy, got {topology!r}")


def _outer_rate(topology: object) -> float:
    return topology.bytes_per_s if isinstance(topology, Switch) else topology.link_bytes_per_s


def collective_time_s(kind: str, n_bytes: Number, topology: object) -> Number:
    """Seconds of one collective of ``n_bytes`` (see ``COLLECTIVES``) on ``topology``: latency plus bandwidth terms.

    Ring steps each wait one latency and move 1/p of the array (Thakur, Rabenseifner and Gropp 2005);
    a torus runs a ring per axis, all axes at once when ``multi_axis``; a hierarchy reduce-scatters
    inside each domain, runs the collective on a 1/g share across domains and all-gathers inside again
    (series), or overlaps the levels chunk by chunk (``pipelined``: the slower level's bytes, plus both
    levels' step latencies, which a pipeline does not hide). Vectorised over ``n_bytes``.
    Chapter :ref:`ch-sharding`.
    """
    one_of("kind", kind, COLLECTIVES)
    size = np.asarray(non_negative("n_bytes", n_bytes), dtype=float)
    if isinstance(topology, Hierarchy):
        inner, outer, total = topology.inner, topology.outer, topology.n_chips
        if kind == "all-to-all":  # pieces for chips in the domain stay inside; the rest cross the NICs
            inside = _terms("all-to-all", size * inner.n_chips / total, inner)
            across = (np.full_like(size, outer.latency_s), (total - inner.n_chips) / total * size / _outer_rate(outer))
        else:  # reduce-scatter in the domain, the collective on a 1/g share across, all-gather in the domain
            inside = _terms(kind, size, inner)
            across = _terms(kind, size / inner.n_chips, outer)
        if topology.pipelined:  # the bytes of the two levels overlap; each level's step latencies still add
            return scalar_or_array(inside[0] + across[0] + np.maximum(inside[1], across[1]))
        return scalar_or_array(_sum(inside) + _sum(across))
    return scalar_or_array(_sum(_terms(kind, size, topology)))


def _sum(terms: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    return terms[0] + terms[1]
