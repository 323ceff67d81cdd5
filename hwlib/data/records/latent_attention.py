"""Multi-head latent attention's shape and its own counts (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1).

The table (``hwlib.data.records.transformer_table``) asks it for what differs from grouped-query attention: the
projections' weights, the cache per token, and the score FLOPs the two ways of computing them. Chapters
:ref:`ch-counting` and :ref:`ch-kv-cache`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LatentAttention:
    """Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1): keys and values are cached as one
    compressed latent of ``kv_lora_rank`` elements plus a shared rotary key of ``qk_rope_head_dim``, and expanded
    per head (``qk_nope_head_dim`` for keys, ``v_head_dim`` for values); queries go through a low-rank
    ``q_lora_rank`` (None: a full projection). Chapter :ref:`ch-kv-cache`."""

    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None

    def __post_init__(self) -> None:
        for name in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            minimum = 0 if name == "qk_nope_head_dim" else 1
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"LatentAttention.{name} must be a whole number >= {minimum}, got {value!r}")
        rank = self.q_lora_rank
        if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or rank < 1):
            raise ValueError(f"LatentAttention.q_lora_rank must be a whole number >= 1 or None, got {rank!r}")

    @property
    def qk_head_dim(self) -> int:
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def cache_width(self) -> int:
        """Elements one token caches per layer: the latent and the shared rotary key."""
        return self.kv_lora_rank + self.qk_rope_head_dim

    def params(self, d_model: int, n_heads: int) -> float:
        """Weights of one layer's projections: the query (low-rank or full), the latent and rotary key (d x (r_kv +
        d_rope)), the latent's expansion to every head's key and value, and the output."""
        query = d_model * n_heads * self.qk_head_dim
        if self.q_lora_rank is not None:
            query = self.q_lora_rank * (d_model + n_heads * self.qk_head_dim)
        expansion = self.kv_lora_rank * n_heads * (self.qk_nope_head_dim + self.v_head_dim)
        return float(query + d_model * self.cache_width + expansion + n_heads * self.v_head_dim * d_model)

    def down_params(self, d_model: int) -> float:
        """Weights of one layer's down-projections from the residual stream: the query's to its low rank (where it
        is low-rank) and the latent's with the rotary key, d x (r_q + r_kv + d_rope). Serving engines do not split
        them under tensor parallelism: every chip computes them for every token (``hw.inference_step``)."""
        return float(d_model * ((self.q_lora_rank or 0) + self.cache_width))

    def norm_width(self) -> int:
        """Elements of the norms on the latents: the KV latent's and the query's (where it is low-rank)."""
        return self.kv_lora_rank + (self.q_lora_rank or 0)

    def pair_flops(self, n_heads: int, mode: str) -> float:
        """Score FLOPs per layer per (query, key) pair: expanded ("naive"), 2 n_h (d_qk + d_v); or against the
        latent ("absorbed"), 2 n_h (2 r_kv + d_rope)."""
        if mode == "absorbed":
            return 2.0 * n_heads * (2 * self.kv_lora_rank + self.qk_rope_head_dim)
        return 2.0 * n_heads * (self.qk_head_dim + self.v_head_dim)

    def expansion_flops(self, n_heads: int) -> float:
        """FLOPs per layer to expand one cached latent into every head's key and value (the naive way)."""
        return 2.0 * self.kv_lora_rank * n_heads * (self.qk_nope_head_dim + self.v_head_dim)
