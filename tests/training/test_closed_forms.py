"""hwlib.training.closed_forms: the scaling book's FSDP x tensor-parallel optimum and memory under k saved tensors.

The book's numbers (Austin et al., "How to Scale Your Model", Parts 5 and 6, read 2026-12-06) as it prints them,
hwlib's own beside them, every factor pinned, and the properties of the optimum.
"""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hwlib as hw
from hwlib.data import literature
from hwlib.training import closed_forms

LLAMA_70B = hw.model("llama-3-70b")
V5P = hw.chip("v5p")
BOOK_ALPHA = 2550.0
"""The book's C / W_ici for v5p: '4.59e14 / 1.8e11 = 2550'."""
BOOK_V5P_HBM = 96e9
"""'since each TPU v5p has 96GB of HBM' (decimal GB)."""
TORUS_CHIP = hw.custom_chip(
    "3D torus chip",
    peak_flops_per_s=4.0e14,
    hbm_bytes_per_s=2e12,
    hbm_bytes=64e9,
    ici_links=6,
    ici_link_bytes_per_s=5e10,
)


def with_d_ff(d_ff: int) -> hw.ModelShape:
    return dataclasses.replace(LLAMA_70B, key=f"mlp-{d_ff}", name=f"MLP of {d_ff}", d_ff=d_ff)


# --- the book's numbers ----------------------------------------------------------------------


def test_llama_3_70b_on_a_v5p_pod_as_the_book_prints_it():
    """Part 6: '2 * 2550^2 / F = 453', 'X_opt = sqrt(2 * 4.19e6 * 8960 / 28672) = 1618', 'roughly 2048-way FSDP
    and 4-way model parallelism', 'per-TPU batch size of 4 * 1024 * 1024 / 8960 = 468 tokens'."""
    assert LLAMA_70B.d_ff == 28672 and LLAMA_70B.d_model == 8192 and LLAMA_70B.n_layers == 80
    best = hw.fsdp_tp_optimum(4.19e6, 8960, LLAMA_70B, V5P)
    assert best.ici_intensity == BOOK_ALPHA  # hwlib's v5p record gives the book's alpha exactly
    assert best.axis_bytes_per_s == 1.8e11 == 2 * V5P.ici_link_bytes_per_s
    assert best.comm_bound_batch_per_chip == pytest.approx(2 * 2550**2 / 28672, rel=1e-12)
    assert int(best.comm_bound_batch_per_chip) == 453
    assert best.fsdp == pytest.approx(math.sqrt(2 * 4.19e6 * 8960 / 28672), rel=1e-12)
    assert round(best.fsdp) == 1618
    assert best.tp == pytest.approx(8960 / best.fsdp, rel=1e-12)
    assert best.fsdp_power_of_two == 2048 and 8960 // 2048 == 4
    assert round(hw.fsdp_tp_optimum(4 * 1024 * 1024, 8960, LLAMA_70B, V5P).batch_per_chip) == 468
    assert best.compute_bound  # "we're slightly above this"
    assert closed_forms.comm_bound_batch_per_chip(LLAMA_70B, V5P) == best.comm_bound_batch_per_chip


def test_the_book_other_examples():
    """Part 5: N = 64, B = 48,000, F = 32,768 'gives roughly X = 13.9. So we would choose X to be 16 and Y to be 4';
    B/N > 400 for F = 32,768; Part 5's problem 3: '2 * 2550^2 / F = 940' for LLaMA-2 13B; the 16x16x16 figure:
    '4096 * 2 * 2550^2 / (8192 * 4)'."""
    wide = with_d_ff(32768)
    small = hw.fsdp_tp_optimum(48000, 64, wide, V5P)
    assert small.fsdp == pytest.approx(math.sqrt(2 * 48000 * 64 / 32768), rel=1e-12)  # 13.69
    assert small.fsdp == pytest.approx(13.9, rel=0.02)  # the book's "roughly 13.9"
    assert small.fsdp_power_of_two == 16 and 64 // 16 == 4
    assert small.comm_bound_batch_per_chip == pytest.approx(2 * 2550**2 / 32768) and 396 < 2 * 2550**2 / 32768 < 400
    assert int(closed_forms.comm_bound_batch_per_chip(hw.model("llama-2-13b"), V5P)) == 940
    # the figure's caption prints 1.6e10, a slip for the 1.6e6 tokens its own text reads off ("below 1.5e6")
    assert 4096 * closed_forms.comm_bound_batch_per_chip(wide, V5P) == pytest.approx(4096 * 2 * 2550**2 / (8192 * 4))
    assert 4096 * closed_forms.comm_bound_batch_per_chip(wide, V5P) == pytest.approx(1.6e6, rel=0.02)


def test_hwlib_v5p_beside_the_vendor_interconnect_total():
    """hwlib's link record (the book's 9e10 B/s one way) gives alpha = 2550; Google's 1,200 GB/s over six links,
    100 GB/s a link each way, gives W = 2e11 B/s an axis, alpha = 2295 and 367 tokens a chip."""
    vendor = V5P.interconnect_bytes_per_s / V5P.ici_link_count  # both directions of one link = one axis, one way
    assert vendor == 2e11
    assert closed_forms.comm_bound_batch_per_chip(LLAMA_70B, V5P, axis_bytes_per_s=vendor) == pytest.approx(
        2 * 2295**2 / 28672, rel=1e-12
    )
    assert closed_forms.comm_bound_batch_per_chip(LLAMA_70B, V5P) / closed_forms.comm_bound_batch_per_chip(
        LLAMA_70B, V5P, axis_bytes_per_s=vendor
    ) == pytest.approx((2550 / 2295) ** 2)


def test_the_book_memory_of_llama_3_70b_at_a_4m_batch():
    """Part 6: '2 * 8192 * 4e6 * [4] * 80 | ~20.9TB', 'Total ~21.6TB', '21.6e12 / 96e9 = 225', 'about 2.4GB per
    chip' on 8960 chips. TB and GB are decimal (1e12, 1e9 B)."""
    k = literature.SCALING_BOOK_CHECKPOINTS_PER_LAYER.value
    assert k == 4
    saved = hw.saved_activation_bytes(4e6, k, LLAMA_70B)
    assert saved == 2 * 8192 * 4e6 * 4 * 80 == 20.97152e12
    assert math.floor(saved / 1e11) / 10 == 20.9  # the book cuts to 20.9 TB
    assert hw.saved_activation_bytes(4e6, 3, LLAMA_70B) == pytest.approx(15.73e12, rel=1e-3)  # its table's 3
    state = hw.training_state_bytes(70e9, "bf16_fp32_moments")
    assert state == (2 + 8) * 70e9  # 140 GB of weights and 560 GB of moments
    total = saved + state
    assert math.floor(total / 1e11) / 10 == 21.6
    book_chip = hw.custom_chip("v5p as the book", peak_flops_per_s=4.59e14, hbm_bytes_per_s=2.765e12, hbm_bytes=96e9)
    assert hw.chips_needed(21.6e12, book_chip, usable_fraction=1.0) == 225
    assert hw.chips_needed(total, book_chip, usable_fraction=1.0) == 226  # unrounded
    assert round(21.6e12 / 8960 / 1e9, 1) == 2.4
    memory = closed_forms.checkpointed_training_memory(4e6, k, LLAMA_70B, book_chip, usable_fraction=1.0)
    assert memory.activation_bytes == saved and memory.state_bytes == 10 * LLAMA_70B.params()
    assert memory.total_bytes == saved + 10 * LLAMA_70B.params() and memory.n_chips == 226


def test_hwlib_v5p_holds_it_on_fewer_chips():
    """hwlib's v5p shows a program 95 GiB (102.0e9 B), not 96e9: 213 chips at all of it, 266 at the default 80 %."""
    assert V5P.capacity_bytes == 95 * 2**30
    everything = closed_forms.checkpointed_training_memory(4e6, 4, LLAMA_70B, V5P, usable_fraction=1.0)
    assert everything.total_bytes == pytest.approx(21.677e12, rel=1e-4)
    assert everything.n_chips == math.ceil(everything.total_bytes / (95 * 2**30)) == 213
    assert closed_forms.checkpointed_training_memory(4e6, 4, LLAMA_70B, V5P).n_chips == 266


# --- every factor pinned ------------------------------------------------------------------------


@pytest.mark.parametrize("include_gate, matmuls", [(False, 2), (True, 3)])
def test_every_term_is_the_derivation(include_gate, matmuls):
    b, n, m_x, m_y = 1.5e6, 512, 1.5, 1.0
    d, f, w, c = 8192.0, 28672.0, 2 * 5e10, 4.0e14
    best = hw.fsdp_tp_optimum(b, n, LLAMA_70B, TORUS_CHIP, fsdp_axes=m_x, tp_axes=m_y, include_gate=include_gate)
    assert best.axis_bytes_per_s == w and best.ici_intensity == c / w
    assert best.layer_math_time_s == pytest.approx(2 * matmuls * b * d * f / (n * c), rel=1e-12)
    for x in (1.0, 7.0, 64.0, 512.0):
        expected = matmuls * 2 * d * f * x / (n * m_x * w) + 2 * 2 * b * d / (x * m_y * w)
        assert best.comms_time_s(x) == pytest.approx(expected, rel=1e-12)
    assert best.fsdp == pytest.approx(math.sqrt(2 * b * n * m_x / (matmuls * f * m_y)), rel=1e-12)
    assert best.layer_comms_time_s == pytest.approx(best.comms_time_s(best.fsdp), rel=1e-12)
    alpha = c / w
    assert best.comm_bound_batch_per_chip == pytest.approx(2 * 2**2 * alpha**2 / (matmuls * f * m_x * m_y), rel=1e-12)
    if matmuls == 2:  # the book's 4 alpha^2 / (M_X M_Y F)
        assert best.comm_bound_batch_per_chip == pytest.approx(4 * alpha**2 / (m_x * m_y * f), rel=1e-12)


def test_the_gate_only_counts_for_a_gated_mlp():
    gelu = hw.model("gpt-3-175b")
    assert gelu.mlp == "gelu" and LLAMA_70B.mlp == "gated"
    plain, asked = hw.fsdp_tp_optimum(4e6, 4096, gelu, V5P), hw.fsdp_tp_optimum(4e6, 4096, gelu, V5P, include_gate=True)
    assert (asked.fsdp, asked.comm_bound_batch_per_chip) == (plain.fsdp, plain.comm_bound_batch_per_chip)
    gated = closed_forms.comm_bound_batch_per_chip(LLAMA_70B, V5P, include_gate=True)
    assert gated == pytest.approx(2 / 3 * closed_forms.comm_bound_batch_per_chip(LLAMA_70B, V5P), rel=1e-12)


def test_the_precision_cancels_and_the_axes_scale_it():
    """'this doesn't depend on the precision': an int8 peak doubles alpha and halves the bytes."""
    bf16 = closed_forms.comm_bound_batch_per_chip(LLAMA_70B, V5P)
    assert V5P.peak("int8") == 2 * V5P.peak("bf16")
    assert closed_forms.comm_bound_batch_per_chip(LLAMA_70B, V5P, dtype="int8") == pytest.approx(bf16, rel=1e-12)
    one_each = closed_forms.comm_bound_batch_per_chip(LLAMA_70B, V5P, fsdp_axes=1, tp_axes=1)
    assert one_each == pytest.approx(2 * bf16, rel=1e-12)  # M_X M_Y = 1 instead of 2
    assert hw.fsdp_tp_optimum(4e6, 8192, LLAMA_70B, V5P, fsdp_axes=1, tp_axes=1).fsdp == pytest.approx(
        math.sqrt(4e6 * 8192 / 28672), rel=1e-12
    )


def test_the_bandwidth_is_hwlib_collectives_on_a_wrapped_torus_axis():
    """An all-gather of S bytes over a wrapped axis of X chips takes (X - 1)/X S / W in hwlib.collectives."""
    best = hw.fsdp_tp_optimum(4e6, 8960, LLAMA_70B, V5P)
    for chips in (4, 16):
        axis = hw.torus((chips,), V5P.ici_link_bytes_per_s)
        assert hw.collective_time_s("all-gather", 1e9, axis) == pytest.approx(
            (chips - 1) / chips * 1e9 / best.axis_bytes_per_s, rel=1e-12
        )


def test_full_recompute_is_one_saved_tensor_a_layer():
    """hw.activation_bytes under full recomputation keeps the layer input, 2 s b d bytes: k = 1 here."""
    for key in ("llama-3-70b", "llama-3-8b", "gpt-3-175b", "qwen2.5-7b"):
        model = hw.model(key)
        for seq_len, batch in ((4096, 1), (8192, 16)):
            kept = model.n_layers * hw.activation_bytes(seq_len, batch, model, recompute="full")
            assert hw.saved_activation_bytes(seq_len * batch, 1, model) == kept, key
            split = model.n_layers * hw.activation_bytes(
                seq_len, batch, model, tensor_parallel=8, sequence_parallel=True, recompute="full"
            )
            assert hw.saved_activation_bytes(seq_len * batch, 1, model) / 8 == split
    none = hw.activation_bytes(4096, 1, LLAMA_70B, flash_attention=True)
    assert none / (2 * 4096 * 8192) == pytest.approx(16.75)  # the docstring's no-recompute count


def test_arrays_broadcast_like_single_calls():
    batches, chips = np.array([1e6, 4e6, 16e6]), np.array([[256], [8960]])
    best = hw.fsdp_tp_optimum(batches, chips, LLAMA_70B, V5P)
    assert np.shape(best.fsdp) == (2, 3) and best.fsdp_power_of_two.dtype == np.int64
    for i, n in enumerate((256, 8960)):
        for j, b in enumerate(batches):
            one = hw.fsdp_tp_optimum(b, n, LLAMA_70B, V5P)
            assert best.fsdp[i, j] == one.fsdp and best.compute_bound[i, j] == one.compute_bound
            assert best.fsdp_power_of_two[i, j] == one.fsdp_power_of_two
    saved = hw.saved_activation_bytes(batches, np.array([[1], [4]]), LLAMA_70B)
    assert saved.shape == (2, 3) and saved[1, 1] == 2 * 8192 * 4e6 * 4 * 80
    memory = closed_forms.checkpointed_training_memory(batches, 4, LLAMA_70B, V5P)
    assert list(memory.n_chips) == [hw.chips_needed(t, V5P) for t in memory.total_bytes]


# --- properties ----------------------------------------------------------------------------------

batches = st.floats(min_value=1e3, max_value=1e9)
chip_counts = st.integers(min_value=1, max_value=100_000)
widths = st.sampled_from([2048, 11008, 14336, 28672, 53248])


@settings(max_examples=60, deadline=None)
@given(batch=batches, n_chips=chip_counts, d_ff=widths, m_x=st.sampled_from([1, 1.5, 2]), m_y=st.sampled_from([0.5, 1]))
def test_the_optimum_splits_every_chip_and_beats_every_power_of_two(batch, n_chips, d_ff, m_x, m_y):
    best = hw.fsdp_tp_optimum(batch, n_chips, with_d_ff(d_ff), V5P, fsdp_axes=m_x, tp_axes=m_y)
    assert best.fsdp * best.tp == pytest.approx(n_chips, rel=1e-12)
    assert 1 <= best.fsdp <= n_chips
    powers = 2.0 ** np.arange(int(math.log2(n_chips)) + 1)
    times = best.comms_time_s(powers)
    assert best.layer_comms_time_s <= np.min(times) * (1 + 1e-12)
    assert best.comms_time_s(best.fsdp_power_of_two) == pytest.approx(np.min(times), rel=1e-12)
    for nearby in (best.fsdp * 0.9, best.fsdp * 1.1):
        if 1 <= nearby <= n_chips:
            assert best.layer_comms_time_s <= best.comms_time_s(nearby)


@settings(max_examples=60, deadline=None)
@given(
    n_chips=st.integers(min_value=2, max_value=100_000), d_ff=widths, share=st.floats(min_value=0.01, max_value=0.99)
)
def test_compute_bound_exactly_above_the_threshold(n_chips, d_ff, share):
    unclipped = 1 + share * (n_chips - 1)  # an optimum strictly inside (1, n_chips): the batch that gives it
    batch = unclipped**2 * d_ff / (2 * n_chips)
    best = hw.fsdp_tp_optimum(batch, n_chips, with_d_ff(d_ff), V5P)
    ratio = best.batch_per_chip / best.comm_bound_batch_per_chip
    assume(abs(ratio - 1) > 1e-9)
    assert best.compute_bound == (ratio > 1)
    # math over comms grows as the square root of the batch per chip, 1 at the threshold
    assert best.layer_math_time_s / best.layer_comms_time_s == pytest.approx(math.sqrt(ratio), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    batch=batches,
    scale=st.floats(min_value=0.01, max_value=100),
    k1=st.floats(min_value=0, max_value=40),
    k2=st.floats(min_value=0, max_value=40),
)
def test_memory_is_linear_in_k_and_batch(batch, scale, k1, k2):
    one = hw.saved_activation_bytes(batch, k1, LLAMA_70B)
    assert hw.saved_activation_bytes(batch, k1 + k2, LLAMA_70B) == pytest.approx(
        one + hw.saved_activation_bytes(batch, k2, LLAMA_70B), rel=1e-12, abs=1e-3
    )
    assert hw.saved_activation_bytes(batch * scale, k1, LLAMA_70B) == pytest.approx(one * scale, rel=1e-12, abs=1e-3)
    assert hw.saved_activation_bytes(batch, k1, LLAMA_70B, dtype="fp32") == pytest.approx(2 * one, rel=1e-12)


# --- bad inputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"batch_tokens": 0}, ValueError, "batch_tokens must be > 0"),
        ({"batch_tokens": float("nan")}, ValueError, "batch_tokens must not be NaN"),
        ({"batch_tokens": "4M"}, TypeError, "batch_tokens must be a real number"),
        ({"n_chips": 8.5}, ValueError, "n_chips must be a whole number"),
        ({"n_chips": 0}, ValueError, "n_chips must be > 0"),
        ({"model": "llama-3-70b"}, TypeError, "model must be a ModelShape"),
        ({"model": hw.model("mixtral-8x7b")}, ValueError, "dense ModelShape"),
        ({"chip": hw.cluster("tpu-v5p")}, TypeError, "chip must be a Chip"),
        ({"chip": hw.chip("H100-SXM")}, ValueError, "give axis_bytes_per_s"),
        ({"chip": hw.chip("v5e")}, ValueError, "at most the 2 torus axes"),
        ({"fsdp_axes": 3}, ValueError, "at most the 3 torus axes"),
        ({"fsdp_axes": 0}, ValueError, "fsdp_axes must be > 0"),
        ({"tp_axes": [1, 2]}, TypeError, "tp_axes must be one number"),
        ({"dtype": "fp64"}, ValueError, "dtype must be one of"),
        ({"dtype": "fp32"}, KeyError, "has no sourced peak"),
        ({"include_gate": "yes"}, TypeError, "include_gate must be True or False"),
        ({"axis_bytes_per_s": -1.0}, ValueError, "axis_bytes_per_s must be > 0"),
    ],
)
def test_bad_inputs_name_the_parameter(kwargs, error, match):
    args = {"batch_tokens": 4e6, "n_chips": 8960, "model": LLAMA_70B, "chip": V5P} | kwargs
    with pytest.raises(error, match=match):
        hw.fsdp_tp_optimum(**args)


def test_a_chip_without_ici_records_runs_on_a_given_bandwidth():
    h100 = hw.chip("H100-SXM")
    best = hw.fsdp_tp_optimum(4e6, 1024, LLAMA_70B, h100, axis_bytes_per_s=450e9)
    assert best.ici_intensity == h100.peak("bf16") / 450e9
    with pytest.raises(ValueError, match="fsdp must be > 0"):
        best.comms_time_s(0)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: hw.saved_activation_bytes(4e6, -1, LLAMA_70B), ValueError, "saved_per_layer must be >= 0"),
        (lambda: hw.saved_activation_bytes(-4e6, 4, LLAMA_70B), ValueError, "batch_tokens must be > 0"),
        (lambda: hw.saved_activation_bytes(4e6, 4, LLAMA_70B, "bf17"), ValueError, "dtype must be one of"),
        (lambda: hw.saved_activation_bytes(4e6, 4, hw.model("doc000-7b")), ValueError, "dense ModelShape"),
        (lambda: hw.saved_activation_bytes(4e6, 4, V5P), TypeError, "model must be a ModelShape"),
        (lambda: closed_forms.checkpointed_training_memory(4e6, 4, LLAMA_70B, "v5p"), TypeError, "chip must be a Chip"),
        (
            lambda: closed_forms.checkpointed_training_memory(4e6, 4, LLAMA_70B, V5P, usable_fraction=1.5),
            ValueError,
            "usable_fraction must be in",
        ),
        (lambda: closed_forms.checkpointed_training_memory(4e6, 4, LLAMA_70B, V5P, recipe="adamw"), KeyError, "adamw"),
    ],
)
def test_bad_memory_inputs_name_the_parameter(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_the_top_level_names_are_the_module_functions():
    for name in ("fsdp_tp_optimum", "saved_activation_bytes"):
        assert getattr(hw, name) is getattr(closed_forms, name)
