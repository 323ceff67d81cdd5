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


def _shape(key: str, name: str, repo: str, n_layers: int, d_model: int, n_heads: int, n_kv_heads: int,
           head_dim: int, n_params: int, quoted: str, note: str) -> ModelShape:
    count = cite(_hf(repo))(float(n_params), "parameters", quoted, _EXACT)
    return ModelShape(key, name, n_layers, d_model, n_heads, n_kv_heads, head_dim, count, _hf(repo), note=note)


MODELS: tuple[ModelShape, ...] = (
    _shape("llama-2-7b", "Llama 2 7B", "meta-llama/Llama-2-7b-hf", 32, 4096, 32, 32, 128, 6_738_415_616,
           "6.74B params", "num_key_value_heads = num_attention_heads = 32: multi-head attention."),
    _shape("llama-3-8b", "Llama 3 8B", "meta-llama/Meta-Llama-3-8B", 32, 4096, 32, 8, 128, 8_030_261_248,
           "8.03B params", "num_key_value_heads 8: grouped-query attention, 4 query heads per KV head."),
    _shape("mistral-7b", "Mistral 7B", "mistralai/Mistral-7B-v0.1", 32, 4096, 32, 8, 128, 7_241_732_096,
           "7.24B params", "v0.1; its 4096-token sliding window caps the cache per layer, which this record "
           "does not model (the cache grows with context here)."),
    _shape("llama-3-70b", "Llama 3 70B", "meta-llama/Meta-Llama-3-70B", 80, 8192, 64, 8, 128, 70_553_706_496,
           "70.6B params", "num_key_value_heads 8: grouped-query attention, 8 query heads per KV head."),
    _shape("falcon-7b", "Falcon 7B", "tiiuae/falcon-7b", 32, 4544, 71, 1, 64, 6_921_720_704,
           "6.92B params", "multi_query true: one KV head shared by 71 query heads of size 64."),
    _shape("qwen2.5-1.5b", "Qwen2.5 1.5B", "Qwen/Qwen2.5-1.5B", 28, 1536, 12, 2, 128, 1_543_714_304,
           "1.54B params", "num_key_value_heads 2: grouped-query attention, 6 query heads per KV head."),
    _shape("gpt2-xl", "GPT-2 XL (1.5B)", "openai-community/gpt2-xl", 48, 1600, 25, 25, 64, 1_557_611_200,
           "1.56B params", "n_layer 48, n_embd 1600, n_head 25: multi-head attention; 1024-token context."),
)
"""Published model shapes (document 000's own geometry is in ``doc000``)."""
