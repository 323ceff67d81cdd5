"""hwlib.layer_model: document 002's section 3 (Tables 2, 3 and 4, figure panel c) and the layer step.

The training step, Table 5 and the per-step costs are in tests/training/test_regimes.py; every chip in
every time model is tests/test_every_chip.py.
"""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hwlib as hw
from hwlib import layer_model
from hwlib.data import doc002

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
        assert round(hw.t_min_large_d(DOC[name], include_reblocking=False)) == two_beta
        assert hw.t_min_large_d(DOC[name], include_reblocking=False) == pytest.approx(
            2 * hw.machine_balance(DOC[name]).time
        )


def test_true_large_d_limit_includes_the_reblocking_term():
    expected = {"A100-80GB": 322, "A100-40GB": 428, "H100-SXM": 644, "B200": 592}
    for name, limit in expected.items():
        assert round(hw.t_min_large_d(DOC[name])) == limit
        assert hw.t_min(1e12, DOC[name]) == pytest.approx(hw.t_min_large_d(DOC[name]), rel=1e-6)
    # Table 3 at d = 12288 already exceeds the printed "2 beta" column
    assert hw.t_min(12288, A100) > hw.t_min_large_d(A100, include_reblocking=False)


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
    rows = np.column_stack(
        [
            hw.elementwise_time_ratio(ds, A100),
            100 * hw.activation_energy_ratio(ds, A100),
            hw.elementwise_time_ratio(ds, H100),
            100 * hw.activation_energy_ratio(ds, H100),
        ]
    )
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
    assert hw.blocking_elements(A100) == z
    assert step.flops == 72 * d * d * T
    assert step.weight_hbm_bytes == pytest.approx(12 * d * d * (12 + 6 * T / math.sqrt(z)))
    assert step.activation_hbm_bytes == 200 * d * T
    assert step.intensity == pytest.approx(step.flops / (step.weight_hbm_bytes + step.activation_hbm_bytes))
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
    assert layer_model.params_per_layer(d) == 12 * d * d  # hw.params_per_layer moved to hwlib.layer_model


def test_figure_panel_c_mark_and_intensity_at_t_min():
    tokens = hw.t_min(4096, A100)
    assert round(tokens) == 361
    assert hw.layer_step(4096, tokens, A100).intensity == pytest.approx(hw.machine_balance(A100).time)


def test_layer_step_broadcasts_like_a_loop():
    ds = np.array([768, 2048, 4096, 12288])[:, None]
    ts = np.geomspace(1, 1e5, 7)[None, :]
    grid = hw.layer_step(ds, ts, A100, seq_len=1024)
    for field in (*layer_model.TIME_FIELDS, *layer_model.ENERGY_PARTS, "energy_j", "power_w"):
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
            assert capped.power_w <= chip.tdp_w * (1 + 1e-9)
            assert capped.time_s >= free.time_s
    # near the balance point both the tensor cores and HBM are busy: the GEMM phase draws
    # more than the TDP without a cap, and exactly the TDP with one
    for chip in DOC.values():
        tokens = 2 * hw.machine_balance(chip).time
        free = hw.layer_step(8192, tokens, chip)
        capped = hw.layer_step(8192, tokens, chip, power_cap=True)
        static = chip.static_power_w
        assert (free.arithmetic_j + free.hbm_weights_j) / free.gemm_time_s + static > chip.tdp_w
        gemm_power = (capped.arithmetic_j + capped.hbm_weights_j) / capped.gemm_time_s + static
        assert gemm_power == pytest.approx(chip.tdp_w)
        assert capped.time_s > free.time_s


positive_d = st.floats(min_value=64, max_value=65536)
positive_t = st.floats(min_value=1, max_value=1e6)


@settings(max_examples=60)
@given(positive_d, positive_t, positive_t)
def test_intensity_grows_with_tokens_and_stays_below_its_limit(d, t1, t2):
    low, high = sorted((t1, t2))
    i_low, i_high = hw.layer_step(d, low, A100).intensity, hw.layer_step(d, high, A100).intensity
    assert i_low <= i_high * (1 + 1e-12)
    z = hw.blocking_elements(A100)
    assert i_high <= 72 * d / (200 + 72 * d / math.sqrt(z)) * (1 + 1e-12)


@settings(max_examples=60)
@given(st.floats(min_value=100, max_value=1e6), st.floats(min_value=100, max_value=1e6))
def test_t_min_falls_with_d_and_meets_the_balance(d1, d2):
    low, high = sorted((d1, d2))
    assert hw.t_min(low, A100) >= hw.t_min(high, A100) * (1 - 1e-12)
    if math.isfinite(hw.t_min(low, A100)):
        tokens = hw.t_min(low, A100)
        assert hw.layer_step(low, tokens, A100).intensity == pytest.approx(hw.machine_balance(A100).time, rel=1e-9)
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
    assert step.time_s >= (step.weight_hbm_bytes + step.activation_hbm_bytes) / 3.35e12 * (1 - 1e-12)


def test_defaults_are_the_documents():
    # 0.1's hw.TRAFFIC_CONSTANTS is hw.doc002.TRAFFIC (which also keeps a_store and l2_fraction); l2_fraction= is
    # on_chip_fraction=
    assert {k: v.value for k, v in doc002.TRAFFIC.items() if k in ("b_w", "a", "b_opt", "b_ar")} == {
        "b_w": 12,
        "a": 200,
        "b_opt": 30,
        "b_ar": 4,
    }
    default, explicit = (
        hw.layer_step(4096, 100, A100),
        hw.layer_step(4096, 100, A100, b_w=12, a=200, on_chip_fraction=0.5),
    )
    for field in layer_model.TIME_FIELDS:
        assert getattr(default, field) == getattr(explicit, field), field
    assert hw.t_min(4096, A100) == hw.t_min(4096, A100, b_w=doc002.B_W, a=doc002.A, on_chip_fraction=doc002.L2_FRACTION)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.layer_step(0, 1, A100), ValueError, "d must be > 0"),
        (lambda: hw.layer_step(4096, -1, A100), ValueError, "T must be > 0"),
        (lambda: hw.layer_step(4096, float("nan"), A100), ValueError, "T must not be NaN"),
        (lambda: hw.layer_step(4096, 1, A100, b_w=-1), ValueError, "b_w must be >= 0"),
        (lambda: hw.layer_step(4096, 1, A100, a="200"), TypeError, "a must be a real number"),
        (lambda: hw.layer_step(4096, 1, A100, seq_len=0), ValueError, "seq_len must be > 0"),
        (
            lambda: hw.layer_step(4096, 1, A100, on_chip_fraction=1.5),
            ValueError,
            r"on_chip_fraction must be in \(0, 1\]",
        ),
        (
            lambda: hw.layer_step(4096, 1, A100, on_chip_fraction=[0.5, 0.6]),
            TypeError,
            "on_chip_fraction must be a single",
        ),
        (lambda: hw.layer_step(4096, 1, A100, power_cap="yes"), TypeError, "power_cap must be True or False"),
        (lambda: hw.layer_step([1, 2], [1, 2, 3], A100), ValueError, "must broadcast together"),
        # 0.2: the time fields work for every chip; the energy fields raise on first access
        (lambda: hw.layer_step(4096, 1, hw.chip("A100-80GB")).energy_j, ValueError, "has no hbm_energy, flop_energy"),
        (lambda: hw.layer_step(4096, 1, hw.chip("A100-80GB"), power_cap=True), ValueError, "has no hbm_energy"),
        (lambda: hw.layer_step(4096, 1, "A100"), TypeError, "chip must be a Chip record"),
        (lambda: hw.layer_flops(4096, 0), ValueError, "T must be > 0"),
        (lambda: layer_model.params_per_layer(-3), ValueError, "d must be > 0"),
        (lambda: hw.layer_step(4096, 0, A100).intensity, ValueError, "T must be > 0"),
        (lambda: hw.t_min(0, A100), ValueError, "d must be > 0"),
        (lambda: hw.t_min(4096, A100, b_w=None), TypeError, "b_w must be a real number"),
        (lambda: hw.d_min(A100, a=-1), ValueError, "a must be >= 0"),
        # 0.1's d_min needed the chip's L2; 0.2's works for every chip (tests/test_every_chip.py)
        (lambda: hw.d_min("v5e"), TypeError, "chip must be a Chip record"),
        (lambda: hw.t_min_large_d(A100, include_reblocking=1), TypeError, "include_reblocking must be True or False"),
        (lambda: hw.t_min_large_d(A100, b_w=-2), ValueError, "b_w must be >= 0"),
        # 0.1's l2_elements raised for a chip without L2; blocking_elements gives inf (tests/test_every_chip.py)
        (lambda: hw.blocking_elements(A100, on_chip_fraction=0), ValueError, "on_chip_fraction must be > 0"),
        (lambda: hw.blocking_elements("v5e"), TypeError, "chip must be a Chip record"),
        (lambda: hw.elementwise_time_ratio(0, A100), ValueError, "d must be > 0"),
        (lambda: hw.elementwise_time_ratio(4096, "A100"), TypeError, "chip must be a Chip record"),
        (lambda: hw.elementwise_time_share(4096, A100, a=float("inf")), ValueError, "a must be finite"),
        (lambda: hw.activation_energy_ratio(4096, hw.chip("H100")), ValueError, "has no hbm_energy"),
    ],
)
def test_bad_input_names_the_parameter(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_the_layer_model_takes_a_model_shape():
    a100 = hw.chip("A100-80GB", source="doc002")
    gpt = hw.ModelShape(
        n_layers=32,
        d_model=4096,
        n_heads=32,
        n_kv_heads=32,
        head_dim=128,
        d_ff=4 * 4096,
        mlp="gelu",
        vocab=50000,
        norm="none",
        norms_per_layer=0,
        causal=False,
    )
    # the source documents' layer as a ModelShape that counts its whole score matrix gives their numbers
    assert hw.layer_flops(gpt, 2048, seq_len=2048) == hw.layer_flops(4096, 2048, seq_len=2048)
    # a causal model attends to (s + 1) / 2 keys a token, the half of 12 s d T the source documents count
    causal = dataclasses.replace(gpt, causal=True)
    assert hw.layer_flops(causal, 2048, seq_len=2048) - hw.layer_flops(causal, 2048) == pytest.approx(
        12 * 2049 / 2 * 4096 * 2048
    )
    assert hw.layer_flops(4096, 2048, seq_len=2048, causal=True) == hw.layer_flops(causal, 2048, seq_len=2048)
    assert hw.t_min(gpt, a100) == pytest.approx(hw.t_min(4096, a100), rel=1e-12)
    assert hw.layer_step(gpt, 2048, a100).time_s == pytest.approx(hw.layer_step(4096, 2048, a100).time_s, rel=1e-12)
    assert hw.transformer_params(gpt) == hw.transformer_params(4096, 32, 50000)
    # a real model uses its own per-layer parameters: Llama 3 8B's attention (GQA) and gated MLP
    llama = hw.model("llama-3-8b")
    parts = llama.param_breakdown()
    assert hw.layer_flops(llama, 1) * llama.n_layers == 6 * (parts["attention"] + parts["mlp"])
    step = hw.training_step(llama, 4096, hw.chip("H100-SXM"))
    head = 6 * parts["lm_head"] * 4096  # the training step adds the output head the layers leave out
    assert step.flops == pytest.approx(hw.layer_flops(llama, 4096) * 32 + head)
    seq = hw.training_step(llama, 4096, hw.chip("H100-SXM"), seq_len=4096)  # one convention: the model's own
    assert seq.flops == pytest.approx(float(llama.flops_per_token(4096, training=True)) * 4096)
    with pytest.raises(ValueError, match="mixture of experts"):
        hw.layer_step(hw.model("mixtral-8x7b"), 2048, a100)
    with pytest.raises(TypeError, match="not both"):
        hw.training_step(llama, 4096, a100, 32)
    with pytest.raises(TypeError, match="n_layers is needed"):
        hw.transformer_params(4096)
