"""hw.collective_time_s on rings, tori, switches and hierarchies: closed forms, limits and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hwlib as hw
from hwlib.collectives import COLLECTIVES

GB = 1e9


def test_ring_collectives_are_the_alpha_beta_formulas():
    ring = hw.ring(8, 100e9, latency_s=1e-6)
    assert hw.collective_time_s("all-gather", GB, ring) == pytest.approx(7e-6 + 7 / 8 * GB / 100e9)
    assert hw.collective_time_s("reduce-scatter", GB, ring) == hw.collective_time_s("all-gather", GB, ring)
    assert hw.collective_time_s("all-reduce", GB, ring) == pytest.approx(14e-6 + 2 * 7 / 8 * GB / 100e9)
    both = hw.ring(8, 100e9, latency_s=1e-6, bidirectional=True)
    assert hw.collective_time_s("all-gather", GB, both) == pytest.approx(7e-6 + 7 / 8 * GB / 200e9)
    # all-to-all: pieces of n / p travel p / 4 hops on average, both directions: p n / 8 per link direction
    assert hw.collective_time_s("all-to-all", GB, ring) == pytest.approx(7e-6 + 8 * GB / 8 / 100e9)
    np.testing.assert_allclose(hw.collective_time_s("all-reduce", [0, GB], ring), [14e-6, 14e-6 + 1.75e-2])


def test_the_closed_form_allreduce_is_the_ring_of_collective_time():
    for chips in (2, 8, 64):
        ring = hw.ring(chips, 50e9, latency_s=2e-6)
        assert hw.allreduce_time_s(1e9, chips, 50e9, latency_s=2e-6) == pytest.approx(
            hw.collective_time_s("all-reduce", 2e9, ring)
        )  # b_ar = 4 B/param = 2 x bf16 bytes


def test_switch_and_hierarchy():
    node = hw.switch(8, 450e9, 0.6e-6)
    assert hw.collective_time_s("all-reduce", GB, node) == pytest.approx(2 * 7 * 0.6e-6 + 2 * 7 / 8 * GB / 450e9)
    assert hw.collective_time_s("all-to-all", GB, node) == pytest.approx(0.6e-6 + 7 / 8 * GB / 450e9)
    network = hw.switch(128, 50e9)
    series, pipelined = hw.hierarchy(node, network), hw.hierarchy(node, network, pipelined=True)
    assert series.n_chips == 1024
    inside, across = hw.collective_time_s("all-reduce", GB, node), hw.collective_time_s("all-reduce", GB / 8, network)
    assert hw.collective_time_s("all-reduce", GB, series) == pytest.approx(inside + across)
    # pipelined: the slower level's bytes, plus both levels' step latencies (a pipeline does not hide them)
    latencies = 2 * 7 * 0.6e-6 + 2 * 127 * 0.0
    bytes_only = max(2 * 7 / 8 * GB / 450e9, 2 * 127 / 128 * GB / 8 / 50e9)
    assert hw.collective_time_s("all-reduce", GB, pipelined) == pytest.approx(latencies + bytes_only)
    assert max(inside, across) <= hw.collective_time_s("all-reduce", GB, pipelined) < inside + across
    # the example: 1e9 bf16 gradients on 1024 H100s, 450 GB/s NVLink, 50 GB/s NICs, 8 per node
    doc = hw.hierarchical_allreduce_time_s(1e9, 1024, 450e9, 50e9, 8)
    assert doc == pytest.approx(
        hw.collective_time_s("all-reduce", 2e9, hw.hierarchy(hw.switch(8, 450e9), hw.switch(128, 50e9)))
    )
    assert round(doc * 1e3, 1) == 17.7
    assert round(hw.hierarchical_allreduce_time_s(1e9, 1024, 450e9, 50e9, 8, pipelined=True) * 1e3, 1) == 9.9
    # all-to-all across nodes: what leaves the node goes through the NICs
    a2a = hw.collective_time_s("all-to-all", GB, series)
    assert a2a == pytest.approx(hw.collective_time_s("all-to-all", GB * 8 / 1024, node) + 1016 / 1024 * GB / 50e9)


def test_a_switch_that_reduces_in_the_network_sends_the_array_once():
    """NVLink SHARP: an all-reduce is one send and one receive of the array, G / beta after its own latency, where
    that beats the ring (large arrays); a small one still takes the ring; the other collectives stay rings."""
    plain, nvls = hw.switch(8, 450e9, 0.6e-6), hw.switch(8, 450e9, 0.6e-6, reduction_latency_s=25e-6)
    assert hw.collective_time_s("all-reduce", GB, nvls) == pytest.approx(25e-6 + GB / 450e9)
    assert hw.collective_time_s("all-reduce", GB, plain) / hw.collective_time_s("all-reduce", GB, nvls) > 1.7
    small = 256 * 1024
    assert hw.collective_time_s("all-reduce", small, nvls) == hw.collective_time_s("all-reduce", small, plain)
    sizes = np.array([small, GB])
    np.testing.assert_allclose(
        hw.collective_time_s("all-reduce", sizes, nvls), [hw.collective_time_s("all-reduce", s, nvls) for s in sizes]
    )
    for kind in ("all-gather", "reduce-scatter", "all-to-all"):
        assert hw.collective_time_s(kind, GB, nvls) == hw.collective_time_s(kind, GB, plain)
    with pytest.raises(ValueError, match="reduction_latency_s must be >= 0"):
        hw.switch(8, 450e9, reduction_latency_s=-1.0)


def test_torus_runs_every_axis_at_once():
    link = 90e9
    cube = hw.torus((4, 4, 4), link, 1e-6)
    one_axis = hw.torus((4, 4, 4), link, 1e-6, multi_axis=False)
    gather = hw.collective_time_s("all-gather", GB, cube)
    assert gather == pytest.approx(9e-6 + 63 / 64 * GB / (3 * 2 * link))
    assert hw.collective_time_s("all-gather", GB, one_axis) == pytest.approx(9e-6 + 63 / 64 * GB / (2 * link))
    # a line (no wraparound) has half the bandwidth of a ring
    line = hw.torus((8,), link, 0.0, wraparound=False)
    assert hw.collective_time_s("all-gather", GB, line) == pytest.approx(7 / 8 * GB / link)
    assert hw.collective_time_s("all-gather", GB, hw.torus((8,), link)) == pytest.approx(7 / 8 * GB / (2 * link))
    # a 1-D torus with wraparound is a bidirectional ring
    assert hw.collective_time_s("all-reduce", GB, hw.torus((16,), link, 1e-6)) == pytest.approx(
        hw.collective_time_s("all-reduce", GB, hw.ring(16, link, 1e-6, bidirectional=True))
    )
    assert hw.collective_time_s("all-to-all", GB, cube) == pytest.approx(9e-6 + GB * 3 / (2 * 3 * link))
    assert hw.collective_time_s("all-reduce", GB, hw.torus((1, 1), link)) == 0


@pytest.mark.parametrize("chips", [2, 4, 8, 16])
def test_an_all_to_all_on_one_axis_is_its_bisection_bound(chips):
    """Cut the axis in half: (p / 2)^2 pieces of Q / p cross the cut each way, p Q / 4 bytes, over one link per
    direction on a line and two on a ring (its wraparound link is the second)."""
    link = 90e9
    crossing = (chips / 2) ** 2 * GB / chips
    line = hw.torus((chips,), link, 0.0, wraparound=False)
    ring = hw.torus((chips,), link, 0.0)
    assert hw.collective_time_s("all-to-all", GB, line) == pytest.approx(crossing / link)
    assert hw.collective_time_s("all-to-all", GB, line) == pytest.approx(chips * GB / (4 * link))
    assert hw.collective_time_s("all-to-all", GB, ring) == pytest.approx(chips * GB / (8 * link))
    # the latency adds one step per hop of the axis, as the other collectives'
    assert hw.collective_time_s("all-to-all", 0.0, hw.torus((chips,), link, 1e-6, wraparound=False)) == (
        pytest.approx((chips - 1) * 1e-6)
    )


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(COLLECTIVES), chips=st.integers(2, 512), size=st.floats(1e3, 1e11))
def test_more_bytes_never_take_less_time(kind, chips, size):
    for topology in (hw.ring(chips, 50e9, 1e-6), hw.switch(chips, 450e9, 1e-6), hw.torus((chips, 2), 90e9, 1e-6)):
        assert hw.collective_time_s(kind, 2 * size, topology) > hw.collective_time_s(kind, size, topology) > 0


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.collective_time_s("broadcast", GB, hw.ring(4, 1e9)), ValueError, "kind must be one of"),
        (lambda: hw.collective_time_s("all-gather", -1, hw.ring(4, 1e9)), ValueError, "n_bytes must be >= 0"),
        (lambda: hw.collective_time_s("all-gather", GB, "ring"), TypeError, "topology must be built by"),
        (lambda: hw.ring(0, 1e9), ValueError, "n_chips must be > 0"),
        (lambda: hw.ring(4.5, 1e9), ValueError, "n_chips must be a whole number"),
        (lambda: hw.ring(4, -1.0), ValueError, "link_bytes_per_s must be > 0"),
        (lambda: hw.switch(8, 1e9, latency_s=-1), ValueError, "latency_s must be >= 0"),
        (lambda: hw.torus(4, 1e9), TypeError, "shape must be a tuple"),
        (lambda: hw.torus((4, 4), 1e9, wraparound=(True,)), ValueError, "wraparound must be"),
        (lambda: hw.hierarchy(hw.ring(4, 1e9), "network"), TypeError, "outer must be a ring, torus or switch"),
        (lambda: hw.hierarchy(hw.ring(4, 1e9), hw.ring(4, 1e9), pipelined="yes"), TypeError, "pipelined must be"),
        (lambda: hw.hierarchical_allreduce_time_s(1e9, 16, 1e9, 1e9, 8, pipelined=1), TypeError, "pipelined must be"),
    ],
)
def test_bad_input_is_named(call, error, words):
    with pytest.raises(error, match=words):
        call()
