"""Where a parallel group runs: its topology on a cluster, and the time of a collective or a send on it.

A group of ``size`` chips whose members sit ``stride`` chips apart (the product of the groups laid out
inside it, innermost first as Megatron-LM lays them out; Narayanan et al. 2021, arXiv:2104.04473,
Sec. 3) stays in one node when ``stride x size`` is at most the node size, crosses only NICs when
``stride`` is a whole node, and is a hierarchy of both between; on a TPU slice it takes the torus
axes in the same order, and across the slices of a Multislice job the same way over the data-centre
network (DCN). Collective times are ``hw.collective_time_s`` on that topology. Chapter
:ref:`ch-sharding`.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from hwlib._checks import whole_count
from hwlib.collectives import Hierarchy, collective_time_s, hierarchy, switch, torus
from hwlib.data import clusters, deployment
from hwlib.data.literature import ICI_HOP_LATENCY, TORUS_WRAPAROUND_CHIPS
from hwlib.data.records import Chip, Cluster, Fabric, ModelShape, require, require_chip


def chip_of(where: Chip | Cluster) -> Chip:
    """The chip a step runs on: ``where`` itself, or the chip a cluster is built of."""
    return where.chip if isinstance(where, Cluster) else require_chip(where)


def serving_place(where: Chip | Cluster, model: ModelShape, n_chips: int) -> tuple[Chip, object]:
    """The chip of ``where`` and the topology (None for one chip) of a tensor-parallel group of ``n_chips``
    chips serving ``model`` there: ``group_topology`` of the whole group in the cluster, or in the first
    cluster built of the chip. A chip with no cluster record but a scale-up interconnect figure (an exercise's
    ``hw.custom_chip``) gets one switch at half that figure per direction. The degree must divide the query
    heads, as in training. Chapter :ref:`ch-serving`."""
    count = whole_count("n_chips", n_chips)
    chip = chip_of(where)
    found = (where,) if isinstance(where, Cluster) else clusters(chip=chip)
    cluster = found[0] if found else None
    heads = model.n_heads
    if heads is not None and heads % count:
        raise ValueError(f"n_chips={count} does not divide the {heads} attention heads of {model.name}")
    if count == 1:
        return chip, None
    if cluster is not None:
        return chip, group_topology(cluster, count, 1, count)
    if chip.interconnect_bytes_per_s is None:
        raise ValueError(
            f"chip {chip.label} has no cluster record and no interconnect: tensor parallelism over n_chips > 1 "
            "needs one (pass a hw.cluster(...))"
        )
    return chip, placed(switch(count, chip.interconnect_bytes_per_s / 2, 0.0), "node")


PLACES = ("node", "network", "hierarchy", "torus", "dcn")
"""Where a group runs: one node's switch, the NICs' network, a hierarchy of both, a TPU slice's torus axes, or the
data-centre network between slices."""


def placed(topology: object, where: str) -> object:
    """``topology`` marked with where it runs (``PLACES``)."""
    return replace(topology, where=where)


def scope_of(topology: object) -> str:
    """ "node" for a group inside one node or slice (its collectives reach ``collective_node``), "network" for one
    that crosses NICs or slices. A topology built by hand (no ``where``) is a node's unless it is a hierarchy."""
    where = getattr(topology, "where", "") or ("hierarchy" if isinstance(topology, Hierarchy) else "node")
    return "node" if where in ("node", "torus") else "network"


def group_topology(cluster: Cluster, size: int, stride: int, n_chips: int, *, pipelined: bool = True) -> object:
    """The topology of one group of ``size`` chips at ``stride`` in ``cluster`` (None for one chip).

    GPUs: the node's switch, the NICs' network (a full-bisection switch) or a hierarchy of both, whose levels
    overlap chunk by chunk as NCCL's ring and tree algorithms run them (``pipelined=False``: one after the
    other, the source documents' form).
    TPU slices: a sub-torus of the slice's shape (``hw.deployment``), its axes in layout order. A job beyond
    one slice (a cluster with a ``dcn``) runs on the slices of ``multislice``: a group inside one slice takes
    its sub-torus; one that spans slices is a hierarchy of its sub-torus in each slice (inner) and the DCN
    (outer), or the DCN alone where it has one chip per slice, marked ``where="dcn"``.
    Chapter :ref:`ch-sharding`.
    """
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('hgx-h100-ndr')")
    size, stride, n_chips = (
        whole_count(name, value) for name, value in (("size", size), ("stride", stride), ("n_chips", n_chips))
    )
    if not isinstance(pipelined, bool):
        raise TypeError(f"pipelined must be True or False, got {pipelined!r}")
    return _placed_group(cluster, size, stride, n_chips, pipelined)


@functools.lru_cache(maxsize=4096)
def _placed_group(cluster: Cluster, size: int, stride: int, n_chips: int, pipelined: bool) -> object:
    """``group_topology`` of checked arguments, each placement worked out once (a planner asks for the same
    groups over and over)."""
    if stride * size > n_chips:
        raise ValueError(f"a group of {size} chips at stride {stride} needs {stride * size} chips; n_chips={n_chips}")
    if size == 1:
        return None
    node = cluster.node_fabric
    if node.topology == "torus":  # TPU slices on their ICI, joined by the DCN where a job spans several
        count, each = multislice(cluster, n_chips)
        if count == 1 or stride * size <= each:
            return _sub_torus(cluster, size, stride, each)
        return _across_slices(cluster, size, stride, each, pipelined)
    node_size = cluster.node_size or n_chips
    outer = cluster.network
    if stride * size <= node_size:
        return placed(_switch(size, node), "node")
    if outer is None:
        raise ValueError(
            f"a group of {size} chips at stride {stride} leaves {cluster.name}'s {node_size}-chip node, "
            "and the cluster has no network"
        )
    if stride >= node_size:
        return placed(_switch(size, outer), "network")
    inside = node_size // stride
    levels = placed(_switch(inside, node), "node"), placed(_switch(size // inside, outer), "network")
    return placed(hierarchy(*levels, pipelined=pipelined), "hierarchy")


def multislice(cluster: Cluster, n_chips: int) -> tuple[int, int]:
    """(slices, chips per slice) of a job of ``n_chips`` on a TPU ``cluster``: one slice up to the ICI domain
    (``node_size``), beyond it, on a cluster with a ``dcn``, the fewest equal slices of a published shape (Multislice
    slices share one accelerator type): the largest slice size that divides the job. Chapter :ref:`ch-sharding`."""
    cluster = require(Cluster, "cluster", cluster, "hw.cluster('tpu-v5p-multislice')")
    count = whole_count("n_chips", n_chips)
    domain = cluster.node_size
    if domain is None or count <= domain:
        return 1, count
    if cluster.dcn is None:
        raise ValueError(
            f"n_chips={count} exceeds one {cluster.name} of {domain} chips and the cluster has no data-centre network "
            "(a multislice cluster has one, such as hw.cluster('tpu-v5p-multislice'))"
        )
    if cluster.max_chips is not None and count > cluster.max_chips:
        raise ValueError(f"n_chips={count}: {cluster.name} holds at most {cluster.max_chips} chips")
    sizes = np.array(deployment(cluster.chip).sizes)
    fits = sizes[(sizes <= domain) & (count % sizes == 0)]
    if fits.size == 0:
        raise ValueError(f"n_chips={count} is no whole number of equal {cluster.chip.label} slices {tuple(sizes)}")
    each = int(fits.max())
    return count // each, each


def _across_slices(cluster: Cluster, size: int, stride: int, each: int, pipelined: bool) -> object:
    """A group that spans slices of ``each`` chips: the DCN alone where its chips sit a whole slice apart, else its
    sub-torus in each slice joined by the DCN."""
    dcn = _switch(size, cluster.dcn)
    if stride % each == 0:
        return placed(dcn, "dcn")
    inside = each // stride
    if stride > each or each % stride or size % inside:
        raise ValueError(f"a group of {size} chips at stride {stride} does not tile slices of {each} chips")
    inner = _sub_torus(cluster, inside, stride, each)
    return placed(hierarchy(inner, placed(_switch(size // inside, cluster.dcn), "dcn"), pipelined=pipelined), "dcn")


def _switch(size: int, fabric: Fabric) -> object:
    """``size`` chips on ``fabric``'s switches, reducing in the network where the fabric does."""
    return switch(size, fabric.bytes_per_s, fabric.latency_s, fabric.reduction_latency_s)


def _slice_shape(cluster: Cluster, n_chips: int) -> tuple[int, ...]:
    plan = deployment(cluster.chip)
    if n_chips not in plan.sizes:
        raise ValueError(f"n_chips={n_chips} is not a slice size of {cluster.chip.label} {plan.sizes}")
    topology = plan.topologies[plan.sizes.index(n_chips)]
    return tuple(int(axis) for axis in topology.split("x"))


def _sub_torus(cluster: Cluster, size: int, stride: int, n_chips: int) -> object:
    """The axes of the slice this group spans: the slice's axes split into prime factors, the inner groups
    taking the first ``stride`` of them, this group the next ``size``; an axis wraps around only where the
    group spans all of it and the slice has wraparound: 3D slices of a full 4x4x4 cube and larger, per the
    scaling book; 2D (v5e, v6e) slices are taken without (no source states theirs)."""
    shape = _slice_shape(cluster, n_chips)
    wraps = n_chips >= TORUS_WRAPAROUND_CHIPS.value and len(shape) == 3
    factors = [(axis, prime) for axis, length in enumerate(shape) for prime in _primes(length)]
    taken, product, index = {}, 1, 0
    while product < stride:  # the inner groups' factors
        product *= factors[index][1]
        index += 1
    product = 1
    while product < size and index < len(factors):
        axis, prime = factors[index]
        taken[axis] = taken.get(axis, 1) * prime
        product *= prime
        index += 1
    if product != size:
        raise ValueError(f"a group of {size} chips at stride {stride} does not tile the {shape} slice")
    axes = sorted(taken.items())
    ring_axes = torus(
        tuple(length for _, length in axes),
        cluster.chip.ici_link_bytes_per_s,
        ICI_HOP_LATENCY.value,
        tuple(wraps and length == shape[axis] for axis, length in axes),
    )
    return placed(ring_axes, "torus")


def _primes(length: int) -> list[int]:
    found, rest, divisor = [], length, 2
    while rest > 1:
        while rest % divisor == 0:
            found.append(divisor)
            rest //= divisor
        divisor += 1
    return found


def group_time_s(kind: str, n_bytes: float, topology: object) -> float:
    """``collective_time_s`` on a group's topology; 0 for a group of one chip (None) or no bytes."""
    return 0.0 if topology is None or n_bytes <= 0 else float(collective_time_s(kind, n_bytes, topology))


def send_time_s(n_bytes: float, topology: object) -> float:
    """A send between neighbouring pipeline stages: one latency and the bytes at the group's link rate."""
    if topology is None:
        return 0.0
    level = topology.outer if hasattr(topology, "outer") else topology
    rate = level.bytes_per_s if hasattr(level, "bytes_per_s") else level.link_bytes_per_s
    return level.latency_s + n_bytes / rate
