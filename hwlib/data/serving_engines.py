"""Serving engines' documented defaults, for ``hw.simulate_serving(engine=...)``: vLLM 0.11.0, SGLang 0.5.3,
TensorRT-LLM's LLM API (1.0) and its 0.11 engines (what NIM served in 2024), each read from the engine's own source
at the version named, and hwlib's generic engine (the simulator's defaults before profiles). The hunt, with every
quoted line, is in research/engine_defaults.md. Chapter :ref:`ch-serving-many`.
"""

from __future__ import annotations

from hwlib.data import efficiencies
from hwlib.data.records.engine_profile import EngineProfile, EngineTier

_READ = "read 2026-12-06"

VLLM = EngineProfile(
    key="vllm",
    name="vLLM",
    version="0.11.0",
    tiers=(EngineTier(70, 1024, 8192, not_named="A100"), EngineTier(0, 256, 2048)),
    chunked_prefill=True,
    reserve_output=False,
    memory_rule="total",
    memory_fraction=0.9,
    source="vllm-project/vllm v0.11.0 (commit f71952c1c; the same at 99d7eb5d), vllm/engine/arg_utils.py:1605-1623 "
    "'if device_memory >= 70 * GiB_bytes and \"a100\" not in device_name:', OPENAI_API_SERVER: max_num_batched_tokens "
    "8192 (else 2048), max_num_seqs 1024 (else 256); arg_utils.py:1548 'self.enable_chunked_prefill = True'; "
    "vllm/config/cache.py:43 'gpu_memory_utilization: float = 0.9'; docs/configuration/optimization.md: 'the "
    f"scheduling policy prioritizes decode requests', preemption 'RECOMPUTE' ({_READ})",
    note="The API server's limits (`vllm serve`). Its cache is 0.9 of the device's memory less the weights; the "
    "activations' peak that vLLM also subtracts is not. Prefix caching is on, which matters only for prompts that "
    "share a prefix (`prefix_tokens`). Steps beyond its largest captured size run without a CUDA graph; whether a "
    "mixture of experts' routing then waits on the host, as in SGLang's prompt steps, no vLLM run here shows, so "
    "the profile adds no host time (`eager_prefill`).",
)
"""vLLM's V1 engine, version 0.11.0, as `vllm serve` starts it."""

SGLANG = EngineProfile(
    key="sglang",
    name="SGLang",
    version="0.5.3",
    tiers=(
        EngineTier(160, 2048, 16384, reserved_gib=25.5),
        EngineTier(60, 2048, 8192, reserved_gib=13.0),
        EngineTier(35, 2048, 4096, reserved_gib=6.5625),
        EngineTier(0, 2048, 2048, reserved_gib=3.53125),
    ),
    chunked_prefill=False,
    reserve_output=False,
    memory_rule="total",
    memory_fraction=1.0,
    source="sgl-project/sglang release 0.5.3 (PyPI wheel), python/sglang/srt/server_args.py:567-629 "
    "chunked_prefill_size by GPU memory ('elif gpu_mem < 90 * 1024:' ... 8192; 16384 at 160 GiB and above; 4096 "
    "below 60 GiB; 2048 below 35 GiB), cuda_graph_max_bs 256 (512 at 160 GiB); server_args.py:637-674 "
    "mem_fraction_static = (gpu_mem - reserved_mem) / gpu_mem with 'reserved_mem = 512', '+= "
    "max(self.chunked_prefill_size, 2048) * 1.5', '+= self.cuda_graph_max_bs * 2' (MiB); server_args.py:392 "
    "'enable_mixed_chunk: bool = False'; scheduler.py:1788 '# Run prefill first if possible'; "
    "managers/tp_worker.py:144-152 and model_executor/model_runner.py:1431-1440 max_running_requests = "
    "min(max_total_num_tokens // 2, a request pool of 2048 to 4096) ({_READ}); "
    "python/sglang/srt/model_executor/forward_batch_info.py ForwardMode.is_cuda_graph: DECODE, TARGET_VERIFY and IDLE "
    "only, so a prefill ('extend') step launches its kernels from the host (read 2026-12-07)",
    eager_prefill=True,
    note="Prefill steps run first and decode nothing (mixing is off); a prompt longer than the chunk is split over "
    "several such steps in SGLang, which the simulation does not do (it refuses such prompts). The running-request "
    "cap is the request pool's least size, 2048 (the pool grows to 4096 with the cache's tokens over the model's "
    "context length, which hwlib's shapes do not hold). The reserve omits SGLang's 128 MiB per tensor-parallel "
    "rank and its larger graph pool at tp >= 4. A full cache retracts the request with the fewest answer tokens; the "
    "simulation preempts the latest admitted.",
)
"""SGLang 0.5.3, as `python -m sglang.launch_server` starts it."""

TENSORRT_LLM = EngineProfile(
    key="trtllm",
    name="TensorRT-LLM",
    version="1.0",
    tiers=(EngineTier(0, 2048, 8192),),
    chunked_prefill=True,
    reserve_output=True,
    memory_rule="free",
    memory_fraction=0.9,
    source="NVIDIA/TensorRT-LLM tensorrt_llm/llmapi/llm_args.py (commit fcd3f316, 1.0.0rc4): "
    "'enable_chunked_prefill: bool = Field(default=False', SchedulerConfig 'default=CapacitySchedulerPolicy."
    "GUARANTEED_NO_EVICT', KvCacheConfig free_gpu_memory_fraction 'Default is 90%'; tensorrt_llm/builder.py "
    "BuildConfig (commit 008b2b8d) 'max_batch_size: int = 2048', 'max_num_tokens: int = 8192'; "
    f"tensorrt_llm/commands/serve.py (commit 00209af1) takes BuildConfig's defaults ({_READ}); "
    "nvidia.github.io/TensorRT-LLM/features/torch_compile_and_piecewise_cuda_graph.html: piecewise CUDA graphs, off "
    "unless configured, are what 'reduce context-phase launch overhead'; by default only generation-only iterations "
    "replay a graph (read 2026-12-07)",
    eager_prefill=True,
    note="The LLM API and trtllm-serve; trtllm-bench picks its own limits by a heuristic and is not this profile. "
    "Without chunked context, in-flight batching still runs new prompts in the same iterations as the decodes "
    "(simulated as chunked prefill, which may split a prompt at the token budget's edge where TensorRT-LLM would "
    "hold it for the next iteration).",
)
"""TensorRT-LLM's PyTorch backend (LLM API, trtllm-serve), 1.0."""

TENSORRT_LLM_011 = EngineProfile(
    key="trtllm-0.11",
    name="TensorRT-LLM",
    version="0.11",
    tiers=(EngineTier(0, 256, 8192),),
    chunked_prefill=True,
    reserve_output=True,
    memory_rule="free",
    memory_fraction=0.9,
    splits_attention=False,
    source="NVIDIA/TensorRT-LLM docs/source/release-notes.md (commit 001eaece), Release 0.11.0: '`max_batch_size` in "
    "`trtllm-build` command is switched to 256 by default', '`max_num_tokens` in `trtllm-build` command is switched to "
    "8192 by default'; Release 0.13.0: '[BREAKING CHANGE] Enabled `multi_block_mode` by default' (before it, one "
    f"thread block per sequence and head walks a decode's whole cache) ({_READ})",
    note="The engines NVIDIA NIM shipped in 2024 were built with releases of this age. The capacity scheduler and the "
    "cache's share of free memory are 1.0's defaults, not read at 0.11; in-flight batching is simulated as chunked "
    "prefill, as for 1.0.",
)
"""TensorRT-LLM 0.11's engines and executor, before multi-block attention was the default."""

GENERIC = EngineProfile(
    key="hwlib",
    name="hwlib's generic engine",
    version="",
    tiers=(EngineTier(0, 256, 8192),),
    chunked_prefill=False,
    reserve_output=False,
    memory_rule="free",
    memory_fraction=efficiencies.KV_CACHE_FRACTION.value,
    source="hwlib's own defaults: every prompt prefilled whole, 256 sequences and 8,192 tokens a step, and the KV "
    "cache at hw.data.efficiencies.KV_CACHE_FRACTION of the memory the weights leave",
    note="The engine alone: no server front end's time per request.",
    front_end=False,
)
"""The simulator's defaults where no engine is named."""

ENGINE_PROFILES = {profile.key: profile for profile in (GENERIC, VLLM, SGLANG, TENSORRT_LLM, TENSORRT_LLM_011)}
"""Every engine profile, by the key ``hw.simulate_serving(engine=...)`` and ``hwlib simulate --engine`` take."""
