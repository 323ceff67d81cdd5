"""Published model shapes, each read from the model's ``config.json`` on huggingface.co.

Parameter counts are exact: the sum of the tensor sizes that the config implies, which
``tests/test_models.py`` recomputes from the shapes and which match the rounded counts on the
model pages ("8.03B" etc.). Explained in the chapter :ref:`ch-kv-cache`; used by :ref:`ch-hbm-budgets`.
"""

from __future__ import annotations

from hwlib.data.config_shapes import SHAPES as CONFIG_SHAPES
from hwlib.data.gemma1_shapes import GEMMA1_SHAPES
from hwlib.data.paper_shapes import PAPER_SHAPES
from hwlib.data.records import ModelShape, cite


def _hf(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


_EXACT = "Exact sum of the tensor sizes implied by config.json (recomputed in tests)."


def _shape(
    key: str,
    name: str,
    repo: str,
    n_params: float,
    quoted: str,
    note: str,
    *,
    count_source: str = "",
    count_note: str = _EXACT,
    **fields: object,
) -> ModelShape:
    count = cite(count_source or _hf(repo))(float(n_params), "parameters", quoted, count_note)
    return ModelShape(key=key, name=name, n_params=count, source=_hf(repo), note=note, **fields)


_CARD = "The model card's size class; the exact count is params(), the sum the config implies."
_MIRROR = "Config values read from a copy of config.json ({}); the page itself was not among the stored copies."
_CARDS = (
    "https://huggingface.co/{} (model card, as mirrored in ZHUI/paddlenlp_model_readme or YinanWusoymilk/hf-readme)"
)


_LLAMA = dict(mlp="gated", norm="rmsnorm")

_FROM_CONFIGS: tuple[ModelShape, ...] = (
    _shape(
        "llama-2-7b",
        "Llama 2 7B",
        "meta-llama/Llama-2-7b-hf",
        6_738_415_616,
        "6.74B params",
        "num_key_value_heads = num_attention_heads = 32: multi-head attention.",
        n_layers=32,
        d_model=4096,
        n_heads=32,
        n_kv_heads=32,
        head_dim=128,
        d_ff=11008,
        vocab=32000,
        **_LLAMA,
    ),
    _shape(
        "llama-3-8b",
        "Llama 3 8B",
        "meta-llama/Meta-Llama-3-8B",
        8_030_261_248,
        "8.03B params",
        "num_key_value_heads 8: grouped-query attention, 4 query heads per KV head.",
        n_layers=32,
        d_model=4096,
        n_heads=32,
        n_kv_heads=8,
        head_dim=128,
        d_ff=14336,
        vocab=128256,
        **_LLAMA,
    ),
    _shape(
        "mistral-7b",
        "Mistral 7B",
        "mistralai/Mistral-7B-v0.1",
        7_241_732_096,
        "7.24B params",
        "v0.1: a sliding window of 4,096 tokens on every layer ('sliding_window': 4096) caps what each token "
        "attends to and what each layer caches.",
        n_layers=32,
        windows=(4096,) * 32,
        d_model=4096,
        n_heads=32,
        n_kv_heads=8,
        head_dim=128,
        d_ff=14336,
        vocab=32000,
        **_LLAMA,
    ),
    _shape(
        "llama-3-70b",
        "Llama 3 70B",
        "meta-llama/Meta-Llama-3-70B",
        70_553_706_496,
        "70.6B params",
        "num_key_value_heads 8: grouped-query attention, 8 query heads per KV head.",
        n_layers=80,
        d_model=8192,
        n_heads=64,
        n_kv_heads=8,
        head_dim=128,
        d_ff=28672,
        vocab=128256,
        **_LLAMA,
    ),
    _shape(
        "falcon-7b",
        "Falcon 7B",
        "tiiuae/falcon-7b",
        6_921_720_704,
        "6.92B params",
        "multi_query true: one KV head shared by 71 query heads of size 64; attention and MLP run in "
        "parallel after one LayerNorm; GELU MLP of width 4d, tied embeddings.",
        n_layers=32,
        d_model=4544,
        n_heads=71,
        n_kv_heads=1,
        head_dim=64,
        d_ff=18176,
        mlp="gelu",
        vocab=65024,
        tied_embeddings=True,
        norm="layernorm",
        norms_per_layer=1,
    ),
    _shape(
        "qwen2.5-1.5b",
        "Qwen2.5 1.5B",
        "Qwen/Qwen2.5-1.5B",
        1_543_714_304,
        "1.54B params",
        "num_key_value_heads 2: grouped-query attention, 6 query heads per KV head; biases on Q, K and V; "
        "tied embeddings.",
        n_layers=28,
        d_model=1536,
        n_heads=12,
        n_kv_heads=2,
        head_dim=128,
        d_ff=8960,
        vocab=151936,
        tied_embeddings=True,
        qkv_bias=True,
        **_LLAMA,
    ),
    _shape(
        "llama-2-13b",
        "Llama 2 13B",
        "meta-llama/Llama-2-13b-hf",
        13e9,
        "|13B|4k|",
        "Multi-head attention. "
        + _MIRROR.format("a Python file of pasted configs, _name_or_path meta-llama/Llama-2-13b-hf"),
        count_source=_CARDS.format("meta-llama/Llama-2-13b"),
        count_note=_CARD,
        n_layers=40,
        d_model=5120,
        n_heads=40,
        n_kv_heads=40,
        head_dim=128,
        d_ff=13824,
        vocab=32000,
        **_LLAMA,
    ),
    _shape(
        "llama-2-70b",
        "Llama 2 70B",
        "meta-llama/Llama-2-70b-hf",
        70e9,
        "|70B|4k|",
        "Grouped-query attention, 8 KV heads. " + _MIRROR.format("a Python file of pasted configs"),
        count_source=_CARDS.format("meta-llama/Llama-2-70b"),
        count_note=_CARD,
        n_layers=80,
        d_model=8192,
        n_heads=64,
        n_kv_heads=8,
        head_dim=128,
        d_ff=28672,
        vocab=32000,
        **_LLAMA,
    ),
    _shape(
        "llama-3.1-405b",
        "Llama 3.1 405B",
        "meta-llama/Llama-3.1-405B",
        405e9,
        "405B",
        "Grouped-query attention, 8 KV heads of 128 for 128 query heads. "
        + _MIRROR.format("SiyuanMa0316/LLMServingSim, configs/model/meta-llama/Llama-3.1-405B.json"),
        count_source="Llama 3.1 model card, as quoted on https://www.fitmyllm.com/model/llama-3.1-405b "
        "(third-party copy)",
        count_note=_CARD,
        n_layers=126,
        d_model=16384,
        n_heads=128,
        n_kv_heads=8,
        head_dim=128,
        d_ff=53248,
        vocab=128256,
        **_LLAMA,
    ),
    _shape(
        "qwen2.5-7b",
        "Qwen2.5 7B",
        "Qwen/Qwen2.5-7B",
        7.61e9,
        "Number of Parameters: 7.61B",
        "Biases on Q, K and V; untied embeddings. Config values are those of Qwen2 7B, whose shape the Qwen2.5 "
        "card restates (28 layers, 28 query and 4 KV heads); no copy of the 2.5 config.json was found.",
        count_source=_CARDS.format("Qwen/Qwen2.5-7B"),
        count_note="The card's rounded count.",
        n_layers=28,
        d_model=3584,
        n_heads=28,
        n_kv_heads=4,
        head_dim=128,
        d_ff=18944,
        vocab=152064,
        qkv_bias=True,
        **_LLAMA,
    ),
    _shape(
        "qwen2.5-72b",
        "Qwen2.5 72B",
        "Qwen/Qwen2.5-72B",
        72.7e9,
        "Number of Parameters: 72.7B",
        "Biases on Q, K and V; untied embeddings. Config values are those of Qwen2 72B (80 layers, 64 query and "
        "8 KV heads, as the Qwen2.5 card restates); no copy of the 2.5 config.json was found.",
        count_source=_CARDS.format("Qwen/Qwen2.5-72B"),
        count_note="The card's rounded count.",
        n_layers=80,
        d_model=8192,
        n_heads=64,
        n_kv_heads=8,
        head_dim=128,
        d_ff=29568,
        vocab=152064,
        qkv_bias=True,
        **_LLAMA,
    ),
    _shape(
        "mixtral-8x7b",
        "Mixtral 8x7B",
        "mistralai/Mixtral-8x7B-v0.1",
        46.7e9,
        "46.7 billion total ... 12.9 billion per token",
        "Each token goes to 2 of 8 experts of width 14336 per layer. "
        + _MIRROR.format(
            "mlc-ai/mlc-llm, python/mlc_llm/model/model_preset.py; NVIDIA-NeMo/Megatron-Bridge test fixtures agree"
        ),
        count_source="Mistral AI's announcement as quoted in the press (the mistral.ai page was not among the "
        "stored copies)",
        count_note="Total parameters; 12.9 billion are used per token (params(active=True)).",
        n_layers=32,
        d_model=4096,
        n_heads=32,
        n_kv_heads=8,
        head_dim=128,
        n_experts=8,
        experts_per_token=2,
        d_ff_expert=14336,
        vocab=32000,
        **_LLAMA,
    ),
    _shape(
        "mixtral-8x22b",
        "Mixtral 8x22B",
        "mistralai/Mixtral-8x22B-v0.1",
        141e9,
        "uses only 39B active parameters out of 141B",
        "Each token goes to 2 of 8 experts of width 16384 per layer. Values from a test fixture "
        "(NVIDIA-NeMo/Megatron-Bridge, mixtral_8x22b_config_dict); its vocab_size 32768 is 32000 in two other "
        "shape tables, a 0.1 % difference in the count.",
        count_source="https://www.oneyearago.ai/news/2024-04-10-mixtral-8x22b/ (a copy of Mistral AI's announcement)",
        count_note="Total parameters; 39B active per token (params(active=True)).",
        n_layers=56,
        d_model=6144,
        n_heads=48,
        n_kv_heads=8,
        head_dim=128,
        n_experts=8,
        experts_per_token=2,
        d_ff_expert=16384,
        vocab=32768,
        **_LLAMA,
    ),
    *GEMMA1_SHAPES,
    _shape(
        "gemma-2-9b",
        "Gemma 2 9B",
        "google/gemma-2-9b",
        8_324_201_984,
        "8,324,201,984 non-embedding",
        "head_dim 256 (16 x 256 = 4096 > d_model 3584); four RMSNorms per layer; tied embeddings (the "
        "Gemma2Config default; the config copies have no tie_word_embeddings key); every other layer, the first "
        "included, attends to a sliding window of 4,096 tokens ('sliding_window': 4096; transformers' Gemma 2 "
        "layers alternate local and global). "
        + _MIRROR.format("NVIDIA-NeMo/Megatron-Bridge test fixtures and a Python file of pasted configs"),
        count_source="Gemma Team, 'Gemma 2: Improving Open Language Models at a Practical Size', "
        "arXiv:2408.00118, Table 1 (non-embedding parameters), as summarised on aili.app",
        count_note="Non-embedding parameters: params() less the 256000 x 3584 embedding.",
        n_layers=42,
        d_model=3584,
        n_heads=16,
        n_kv_heads=8,
        head_dim=256,
        d_ff=14336,
        vocab=256000,
        tied_embeddings=True,
        norms_per_layer=4,
        windows=(4096, 0) * 21,
        **_LLAMA,
    ),
    _shape(
        "gemma-2-27b",
        "Gemma 2 27B",
        "google/gemma-2-27b",
        26_047_480_320,
        "26,047,480,320 non-embedding",
        "head_dim 128 while d_model / n_heads = 144 (query_pre_attn_scalar 144); four RMSNorms per layer; tied "
        "embeddings; sliding windows of 4,096 tokens on alternate layers, as Gemma 2 9B. Values from a test "
        "fixture (NVIDIA-NeMo/Megatron-Bridge, gemma2_27b_config_dict).",
        count_source="Gemma Team, arXiv:2408.00118, Table 1 (non-embedding parameters), as summarised on aili.app",
        count_note="Non-embedding parameters: params() less the 256000 x 4608 embedding.",
        n_layers=46,
        d_model=4608,
        n_heads=32,
        n_kv_heads=16,
        head_dim=128,
        d_ff=36864,
        vocab=256000,
        tied_embeddings=True,
        norms_per_layer=4,
        windows=(4096, 0) * 23,
        **_LLAMA,
    ),
    _shape(
        "gpt2-xl",
        "GPT-2 XL (1.5B)",
        "openai-community/gpt2-xl",
        1_557_611_200,
        "1.56B params",
        "n_layer 48, n_embd 1600, n_head 25: multi-head attention; 1024 learned positions; biases on every "
        "linear layer; LayerNorm; tied embeddings.",
        n_layers=48,
        d_model=1600,
        n_heads=25,
        n_kv_heads=25,
        head_dim=64,
        d_ff=6400,
        mlp="gelu",
        vocab=50257,
        tied_embeddings=True,
        linear_bias=True,
        norm="layernorm",
        learned_positions=1024,
    ),
)
"""Published model shapes read from huggingface.co, then those from their papers (``paper_shapes``; document
000's own geometry is in ``doc000``)."""

MODELS: tuple[ModelShape, ...] = (*_FROM_CONFIGS, *CONFIG_SHAPES, *PAPER_SHAPES)
"""Every published model shape: those typed from config.json, those read from stored copies of it by hwlib's reader
(``config_shapes``), then those from their papers."""
