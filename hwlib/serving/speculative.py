"""Speculative decoding: a cheap drafter proposes k tokens, the model verifies them in one step of k + 1 tokens.

With each draft token accepted independently with probability a, a verification yields the accepted prefix and
one token of its own: (1 - a^(k+1)) / (1 - a) tokens on average (Leviathan, Kalman and Matias, "Fast Inference
from Transformers via Speculative Decoding", ICML 2023, arXiv:2211.17192, Eq. 1). It pays where a decode step
is memory-bound: verifying k + 1 tokens reads the weights once, as one token does, so the step costs little more
while it yields several tokens; at a large batch the step is compute-bound and the extra tokens cost their FLOPs.
The drafter is another model (``draft``: a ModelShape) or the model's own multi-token-prediction layers
(``draft="mtp"``, DeepSeek-V3), each proposing its k tokens one step at a time. Chapter :ref:`ch-serving-techniques`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hwlib._checks import Number, as_real_array, non_negative, positive, scalar_or_array
from hwlib.data import assumptions
from hwlib.data.records import ModelShape, require


def speculative_tokens_per_step(acceptance: Number, draft_tokens: Number) -> Number:
    """Expected tokens one verification step yields: (1 - a^(k+1)) / (1 - a), k + 1 at a = 1 (Leviathan et al.
    2023, Eq. 1). ``acceptance`` in [0, 1], ``draft_tokens`` k >= 0 whole. Vectorised. Chapter
    :ref:`ch-serving-techniques`."""
    rate = as_real_array("acceptance", acceptance, minimum=0.0)
    if (rate > 1).any():
        raise ValueError(f"acceptance must be a probability in [0, 1], got {acceptance!r}")
    k = np.asarray(non_negative("draft_tokens", draft_tokens, integral=True), dtype=float)
    safe = np.where(rate < 1, rate, 0.5)
    return scalar_or_array(np.where(rate < 1, (1 - safe ** (k + 1)) / (1 - safe), k + 1))


DRAFTS = ("mtp", "one layer")
"""Drafters made from the model itself: its multi-token-prediction layers, or one of its decoder layers."""


@dataclass(frozen=True)
class Speculation:
    """A speculative-decoding setup: ``draft_tokens`` k proposed per step, each accepted with probability
    ``acceptance``, by ``draft`` (a ModelShape run on the same chips; "mtp": the model's own
    multi-token-prediction layers; "one layer": one decoder layer of the model with its embedding and head, as
    EAGLE's drafter, Li et al. 2024). Chapter :ref:`ch-serving-techniques`."""

    draft_tokens: int
    acceptance: float
    draft: object = "mtp"

    def __post_init__(self) -> None:
        positive("draft_tokens", self.draft_tokens, integral=True)
        if self.draft_tokens > assumptions.MOST_DRAFT_TOKENS:
            raise ValueError(
                f"draft_tokens={self.draft_tokens:,} is more than the {assumptions.MOST_DRAFT_TOKENS} a drafter "
                "proposes"
            )
        speculative_tokens_per_step(self.acceptance, self.draft_tokens)
        if not (self.draft in DRAFTS or isinstance(self.draft, ModelShape)):
            raise TypeError(f"Speculation.draft must be a ModelShape or one of {DRAFTS}, got {self.draft!r}")

    def drafter(self, model: ModelShape) -> ModelShape:
        """The model that proposes: ``draft``, or ``model``'s multi-token-prediction layers, or one of its layers,
        as a model of their own (its last layer's kind, its embedding and head)."""
        if isinstance(self.draft, ModelShape):
            return self.draft
        model = require(ModelShape, "model", model, "hw.model('deepseek-v3')")
        if self.draft == "one layer":
            moe = model.moe_layers[-1:] if model.moe_layers else ()
            windows = model.windows[-1:] if model.windows else ()
            return replace(
                model,
                key=f"{model.key}-one-layer",
                name=f"one layer of {model.name}",
                n_layers=1,
                moe_layers=moe,
                windows=windows,
                mtp_layers=0,
            )
        if not model.mtp_layers:
            raise ValueError(f"draft='mtp' needs a model with multi-token-prediction layers; {model.name} has none")
        layers = model.mtp_layers
        moe = (bool(model.table().moe_mask[-1]),) * layers if model.moe_layers else ()
        windows = (model.windows[-1],) * layers if model.windows else ()
        return replace(model, key=f"{model.key}-mtp", n_layers=layers, moe_layers=moe, windows=windows, mtp_layers=0)

    @property
    def tokens_per_step(self) -> float:
        return float(speculative_tokens_per_step(self.acceptance, self.draft_tokens))
