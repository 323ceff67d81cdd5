"""The training-step explorer: a model on a cluster under a mesh, and where the step's time goes.

Used by the chapter :ref:`ch-sharding`.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np

from hwlib.calibration_fit import forecast_band
from hwlib.data import cluster as find_cluster
from hwlib.data import clusters as all_clusters
from hwlib.data import model as find_model
from hwlib.data.records import Cluster, ModelShape
from hwlib.memory import RECOMPUTE
from hwlib.training.mesh import Mesh
from hwlib.training.step import STEP_PARTS, train_step
from hwlib.units import format_bytes, format_seconds
from hwlib.viz.explorers.base import Explorer, offered_records, options_in, record_dropdown
from hwlib.viz.explorers.serving import servable_models
from hwlib.viz.style import PALETTE

CHIP_COUNTS = tuple(2**p for p in range(3, 14))
DEGREES = tuple(2**p for p in range(7))
BATCH_TOKENS = tuple(2**p for p in range(19, 26))
SEQ_LENS = tuple(2**p for p in range(11, 16))
_LAYOUT = {"width": "300px"}
_STYLE = {"description_width": "110px"}


def _nice_ceiling(value: float) -> float:
    """The next 1, 2 or 5 times a power of ten above ``value`` (the bar's axis changes only in those steps)."""
    power = 10.0 ** np.floor(np.log10(max(value, 1e-9)))
    return float(next(m * power for m in (1.0, 2.0, 5.0, 10.0, 20.0) if m * power >= value * 1.05))


def _vendor_clusters() -> tuple[Cluster, ...]:
    return tuple(record for record in all_clusters() if record.node_fabric.source == "vendor")


class TrainingExplorer(Explorer):
    """Model, cluster, chips, tensor/pipeline/context degrees, recompute, batch and sequence -> one training step.

    The chips left over after tp x pp x cp go to FSDP; micro-batches are one sequence each. The lower bar splits the
    step's bound (``hw.train_step``) into compute, pipeline bubble and each collective's exposed time; the upper bar
    is the forecast of the same step. The summary leads with the forecast (step, tokens/s, MFU) and its error band
    for the kind of run (``hw.forecast_band``), then the bound as the ceiling, the memory per chip against what is
    usable and, where the mesh does not work, why (first, where it does not fit). Chapter :ref:`ch-sharding`.
    """

    figsize = (6.2, 3.0)
    margins = (0.12, 0.4, 0.97, 0.95)

    def __init__(
        self,
        clusters: Sequence[Cluster] | None = None,
        cluster: Cluster | None = None,
        models: Sequence[ModelShape] | None = None,
        model: ModelShape | None = None,
        n_chips: int = 256,
        tp: int = 8,
        pp: int = 1,
        cp: int = 1,
        recompute: str = "selective",
        global_batch_tokens: int = BATCH_TOKENS[3],
        seq_len: int = SEQ_LENS[2],
    ) -> None:
        cluster_records, cluster = offered_records(
            "cluster",
            clusters,
            cluster,
            _vendor_clusters(),
            find_cluster("hgx-h100-ndr"),
            Cluster,
            "hw.cluster('hgx-h100-ndr')",
        )
        model_records, model = offered_records(
            "model", models, model, servable_models(), find_model("Llama 3 70B"), ModelShape, "hw.model('Llama 3 70B')"
        )
        for name, value, options in (
            ("n_chips", n_chips, CHIP_COUNTS),
            ("tp", tp, DEGREES),
            ("pp", pp, DEGREES),
            ("cp", cp, DEGREES),
            ("recompute", recompute, RECOMPUTE),
            ("global_batch_tokens", global_batch_tokens, BATCH_TOKENS),
            ("seq_len", seq_len, SEQ_LENS),
        ):
            options_in(name, value, options)
        layout, style = widgets.Layout(**_LAYOUT), _STYLE
        self.model = record_dropdown(model_records, model, "model", layout=layout, style=style)
        self.cluster = record_dropdown(cluster_records, cluster, "cluster", layout=layout, style=style)
        self.n_chips = widgets.SelectionSlider(
            options=CHIP_COUNTS, value=n_chips, description="chips", layout=layout, style=style
        )
        self.tp = widgets.SelectionSlider(
            options=DEGREES, value=tp, description="tensor (tp)", layout=layout, style=style
        )
        self.pp = widgets.SelectionSlider(
            options=DEGREES, value=pp, description="pipeline (pp)", layout=layout, style=style
        )
        self.cp = widgets.SelectionSlider(
            options=DEGREES, value=cp, description="context (cp)", layout=layout, style=style
        )
        self.recompute = widgets.Dropdown(
            options=RECOMPUTE, value=recompute, description="recompute", layout=layout, style=style
        )
        self.global_batch_tokens = widgets.SelectionSlider(
            options=[(f"{t / 2**20:g} Mi", t) for t in BATCH_TOKENS],
            value=global_batch_tokens,
            description="batch (tokens)",
            layout=layout,
            style=style,
        )
        self.seq_len = widgets.SelectionSlider(
            options=SEQ_LENS, value=seq_len, description="sequence", layout=layout, style=style
        )
        super().__init__(
            [
                self.model,
                self.cluster,
                self.n_chips,
                self.tp,
                self.pp,
                self.cp,
                self.recompute,
                self.global_batch_tokens,
                self.seq_len,
            ]
        )

    def arrange(self) -> widgets.Widget:
        controls = widgets.HBox(
            [
                widgets.VBox([self.model, self.cluster, self.n_chips, self.recompute]),
                widgets.VBox([self.tp, self.pp, self.cp, self.global_batch_tokens, self.seq_len]),
            ]
        )
        return widgets.VBox([controls, self.image, self.summary])

    def setup(self) -> list:
        self._ax = ax = self.figure.add_subplot()
        colours = ("#999999", "#DDDDDD", *PALETTE)
        self._bars = [
            ax.barh([0], [0.0], left=[0.0], color=c, height=0.5, label=name)[0] for name, c in zip(STEP_PARTS, colours)
        ]
        self._forecast = ax.barh([1], [0.0], color="white", edgecolor="#333333", hatch="//", height=0.5)[0]
        ax.set(yticks=[0, 1], yticklabels=["bound", "forecast"], ylim=(-0.5, 1.5), xlabel="time of one step (s)")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=4, fontsize=7, frameon=False)
        return [*self._bars, self._forecast]

    def background_key(self) -> tuple:
        self._current = self._step()
        step = self._current[0]
        total = step.forecast_time_s if step is not None else 1.0
        return (_nice_ceiling(total),)

    def draw_background(self) -> None:
        self._ax.set_xlim(0, self.background_key()[0])

    def _step(self) -> tuple[object, str]:
        count, tp, pp, cp = self.n_chips.value, self.tp.value, self.pp.value, self.cp.value
        if count % (tp * pp * cp):
            return None, f"tp x pp x cp = {tp * pp * cp} does not divide {count} chips"
        mesh = Mesh(fsdp=count // (tp * pp * cp), tp=tp, pp=pp, cp=cp)
        try:
            return train_step(
                self.model.value,
                self.cluster.value,
                mesh,
                self.global_batch_tokens.value,
                self.seq_len.value,
                micro_batch_tokens=self.seq_len.value,
                recompute=self.recompute.value,
            ), ""
        except (ValueError, KeyError) as error:
            return None, str(error)

    def refresh(self) -> str:
        step, problem = self._current
        parts = step.parts_s if step is not None else {name: 0.0 for name in STEP_PARTS}
        left = 0.0
        for bar, name in zip(self._bars, STEP_PARTS):
            bar.set_x(left)
            bar.set_width(parts[name])
            left += parts[name]
        self._forecast.set_width(step.forecast_time_s if step is not None else 0.0)
        if step is None:
            return f"<b>{problem}</b>"
        exposed = sum(step.exposed_comm_time_s.values())
        memory = f"{format_bytes(step.memory_per_chip_bytes)} of {format_bytes(step.usable_bytes)} usable"
        band = forecast_band("training", self.model.value, self.cluster.value.chip, step.micro_batches)  # no refit
        unfit = "" if step.fits else ", were it to fit"
        rows = [
            *([] if step.fits else [("does not fit", f"{memory} per chip")]),
            ("mesh", str(step.mesh)),
            (
                f"forecast: step, tokens/s, MFU{unfit}",
                f"{format_seconds(step.forecast_time_s)}, {step.forecast_tokens_per_s:,.0f}, "
                f"{100 * step.forecast_mfu:.0f} %",
            ),
            ("forecast error", band.text),
            (
                f"bound, every chip at its peak (the ceiling): step, tokens/s, MFU{unfit}",
                f"{format_seconds(step.time_s)}, {step.tokens_per_s:,.0f}, {100 * step.mfu:.0f} %",
            ),
            ("exposed communication (bound)", format_seconds(exposed) if exposed else "none"),
            *([("memory per chip", memory)] if step.fits else []),
        ]
        return "<table>" + "".join(f"<tr><td>{a}</td><td><b>{b}</b></td></tr>" for a, b in rows) + "</table>"
