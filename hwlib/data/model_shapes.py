"""Published model shapes, each read from the model's ``config.json`` on huggingface.co.

Parameter counts are exact: the sum of the tensor sizes that the config implies, which
``tests/test_models.py`` recomputes from the shapes and which match the rounded counts on the
model pages ("8.03B" etc.). Explained in the chapter "KV-cache precision"; used by "HBM
budgets for training".
"""

from __future__ import annotations

from hwlib.data.records import ModelShape, cite


def _hf(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


_EXACT = "Exact sum of the tensor sizes implied by config.json (recomputed in tests)."


def _shape(key: str, name: str, repo: str, n_params: int, quoted: str, note: str, **fields: object) -> ModelShape:
    count = cite(_hf(repo))(float(n_params), "parameters", quoted, _EXACT)
    return ModelShape(key=key, name=name, n_params=count, source=_hf(repo), note=note, **fields)


_LLAMA = dict(mlp="gated", norm="rmsnorm")

MODELS: tuple[ModelShape, ...] = (
    _shape("llama-2-7b", "Llama 2 7B", "meta-llama/Llama-2-7b-hf", 6_738_415_616, "6.74B params",
           "num_key_value_heads = num_attention_heads = 32: multi-head attention.",
           n_layers=32, d_model=4096, n_heads=32, n_kv_heads=32, head_dim=128, d_ff=11008, vocab=32000, **_LLAMA),
    _shape("llama-3-8b", "Llama 3 8B", "meta-llama/Meta-Llama-3-8B", 8_030_261_248, "8.03B params",
           "num_key_value_heads 8: grouped-query attention, 4 query heads per KV head.",
           n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, head_dim=128, d_ff=14336, vocab=128256, **_LLAMA),
    _shape("mistral-7b", "Mistral 7B", "mistralai/Mistral-7B-v0.1", 7_241_732_096, "7.24B params",
           "v0.1; its 4096-token sliding window caps the cache per layer, which this record does not model "
           "(the cache grows with context here).",
           n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, head_dim=128, d_ff=14336, vocab=32000, **_LLAMA),
    _shape("llama-3-70b", "Llama 3 70B", "meta-llama/Meta-Llama-3-70B", 70_553_706_496, "70.6B params",
           "num_key_value_heads 8: grouped-query attention, 8 query heads per KV head.",
           n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, head_dim=128, d_ff=28672, vocab=128256, **_LLAMA),
    _shape("falcon-7b", "Falcon 7B", "tiiuae/falcon-7b", 6_921_720_704, "6.92B params",
           "multi_query true: one KV head shared by 71 query heads of size 64; attention and MLP run in "
           "parallel after one LayerNorm; GELU MLP of width 4d, tied embeddings.",
           n_layers=32, d_model=4544, n_heads=71, n_kv_heads=1, head_dim=64, d_ff=18176, mlp="gelu", vocab=65024,
           tied_embeddings=True, norm="layernorm", norms_per_layer=1),
    _shape("qwen2.5-1.5b", "Qwen2.5 1.5B", "Qwen/Qwen2.5-1.5B", 1_543_714_304, "1.54B params",
           "num_key_value_heads 2: grouped-query attention, 6 query heads per KV head; biases on Q, K and V; "
           "tied embeddings.",
           n_layers=28, d_model=1536, n_heads=12, n_kv_heads=2, head_dim=128, d_ff=8960, vocab=151936,
           tied_embeddings=True, qkv_bias=True, **_LLAMA),
    _shape("gpt2-xl", "GPT-2 XL (1.5B)", "openai-community/gpt2-xl", 1_557_611_200, "1.56B params",
           "n_layer 48, n_embd 1600, n_head 25: multi-head attention; 1024 learned positions; biases on every "
           "linear layer; LayerNorm; tied embeddings.",
           n_layers=48, d_model=1600, n_heads=25, n_kv_heads=25, head_dim=64, d_ff=6400, mlp="gelu", vocab=50257,
           tied_embeddings=True, linear_bias=True, norm="layernorm", learned_positions=1024),
)
"""Published model shapes (document 000's own geometry is in ``doc000``)."""
