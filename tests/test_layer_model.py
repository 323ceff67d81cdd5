import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hwlib as hw

NAMES = ("A100-80GB", "A100-40GB", "H100-SXM", "B200")
DOC = {name: hw.chip(name, source="doc002") for name in NAMES}
A100, H100 = DOC["A100-80GB"], DOC["H100-SXM"]


def fmt0(value):
    """The document's {:.0f} with 'never' for infinity."""
    return "never" if math.isinf(value) else f"{value:.0f}"


def test_table_2_d_min_and_the_2_beta_column():
    printed = {"A100-80GB": (447, 306), "A100-40GB": (595, 401), "H100-SXM": (895, 590), "B200": (822, 562)}
    for name, (d_min, two_beta) in printed.items():
        assert round(hw.d_min(DOC[name])) == d_min
        assert round(hw.t_min_large_d(DOC[name], include_l2=False)) == two_beta
        assert hw.t_min_large_d(DOC[name], include_l2=False) == pytest.approx(2 * hw.machine_balance(DOC[name]).time)


def test_true_large_d_limit_includes_the_l2_term():
    expected = {"A100-80GB": 322, "A100-40GB": 428, "H100-SXM": 644, "B200": 592}
    for name, limit in expected.items():
        assert round(hw.t_min_large_d(DOC[name])) == limit
        assert hw.t_min(1e12, DOC[name]) == pytest.approx(hw.t_min_large_d(DOC[name]), rel=1e-6)
    # Table 3 at d = 12288 already exceeds the printed "2 beta" column
    assert hw.t_min(12288, A100) > hw.t_min_large_d(A100, include_l2=False)


TABLE_3 = {
    512: ("2520", "never", "never", "never"),
    768: ("769", "1903", "never", "never"),
    1024: ("570", "1023", "5105", "3009"),
    2048: ("411", "604", "1144", "990"),
    4096: ("361", "501", "824", "741"),
    8192: ("340", "462", "723", "658"),
    12288: ("334", "450", "695", "635"),
}


def test_table_3_point_by_point_and_over_arrays():
    ds = np.array(list(TABLE_3))
    for column, name in enumerate(NAMES):
        over_array = hw.t_min(ds, DOC[name])
        for d, value in zip(ds, over_array):
            assert fmt0(hw.t_min(int(d), DOC[name])) == TABLE_3[d][column]
            assert fmt0(value) == TABLE_3[d][column]


TABLE_4 = {  # d: (A100 ratio, A100 energy %, H100 ratio, H100 energy %)
    768: ("0.55", "24.11", "1.07", "32.88"),
    1024: ("0.42", "18.08", "0.80", "24.66"),
    2048: ("0.21", "9.04", "0.40", "12.33"),
    4096: ("0.10", "4.52", "0.20", "6.17"),
    12288: ("0.03", "1.51", "0.07", "2.06"),
}


def test_table_4():
    ds = np.array(list(TABLE_4))
    rows = np.column_stack([hw.elementwise_time_ratio(ds, A100), 100 * hw.activation_energy_ratio(ds, A100),
                            hw.elementwise_time_ratio(ds, H100), 100 * hw.activation_energy_ratio(ds, H100)])
    for d, row in zip(ds, rows):
        assert tuple(f"{v:.2f}" for v in row) == TABLE_4[d]
    share = hw.elementwise_time_share(768, H100)
    assert share == pytest.approx(1.0696 / 2.0696, rel=1e-3) and share < 1


def test_table_4_ratio_equals_the_layer_models_phases_when_gemms_are_compute_bound():
    step = hw.layer_step(4096, 4096, A100)
    assert step.gemm_time_s == pytest.approx(step.flops / 312e12)
    assert step.elementwise_time_s / step.gemm_time_s == pytest.approx(hw.elementwise_time_ratio(4096, A100))


def test_layer_step_counts():
    d, T = 4096, 2048
    step = hw.layer_step(d, T, A100)
    z = 0.5 * 40e6 / 2
    assert hw.l2_elements(A100) == z
    assert step.flops == 72 * d * d * T
    assert step.weight_bytes == pytest.approx(12 * d * d * (12 + 6 * T / math.sqrt(z)))
    assert step.activation_bytes == 200 * d * T
    assert step.intensity == pytest.approx(step.flops / (step.weight_bytes + step.activation_bytes))
    assert step.time_s == pytest.approx(step.gemm_time_s + step.elementwise_time_s)
    assert step.elementwise_time_s == pytest.approx(200 * d * T / 2.039e12)
    assert step.arithmetic_j == pytest.approx(step.flops * 0.9e-12)
    assert step.static_j == pytest.approx(60 * step.time_s)
    parts = step.arithmetic_j + step.hbm_weights_j + step.hbm_activations_j + step.static_j
    assert step.energy_j == pytest.approx(parts)
    assert sum(step.energy_shares().values()) == pytest.approx(1.0)
    with_attention = hw.layer_step(d, T, A100, seq_len=2048)
    assert with_attention.flops == 72 * d * d * T + 12 * 2048 * d * T
    assert hw.layer_flops(d, T, seq_len=2048) == with_attention.flops
    assert hw.params_per_layer(d) == 12 * d * d


def test_figure_panel_c_mark_and_intensity_at_t_min():
    tokens = hw.t_min(4096, A100)
    assert round(tokens) == 361
    assert hw.layer_intensity(4096, tokens, A100) == pytest.approx(hw.machine_balance(A100).time)


def test_layer_step_broadcasts_like_a_loop():
    ds = np.array([768, 2048, 4096, 12288])[:, None]
    ts = np.geomspace(1, 1e5, 7)[None, :]
    grid = hw.layer_step(ds, ts, A100, seq_len=1024)
    for field in hw.layer_model.LAYER_STEP_FIELDS:
        values = getattr(grid, field)
        assert values.shape == (4, 7)
        for i, d in enumerate(ds[:, 0]):
            for j, t in enumerate(ts[0]):
                assert values[i, j] == getattr(hw.layer_step(int(d), float(t), A100, seq_len=1024), field)


def test_power_cap_keeps_average_power_within_tdp():
    for chip in DOC.values():
        for T in (1, 64, 512, 4096, 65536):
            capped = hw.layer_step(8192, T, chip, power_cap=True)
            free = hw.layer_step(8192, T, chip)
            assert capped.power_w <= chip.tdp.value * (1 + 1e-9)
            assert capped.time_s >= free.time_s
    # near the balance point both the tensor cores and HBM are busy: the GEMM phase draws
    # more than the TDP without a cap, and exactly the TDP with one
    for chip in DOC.values():
        tokens = 2 * hw.machine_balance(chip).time
        free = hw.layer_step(8192, tokens, chip)
        capped = hw.layer_step(8192, tokens, chip, power_cap=True)
        static = chip.static_power.value
        assert (free.arithmetic_j + free.hbm_weights_j) / free.gemm_time_s + static > chip.tdp.value
        gemm_power = (capped.arithmetic_j + capped.hbm_weights_j) / capped.gemm_time_s + static
        assert gemm_power == pytest.approx(chip.tdp.value)
        assert capped.time_s > free.time_s


# Document 002, Table 5: (tokens, ms/token, mJ/token, arith %, HBM %, static %, I, slowdown)
TABLE_5 = [
    ((1, 1, 1, None), ("1", "138.749", "25337.196", "0.1", "67.0", "32.9", "0", "1033.76")),
    ((2048, 1, 1, None), ("2048", "0.196", "60.060", "62.8", "17.6", "19.6", "237", "1.46")),
    ((2048, 1, 8, "nvlink"), ("2048", "0.192", "54.548", "69.1", "9.8", "21.1", "472", "1.43")),
    ((2048, 1, 64, "ib"), ("2048", "0.675", "82.841", "45.5", "5.6", "48.9", "539", "5.03")),
    ((2048, 8, 64, "ib"), ("16384", "0.213", "55.054", "68.5", "8.3", "23.2", "548", "1.59")),
    ((2048, 64, 64, "ib"), ("131072", "0.155", "51.580", "73.1", "8.9", "18.1", "549", "1.16")),
]


def test_table_5_header():
    params = hw.transformer_params(4096, 32, vocab=50000)
    assert f"{params / 1e9:.2f}" == "6.85"
    assert hw.transformer_params(4096, 32) == 12 * 4096**2 * 32


def _table_5_row(tokens, micro, devices, fabric):
    bandwidth = None if fabric is None else hw.fabric_bytes_per_s(A100, fabric)
    return hw.training_step(4096, tokens, A100, 32, micro_batches=micro, n_devices=devices,
                            fabric_bytes_per_s=bandwidth, n_params=hw.transformer_params(4096, 32, 50000),
                            seq_len=2048)


def _format_row(step):
    shares = step.energy_shares()
    return (f"{step.tokens:.0f}", f"{1e3 * step.time_per_token_s:.3f}", f"{1e3 * step.energy_per_token_j:.3f}",
            f"{100 * shares['arithmetic_j']:.1f}", f"{100 * shares['hbm_j']:.1f}", f"{100 * shares['static_j']:.1f}",
            f"{step.intensity:.0f}", f"{step.slowdown:.2f}")


def test_table_5_point_by_point():
    for scenario, printed in TABLE_5:
        assert _format_row(_table_5_row(*scenario)) == printed


def test_table_5_over_arrays():
    scenarios = [s for s, _ in TABLE_5]
    tokens = np.array([s[0] for s in scenarios])
    micro = np.array([s[1] for s in scenarios])
    devices = np.array([s[2] for s in scenarios])
    bandwidth = np.array([1.0 if s[3] is None else hw.fabric_bytes_per_s(A100, s[3]) for s in scenarios])
    steps = hw.training_step(4096, tokens, A100, 32, micro_batches=micro, n_devices=devices,
                             fabric_bytes_per_s=bandwidth, n_params=hw.transformer_params(4096, 32, 50000),
                             seq_len=2048)
    for i, (_, printed) in enumerate(TABLE_5):
        row = hw.TrainingStep(**{k: float(np.asarray(v)[i]) for k, v in vars(steps).items()})
        assert _format_row(row) == printed
    # the online row's intensity is 0.15, which the document's {:9.0f} prints as 0
    assert 0.1 < steps.intensity[0] < 0.2


def test_per_step_costs():
    params = 6e9
    assert hw.optimizer_bytes(params, 8) == 30 * params / 8
    assert hw.allreduce_time_s(params, 1, 25e9) == 0.0
    assert hw.allreduce_time_s(params, 64, 25e9) == pytest.approx(4 * params * 63 / 64 / 25e9)
    assert hw.fabric_bytes_per_s(A100, "nvlink") == 300e9
    assert hw.fabric_bytes_per_s(A100, "ib") == 25e9
    assert hw.fabric_bytes_per_s(H100, "nvlink") == hw.chip("H100").interconnect.value / 2
    assert hw.fabric_bytes_per_s(A100, "nvlink") == hw.chip("A100-80GB").interconnect.value / 2
    for key, value in hw.FABRIC_BANDWIDTH.items():
        assert value.unit == "B/s" and value.read_on == "2026-11-30" and value.quoted


def test_defaults_are_the_documents():
    assert {k: v.value for k, v in hw.TRAFFIC_CONSTANTS.items()} == {"b_w": 12, "a": 200, "b_opt": 30, "b_ar": 4}
    assert hw.layer_step(4096, 100, A100).flops == hw.layer_step(4096, 100, A100, b_w=12, a=200, l2_fraction=0.5).flops


positive_d = st.floats(min_value=64, max_value=65536)
positive_t = st.floats(min_value=1, max_value=1e6)


@settings(max_examples=60)
@given(positive_d, positive_t, positive_t)
def test_intensity_grows_with_tokens_and_stays_below_its_limit(d, t1, t2):
    low, high = sorted((t1, t2))
    i_low, i_high = hw.layer_intensity(d, low, A100), hw.layer_intensity(d, high, A100)
    assert i_low <= i_high * (1 + 1e-12)
    z = hw.l2_elements(A100)
    assert i_high <= 72 * d / (200 + 72 * d / math.sqrt(z)) * (1 + 1e-12)


@settings(max_examples=60)
@given(st.floats(min_value=100, max_value=1e6), st.floats(min_value=100, max_value=1e6))
def test_t_min_falls_with_d_and_meets_the_balance(d1, d2):
    low, high = sorted((d1, d2))
    assert hw.t_min(low, A100) >= hw.t_min(high, A100) * (1 - 1e-12)
    if math.isfinite(hw.t_min(low, A100)):
        tokens = hw.t_min(low, A100)
        assert hw.layer_intensity(low, tokens, A100) == pytest.approx(hw.machine_balance(A100).time, rel=1e-9)
        assert low > hw.d_min(A100)
    else:
        assert low <= hw.d_min(A100) * (1 + 1e-12)


@settings(max_examples=40)
@given(positive_d, positive_t, st.floats(min_value=0, max_value=64), st.floats(min_value=0, max_value=1000))
def test_energy_parts_sum_and_time_never_beats_the_roofline(d, t, b_w, a):
    step = hw.layer_step(d, t, H100, b_w=b_w, a=a)
    parts = step.arithmetic_j + step.hbm_weights_j + step.hbm_activations_j + step.static_j
    assert step.energy_j == pytest.approx(parts, rel=1e-12)
    assert step.time_s >= step.flops / 989e12 * (1 - 1e-12)
    assert step.time_s >= (step.weight_bytes + step.activation_bytes) / 3.35e12 * (1 - 1e-12)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.layer_step(0, 1, A100), ValueError, "d must be > 0"),
        (lambda: hw.layer_step(4096, -1, A100), ValueError, "T must be > 0"),
        (lambda: hw.layer_step(4096, float("nan"), A100), ValueError, "T must not be NaN"),
        (lambda: hw.layer_step(4096, 1, A100, b_w=-1), ValueError, "b_w must be >= 0"),
        (lambda: hw.layer_step(4096, 1, A100, a="200"), TypeError, "a must be a real number"),
        (lambda: hw.layer_step(4096, 1, A100, seq_len=0), ValueError, "seq_len must be > 0"),
        (lambda: hw.layer_step(4096, 1, A100, l2_fraction=1.5), ValueError, r"l2_fraction must be in \(0, 1\]"),
        (lambda: hw.layer_step(4096, 1, A100, l2_fraction=[0.5, 0.6]), TypeError, "l2_fraction must be a single"),
        (lambda: hw.layer_step(4096, 1, A100, power_cap="yes"), TypeError, "power_cap must be True or False"),
        (lambda: hw.layer_step([1, 2], [1, 2, 3], A100), ValueError, "must broadcast together"),
        (lambda: hw.layer_step(4096, 1, hw.chip("A100-80GB")), ValueError, "has no hbm_energy, flop_energy"),
        (lambda: hw.layer_step(4096, 1, "A100"), TypeError, "chip must be a Chip record"),
        (lambda: hw.layer_flops(4096, 0), ValueError, "T must be > 0"),
        (lambda: hw.params_per_layer(-3), ValueError, "d must be > 0"),
        (lambda: hw.layer_intensity(4096, 0, A100), ValueError, "T must be > 0"),
        (lambda: hw.t_min(0, A100), ValueError, "d must be > 0"),
        (lambda: hw.t_min(4096, A100, b_w=None), TypeError, "b_w must be a real number"),
        (lambda: hw.d_min(A100, a=-1), ValueError, "a must be >= 0"),
        (lambda: hw.d_min(hw.chip("v5e")), ValueError, "has no hbm_energy"),
        (lambda: hw.t_min_large_d(A100, include_l2=1), TypeError, "include_l2 must be True or False"),
        (lambda: hw.t_min_large_d(A100, b_w=-2), ValueError, "b_w must be >= 0"),
        (lambda: hw.l2_elements(hw.chip("v5e")), ValueError, "has no l2 size"),
        (lambda: hw.l2_elements("v5e"), TypeError, "chip must be a Chip record"),
        (lambda: hw.elementwise_time_ratio(0, A100), ValueError, "d must be > 0"),
        (lambda: hw.elementwise_time_share(4096, A100, a=float("inf")), ValueError, "a must be finite"),
        (lambda: hw.activation_energy_ratio(4096, hw.chip("H100")), ValueError, "has no hbm_energy"),
        (lambda: hw.transformer_params(4096, 1.5), ValueError, "n_layers must be a whole number"),
        (lambda: hw.transformer_params(4096, 32, vocab=-1), ValueError, "vocab must be >= 0"),
        (lambda: hw.optimizer_bytes(6e9, 0), ValueError, "n_devices must be > 0"),
        (lambda: hw.allreduce_time_s(6e9, 8, 0), ValueError, "fabric_bytes_per_s must be > 0"),
        (lambda: hw.fabric_bytes_per_s(A100, "ethernet"), ValueError, "fabric must be one of"),
        (lambda: hw.fabric_bytes_per_s(hw.chip("v5e"), "ib"), KeyError, "no ib bandwidth stored"),
        (lambda: hw.fabric_bytes_per_s("A100", "ib"), TypeError, "chip must be a Chip record"),
        (lambda: hw.training_step(4096, 2048, A100, 32, n_devices=8), ValueError, "fabric_bytes_per_s is needed"),
        (lambda: hw.training_step(4096, 2048, A100, 0), ValueError, "n_layers must be > 0"),
        (lambda: hw.training_step(4096, 2048, A100, 32, micro_batches=0.5), ValueError, "micro_batches must be"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()
