"""The model families of 2025-2026 read from real config.json copies: counts against what publishers print and
against hand-derived sums, the layer kinds (latent attention, windows, dense and expert layers) and one-line
errors for bad configs. The configs are in hwlib/data/configs (the catalogue's) and tests/configs (research/
hf_configs.md says where each copy was found)."""

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hwlib as hw
from hwlib.data.config_shapes import CONFIGS
from hwlib.data.records.layer_rules import attended_pairs

TESTS = Path(__file__).with_name("configs")


def read(path: Path, **options) -> hw.ModelShape:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every key is read or known to change no count
        return hw.ModelShape.from_hf_config(path, **options)


def config(name: str) -> dict:
    folder = CONFIGS if (CONFIGS / name).exists() else TESTS
    return json.loads((folder / name).read_text())


# --- counts as their publishers print them -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "published", "digits"),
    [
        ("qwen3-8b", 8_190_735_360, None),  # Hugging Face's exact count
        ("gemma-3-27b", 27_432_406_640, None),  # text model, SigLIP tower and projection
        ("phi-4", 14_659_507_200, None),
        ("llama-4-scout", 108_641_793_536, None),  # text model, vision tower, adapter and projection
        ("deepseek-v3", 671e9, 0),  # "671B"
        ("qwen3-30b-a3b", 30.5e9, 1),  # "30.5B in total"
        ("phi-3-mini", 3.8e9, 1),  # "3.8B parameters"
        ("llama-4-maverick", 402e9, 0),  # "402B parameters"
    ],
)
def test_the_catalogues_new_models_count_what_their_publishers_print(key, published, digits):
    model = hw.model(key)
    assert model.published_params == published
    if digits is None:
        assert model.params() == published
    else:
        assert round(model.params() / 1e9, digits) == round(published / 1e9, digits)


def test_active_parameters_as_published():
    deepseek = hw.model("deepseek-v3")
    embedding = deepseek.vocab * deepseek.d_model
    assert round((deepseek.params(active=True) - embedding) / 1e9, 1) == 36.6  # "36.6B (including 0.9B ... Head)"
    qwen = hw.model("qwen3-30b-a3b")  # Qwen's card cuts off at one decimal: 30.53 and 3.35 print as 30.5 and 3.3
    assert (math.floor(qwen.params() / 1e8), math.floor(qwen.params(active=True) / 1e8)) == (305, 33)
    for key in ("llama-4-scout", "llama-4-maverick"):
        assert round(hw.model(key).params(active=True) / 1e9) == 17  # "17B (Activated)"
    v2 = read(TESTS / "deepseek-v2.from-pydict.json")
    assert round(v2.params() / 1e9) == 236 and round((v2.params(active=True) - v2.vocab * v2.d_model) / 1e9) == 21
    # group-limited routing: "topk_method": "group_limited_greedy" (V2), "noaux_tc" (V3) read n_group, topk_group
    assert (v2.expert_groups, v2.groups_per_token) == (8, 3) and (
        deepseek.expert_groups,
        deepseek.groups_per_token,
    ) == (8, 4)
    assert (hw.model("qwen3-30b-a3b").expert_groups, hw.model("mixtral-8x7b").groups_per_token) == (0, 0)


def test_configs_beside_the_catalogue_count_as_published():
    assert read(TESTS / "qwen3-32b.json").params() == 32_762_123_264
    big = read(TESTS / "qwen3-235b-a22b-instruct-2507.json")
    assert (round(big.params() / 1e9), round(big.params(active=True) / 1e9)) == (235, 22)
    assert read(TESTS / "qwen3-235b-a22b.from-pydict.json").params() == big.params()
    mistral, mixtral = read(TESTS / "mistral-7b-v0.1.json"), read(TESTS / "mixtral-8x7b-v0.1.json")
    assert mistral.params() == hw.model("mistral-7b").params() and mistral.windows == hw.model("mistral-7b").windows
    assert mixtral.params() == hw.model("mixtral-8x7b").params()
    assert read(TESTS / "falcon-7b-instruct.from-pydict.json").params() == hw.model("falcon-7b").params()
    gemma2 = read(TESTS / "gemma-2-9b.from-pydict.json")
    assert gemma2.params() == hw.model("gemma-2-9b").params() and gemma2.windows == hw.model("gemma-2-9b").windows
    assert round(read(TESTS / "olmo-2-1124-7b.from-pydict.json").params() / 1e9, 1) == 7.3
    for size in ("2b", "7b"):  # Gemma 1: two norms a layer, tied embeddings by default, head_dim given
        gemma = read(TESTS / f"gemma-{size}.from-pydict.json")
        assert gemma.params() == hw.model(f"gemma-{size}").params() and gemma.norms_per_layer == 2
        assert gemma.tied_embeddings and gemma.head_dim == 256 and gemma.windows == ()


def test_hand_derived_sums():
    """Each family's count written out from its modules' tensor shapes."""
    d, layers, v = 5120, 40, 100352  # phi-4: no biases, GQA 40/10 heads of 128, SwiGLU 17920, untied
    phi4 = layers * (d * 5120 + 2 * d * 1280 + 5120 * d + 3 * d * 17920 + 2 * d) + 2 * v * d + d
    assert hw.model("phi-4").params() == phi4
    # OLMo 2 7B: RMSNorm after attention and after the MLP, and over the whole query and key widths
    d, layers, v = 4096, 32, 100352
    olmo = layers * (4 * d * d + 3 * d * 11008 + 2 * d + 2 * d) + 2 * v * d + d
    assert read(TESTS / "olmo-2-1124-7b.from-pydict.json").params() == olmo
    # StarCoder2 15B: biases on every linear layer, LayerNorm (weight and bias), a GELU MLP, GQA 48/4 of 128
    d, layers, v, ff = 6144, 40, 49152, 24576
    attention = d * d + 2 * d * 512 + d * d + (d + 2 * 512) + d
    mlp = 2 * d * ff + ff + d
    assert read(TESTS / "starcoder2-15b.json").params() == layers * (attention + mlp + 4 * d) + 2 * v * d + 2 * d
    # DeepSeek-V3's multi-token-prediction layer: a MoE layer, [h; e] -> d, and three norms
    ds = hw.model("deepseek-v3")
    mla = 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168
    moe = 256 * 3 * 7168 * 2048 + 3 * 7168 * 2048 + 7168 * 256 + 256
    norms = 2 * 7168 + 1536 + 512
    assert ds.mtp_params() == mla + moe + norms + 2 * 7168 * 7168 + 3 * 7168
    assert round(ds.mtp_params() / 1e9, 1) == 11.6  # README_WEIGHTS prints "11.5B unique" (see the record's note)


def test_qwen_moe_shared_expert_and_its_gate():
    """Qwen1.5-MoE-A2.7B's shape (a test fixture's values): 'It has 14.3B parameters in total and 2.7B activated'."""
    qwen = {
        "model_type": "qwen2_moe",
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632,
        "num_experts": 60,
        "num_experts_per_tok": 4,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "vocab_size": 151936,
        "tie_word_embeddings": False,
        "decoder_sparse_step": 1,
    }
    model = read(qwen)
    assert (round(model.params() / 1e9, 1), round(model.params(active=True) / 1e9, 1)) == (14.3, 2.7)
    parts = model.param_breakdown()
    assert parts["shared experts"] == 24 * (3 * 2048 * 5632 + 2048)  # the shared expert and its sigmoid gate
    assert parts["experts"] == 24 * 60 * 3 * 2048 * 1408 and parts["router"] == 24 * 2048 * 60


# --- architectures: heads and vision towers -----------------------------------------------------------------------

LLAMA3_8B = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
}


def test_a_reward_model_has_a_score_head_not_an_lm_head():
    reward = read({**LLAMA3_8B, "architectures": ["LlamaForSequenceClassification"], "num_labels": 1})
    assert reward.head == "classifier" and reward.params() == 8_030_261_248 - 128256 * 4096 + 4096
    assert round(reward.params() / 1e9, 1) == 7.5  # the published size of Llama 3.1 8B reward models
    assert reward.matmul_params() == hw.model("llama-3-8b").matmul_params() - 128256 * 4096 + 4096
    headless = read({**LLAMA3_8B, "architectures": ["LlamaModel"]})
    assert headless.head == "none" and headless.params() == 8_030_261_248 - 128256 * 4096
    assert read({**LLAMA3_8B, "architectures": ["LlamaForSequenceClassification"]}).n_labels == 2
    with pytest.raises(ValueError, match="architectures 'LlamaForTokenClassification' is not modelled"):
        read({**LLAMA3_8B, "architectures": ["LlamaForTokenClassification"]})


def test_vision_towers_are_counted_or_left_out_by_name():
    scout, gemma = CONFIGS / "llama-4-scout-17b-16e.json", CONFIGS / "gemma-3-27b-it.json"
    assert read(scout, text_only=True).params() == 107_769_861_120
    assert hw.model("llama-4-scout").param_breakdown()["vision"] == 871_932_416
    assert read(gemma, text_only=True).params() + 416_866_032 + 6_194_304 == hw.model("gemma-3-27b").params()
    assert "vision" not in hw.model("gemma-3-27b").param_breakdown(active=True)
    step = hw.inference_step(hw.model("gemma-3-27b"), hw.chip("h100-sxm"), 1, 1024)
    assert step.part_flops["weights"] == 2 * read(gemma, text_only=True).matmul_params()


# --- layer kinds ---------------------------------------------------------------------------------------------------


def test_latent_attention_caches_one_latent_and_computes_its_scores_the_cheaper_way():
    ds = hw.model("deepseek-v3")
    assert ds.attention == "MLA" and ds.kv_bytes_per_token("bf16") == 61 * (512 + 64) * 2
    table, heads = ds.table(), 128
    naive_pair, absorbed_pair = 2 * heads * (192 + 128), 2 * heads * (2 * 512 + 64)
    expand = 2 * 512 * heads * (128 + 128)
    # decode: one new token over 4,096 cached ones
    naive = 61 * (naive_pair * 4097 + expand * 4096)
    absorbed = 61 * absorbed_pair * 4097
    assert table.attention_flops(1, 4096, mla="naive") == naive
    assert table.attention_flops(1, 4096, mla="absorbed") == absorbed
    assert table.attention_flops(1, 4096) == absorbed < naive
    # prefill of 4,096 tokens: nothing cached, the expanded form is cheaper
    pairs = 4096 * 4097 / 2
    assert table.attention_flops(4096, 0) == table.attention_flops(4096, 0, mla="naive") == 61 * naive_pair * pairs
    with pytest.raises(ValueError, match="mla must be one of"):
        table.attention_flops(1, 10, mla="fused")
    gqa = hw.model("llama-3-70b")
    assert ds.kv_bytes_per_token() < gqa.kv_bytes_per_token() / 4  # 70 KB against 320 KB a token


def test_windows_cap_the_cache_and_the_attended_tokens():
    gemma = hw.model("gemma-3-27b")
    windows = np.array(gemma.windows)
    assert windows.size == 62 and (windows == 0).sum() == 10 and set(windows) == {0, 1024}
    per_layer = 2 * 16 * 128 * 2  # bytes a token caches in one layer
    assert gemma.kv_bytes(32768) == per_layer * (10 * 32768 + 52 * 1024)
    assert gemma.kv_bytes(512) == per_layer * 62 * 512  # shorter than every window: all layers hold it all
    assert hw.kv_cache_bytes(32768, gemma, batch=3) == 3 * gemma.kv_bytes(32768)
    table = gemma.table()
    full = 4 * 32 * 128 * 32768 * 32769 / 2
    local = 4 * 32 * 128 * (1024 * 1025 / 2 + 1024 * (32768 - 1024))
    assert table.attention_flops(32768, 0) == pytest.approx(10 * full + 52 * local)
    scout = hw.model("llama-4-scout")
    chunk = 8192 * 8193 / 2  # a token sees its own chunk of 8,192 so far
    pairs = 36 * 4 * chunk + 12 * 32768 * 32769 / 2
    assert scout.table().attention_flops(32768, 0) == pytest.approx(4 * 40 * 128 * pairs)
    assert scout.kv_bytes(32768) == 2 * 8 * 128 * 2 * (36 * 8192 + 12 * 32768)


@given(
    new=st.integers(1, 300),
    context=st.integers(0, 300),
    window=st.integers(1, 64),
    kind=st.sampled_from(["sliding", "chunked"]),
)
def test_windowed_pairs_are_the_sum_over_tokens(new, context, window, kind):
    positions = np.arange(context, context + new)
    seen = np.minimum(positions + 1, window) if kind == "sliding" else positions % window + 1
    assert attended_pairs(new, context, True, window, kind) == seen.sum()
    assert attended_pairs(new, context, True, window, kind) <= attended_pairs(new, context, True)


def test_dense_and_expert_layers():
    ds = hw.model("deepseek-v3")
    assert ds.moe_layers[:4] == (False, False, False, True) and sum(ds.moe_layers) == 58
    parts = ds.param_breakdown()
    assert parts["mlp"] == 3 * 3 * 7168 * 18432
    assert parts["router"] == 58 * (7168 * 256 + 256)  # with V3's per-expert correction bias
    maverick = hw.model("llama-4-maverick")
    assert maverick.moe_layers == (False, True) * 24
    assert maverick.param_breakdown()["mlp"] == 24 * 3 * 5120 * 16384
    assert maverick.table().experts_touched(1) == pytest.approx(1.0)
    assert maverick.table().ep_elements_per_token() == pytest.approx(5120 / 2)  # half the layers route


def test_serving_and_training_follow_the_layer_kinds():
    chip = hw.chip("h200")
    gemma, ds = hw.model("gemma-3-27b"), hw.model("deepseek-v3")
    short, long = (hw.inference_step(gemma, chip, 1, context).part_bytes["attention"] for context in (1024, 65536))
    assert long / short < 65536 / 1024 / 4  # most layers stop growing at 1,024 tokens
    assert hw.max_batch(gemma, chip, 32768) > hw.max_batch(hw.model("gemma-2-27b"), chip, 32768)
    decode = hw.inference_step(ds, hw.cluster("hgx-h200-ndr"), 1, 4096, n_chips=8, weight_dtype="fp8")
    assert decode.part_flops["attention"] == ds.table().attention_flops(1, 4096, mla="absorbed")
    memory = hw.training_memory(ds, "zero_mixed_adam", hw.chip("h100-sxm"), 4096, recompute="full")
    assert memory.n_chips > ds.params() * 16 / hw.usable_bytes(hw.chip("h100-sxm"))


# --- bad configs: one line naming the key --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"num_attention_heads": 0}, "config's 'num_attention_heads' must be a whole number >= 1, got 0"),
        ({"num_attention_heads": -8}, "config's 'num_attention_heads' must be a whole number >= 1, got -8"),
        ({"hidden_size": "4096"}, "config's 'hidden_size' must be a whole number >= 1, got '4096' (str)"),
        ({"hidden_size": math.nan}, "config's 'hidden_size' must be a whole number >= 1, got the float NaN"),
        (
            {"intermediate_size": 14336.0},
            "config's 'intermediate_size' must be a whole number >= 1, got the float 14336.0",
        ),
        ({"num_hidden_layers": True}, "config's 'num_hidden_layers' must be a whole number >= 1, got True (bool)"),
        ({"hidden_size": 4095}, "config's hidden_size (4095) is not a multiple of num_attention_heads (32)"),
        ({"vocab_size": 10**15}, "config's 'vocab_size' is 1,000,000,000,000,000, more than any model has"),
        ({"num_key_value_heads": 5}, "config's num_attention_heads (32) must be a multiple of num_key_value_heads (5)"),
        ({"tie_word_embeddings": "no"}, "config's 'tie_word_embeddings' must be true or false"),
    ],
)
def test_bad_configs_are_one_line_naming_the_key(changes, words):
    with pytest.raises(ValueError) as caught:
        hw.ModelShape.from_hf_config({**LLAMA3_8B, **changes})
    assert str(caught.value).startswith(words) and "\n" not in str(caught.value)


def test_bad_family_configs_name_their_keys():
    ds = config("deepseek-v3.json")
    with pytest.raises(ValueError, match="config has no 'kv_lora_rank'"):
        hw.ModelShape.from_hf_config({k: v for k, v in ds.items() if k != "kv_lora_rank"})
    with pytest.raises(ValueError, match="'n_routed_experts' must be a whole number"):
        hw.ModelShape.from_hf_config({**ds, "n_routed_experts": "256"})
    gemma = config("gemma-3-27b-it.json")
    with pytest.raises(ValueError, match="'layer_types' must list one of"):
        hw.ModelShape.from_hf_config({**gemma, "text_config": {**gemma["text_config"], "layer_types": ["local"] * 62}})
    with pytest.raises(ValueError, match="config has no 'text_config'"):
        hw.ModelShape.from_hf_config({"model_type": "llama4"})


# --- expert-parallel serving --------------------------------------------------------------------------------------


def test_expert_parallel_serving_trades_the_mlp_all_reduce_for_two_all_to_alls():
    ds, cluster = hw.model("deepseek-v3"), hw.cluster("hgx-h200-ndr")
    tp = hw.inference_step(ds, cluster, 64, 4096, 1, 8, "fp8", "fp8")
    ep = hw.inference_step(ds, cluster, 64, 4096, 1, 8, "fp8", "fp8", expert_parallel=True)
    topology = hw.group_topology(cluster, 8, 1, 8)
    allreduce = hw.collective_time_s("all-reduce", 64 * 7168 * 2, topology)
    alltoall = hw.collective_time_s("all-to-all", 64 / 8 * 8 * 7168 * 2, topology)
    assert tp.comm_time_s == pytest.approx(2 * 61 * allreduce)
    assert ep.comm_time_s == pytest.approx((2 * 61 - 58) * allreduce + 2 * 58 * alltoall)
    assert ep.part_flops == tp.part_flops and ep.part_bytes == tp.part_bytes
    plan = hw.serving_chips(ds, cluster, 4096, 16, 0.05, weight_dtype="fp8", kv_dtype="fp8", expert_parallel=True)
    assert plan.n_chips == 8 and plan.forecast_time_per_token_s <= 0.05
    with pytest.raises(ValueError, match="expert_parallel needs a mixture-of-experts model"):
        hw.inference_step(hw.model("llama-3-8b"), cluster, 1, 128, 1, 8, expert_parallel=True)


def test_an_moe_layer_runs_its_experts_as_one_grouped_gemm():
    from hwlib.efficiency import tile_quantization

    alone = tile_quantization(2, 512, (128, 128), 132)
    grouped = tile_quantization(2, 512, (128, 128), 132, groups=222)
    assert alone == pytest.approx(2 / 16 * 4 / 132)  # four tiles in a wave of 132
    assert grouped == pytest.approx(2 / 16 * (888 / 132) / 7)  # 888 tiles in seven waves
    rows, columns, shares, groups = hw.model("deepseek-v3").table().layer_matmuls(64, 8)
    touched = hw.model("deepseek-v3").table().experts_touched(64)
    assert groups[2] == groups[3] == pytest.approx(touched) and rows[2] == pytest.approx(64 * 8 / touched)
    assert columns[2] == 2 * 2048 / 8 and shares.sum() == pytest.approx(1.0)
    rows_ep, columns_ep, shares_ep, groups_ep = hw.model("deepseek-v3").table().layer_matmuls(64, 8, True)
    assert columns_ep[2] == 2 * 2048 and columns_ep[0] == columns[0]  # whole experts; attention still split
    assert groups_ep[2] == pytest.approx(touched / 8) and rows_ep[2] == rows[2]
    assert shares_ep.sum() == pytest.approx(1.0)
