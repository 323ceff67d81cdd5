"""Public request traces: when requests arrived and how long their prompts and answers were.

``traces/azure_llm_2023.csv`` holds contiguous stretches of Microsoft's Azure LLM inference traces of November
2023 (a conversation service and a coding service; the data of Patel et al., "Splitwise", ISCA 2024), copied
row for row; ``traces/README.md`` says which stretches and how. Chapter :ref:`ch-serving-many`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hwlib._checks import one_of, whole_count

TRACE_FILE = Path(__file__).with_name("traces") / "azure_llm_2023.csv"
TRACES = {"azure-conv-2023": "conv", "azure-code-2023": "code"}
"""Trace names and their rows' ``trace`` column."""
SOURCE = (
    "Azure/AzurePublicDataset, data/AzureLLMInferenceTrace_conv.csv and data/AzureLLMInferenceTrace_code.csv "
    "(github.com/Azure/AzurePublicDataset, commit 790921015d50dd6aae7f7e47f39ba0e235ad6b08; CC-BY), the traces "
    "of Patel et al., 'Splitwise: Efficient generative LLM inference using phase splitting', ISCA 2024; read 2026-12-02"
)


@dataclass(frozen=True)
class RequestTrace:
    """Requests of a public trace: arrival times (s from the first), prompt and answer tokens. A trace of several
    stretches puts each after the last, one mean gap apart. Chapter :ref:`ch-serving-many`."""

    name: str
    arrival_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    source: str

    @property
    def rate_per_s(self) -> float:
        """Requests per second over the trace."""
        return float((len(self.arrival_s) - 1) / (self.arrival_s[-1] - self.arrival_s[0]))

    def sample(self, n_requests: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Prompt and answer lengths of ``n_requests`` requests drawn from the trace's (with replacement, a
        request's pair kept together)."""
        rows = np.random.default_rng(seed).integers(0, len(self.prompt_tokens), whole_count("n_requests", n_requests))
        return self.prompt_tokens[rows], self.output_tokens[rows]


def request_trace(name: str = "azure-conv-2023", segment: int | None = None) -> RequestTrace:
    """The public trace ``name`` (``TRACES``): all its stretches one after another, or only ``segment``.
    Chapter :ref:`ch-serving-many`."""
    one_of("name", name, TRACES)
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
