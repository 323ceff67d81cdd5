"""Public request traces: when requests arrived and how long their prompts and answers were.

``traces/azure_llm_2023.csv`` holds contiguous stretches of Microsoft's Azure LLM inference traces of November
2023 (a conversation service and a coding service; the data of Patel et al., "Splitwise", ISCA 2024), copied
row for row; ``traces/README.md`` says which stretches and how. A benchmark dataset without arrival times is
kept as percentiles of its lengths (``DATASET_PERCENTILES``): MLPerf Inference's Llama 2 70B set. Chapter
:ref:`ch-serving-many`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hwlib._checks import one_of, seed_value, whole_count

TRACE_FILE = Path(__file__).with_name("traces") / "azure_llm_2023.csv"
TRACES = {"azure-conv-2023": "conv", "azure-code-2023": "code", "mlperf-llama2-openorca": None}
"""Trace names and their rows' ``trace`` column (None: a dataset kept as ``DATASET_PERCENTILES``)."""
PERCENTILES = (0, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 100)
"""The percentiles a dataset's lengths are kept at."""
DATASET_PERCENTILES = {
    "mlperf-llama2-openorca": (
        (48, 73, 85, 102, 117, 132, 152, 186, 232, 312, 519, 614, 791, 1021),
        (3, 15, 31, 67, 102, 146, 190, 231, 276, 336, 449, 563, 779, 1016),
    )
}
"""Prompt and answer tokens at ``PERCENTILES``, rounded to whole tokens."""
DATASET_SOURCE = (
    "Percentiles computed on 2026-12-02 from the 24,576 (tok_input_length, tok_output_length) pairs of MLPerf "
    "Inference's Llama 2 70B dataset (open_orca_gpt4_tokenized_llama.sampled_24576), as listed in "
    "openshift-psap/performance-dashboard, mlperf-data/summaries/llama2-70b-99.csv (commit 7cd1065d; made from "
    "MLCommons' file by that repository's generate_dataset_summaries.py; a third party's list, not MLCommons' "
    "own, whose MLCommons original is offered to members under a confidentiality notice, so only percentiles "
    "are kept here). Mean prompt 222.33 tokens, mean answer 218.89. Meaning of the columns from mlcommons/"
    "inference, language/llama2-70b/processorca.py (commit c78a2526): prompts in Llama 2 tokens with the chat "
    "template and one extra token; answers the dataset's reference (GPT-4) answers in Llama 2 tokens, not what "
    "Llama 2 generates. Prompts and answers correlate weakly (-0.17), which the percentiles drop."
)
SOURCE = (
    "Azure/AzurePublicDataset, data/AzureLLMInferenceTrace_conv.csv and data/AzureLLMInferenceTrace_code.csv "
    "(github.com/Azure/AzurePublicDataset, commit 790921015d50dd6aae7f7e47f39ba0e235ad6b08; CC-BY), the traces "
    "of Patel et al., 'Splitwise: Efficient generative LLM inference using phase splitting', ISCA 2024; read 2026-12-02"
)


@dataclass(frozen=True)
class RequestTrace:
    """Requests of a public trace: arrival times (s from the first; None for a dataset without them), prompt and
    answer tokens. A trace of several stretches puts each after the last, one mean gap apart. Chapter
    :ref:`ch-serving-many`."""

    name: str
    arrival_s: np.ndarray | None
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    source: str

    @property
    def rate_per_s(self) -> float:
        """Requests per second over the trace."""
        if self.arrival_s is None:
            raise ValueError(f"{self.name!r} is a dataset of lengths without arrival times: it has no rate")
        return float((len(self.arrival_s) - 1) / (self.arrival_s[-1] - self.arrival_s[0]))

    def sample(self, n_requests: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Prompt and answer lengths of ``n_requests`` requests drawn from the trace's (with replacement, a
        request's pair kept together)."""
        count = whole_count("n_requests", n_requests)
        rows = np.random.default_rng(seed_value("seed", seed)).integers(0, len(self.prompt_tokens), count)
        return self.prompt_tokens[rows], self.output_tokens[rows]


def request_trace(name: str = "azure-conv-2023", segment: int | None = None) -> RequestTrace:
    """The public trace ``name`` (``TRACES``): all its stretches one after another, or only ``segment``. A dataset
    kept as percentiles comes as 24,576 requests whose lengths follow them (linear between percentiles; prompts
    and answers independent) and no arrival times. Chapter :ref:`ch-serving-many`."""
    one_of("name", name, TRACES)
    if TRACES[name] is None:
        return _from_percentiles(name, segment)
    with TRACE_FILE.open(encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if row["trace"] == TRACES[name]]
    segments = sorted({int(row["segment"]) for row in rows})
    if segment is not None and segment not in segments:
        raise ValueError(f"segment must be one of {segments} for {name!r}, got {segment!r}")
    arrivals, prompts, outputs = [], [], []
    offset = 0.0
    for part in segments if segment is None else [segment]:
        times = np.array([float(row["arrival_s"]) for row in rows if int(row["segment"]) == part])
        arrivals.append(offset + times)
        offset += times[-1] + float(np.diff(times).mean())
        prompts += [int(row["prompt_tokens"]) for row in rows if int(row["segment"]) == part]
        outputs += [int(row["output_tokens"]) for row in rows if int(row["segment"]) == part]
    return RequestTrace(
        name=name,
        arrival_s=np.concatenate(arrivals),
        prompt_tokens=np.array(prompts, dtype=np.int64),
        output_tokens=np.array(outputs, dtype=np.int64),
        source=SOURCE,
    )


def _from_percentiles(name: str, segment: int | None) -> RequestTrace:
    if segment is not None:
        raise ValueError(f"{name!r} is one dataset, without segments; got segment={segment!r}")
    count = 24576
    shares = 100 * (np.arange(count) + 0.5) / count
    prompts, answers = (
        np.rint(np.interp(shares, PERCENTILES, kept)).astype(np.int64) for kept in DATASET_PERCENTILES[name]
    )
    rng = np.random.default_rng(0)  # in no order, the pairs independent: the first n are a fair sample
    prompts, answers = prompts[rng.permutation(count)], answers[rng.permutation(count)]
    return RequestTrace(name=name, arrival_s=None, prompt_tokens=prompts, output_tokens=answers, source=DATASET_SOURCE)
