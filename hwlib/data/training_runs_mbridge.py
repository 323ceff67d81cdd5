"""Megatron-Bridge's dense pre-training rows of its 26.02 to 26.06 releases on DGX-H100 and DGX-GB200 (the archive of
its performance summary), beside the older releases' rows in ``training_runs_nemo``. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.records import TrainingRun, cite
from hwlib.data.training_rows import MODEL_BY_KEY as _MODEL

ARCHIVE = cite(
    "NVIDIA-NeMo/Megatron-Bridge, docs/performance-summary-archive.md (commit 067f987d), "
    "https://docs.nvidia.com/nemo/megatron-bridge/latest/performance-summary-archive.html",
    "2026-12-06",
)
_CLUSTER = {"DGX-H100": "hgx-h100-ndr", "DGX-GB200": "gb200-nvl72-ndr"}
_MODELS = {"LLAMA3_70B": ("llama3-70b", "llama-3-70b"), "LLAMA3.1_405B": ("llama31-405b", "llama-3.1-405b")}
_DTYPE = {"FP8": "fp8", "MXFP8": "fp8", "NVFP4": "fp4"}
_FP4 = (
    "NVFP4 training: which layers stay in higher precision and what its block scaling costs are not modelled; the "
    "bound prices every matmul at the FP4 peak"
)

# (release, model, the row as printed under 'Pre-Training Performance': System | #-GPUs | Precision | GBS | MBS |
# Sequence Length | [FSDP |] TP | PP | CP | VP | EP | Tokens / sec / GPU | Model TFLOP / sec / GPU; 26.06 prints no
# FSDP column). 26.02's DGX-H100 rows are in training_runs_nemo, from the summary of that release.
_ROWS = (
    ("26.06", "LLAMA3.1_405B", "| DGX-GB200 | 256 | FP8 | 1536 | 1 | 8192 | 4 | 16 | 1 | 4 | n/a | 843 | 2129 |"),
    ("26.06", "LLAMA3.1_405B", "| DGX-GB200 | 256 | MXFP8 | 1536 | 1 | 8192 | 4 | 16 | 1 | 8 | n/a | 783 | 1976 |"),
    ("26.06", "LLAMA3.1_405B", "| DGX-GB200 | 256 | NVFP4 | 1536 | 1 | 8192 | 4 | 16 | 1 | 8 | n/a | 1166 | 2944 |"),
    ("26.06", "LLAMA3.1_405B", "| DGX-H100 | 1024 | FP8 | 1536 | 1 | 8192 | 8 | 8 | 2 | 8 | n/a | 326 | 822 |"),
    ("26.04.01", "LLAMA3_70B", "| DGX-GB200 | 64 | FP8 | 256 | 2 | 8192 | 64 | 1 | 1 | 1 | n/a | n/a | 4224 | 1892 |"),
    ("26.04.01", "LLAMA3_70B", "| DGX-GB200 | 64 | MXFP8 | 256 | 1 | 8192 | 0 | 2 | 4 | 1 | 5 | n/a | 3712 | 1664 |"),
    ("26.04.01", "LLAMA3_70B", "| DGX-GB200 | 64 | NVFP4 | 256 | 1 | 8192 | 0 | 2 | 4 | 1 | 5 | n/a | 4864 | 2202 |"),
    ("26.04.01", "LLAMA3_70B", "| DGX-H100 | 64 | FP8 | 256 | 1 | 8192 | 0 | 4 | 8 | 1 | 5 | n/a | 1664 | 731 |"),
    (
        "26.04.01",
        "LLAMA3.1_405B",
        "| DGX-GB200 | 256 | FP8 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 4 | n/a | 864 | 2144 |",
    ),
    (
        "26.04.01",
        "LLAMA3.1_405B",
        "| DGX-GB200 | 256 | MXFP8 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 8 | n/a | 800 | 1994 |",
    ),
    (
        "26.04.01",
        "LLAMA3.1_405B",
        "| DGX-GB200 | 256 | NVFP4 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 8 | n/a | 1184 | 2960 |",
    ),
    ("26.04.01", "LLAMA3.1_405B", "| DGX-H100 | 1024 | FP8 | 1536 | 1 | 8192 | 0 | 8 | 8 | 2 | 8 | n/a | 328 | 827 |"),
    ("26.04", "LLAMA3_70B", "| DGX-GB200 | 64 | NVFP4 | 256 | 1 | 8192 | 0 | 2 | 4 | 1 | 5 | n/a | 4898 | 2201 |"),
    ("26.04", "LLAMA3_70B", "| DGX-GB200 | 64 | MXFP8 | 256 | 1 | 8192 | 0 | 2 | 4 | 1 | 5 | n/a | 3828 | 1721 |"),
    ("26.04", "LLAMA3_70B", "| DGX-GB200 | 64 | FP8 | 256 | 2 | 8192 | 64 | 1 | 1 | 1 | n/a | n/a | 4143 | 1861 |"),
    ("26.04", "LLAMA3_70B", "| DGX-H100 | 64 | FP8 | 256 | 1 | 8192 | 0 | 4 | 8 | 1 | 5 | n/a | 1633 | 734 |"),
    (
        "26.04",
        "LLAMA3.1_405B",
        "| DGX-GB200 | 256 | NVFP4 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 8 | n/a | 1136 | 2866 |",
    ),
    ("26.04", "LLAMA3.1_405B", "| DGX-GB200 | 256 | MXFP8 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 8 | n/a | 793 | 2002 |"),
    ("26.04", "LLAMA3.1_405B", "| DGX-GB200 | 256 | FP8 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 4 | n/a | 842 | 2126 |"),
    ("26.02.01", "LLAMA3_70B", "| DGX-GB200 | 64 | NVFP4 | 256 | 1 | 8192 | 0 | 2 | 4 | 1 | 5 | n/a | 4557 | 2047 |"),
    ("26.02.01", "LLAMA3_70B", "| DGX-GB200 | 64 | MXFP8 | 256 | 1 | 8192 | 0 | 2 | 4 | 1 | 5 | n/a | 3837 | 1724 |"),
    ("26.02.01", "LLAMA3_70B", "| DGX-GB200 | 64 | FP8 | 256 | 2 | 8192 | 64 | 1 | 1 | 1 | n/a | n/a | 4357 | 1956 |"),
    ("26.02.01", "LLAMA3_70B", "| DGX-H100 | 64 | FP8 | 256 | 1 | 8192 | 0 | 4 | 8 | 1 | 5 | n/a | 1639 | 736 |"),
    (
        "26.02.01",
        "LLAMA3.1_405B",
        "| DGX-GB200 | 256 | NVFP4 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 4 | n/a | 1083 | 2734 |",
    ),
    (
        "26.02.01",
        "LLAMA3.1_405B",
        "| DGX-GB200 | 256 | MXFP8 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 8 | n/a | 775 | 1957 |",
    ),
    (
        "26.02.01",
        "LLAMA3.1_405B",
        "| DGX-GB200 | 256 | FP8 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 4 | n/a | 818 | 2063 |",
    ),
    ("26.02", "LLAMA3_70B", "| DGX-GB200 | 64 | NVFP4 | 256 | 1 | 8192 | 0 | 2 | 4 | 1 | 5 | n/a | 4458 | 2004 |"),
    ("26.02", "LLAMA3_70B", "| DGX-GB200 | 64 | MXFP8 | 256 | 1 | 8192 | 0 | 2 | 4 | 1 | 5 | n/a | 3613 | 1623 |"),
    ("26.02", "LLAMA3_70B", "| DGX-GB200 | 64 | FP8 | 256 | 2 | 8192 | 64 | 1 | 1 | 1 | n/a | n/a | 4040 | 1815 |"),
    (
        "26.02",
        "LLAMA3.1_405B",
        "| DGX-GB200 | 256 | NVFP4 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 8 | n/a | 1076 | 2716 |",
    ),
    ("26.02", "LLAMA3.1_405B", "| DGX-GB200 | 256 | MXFP8 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 8 | n/a | 786 | 1983 |"),
    ("26.02", "LLAMA3.1_405B", "| DGX-GB200 | 256 | FP8 | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 4 | n/a | 793 | 2004 |"),
)


def _run(release: str, name: str, row: str) -> TrainingRun:
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    if len(cells) == 13:
        cells.insert(6, "0")
    system, gpus, precision, gbs, mbs, seq, fsdp, tp, pp, cp, vp, _ep, tokens, _tflops = cells
    gpus, gbs, mbs, seq, fsdp, tp, pp, cp = (int(cell) for cell in (gpus, gbs, mbs, seq, fsdp, tp, pp, cp))
    data = gpus // (tp * pp * cp)
    short, model_key = _MODELS[name]
    cluster = _CLUSTER[system]
    return TrainingRun(
        key=f"mbridge{release.replace('.', '')}-{system.split('-')[1].lower()}-{precision.lower()}-{short}",
        source=f"Megatron-Bridge, {release} performance summary",
        model=_MODEL[model_key],
        cluster_key=cluster,
        mesh={"tp": tp, "pp": pp, "cp": cp, ("fsdp" if fsdp else "dp"): data},
        global_batch_sequences=gbs,
        seq_len=seq,
        recompute="none",
        dtype=_DTYPE[precision],
        metric="tokens_per_s_per_chip",
        measured=ARCHIVE(float(tokens), "tokens/s", row, f"Tokens / sec / GPU, {name}, NeMo {release}."),
        note=f"{system} (network not stated: modelled as {cluster}; a GB200's GPU as the B200 record, whose peak is "
        f"the lower one); precision {precision!r}; "
        + (
            f"FSDP over {fsdp} GPUs ('FSDP > 0: use FSDP with sharding group size = #GPUs / (TP x PP)')"
            if fsdp
            else "DDP"
        )
        + "; dp = GPUs / (TP PP CP) [derived]. Recomputation not stated: none, the least, keeps the bound a bound. "
        "Llama shapes as the catalogue's.",
        micro_batch_sequences=mbs,
        interleave=int(vp) if pp > 1 and vp != "n/a" else None,
        outside_model=_FP4 if precision == "NVFP4" else "",
    )


RUNS: tuple[TrainingRun, ...] = tuple(_run(*row) for row in _ROWS)
"""Megatron-Bridge's dense pre-training rows, releases 26.02 to 26.06, on DGX-H100 and DGX-GB200."""
