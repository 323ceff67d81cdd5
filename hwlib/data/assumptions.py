"""hwlib's own assumptions: the defaults no vendor page states, each with its rationale and what it leans on.

Every function that needs one names it here as its default, so a reader changes it in one place (or per call).
Chapters :ref:`ch-hbm-budgets`, :ref:`ch-serving` and :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data import doc000, literature

USABLE_HBM_FRACTION = doc000.USABLE_FRACTION
"""Share of a chip's HBM (as a program sees it, ``chip.capacity_bytes``) that a job's weights, state, activations
and caches may fill: 0.8. The rest goes to the runtime, compiler scratch space, the framework's allocator and
fragmentation, which no vendor states; the TPU budgeting notebook (document 000) uses the same 0.8 for every
chip, and hwlib keeps its number so that its budgets reproduce."""

BOUND_HBM_FRACTION = 1.0
"""Share of HBM a bound on a measured run assumes (``serving_run_bound``, ``training_run_bound``): all of it,
because the run did fit and a bound must not be tighter than the run."""

LARGEST_BATCH_SEARCHED = 2.0**40
"""``compute_bound_batch`` reports inf when decode is still memory-bound at this batch (sequences): beyond any
cache that fits, so "never" is the honest answer."""

CONTEXT_PARALLEL_FROM_TOKENS = 16384
"""The training planner tries context parallelism only for sequences this long (tokens): shorter ones keep their
attention on a chip in every run the book checks (Llama 3's 8K pre-training runs without it)."""

LARGEST_MICRO_BATCH_SEQUENCES = 8
"""The most sequences a training planner puts in one micro-batch: beyond a few sequences a micro-batch's matmuls are
as efficient as they get (tile quantization is gone at thousands of rows), while its activations keep growing; the
published configurations the book checks use 1 to 4 (Llama 3's Table 4: 1 to 2; Megatron-LM's Table 1: 1 to 8)."""

ATTENTION_DTYPE = "bf16"
"""The dtype whose peak a forecast prices attention at, whatever the matmuls run in: FlashAttention-style kernels
in the runs the book checks compute their scores in bf16 beside fp8 matmuls (Transformer Engine and torchtitan keep
attention in bf16 unless told otherwise). A bound takes the matmuls' peak, the most generous."""

SMALLEST_TILE_ROWS = 16
"""The fewest rows a matmul kernel's output tile takes when a step has few tokens: kernel libraries pick smaller
tiles for skinny matmuls, down to the tensor cores' smallest matrix fragment (16 rows on NVIDIA's mma
instructions; a TPU pads rows to its sublanes, 8 or 16). A forecast's tile quantization uses it."""

DCN_STEP_LATENCY = literature.NET_RING_STEP_LATENCY
"""Latency of one step of a collective over the data-centre network between TPU slices (s): no Google page states
it, so hwlib takes NCCL's model of one ring step over an InfiniBand or RoCE network (2.7 us). A DCN step is staged
through the hosts (chip, PCIe, NIC and back), so it is likely slower: the smaller figure keeps a bound a bound."""

ACTIVATION_OFFLOAD_LAYERS_ON_CHIP = 2
"""Layers whose kept activations stay in HBM when the activations are offloaded to the host (``hw.Offload``): the
layer computing and the one whose activations are on the host link, double-buffered as offloading runtimes do
(Transformer Engine's CPU offload context, DeepSpeed's activation checkpointing to the CPU). Everything else waits
in host memory; one layer more or less moves little beside a whole stage's activations."""

MOST_SIMULATED_REQUESTS = 10_000_000
"""The most requests ``simulate_serving`` takes in one call: ten million, a day of a busy service at over a hundred
requests a second; a simulation holds a few arrays of this length, and larger counts would exhaust a laptop's
memory (ask for fewer, or simulate a representative hour)."""

LONGEST_SIMULATED_SPAN_S = 1e9
"""The longest span of arrivals ``simulate_serving`` takes, n_requests over the arrival rate (s): about 32 years.
Beyond it a step's milliseconds vanish in the float64 of an arrival time, and every time would print as 0."""

MOST_DRAFT_TOKENS = 64
"""The most tokens a speculative drafter proposes per step that ``hw.Speculation`` takes: beyond the draft trees
engines verify (tens of tokens) and far beyond where the speculation chapter's measured speed-ups peak (a few)."""

GRADIENT_ACCUMULATOR_BYTES = 8.0
"""HBM bytes per trainable weight that each micro-batch's weight-gradient GEMM moves into its accumulator: an fp32
gradient read and written back (C = A^T B + C). Megatron-Core and NeMo accumulate the weight gradients of every
micro-batch into an fp32 ``main_grad`` inside the GEMM (Transformer Engine's ``fuse_wgrad_accumulation``: "a
pre-allocated buffer of the correct size to accumulate gradients in", ``module/grouped_linear.py`` at v2.12, read
2026-12-06); PyTorch's autograd adds each micro-batch's gradient into ``.grad`` with as many bytes. A GEMM of M
tokens then does 2 M FLOPs per 8 bytes of accumulator: below M = 4 x (peak / HBM bandwidth), a few thousand tokens
on current GPUs, the accumulator, not the FLOPs, sets its time (Williams et al. 2009's roofline)."""

FRONT_END_SPREAD = "exponential"
"""How a server front end's time per request (``Efficiency.request_overhead_s``, its mean) varies from request to
request in a simulation: "exponential", the most spread a positive time of a known mean can have without more
knowledge (the maximum-entropy law), or "fixed". A fixed time keeps a closed loop of identical requests in lockstep
wave after wave, which no measured run shows: their times to first token spread (NIM's GenAI-Perf p95 above the
mean at every concurrency). Chapter :ref:`ch-serving-measured`."""
