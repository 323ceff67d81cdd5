"""hwlib.memory: document 000's GiB budgets, recipes, activations, KV cache, chip counts."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hwlib as hw
from hwlib.data import doc000
from hwlib.data.records import TRAINING_PARTS

UNSOLD = hw.custom_chip("unsold", peak_flops_per_s={"bf16": 1e15}, hbm_bytes_per_s=1e12, hbm_bytes=64e9)
"""A chip given inline, sold in no deployment size."""

GiB = 2**30
V5E_DOC = hw.chip("v5e", source="doc000")
V6E_DOC = hw.chip("v6e", source="doc000")
H100 = hw.chip("H100-SXM")


def doc000_budget(params_billions, kv_tokens):
    """Document 000's estimate_memory_gib, rebuilt from hwlib and rounded as it prints."""
    n = params_billions * 1e9
    kv = {d: hw.kv_cache_bytes(kv_tokens, 32, 8, 128, d) for d in ("fp32", "bf16", "int8")}
    return {
        "fp32_train_state_gib": round(hw.training_state_bytes(n, "fp32_adam") / GiB, 3),
        "mixed_bf16_train_state_gib": round(hw.training_state_bytes(n, "doc000_mixed_bf16") / GiB, 3),
        **{f"kv_{d}_gib": round(b / GiB, 3) for d, b in kv.items()},
    }


# --- the document's printed numbers ------------------------------------------------------


def test_document_000_budgets_exactly():
    assert doc000_budget(7.0, 8192) == {
        "fp32_train_state_gib": 104.308,
        "mixed_bf16_train_state_gib": 117.347,
        "kv_fp32_gib": 2.0,
        "kv_bf16_gib": 1.0,
        "kv_int8_gib": 0.5,
    }
    assert doc000_budget(1.5, 4096) == {
        "fp32_train_state_gib": 22.352,
        "mixed_bf16_train_state_gib": 25.146,
        "kv_fp32_gib": 1.0,
        "kv_bf16_gib": 0.5,
        "kv_int8_gib": 0.25,
    }


def test_document_000_budgets_from_its_own_records_and_constants():
    assert (doc000.PARAMS_7B, doc000.KV_TOKENS_7B, doc000.PARAMS_1P5B, doc000.KV_TOKENS_1P5B) == (
        7e9,
        8192,
        1.5e9,
        4096,
    )
    assert doc000.USABLE_FRACTION == 0.8 and doc000.SLICE_CHIPS == 4
    for key, params, tokens in (
        ("doc000-7b", doc000.PARAMS_7B, doc000.KV_TOKENS_7B),
        ("doc000-1.5b", doc000.PARAMS_1P5B, doc000.KV_TOKENS_1P5B),
    ):
        model = hw.model(key)
        assert model.published_params == params and model.attention == "not stated"
        for dtype in ("fp32", "bf16", "int8"):
            assert hw.kv_cache_bytes(tokens, model, dtype=dtype) == hw.kv_cache_bytes(tokens, 32, 8, 128, dtype)
    assert round(hw.kv_cache_bytes(8192, hw.model("doc000-7b"), dtype="fp32") / GiB, 3) == 2.0
    assert round(hw.training_state_bytes(doc000.PARAMS_7B, doc000.MIXED_BF16) / GiB, 3) == 117.347


def test_document_000_kv_elements_are_powers_of_two():
    assert hw.kv_cache_bytes(8192, 32, 8, 128, "int8") == 2**29
    assert hw.kv_cache_bytes(4096, 32, 8, 128, "int8") == 2**28


def test_document_000_chip_counts_and_fits():
    state_7b = hw.training_state_bytes(7e9, "doc000_mixed_bf16")
    assert hw.usable_bytes(V5E_DOC) == 12.8 * GiB
    assert state_7b / hw.usable_bytes(V5E_DOC) == pytest.approx(9.168, abs=5e-4)
    assert hw.chips_needed(state_7b, V5E_DOC) == 10
    assert hw.deployment_chips(state_7b, V5E_DOC) == 16
    assert hw.deployment_name(16, V5E_DOC) == "v5litepod-16 (4x4)"
    state_1p5b = hw.training_state_bytes(1.5e9, "doc000_mixed_bf16")
    kv_bf16 = hw.kv_cache_bytes(4096, 32, 8, 128, "bf16")
    assert round((state_1p5b + kv_bf16) / GiB, 3) == 25.646
    assert hw.usable_bytes(V5E_DOC, 0.8, n_chips=4) == pytest.approx(51.2 * GiB)
    assert hw.usable_bytes(V6E_DOC, 0.8, n_chips=4) == pytest.approx(102.4 * GiB)
    assert not state_7b <= hw.usable_bytes(V6E_DOC, 0.8, n_chips=4)


def test_document_002_labels_16_bytes_as_mixed_adam():
    params = 12 * 4096**2 * 32 + 2 * 50000 * 4096
    assert round(hw.training_state_bytes(params, "zero_mixed_adam") / 1e9) == 110
    # 002's saved activations, 34 d s L bytes, are Korthikanti's term without the s^2 part
    per_layer = hw.activation_bytes(2048, 1, 4096, 32, flash_attention=True)
    assert round(32 * per_layer / 1e9, 1) == 9.1


# --- recipes ---------------------------------------------------------------------------


def test_recipe_totals_and_parts():
    # 0.1's hw.TRAINING_RECIPES dict is hw.recipes() (a tuple of records), recipe.total is recipe.bytes_per_param
    totals = {r.key: r.bytes_per_param for r in hw.recipes()}
    assert totals["fp32_adam"] == 16 and totals["doc000_mixed_bf16"] == 18
    assert totals["zero_mixed_adam"] == 16 and totals["bf16_fp32_moments"] == 10
    assert totals["bf16_grads_fp32_moments"] == 12 and totals["sgd_momentum"] == 12
    assert totals["adam_8bit"] == 10 + 8 / 2048
    assert totals["adafactor"] == 8 + 8 / 4096
    zero = hw.recipe("zero_mixed_adam")
    assert zero.breakdown() == {"weights": 2, "gradients": 2, "master": 4, "optimizer": 8}
    for recipe in hw.recipes():
        assert set(recipe.parts) == set(TRAINING_PARTS) and recipe.source
        assert sum(recipe.breakdown().values()) == recipe.bytes_per_param
        assert f"{recipe.bytes_per_param:g} B/param" in str(recipe)
        assert hw.recipe(recipe.key) is recipe and hw.recipe(recipe) is recipe
    assert hw.recipe("doc000_mixed_bf16") is doc000.MIXED_BF16
    assert hw.literature.ADAM8_BLOCK == 2048 and hw.literature.ADAFACTOR_MATRIX_SIDE == 4096


def test_recipes_are_immutable():
    with pytest.raises(TypeError):
        hw.recipes()[0] = None
    with pytest.raises(AttributeError):
        hw.recipe("fp32_adam").weights = 2
    with pytest.raises(TypeError):
        hw.recipe("fp32_adam").parts["weights"] = "x"
    with pytest.raises(ValueError, match="weights must be a number >= 0"):
        hw.data.TrainingRecipe("k", "l", -1, 0, 0, 0, {p: "" for p in TRAINING_PARTS}, "s")
    with pytest.raises(ValueError, match="parts must describe exactly"):
        hw.data.TrainingRecipe("k", "l", 1, 0, 0, 0, {}, "s")


def test_training_state_is_vectorised_and_accepts_records():
    params = np.array([1e9, 2e9])
    np.testing.assert_array_equal(hw.training_state_bytes(params, "fp32_adam"), [16e9, 32e9])
    record = hw.recipe("sgd_momentum")
    assert hw.training_state_bytes(1e9, record) == 12e9
    parts = hw.training_state_breakdown(params, "doc000_mixed_bf16")
    np.testing.assert_array_equal(parts["gradients"], [4e9, 8e9])
    np.testing.assert_array_equal(sum(parts.values()), hw.training_state_bytes(params, "doc000_mixed_bf16"))


# --- activations -------------------------------------------------------------------------


def test_activations_follow_korthikanti_table_2():
    s, b, h, a, t = 2048, 4, 12288, 96, 8  # GPT-3 175B shape of the paper
    sbh = s * b * h
    assert hw.activation_bytes(s, b, h, a) == sbh * (34 + 5 * a * s / h)
    assert hw.activation_bytes(s, b, h, a, tensor_parallel=t) == sbh * (10 + 24 / t + 5 * a * s / (h * t))
    assert hw.activation_bytes(s, b, h, a, t, sequence_parallel=True) == pytest.approx(
        sbh * (34 / t + 5 * a * s / (h * t))
    )
    assert hw.activation_bytes(s, b, h, a, t, recompute="selective") == sbh * (10 + 24 / t)
    assert hw.activation_bytes(s, b, h, a, t, True, "selective") == pytest.approx(sbh * 34 / t)
    assert hw.activation_bytes(s, b, h, a, t, recompute="full") == 2 * sbh
    assert hw.activation_bytes(s, b, h, a, t, True, "full") == 2 * sbh / t
    assert hw.activation_bytes(s, b, h, a, flash_attention=True) == 34 * sbh
    # for this shape the attention-score term 5as/h = 80 outweighs the other 34 by far
    assert 5 * a * s / h == 80


def test_activations_vectorised():
    seq = np.array([1024, 2048, 4096])
    values = hw.activation_bytes(seq, 1, 4096, 32)
    np.testing.assert_array_equal(values, seq * 4096 * (34 + 5 * 32 * seq / 4096))


@given(st.integers(1, 1 << 17), st.integers(1, 64), st.sampled_from([1, 2, 4, 8]))
def test_activation_orderings(seq, batch, t):
    h, a = 4096, 32
    none = hw.activation_bytes(seq, batch, h, a, t)
    sp = hw.activation_bytes(seq, batch, h, a, t, sequence_parallel=True)
    selective = hw.activation_bytes(seq, batch, h, a, t, recompute="selective")
    flash = hw.activation_bytes(seq, batch, h, a, t, flash_attention=True)
    full = hw.activation_bytes(seq, batch, h, a, t, recompute="full")
    assert full <= selective == flash <= none
    assert sp <= none * (1 + 1e-12)
    assert hw.activation_bytes(seq + 1, batch, h, a, t) > none


# --- KV cache ------------------------------------------------------------------------------


def test_kv_cache_precisions():
    base = hw.kv_cache_bytes(1000, 32, 8, 128, "bf16")
    assert base == 2 * 32 * 1000 * 8 * 128 * 2
    assert hw.kv_cache_bytes(1000, 32, 8, 128, "fp32") == 2 * base
    assert hw.kv_cache_bytes(1000, 32, 8, 128, "fp16") == base
    assert hw.kv_cache_bytes(1000, 32, 8, 128, "fp8") == base / 2
    assert hw.kv_cache_bytes(1000, 32, 8, 128, "int8") == base / 2
    assert hw.kv_cache_bytes(1000, 32, 8, 128, "int4") == base / 4
    assert hw.kv_cache_bytes(1000, 32, 8, 128, batch=3) == 3 * base
    assert hw.kv_cache_bytes(0, 32, 8, 128) == 0


@given(st.integers(0, 1 << 20), st.integers(1, 128), st.integers(1, 64), st.sampled_from([64, 128, 256]))
def test_kv_cache_is_linear(tokens, layers, kv_heads, head_dim):
    one = hw.kv_cache_bytes(tokens, layers, kv_heads, head_dim)
    assert hw.kv_cache_bytes(2 * tokens, layers, kv_heads, head_dim) == 2 * one
    assert hw.kv_cache_bytes(tokens, layers, 2 * kv_heads, head_dim) == 2 * one
    assert hw.kv_cache_bytes(tokens, layers, kv_heads, head_dim, "int8") == one / 2


# --- capacity -------------------------------------------------------------------------------


def test_chips_needed_edges():
    usable = hw.usable_bytes(V5E_DOC)
    assert hw.chips_needed(usable, V5E_DOC) == 1
    assert hw.chips_needed(usable * 1.0001, V5E_DOC) == 2
    assert hw.chips_needed(0, V5E_DOC) == 1
    assert hw.chips_needed(51.2 * GiB, V5E_DOC) == 4
    assert hw.chips_needed(16 * GiB, V5E_DOC, usable_fraction=1.0) == 1
    counts = hw.chips_needed(np.array([1.0, 13 * GiB, 100 * 12.8 * GiB]), V5E_DOC)
    assert counts.dtype.kind == "i" and list(counts) == [1, 2, 100]
    assert isinstance(hw.chips_needed(1.0, V5E_DOC), int)


def test_deployments():
    state = np.array([1, 4, 5, 9, 16, 17, 256, 257]) * hw.usable_bytes(V5E_DOC)
    assert list(hw.deployment_chips(state, V5E_DOC)) == [1, 4, 8, 16, 16, 32, 256, 512]
    on_h100 = np.array([1, 8, 9, 17, 256, 257]) * hw.usable_bytes(H100)
    assert list(hw.deployment_chips(on_h100, H100)) == [8, 8, 16, 24, 256, 264]
    assert list(hw.deployment_name([16, 24], H100)) == ["2 × 8-GPU node", "3 × 8-GPU node"]
    assert hw.deployment_name(4, hw.chip("v5p")) == "v5p-8 (2x2x1)"
    assert hw.deployment(hw.chip("v6e")).sizes[-1] == 256
    for plan in hw.deployments():
        assert plan.source.startswith("https://") and plan.read_on == "2026-11-30" and plan.quoted


@given(st.floats(0, 1e14), st.floats(0.05, 1.0))
def test_chip_count_properties(total, share):
    needed = hw.chips_needed(total, V5E_DOC, share)
    assert needed * hw.usable_bytes(V5E_DOC, share) >= total * (1 - 1e-9)
    assert needed == 1 or (needed - 1) * hw.usable_bytes(V5E_DOC, share) < total
    assert hw.deployment_chips(total, V5E_DOC, share) >= needed
    assert hw.chips_needed(total * 2, V5E_DOC, share) >= needed


def test_max_params_and_tokens_that_fit():
    usable = hw.usable_bytes(V5E_DOC)
    assert hw.max_params(usable, "fp32_adam") == usable / 16
    assert hw.max_params(usable, "fp32_adam", reserved_bytes=2 * usable) == 0
    np.testing.assert_array_equal(hw.max_params(np.array([16.0, 32.0]), "fp32_adam"), [1, 2])
    per_token = hw.kv_cache_bytes(1, 32, 8, 128)
    weights = 7e9 * 2
    room = hw.usable_bytes(H100) - weights
    assert hw.tokens_that_fit(H100, weights, per_token) == math.floor(room / per_token)
    assert hw.tokens_that_fit(H100, 1e12, per_token) == 0
    assert hw.tokens_that_fit(H100, weights, per_token, n_chips=2) > 2 * hw.tokens_that_fit(H100, weights, per_token)


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: hw.training_state_bytes(-1, "fp32_adam"), ValueError, "n_params must be >= 0"),
        (lambda: hw.training_state_bytes("7B", "fp32_adam"), TypeError, "n_params must be a real number"),
        (lambda: hw.training_state_bytes(7e9, "adam"), KeyError, "unknown recipe 'adam'"),
        (lambda: hw.training_state_bytes(7e9, 16), TypeError, "recipe must be a recipe key"),
        (lambda: hw.training_state_breakdown(np.nan, "fp32_adam"), ValueError, "n_params must not be NaN"),
        (lambda: hw.activation_bytes(0, 1, 4096, 32), ValueError, "seq_len must be > 0"),
        (lambda: hw.activation_bytes(2048.5, 1, 4096, 32), ValueError, "seq_len must be a whole number"),
        (lambda: hw.activation_bytes(2048, 1, 4096, 30), ValueError, "d must be a multiple of n_heads"),
        (lambda: hw.activation_bytes(2048, 1, 4096, 32, recompute="some"), ValueError, "recompute must be one of"),
        (
            lambda: hw.activation_bytes(2048, 1, 4096, 32, sequence_parallel="yes"),
            TypeError,
            "sequence_parallel must be True or False",
        ),
        (lambda: hw.activation_bytes(2048, 1, 4096, 32, tensor_parallel=0), ValueError, "tensor_parallel must be > 0"),
        (lambda: hw.activation_bytes([1, 2], [1, 2, 3], 4096, 32), ValueError, "must broadcast together"),
        (lambda: hw.kv_cache_bytes(-1, 32, 8, 128), ValueError, "seq_len must be >= 0"),
        (lambda: hw.kv_cache_bytes(10, 32, 0, 128), ValueError, "n_kv_heads must be > 0"),
        (lambda: hw.kv_cache_bytes(10, 32, 8, 128, "fp64"), ValueError, "dtype must be one of"),
        (lambda: hw.kv_cache_bytes(10, 32, 8, 128, batch=0.5), ValueError, "batch must be a whole number"),
        (lambda: hw.chips_needed(1e9, "v5e"), TypeError, "chip must be a Chip record"),
        (lambda: hw.chips_needed(1e9, V5E_DOC, 1.5), ValueError, "usable_fraction must be in"),
        (lambda: hw.chips_needed(-1, V5E_DOC), ValueError, "total_bytes must be >= 0"),
        (lambda: hw.chips_needed(np.inf, V5E_DOC), ValueError, "total_bytes must be finite"),
        (lambda: hw.usable_bytes(V5E_DOC, 0), ValueError, "usable_fraction must be > 0"),
        (lambda: hw.deployment(UNSOLD), KeyError, "no deployment sizes for chip"),
        (lambda: hw.deployment_chips(1e9, UNSOLD), KeyError, "no deployment sizes"),
        (lambda: hw.deployment_name(10, V5E_DOC), ValueError, "n_chips must be a deployment size"),
        (lambda: hw.deployment_name(0, V5E_DOC), ValueError, "n_chips must be >= 1"),
        (lambda: hw.max_params(-1, "fp32_adam"), ValueError, "capacity_bytes must be >= 0"),
        (lambda: hw.tokens_that_fit(H100, 1e9, 0), ValueError, "kv_bytes_per_token must be > 0"),
    ],
)
def test_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


GPT_LAYER = hw.ModelShape(
    n_layers=1,
    d_model=4096,
    n_heads=32,
    n_kv_heads=32,
    head_dim=128,
    d_ff=4 * 4096,
    mlp="gelu",
    vocab=50000,
    norm="layernorm",
)


@pytest.mark.parametrize(
    "options",
    [
        dict(),
        dict(tensor_parallel=8),
        dict(tensor_parallel=8, sequence_parallel=True),
        dict(recompute="selective"),
        dict(tensor_parallel=8, sequence_parallel=True, recompute="selective"),
        dict(recompute="full"),
        dict(recompute="full", tensor_parallel=8, sequence_parallel=True),
        dict(flash_attention=True),
    ],
)
def test_a_gpt_shape_with_dropout_is_korthikantis_table_2(options):
    # Korthikanti et al. 2022, Table 2: s b h (34 + 5 a s / h), (10 + 24/t + 5 a s/(h t)), ...
    assert hw.activation_bytes(2048, 2, GPT_LAYER, dropout=True, **options) == hw.activation_bytes(
        2048, 2, 4096, 32, **options
    )


def test_structure_aware_activations():
    s, llama = 4096, hw.model("llama-3-8b")
    per_token = hw.activation_bytes(s, 1, llama, flash_attention=True) / s
    # no dropout; norm inputs 2 x 2d, block inputs 2 x 2d; Q 2 q, K and V 2 x 2 kv, attention output 2 q;
    # gated MLP: gate, up and product, 3 x 2 d_ff
    q, kv = 32 * 128, 8 * 128
    assert per_token == 2 * 4096 * 4 + 2 * (2 * q + 2 * kv) + 3 * 2 * 14336
    scores = hw.activation_bytes(s, 1, llama) - hw.activation_bytes(s, 1, llama, flash_attention=True)
    assert scores == 2 * 32 * s * s  # the softmax output, 2 bytes per head per token pair, no dropout
    mixtral = hw.model("mixtral-8x7b")
    dense_twin = dataclasses.replace(mixtral, n_experts=0, experts_per_token=0, d_ff_expert=None, d_ff=2 * 14336)
    assert hw.activation_bytes(s, 1, mixtral) == hw.activation_bytes(s, 1, dense_twin)  # 2 experts of 14336 per token
    assert hw.logits_bytes(s, 2, llama) == 2 * 4 * s * 2 * 128256


def test_activation_errors():
    with pytest.raises(TypeError, match="n_heads is needed unless d is a ModelShape"):
        hw.activation_bytes(2048, 1, 4096)
    with pytest.raises(TypeError, match="not both"):
        hw.activation_bytes(2048, 1, hw.model("llama-3-8b"), 32)
    with pytest.raises(ValueError, match="gives no d_model"):
        hw.activation_bytes(2048, 1, hw.model("doc000-7b"))
    with pytest.raises(TypeError, match="dropout must be"):
        hw.activation_bytes(2048, 1, hw.model("llama-3-8b"), dropout="no")
    with pytest.raises(TypeError, match="model must be a ModelShape with a vocabulary"):
        hw.logits_bytes(2048, 1, hw.model("doc000-7b"))
