"""Published, measured training runs that state their model, chips, parallelism, batch and sequence length.

Megatron-LM's weak-scaling Table 1 (Narayanan et al. 2021), Llama 3 405B's Table 4 (Llama Team
2024) and torchtitan's H100 benchmarks; NVIDIA's NeMo 24.07 and Megatron-Bridge (25.09 to 26.06)
performance summaries on H100, B200 and GB200; Google's MaxText recipes on TPU v6e (AI-Hypercomputer/tpu-recipes);
MLPerf Training v4.0's GPT-3 175B (NVIDIA on H100, Google on TPU v5p); MosaicML's llm-foundry MPT
benchmarks on H100 and A100; BigScience's BLOOM 176B; MegaScale's Table 2 (its Megatron-LM baseline); and PaLM
540B on two TPU v4 pods joined by the data-centre network; mixture-of-experts runs (Megatron-Bridge's Qwen3-30B-A3B and
DeepSeek-V3 on H100, DeepSeek-V3's own on 2,048 H800s); NeMo AutoModel's PyTorch FSDP2 runs of DeepSeek-V3,
Qwen3-30B-A3B and Llama 3 70B on H100; AMD Primus's DeepSeek-V2-Lite micro-batch sweep on 8 MI355Xs and DeepSeek-V2
on 32.
Each is compared with ``hw.train_step`` for its own mesh in :ref:`ch-sharding`. The hunt behind them, with
every quote, is in research/training_runs.md and research/training_runs_more.md.
"""

from __future__ import annotations

from hwlib.data import (
    training_runs_amd,
    training_runs_automodel,
    training_runs_bloom,
    training_runs_llama,
    training_runs_maxtext,
    training_runs_mbridge,
    training_runs_megatron,
    training_runs_mlperf,
    training_runs_moe,
    training_runs_moe_tpu,
    training_runs_mpt,
    training_runs_nemo,
    training_runs_palm,
)
from hwlib.data.records import TrainingRun
from hwlib.data.training_runs_bloom import BLOOM_176B as BLOOM_176B
from hwlib.data.training_runs_megatron import MEGASCALE_175B as MEGASCALE_175B
from hwlib.data.training_runs_megatron import MEGATRON_SEQ_LEN as MEGATRON_SEQ_LEN
from hwlib.data.training_runs_megatron import MEGATRON_VOCAB as MEGATRON_VOCAB

RUNS: tuple[TrainingRun, ...] = (
    training_runs_megatron.TABLE1_RUNS
    + training_runs_llama.RUNS
    + training_runs_nemo.RUNS
    + training_runs_mbridge.RUNS
    + training_runs_maxtext.RUNS
    + training_runs_mlperf.RUNS
    + training_runs_mpt.RUNS
    + training_runs_bloom.RUNS
    + training_runs_megatron.MEGASCALE_RUNS
    + training_runs_palm.RUNS
    + training_runs_moe.RUNS
    + training_runs_automodel.RUNS
    + training_runs_moe_tpu.RUNS
    + training_runs_amd.RUNS
)
"""Measured training runs, compared with ``hw.train_step`` in :ref:`ch-sharding`."""
