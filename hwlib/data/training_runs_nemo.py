"""Training runs from NVIDIA's performance summaries: NeMo 24.07's pre-training table on DGX-H100 (FP8) and
Megatron-Bridge's (NeMo 25.09, 25.11, 26.02) on H100 and B200. Chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from hwlib.data.records import TrainingRun, cite
from hwlib.data.training_rows import MODEL_BY_KEY as _MODEL
from hwlib.data.training_rows import gpt_style as _gpt_style
from hwlib.data.training_runs_mbridge import ARCHIVE

# --- NVIDIA NeMo 24.07 performance summary (DGX-H100, FP8) ------------------------------------------------------

_NEMO2407 = cite(
    "NVIDIA/NeMo, docs/source/performance/performance_summary.md (commit 070a0bb1), NeMo 24.07 pre-training table "
    "('pre-training performance for various tasks at FP8 precision', 'Container: NeMo24.07', 'System: DGX-H100')"
)
_NEMO_LAUNCHER = (
    "NVIDIA/NeMo-Framework-Launcher, launcher_scripts/conf/training/gpt3/{size}.yaml (commit {commit}): "
    "'num_layers: {layers}', 'hidden_size: {d}', 'ffn_hidden_size: ${{multiply:4, ${{.hidden_size}}}}', "
    "'num_attention_heads: {heads}', 'max_position_embeddings: 2048', 'GPT2BPETokenizer'"
)
_NEMO_GPT3 = {
    size: _gpt_style(
        key=f"nemo-gpt3-{size}",
        name=f"NeMo GPT3-{size.upper()}",
        layers=layers,
        d=d,
        heads=heads,
        vocab=50257,
        positions=2048,
        n_params=_NEMO2407(billions * 1e9, "parameters", f"GPT3-{size.upper()}", "The model's name only."),
        source=_NEMO_LAUNCHER.format(size=size, commit=commit, layers=layers, d=d, heads=heads),
        note="The performance summary does not print the shape; it is read from the launcher's config of the same "
        "name (not pinned to 24.07). Biases, LayerNorm, tied embeddings and learned positions are Megatron GPT's "
        "defaults, not restated there. GPT-2's 50,257-token vocabulary: the config pads it to a multiple of "
        "'make_vocab_size_divisible_by: 128' times TP (50,304 at TP 1, 50,432 at TP 2 [derived]), which the shape "
        f"leaves out (fewer FLOPs, so the bound stays a bound). params() is {params_b} B, within 1.3% of the name.",
    )
    for size, billions, layers, d, heads, commit, params_b in (
        ("5b", 5, 24, 4096, 32, "00af8f26", "5.05"),
        ("20b", 20, 44, 6144, 48, "056a90ed", "20.25"),
    )
}

# (key, model, GPUs, GBS, MBS, sequence, TP, PP, CP, VP, tokens/s/GPU A, the same in the other stored copy B)
_NEMO_TABLE = (
    ("gpt3-5b", _NEMO_GPT3["5b"], 64, 2048, 4, 2048, 1, 1, 1, 1, 22521, 23574, 736),
    ("gpt3-20b", _NEMO_GPT3["20b"], 64, 256, 2, 2048, 2, 1, 1, 1, 5851, 5894, 750),
    ("gpt3-175b-128", _MODEL["gpt-3-175b"], 128, 256, 1, 2048, 4, 8, 1, 6, 726, 745, 782),
    ("gpt3-175b-512", _MODEL["gpt-3-175b"], 512, 2048, 2, 2048, 4, 8, 1, 6, 782, 832, 842),
    ("llama2-7b", _MODEL["llama-2-7b"], 8, 128, 1, 4096, 1, 1, 1, 1, 16847, 16634, 776),
    ("llama2-13b", _MODEL["llama-2-13b"], 16, 128, 1, 4096, 1, 4, 1, 10, 8646, 8715, 754),
    ("llama2-70b", _MODEL["llama-2-70b"], 64, 128, 1, 4096, 4, 4, 1, 20, 1707, 1717, 759),
    ("llama3-8b", _MODEL["llama-3-8b"], 8, 128, 1, 8192, 1, 1, 2, 1, 12036, 11883, 697),
    ("llama3-70b", _MODEL["llama-3-70b"], 64, 128, 1, 8192, 4, 4, 2, 5, 1533, 1549, 738),
)
_NEMO_NAMES = {
    "gpt3-5b": "GPT3-5B",
    "gpt3-20b": "GPT3-20B",
    "gpt3-175b-128": "GPT3-175B",
    "gpt3-175b-512": "GPT3-175B",
    "llama2-7b": "LLAMA2-7B",
    "llama2-13b": "LLAMA2-13B",
    "llama2-70b": "LLAMA2-70B",
    "llama3-8b": "LLAMA3-8B",
    "llama3-70b": "LLAMA3-70B",
}
_NEMO_DAYS = {
    "gpt3-5b": "***5***",
    "gpt3-20b": "***19***",
    "gpt3-175b-128": "**156**",
    "gpt3-175b-512": "**145**",
    "llama2-7b": "***7***",
    "llama2-13b": "***13***",
    "llama2-70b": "***66***",
    "llama3-8b": "***9***",
    "llama3-70b": "***74***",
}


def _nemo_quote(key, gpus, gbs, mbs, seq, tp, pp, cp, vp, tokens, tflops) -> str:
    shown = "[842](https://mlcommons.org/benchmarks/training/)" if key == "gpt3-175b-512" else str(tflops)
    return (
        f"| {_NEMO_NAMES[key]} | {gpus} | {gbs} | {mbs} | {seq} | {tp} | {pp} | {cp} | {vp} | {tokens} | {shown} | "
        f"{_NEMO_DAYS[key]} |"
    )


_NEMO_RUNS = tuple(
    TrainingRun(
        key=f"nemo2407-{key}",
        source="NeMo, 24.07 performance summary",
        model=model,
        cluster_key="hgx-h100-ndr",
        mesh={"tp": tp, "pp": pp, "cp": cp, "dp": gpus // (tp * pp * cp)},
        global_batch_sequences=gbs,
        seq_len=seq,
        recompute="none",
        dtype="fp8",
        metric="tokens_per_s_per_chip",
        measured=_NEMO2407(
            float(tokens),
            "tokens/s",
            _nemo_quote(key, gpus, gbs, mbs, seq, tp, pp, cp, vp, tokens, tflops),
            f"Tokens / sec / GPU. A second stored copy of the page (its repository not named by the index; which is "
            f"newer is not known) prints the same configuration at {other}.",
        ),
        note="DGX-H100 (network not stated: modelled as the NDR cluster); FP8; dp = GPUs / (TP PP CP) [derived]. "
        "Recomputation and the distributed-optimizer setting are not stated: no recomputation, the least, "
        "keeps the bound a bound."
        + (" The TFLOP/s column links to the MLPerf Training results." if key == "gpt3-175b-512" else "")
        + (" Llama 3 8B/70B shapes as the catalogue's." if key.startswith("llama3") else ""),
        micro_batch_sequences=mbs,
        interleave=vp if pp > 1 else None,
    )
    for key, model, gpus, gbs, mbs, seq, tp, pp, cp, vp, tokens, other, tflops in _NEMO_TABLE
)


# --- NVIDIA Megatron-Bridge performance summary (NeMo 25.09, 25.11, 26.02) ---------------------------------------

_MBRIDGE = cite(
    "NVIDIA-NeMo/Megatron-Bridge, docs/performance-summary.md (commit df0289c1), "
    "https://docs.nvidia.com/nemo/megatron-bridge/latest/performance-summary.html"
)
_MBRIDGE_CLUSTER = {"h100": "hgx-h100-ndr", "b200": "hgx-b200-ndr", "gb200": "gb200-nvl72-ndr"}
_MBRIDGE_MODEL = {
    "LLAMA3_8B": ("llama3-8b", _MODEL["llama-3-8b"]),
    "LLAMA3_70B": ("llama3-70b", _MODEL["llama-3-70b"]),
    "LLAMA3.1_405B": ("llama31-405b", _MODEL["llama-3.1-405b"]),
}
# (release, GPU, the row as printed: Model | #-GPUs | [Precision |] GBS | MBS | Sequence Length | FSDP | TP | PP |
# CP | VP | EP | GA | Tokens / sec / GPU | Model TFLOP / sec / GPU; 25.09 prints no Precision column)
_MBRIDGE_ROWS = (
    ("25.09", "h100", "| LLAMA3_8B | 8 | 128 | 1 | 8192 | 1 | 1 | 1 | 1 | n/a | 1 | 16 | 14079 | 725 |"),
    ("25.09", "h100", "| LLAMA3_70B | 64 | 128 | 1 | 8192 | 0 | 4 | 8 | 1 | 5 | 1 | 64 | 1619 | 727 |"),
    ("25.09", "h100", "| LLAMA3.1_405B | 1024 | 512 | 1 | 8192 | 0 | 8 | 8 | 2 | 8 | 1 | 64 | 302 | 763 |"),
    ("25.11", "h100", "| LLAMA3_8B | 8 | FP8-CS | 128 | 1 | 8192 | 1 | 1 | 1 | 1 | n/a | 1 | 16 | 14451 | 744 |"),
    ("25.11", "h100", "| LLAMA3_70B | 64 | FP8-CS | 128 | 1 | 8192 | 0 | 4 | 8 | 1 | 5 | 1 | 64 | 1602 | 719 |"),
    ("25.11", "h100", "| LLAMA3.1_405B | 1024 | FP8-CS | 512 | 1 | 8192 | 0 | 8 | 8 | 2 | 8 | 1 | 64 | 292 | 737 |"),
    ("26.02", "h100", "| LLAMA3_70B | 64 | FP8-CS | 256 | 1 | 8192 | 0 | 4 | 8 | 1 | 5 | n/a | 128 | 1621 | 728 |"),
    (
        "26.02",
        "h100",
        "| LLAMA3.1_405B | 1024 | FP8-CS | 1536 | 1 | 8192 | 0 | 8 | 8 | 2 | 8 | n/a | 192 | 311 | 784 |",
    ),
    ("25.09", "b200", "| LLAMA3_8B | 8 | 128 | 2 | 8192 | 0 | 1 | 1 | 1 | n/a | 1 | 8 | 29994 (29388) | 1544 (1513) |"),
    ("25.09", "b200", "| LLAMA3.1_405B | 128 | 64 | 1 | 8192 | 0 | 4 | 8 | 2 | 8 | 1 | 32 | 664 (622) | 1676 (1569) |"),
    (
        "25.11",
        "b200",
        "| LLAMA3_8B | 8 | FP8-CS (FP8-MX) | 128 | 2 | 8192 | 0 | 1 | 1 | 1 | n/a | 1 | 8 | 30624 (29521) | "
        "1576 (1519) |",
    ),
    (
        "25.11",
        "b200",
        "| LLAMA3.1_405B | 128 | FP8-CS (FP8-MX) | 64 | 1 | 8192 | 0 | 4 | 8 | 2 | 8 | 1 | 32 | 661 (624) | "
        "1667 (1576) |",
    ),
    (
        "25.09",
        "gb200",
        "| LLAMA3_8B | 8 | 128 | 2 | 8192 | 0 | 1 | 1 | 1 | n/a | 1 | 8 | 31357 (29925) | 1614 (1540) |",
    ),
    (
        "25.09",
        "gb200",
        "| LLAMA3_70B | 64 | 128 | 2 | 8192 | 64 (0) | 1 (2) | 1 (4) | 1 | 1 (5) | 1 | 1 (16) | 3986 (3546) | "
        "1791 (1593) |",
    ),
    (
        "25.09",
        "gb200",
        "| LLAMA3.1_405B | 128 | 64 | 1 | 8192 | 64 (0) | 2 (4) | 1 (8) | 1 (2) | 1 (8) | 1 | 1 (32) | 729 (578) | "
        "1840 (1458) |",
    ),
    (
        "25.11",
        "gb200",
        "| LLAMA3_8B | 8 | FP8-CS (FP8-MX) | 128 | 2 | 8192 | 0 | 1 | 1 | 1 | n/a | 1 | 8 | 31508 (29789) | "
        "1622 (1533) |",
    ),
    ("25.11", "gb200", "| LLAMA3_70B | 64 | FP8-CS | 256 | 2 | 8192 | 64 | 1 | 1 | 1 | 1 | 1 | 2 | 4312 | 1937 |"),
    (
        "25.11",
        "gb200",
        "| LLAMA3.1_405B | 256 | FP8-CS | 1536 | 1 | 8192 | 0 | 4 | 16 | 1 | 4 | 1 | 384 | 813 | 2053 |",
    ),
)
"""The H100 and B200 rows from the summary of each release; the DGX-GB200 rows from its archive
(``training_runs_mbridge.ARCHIVE``), where a cell's value in parentheses is another run's (another quantization
granularity, and in 25.09 another mesh): the value outside is taken."""


def _first(cell: str) -> str:
    """A cell's value before any parenthesised alternative (the other quantisation granularity)."""
    return cell.split("(")[0].strip()


def _mbridge_run(release: str, gpu: str, row: str) -> TrainingRun:
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    if release == "25.09":
        cells.insert(2, "")  # no Precision column
    name, gpus, precision, gbs, mbs, seq, fsdp, tp, pp, cp, vp, _ep, ga, tokens, _tflops = cells
    fsdp, tp, pp, cp, vp, ga = (_first(cell) for cell in (fsdp, tp, pp, cp, vp, ga))
    fsdp = "1" if fsdp != "0" else fsdp  # the archive prints the sharding group's size, the summary 1
    short, model = _MBRIDGE_MODEL[name]
    gpus, gbs, mbs, seq, tp, pp, cp, ga = (int(cell) for cell in (gpus, gbs, mbs, seq, tp, pp, cp, ga))
    data = gpus // (tp * pp * cp)
    if gbs != data * mbs * ga:  # every row satisfies GBS = DP x MBS x GA [derived]
        raise ValueError(f"GBS {gbs} is not DP x MBS x GA in {row!r}")
    mesh = {"tp": tp, "pp": pp, "cp": cp, ("fsdp" if fsdp == "1" else "dp"): data}
    stated = (
        f"precision {precision!r}"
        if precision
        else "no precision column in 25.09 (the page: 'The numbers in parentheses indicate the use of different "
        "quantization granularities'): FP8 assumed, the larger peak, so the bound stays a bound"
    )
    recipe = (
        " The recipe file (scripts/performance/configs/llama/llama3_workload_base_configs.py, commit 00919dcf, not "
        "pinned to the release) sets 'recompute_num_layers=5' for this run: recorded as no recomputation, the least."
        if (gpu, name) == ("h100", "LLAMA3_8B")
        else " Recomputation not stated: none, the least, keeps the bound a bound."
    )
    return TrainingRun(
        key=f"mbridge{release.replace('.', '')}-{gpu}-{short}",
        source=f"Megatron-Bridge, {release} performance summary",
        model=model,
        cluster_key=_MBRIDGE_CLUSTER[gpu],
        mesh=mesh,
        global_batch_sequences=gbs,
        seq_len=seq,
        recompute="none",
        dtype="fp8",
        metric="tokens_per_s_per_chip",
        measured=(ARCHIVE if gpu == "gb200" else _MBRIDGE)(
            float(_first(tokens)),
            "tokens/s",
            row,
            "Tokens / sec / GPU, the value outside the parentheses"
            + (" (FP8-CS; FP8-MX in parentheses)." if "(" in tokens and precision else "."),
        ),
        note=f"DGX-{gpu.upper()} (network not stated: modelled as {_MBRIDGE_CLUSTER[gpu]}"
        + ("; a GB200's GPU as the B200 record, whose peak is the lower one" if gpu == "gb200" else "")
        + f"); NeMo {release}; {stated}; "
        f"{'FSDP' if fsdp == '1' else 'DDP'} ('FSDP = 1: use FSDP / FSDP = 0: use DDP'); dp = GPUs / (TP PP CP) "
        f"[derived]; GA {ga}.{recipe}"
        + (" Llama 3 8B/70B shapes as the catalogue's." if short.startswith("llama3-") else "")
        + (" 126 layers over PP 8 x VP 8 chunks (uneven)." if short == "llama31-405b" and pp * int(vp) == 64 else ""),
        micro_batch_sequences=mbs,
        interleave=int(vp) if pp > 1 else None,
    )


_MBRIDGE_RUNS = tuple(_mbridge_run(release, gpu, row) for release, gpu, row in _MBRIDGE_ROWS)


RUNS: tuple[TrainingRun, ...] = _NEMO_RUNS + _MBRIDGE_RUNS
