"""The helpers that the serving-run modules share: MLPerf Inference's two results repositories (``V41``,
``V50``), the dtype sets a run states (``FP8``, ``BF16``, ...), ``Page`` (one published table: its source,
citation, method and scenario) and ``row`` and ``latency_row``, which build one ``ServingRun`` from a table's
row. Chapter :ref:`ch-serving`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from hwlib.data.records import ServingRun, Sourced
from hwlib.precision import PRECISIONS

V41 = "https://github.com/mlcommons/inference_results_v4.1 (commit a2f5d66d)"
V50 = (
    "https://github.com/mlcommons/inference_results_v5.0, read in the fork ntuhpc/mlperf_inference_results_v5.0 "
    "(commit cf354115), whose pages link back to it"
)


FP8, NVFP4_FP8_KV, BF16, FP16, INT8_WEIGHTS = (
    PRECISIONS[name] for name in ("fp8", "nvfp4, fp8 KV", "bf16", "fp16", "int8 weights")
)
NVFP4_NOTE = (
    "FP4 is NVFP4 with its blocks' scales: NVIDIA's FP4 checkpoints are TensorRT Model Optimizer's NVFP4 "
    "(huggingface.co/nvidia/Llama-3.3-70B-Instruct-FP4, now listed as nvidia/Llama-3.3-70B-Instruct-NVFP4, read "
    "2026-12-06)."
)


class Page(NamedTuple):
    """One published table: the run's ``source`` (family, comma, document), its citation, the method every row
    shares (appended to each note) and the scenario."""

    source: str
    cited: Callable[..., Sourced]
    method: str
    scenario: str = "max throughput"


def row(
    page: Page,
    key: str,
    system: str,
    chip_key: str,
    n_chips: int,
    model_key: str,
    precision: str,
    dtypes: dict,
    tokens_per_s: float,
    quoted: str,
    lengths: tuple[int | None, float | None],
    note: str,
    *,
    tensor_parallel: int | None = None,
    batch: int | None = None,
    per_gpu: bool = False,
    derived: str = "",
    outside_model: str = "",
) -> ServingRun:
    """One row of ``page``: tensor parallel over all ``n_chips`` unless stated; ``tokens_per_s`` as printed, or
    printed per GPU where ``per_gpu`` (the system's then derived, said in the Sourced note)."""
    if per_gpu and n_chips > 1:
        derived = f"Printed per GPU: {tokens_per_s:,g} x {n_chips} GPUs = {tokens_per_s * n_chips:,g} (derived)."
        tokens_per_s *= n_chips
    return ServingRun(
        key=key,
        source=page.source,
        system=system,
        chip_key=chip_key,
        n_chips=n_chips,
        tensor_parallel=n_chips if tensor_parallel is None else tensor_parallel,
        model_key=model_key,
        precision=precision,
        **dtypes,
        scenario=page.scenario,
        tokens_per_s=page.cited(tokens_per_s, "tokens/s", quoted, derived),
        input_len=lengths[0],
        output_len=lengths[1],
        batch=batch,
        note=f"{note} {page.method}".strip(),
        outside_model=outside_model,
    )


def latency_row(page: Page, key: str, batch: int, latency_s: float, quoted: str, lengths: tuple, **run) -> ServingRun:
    """A static batch whose table prints only its end-to-end latency: output tokens/s = batch x answer / latency."""
    derived = f"Derived: {batch} x {lengths[1]:,} tokens / {latency_s:.3f} s (the latency printed)."
    value = batch * lengths[1] / latency_s
    return row(page, key, tokens_per_s=value, quoted=quoted, lengths=lengths, batch=batch, derived=derived, **run)
