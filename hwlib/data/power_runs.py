"""Measured power of whole systems under load: MLPerf Inference Power's system watts at the wall (computed from the
submitters' power logs by MLCommons' averaging rule) and two measurements of H100 nodes training. Each states its
system, its GPUs and, where there is one, the throughput it ran at. Gathered with their quotes in
``research/costs/sources.md``. Chapter :ref:`ch-costs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from hwlib.data.records import Sourced, cite

KINDS = ("inference", "training")


@dataclass(frozen=True)
class MeasuredPower:
    """A system of ``n_chips`` chips of ``chip_key`` measured at ``power`` (Sourced, W: the whole system at the
    wall, hosts, fans and NICs included) while running ``workload`` (``kind``: one of ``KINDS``), at
    ``tokens_per_s`` where stated; ``outside_model``, where not empty, says why the power model's fit leaves it
    out (it is still shown). Chapter :ref:`ch-costs`."""

    key: str
    source: str
    system: str
    chip_key: str
    n_chips: int
    kind: str
    workload: str
    power: Sourced
    tokens_per_s: float | None = None
    outside_model: str = ""


_CHECKER = (
    "the mean of the logged watts between power_begin and power_end (mlcommons/inference, "
    "tools/submission/submission_checker.py), computed from spl.txt (research/costs/compute_mlperf_power.py)"
)
_V41 = cite(
    "mlcommons/inference_results_v4.1 (commit 198fc467), closed/NVIDIA/results/H200-SXM-141GBx8_TRT_MaxQ/<model>/"
    "<scenario>/performance/run_1/spl.txt and mlperf_log_summary.txt",
    "2026-12-06",
)
_V51 = cite(
    "mlcommons/inference_results_v5.1 (commit 965182b0), closed/Lenovo/results/<system>/<model>/<scenario>/"
    "performance/run_1/spl.txt and mlperf_log_summary.txt",
    "2026-12-06",
)
_MAXQ = "GPUs capped at 500 W ('power_limit = 500' in the configs), below their 700 W TDP"
_H200 = "NVIDIA H200 (8x H200-SXM-141GB, MaxQ, TensorRT)"
_AIR = "Lenovo ThinkSystem SR680a V3 (8x B200-SXM-180GB, air-cooled)"
_WATER = "Lenovo ThinkSystem SR780a V3 (8x B200-SXM-180GB, water-cooled)"


def _mlperf(cited, key, system, chip_key, workload, watts, tokens_per_s, outside_model=""):
    power = cited(watts, "W", f"{watts} W (computed)", f"{workload}; {_CHECKER}.")
    return MeasuredPower(key, "MLPerf Inference Power", system, chip_key, 8, "inference", workload, power,
                         tokens_per_s, outside_model)  # fmt: skip


POWER_RUNS = (
    _mlperf(_V41, "mlperf41-h200-maxq-llama2-offline", _H200, "h200", "Llama 2 70B, Offline", 6152.98, 25262.1, _MAXQ),
    _mlperf(_V41, "mlperf41-h200-maxq-llama2-server", _H200, "h200", "Llama 2 70B, Server", 6280.21, 23113.14, _MAXQ),
    _mlperf(_V41, "mlperf41-h200-maxq-mixtral-offline", _H200, "h200", "Mixtral 8x7B, Offline", 6154.80, 48987.9,
            _MAXQ),
    _mlperf(_V41, "mlperf41-h200-maxq-mixtral-server", _H200, "h200", "Mixtral 8x7B, Server", 6174.90, 45496.95,
            _MAXQ),
    _mlperf(_V51, "mlperf51-b200-air-llama2-offline", _AIR, "b200", "Llama 2 70B, Offline", 10401.00, 102909.0),
    _mlperf(_V51, "mlperf51-b200-air-llama2-server", _AIR, "b200", "Llama 2 70B, Server", 10442.26, 99159.27),
    _mlperf(_V51, "mlperf51-b200-water-405b-offline", _WATER, "b200", "Llama 3.1 405B, Offline", 9891.76, 1637.11),
    _mlperf(_V51, "mlperf51-b200-water-405b-server", _WATER, "b200", "Llama 3.1 405B, Server", 9566.18, 1249.04),
    _mlperf(_V51, "mlperf51-b200-water-8b-offline", _WATER, "b200", "Llama 3.1 8B, Offline", 9436.05, 146960.0),
    _mlperf(_V51, "mlperf51-b200-water-8b-server", _WATER, "b200", "Llama 3.1 8B, Server", 9011.07, 128689.32),
    MeasuredPower(
        "bnl-h100-training",
        "Brookhaven National Laboratory",
        "8-GPU H100 systems (10.2 kW rating)",
        "h100-sxm",
        8,
        "training",
        "AI training, 'computationally intensive workloads'",
        cite("arXiv:2506.14551, abstract (read in a third-party mirror of arXiv, arcxiv.org)", "2026-12-06")(
            0.76 * 10.2e3,
            "W",
            "even computationally intensive workloads operate at only 76% of the 10.2 kW TDP rating",
            "76 % of 10.2 kW (derived).",
        ),
    ),
    MeasuredPower(
        "smc-h100-llama2-lora",
        "Sustainable Metal Cloud",
        "HGX H100, immersion-cooled",
        "h100-sxm",
        8,
        "training",
        "MLPerf Training v4.0 llama2_70b_lora",
        cite("Sustainable Metal Cloud, https://smc.co/mlperfv40/results/llama2-70b-lora (the submitter's page)",
             "2026-12-06")(
            12_127_904 / (29 * 60 + 6),
            "W",
            "Total Energy Consumed (Joules) - AC | 12,127,904 J ... Total Time (MM:SS) | 29:06",
            "12,127,904 J / 1,746 s (derived).",
        ),
        outside_model="the page does not state the GPUs of this block (one node of eight inferred from its absent "
        "network power) and MLCommons has not reviewed it",
    ),
)  # fmt: skip
"""Every measured system power (``MeasuredPower``)."""

SYSTEM_RATINGS = {
    "b200": (
        8,
        cite("NVIDIA DGX B200 User Guide, https://docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html",
             "2026-12-06")(14.3e3, "W", "200-240 volts AC | 14.3 kW max.", "DGX B200: eight B200s."),
    ),
    "h100-sxm": (
        8,
        cite("arXiv:2506.14551, abstract (read in a third-party mirror of arXiv, arcxiv.org)", "2026-12-06")(
            10.2e3, "W", "the 10.2 kW TDP rating", "8-GPU H100 systems."
        ),
    ),
}  # fmt: skip
"""Chip key -> (chips, the rated maximum power of an eight-GPU system of them, Sourced W): no system under load draws
more, the power bound."""
