"""The serving-under-load explorer: requests arriving at a rate to one engine, and what their users wait.

Used by the chapter :ref:`ch-serving-many`.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np

from hwlib.data import chip as find_chip
from hwlib.data import model as find_model
from hwlib.data.records import Chip, ModelShape
from hwlib.serving.simulate import simulate_serving
from hwlib.serving.speculative import Speculation
from hwlib.units import format_seconds
from hwlib.viz.explorers.base import Explorer, chip_dropdown, offered_records, options_in, record_dropdown
from hwlib.viz.explorers.memory import deployable_chips
from hwlib.viz.explorers.serving import servable_models
from hwlib.viz.style import PALETTE

RATES = (0.5, 1, 2, 4, 8, 12, 16, 24, 32, 48, 64)
PROMPT_LENGTHS = (128, 256, 512, 1024, 2048)
ANSWER_LENGTHS = (32, 64, 128, 256, 512)
BUDGETS = ("whole prompts", 512, 1024, 2048)
"""Prompt and answer tokens and prefill chunks offered. Longer prompts and answers, or chunks of 256 tokens, take
the simulation of ``REQUESTS`` requests past 0.3 s on one core for some models (every chunk, and every step
near a full cache, is a step of its own); with these the slowest update measured 0.22 s (Llama 2 13B, 2,048-token
prompts, 512-token answers, chunks of 512) and the default one about 0.03 s."""
REQUESTS = 100
"""Requests each update simulates: enough for percentiles, few enough to stay interactive."""
ACCEPTANCES = ("off", 0.5, 0.6, 0.7, 0.8, 0.9)
"""Draft acceptance rates offered for speculative decoding (``DRAFT_TOKENS`` a step, drafted by one layer of the
model, as EAGLE's drafter)."""
DRAFT_TOKENS = 3
_LAYOUT = {"width": "330px"}


def simulated_models(chips: Sequence[Chip] | None = None) -> tuple[ModelShape, ...]:
    """The servable models whose steps the simulation prices in closed form (no sliding or chunked windows, no
    latent attention: those price every step of a stretch layer by layer, seconds per update) and whose BF16
    weights fit one of ``chips`` (default: every deployable chip)."""
    largest = max(c.capacity_bytes for c in (chips or deployable_chips()))
    return tuple(m for m in servable_models() if not m.windows and m.mla is None and m.weight_bytes("bf16") < largest)


_STYLE = {"description_width": "110px"}


class ServingLoadExplorer(Explorer):
    """Model, chip, arrival rate, prompt and answer lengths, prefill chunk and draft acceptance -> the spread of time
    to first token and per output token over ``REQUESTS`` simulated requests (``hw.simulate_serving``, one chip,
    Poisson arrivals, BF16), as cumulative distributions, and their percentiles. Chapter :ref:`ch-serving-many`.
    """

    figsize = (5.8, 3.4)
    margins = (0.12, 0.16, 0.97, 0.88)
    n_requests = REQUESTS

    def __init__(
        self,
        chips: Sequence[Chip] | None = None,
        chip: Chip | None = None,
        models: Sequence[ModelShape] | None = None,
        model: ModelShape | None = None,
        rate_per_s: float = 8,
        prompt_len: int = 1024,
        output_len: int = 256,
        budget: object = "whole prompts",
        acceptance: object = "off",
    ) -> None:
        chip_records, chip = offered_records(
            "chip", chips, chip, deployable_chips(), find_chip("H100-SXM"), Chip, "hw.chip('H100-SXM')"
        )
        model_records, model = offered_records(
            "model",
            models,
            model,
            simulated_models(chips),
            find_model("Llama 3 8B"),
            ModelShape,
            "hw.model('Llama 3 8B')",
        )
        options_in("rate_per_s", rate_per_s, RATES)
        options_in("prompt_len", prompt_len, PROMPT_LENGTHS)
        options_in("output_len", output_len, ANSWER_LENGTHS)
        options_in("budget", budget, BUDGETS)
        options_in("acceptance", acceptance, ACCEPTANCES)
        layout, style = widgets.Layout(**_LAYOUT), _STYLE
        self.model = record_dropdown(model_records, model, "model", layout=layout, style=style)
        self.chip = chip_dropdown(chip_records, chip, layout=layout, style=style)
        self.rate = widgets.SelectionSlider(
            options=RATES, value=rate_per_s, description="requests/s", layout=layout, style=style
        )
        self.prompt = widgets.SelectionSlider(
            options=PROMPT_LENGTHS, value=prompt_len, description="prompt tokens", layout=layout, style=style
        )
        self.output = widgets.SelectionSlider(
            options=ANSWER_LENGTHS, value=output_len, description="answer tokens", layout=layout, style=style
        )
        self.budget = widgets.Dropdown(
            options=BUDGETS, value=budget, description="prefill chunk", layout=layout, style=style
        )
        self.acceptance = widgets.Dropdown(
            options=ACCEPTANCES, value=acceptance, description="draft acceptance", layout=layout, style=style
        )
        super().__init__([self.model, self.chip, self.rate, self.prompt, self.output, self.budget, self.acceptance])

    def arrange(self) -> widgets.Widget:
        controls = widgets.HBox(
            [
                widgets.VBox([self.model, self.chip, self.rate, self.acceptance]),
                widgets.VBox([self.prompt, self.output, self.budget]),
            ]
        )
        return widgets.VBox([controls, self.image, self.summary])

    def setup(self) -> list:
        self._ax = ax = self.figure.add_subplot()
        self._ttft = ax.plot([], [], color=PALETTE[0], lw=1.8, label="time to first token")[0]
        self._tpot = ax.plot([], [], color=PALETTE[3], lw=1.8, label="time per output token")[0]
        ax.set(xscale="log", xlabel="seconds", ylabel="share of requests", ylim=(0, 1.02), xlim=(1e-3, 1e3))
        ax.legend(loc="lower right", fontsize=8)
        return [self._ttft, self._tpot]

    def background_key(self) -> tuple:
        return (self.model.value, self.chip.value)

    def draw_background(self) -> None:
        self._ax.set_title(f"{self.model.value.name} on one {self.chip.value.label}", fontsize=10)

    def options(self) -> dict:
        """The ``hw.simulate_serving`` options the controls stand for (beside the model and the chip)."""
        chunked = self.budget.value != "whole prompts"
        acceptance = self.acceptance.value
        return dict(
            speculation=None if acceptance == "off" else Speculation(DRAFT_TOKENS, float(acceptance), "one layer"),
            n_requests=self.n_requests,
            arrival_rate_per_s=float(self.rate.value),
            prompt_len=self.prompt.value,
            output_len=self.output.value,
            chunked_prefill=chunked,
            max_batch_tokens=self.budget.value if chunked else max(8192, self.prompt.value),
        )

    def refresh(self) -> str:
        model, chip = self.model.value, self.chip.value
        try:
            run = simulate_serving(model, chip, **self.options())
        except ValueError as error:
            for line in (self._ttft, self._tpot):
                line.set_visible(False)
            return f"<b>{error}</b>"
        share = np.arange(1, self.n_requests + 1) / self.n_requests
        ttft, tpot = np.sort(run.ttft_s), np.sort(run.tpot_s)
        for line, values in ((self._ttft, ttft), (self._tpot, tpot)):
            line.set_visible(True)
            line.set_data(values, share)
        rows = [
            (
                "time to first token, p50 / p99",
                f"{format_seconds(run.percentile('ttft', 50))} / {format_seconds(run.percentile('ttft', 99))}",
            ),
            (
                "time per output token, p50 / p99",
                f"{format_seconds(run.percentile('tpot', 50))} / {format_seconds(run.percentile('tpot', 99))}",
            ),
            ("output tokens/s over the run", f"{run.output_tokens_per_s:,.0f}"),
            ("largest batch in a step", f"{int(run.step_sequences.max()):,}"),
        ]
        return "<table>" + "".join(f"<tr><td>{a}</td><td><b>{b}</b></td></tr>" for a, b in rows) + "</table>"
