"""The batch-size squeeze explorer: system, network, model size, chips and B_crit -> the time-optimal batch.

Used by the chapter :ref:`ch-batch-squeeze`.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np

from hwlib.data import cluster as find_cluster
from hwlib.data import clusters as all_clusters
from hwlib.data import doc002, fabrics
from hwlib.data import model as find_model
from hwlib.data.records import Cluster
from hwlib.training.regimes import transformer_params
from hwlib.training.squeeze import cluster_squeeze, time_to_target
from hwlib.units import format_number, format_seconds
from hwlib.viz.explorers.base import Explorer, offered_records, options_in, record_dropdown
from hwlib.viz.style import PALETTE

DOC002_PARAMS = transformer_params(doc002.D_MODEL, doc002.N_LAYERS)
"""Document 002's Table 6 model, 12 d^2 L parameters (no embeddings)."""
LLAMA3_8B_PARAMS = transformer_params(find_model("llama-3-8b"))
"""Llama 3 8B's parameter count, embeddings included (the chapter's model)."""
SQUEEZE_PARAMS = (1.3e9, 2.7e9, DOC002_PARAMS, LLAMA3_8B_PARAMS, 13e9, 30e9, 70e9, 175e9, 405e9)
"""Model sizes (parameters) the squeeze explorer offers: round sizes around document 002's model, and Llama 3 8B."""
SQUEEZE_CHIPS = tuple(2**p for p in range(14))
"""Chip counts N the squeeze explorer offers (1 to 8192)."""
SQUEEZE_CRITICAL = (1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7)
"""Critical batch sizes (tokens) the squeeze explorer offers (0.1 M to 50 M)."""
_BATCHES = np.geomspace(1e3, 1e9, 240)
_OWN_NETWORK = "own"


class BatchSqueezeExplorer(Explorer):
    """System (chip and node fabric), scale-out network, model size, N and B_crit -> the batch squeeze.

    The curve is the time to a target loss over the ideal time (no fixed cost, no wasted
    examples) against the global batch; the circle marks B_opt, the dashed line B_crit. The model
    size moves only the absolute times in the summary: T_fixed and B_opt do not depend on P.
    ``cluster`` is a record (default ``hw.cluster("hgx-a100-hdr")``); ``n_params`` defaults to
    document 002's 12 d^2 L model, ``n_chips`` to 64 and ``critical_batch_tokens`` to its B_crit.
    Explained in the chapter :ref:`ch-batch-squeeze`.
    """

    figsize = (5.0, 3.4)
    margins = (0.15, 0.15, 0.96, 0.9)

    def __init__(
        self,
        clusters: Sequence[Cluster] | None = None,
        cluster: Cluster | None = None,
        n_params: float = DOC002_PARAMS,
        n_chips: int = doc002.TABLE6_CHIP_COUNTS[1],
        critical_batch_tokens: float = doc002.CRITICAL_BATCH.value,
    ) -> None:
        records, cluster = offered_records(
            "cluster",
            clusters,
            cluster,
            all_clusters(),
            find_cluster("hgx-a100-hdr"),
            Cluster,
            "hw.cluster('hgx-a100-hdr')",
        )
        options_in("n_params", n_params, SQUEEZE_PARAMS)
        options_in("n_chips", n_chips, SQUEEZE_CHIPS)
        options_in("critical_batch_tokens", critical_batch_tokens, SQUEEZE_CRITICAL)
        layout, style = widgets.Layout(width="280px"), {"description_width": "95px"}
        self.system = record_dropdown(records, cluster, "system", layout=layout, style=style)
        networks = [("system's own", _OWN_NETWORK)] + [(f.name, f) for f in fabrics("vendor", "scale-out")]
        self.network = widgets.Dropdown(
            options=networks, value=_OWN_NETWORK, description="network", layout=layout, style=style
        )
        self.n_params = widgets.SelectionSlider(
            options=[(f"{p / 1e9:.3g}B", p) for p in SQUEEZE_PARAMS],
            value=n_params,
            description="model size",
            layout=layout,
            style=style,
        )
        self.n_chips = widgets.SelectionSlider(
            options=SQUEEZE_CHIPS, value=n_chips, description="chips N", layout=layout, style=style
        )
        self.critical = widgets.SelectionSlider(
            options=[(f"{b / 1e6:g} M", b) for b in SQUEEZE_CRITICAL],
            value=critical_batch_tokens,
            description="B_crit (tokens)",
            layout=layout,
            style=style,
        )
        super().__init__([self.system, self.network, self.n_params, self.n_chips, self.critical])

    def setup(self) -> list:
        self._ax = ax = self.figure.add_subplot()
        ax.axhline(1.0, color="0.4", lw=1, ls=":")
        (self._curve,) = ax.plot(_BATCHES, np.ones_like(_BATCHES), color=PALETTE[0], lw=2)
        (self._best,) = ax.plot([1e6], [1.0], "o", color=PALETTE[3], ms=8, mec="k", mew=0.6)
        self._critical = ax.axvline(1e6, color="0.5", ls="--", lw=1)
        ax.set(
            xscale="log",
            yscale="log",
            xlim=(_BATCHES[0], _BATCHES[-1]),
            ylim=(0.9, 100),
            xlabel="global batch B (tokens)",
            ylabel="time to target / ideal",
        )
        ax.set_title("circle: B_opt; dashed: B_crit; dotted: ideal", fontsize=9)
        ax.minorticks_off()
        self._artists = (self._curve, self._best, self._critical)
        return list(self._artists)

    def current_cluster(self) -> Cluster:
        """The chosen system, with the chosen network in place of its own where it has one."""
        record, network = self.system.value, self.network.value
        if network == _OWN_NETWORK or record.network is None:
            return record
        return Cluster(
            f"{record.key}+{network.key}",
            f"{record.chip.name} node + {network.name}",
            record.chip,
            record.node_fabric,
            network,
        )

    def refresh(self) -> str:
        record = self.current_cluster()
        count, critical = self.n_chips.value, self.critical.value
        fits = record.max_chips is None or count <= record.max_chips
        for artist in self._artists:
            artist.set_visible(fits)
        if not fits:
            return (
                f"<b>{count:,} chips exceed one {record.node_fabric.name} domain ({record.max_chips:,})</b>; "
                f"no network is modelled for {record.name}"
            )
        squeeze = cluster_squeeze(record, self.n_params.value, count, critical)
        # the ratio to the ideal time does not depend on E_min, so any positive min_tokens will do
        curve = time_to_target(squeeze, _BATCHES, critical)
        self._curve.set_ydata(np.clip(curve.ratio, 0.9, 1e3))
        self._best.set_data([squeeze.optimal_batch_tokens], [squeeze.optimal_time_ratio])
        self._critical.set_xdata([critical, critical])
        ignored = (
            ""
            if record.network is not None or self.network.value == _OWN_NETWORK
            else " (this system has no network to replace)"
        )
        return (
            f"<b>{record.name}</b>{ignored}<br>all-reduce {format_seconds(squeeze.allreduce_time_s)} + optimizer "
            f"{format_seconds(squeeze.optimizer_time_s)} per step<br>T_fixed = <b>{squeeze.fixed_cost_tokens:,.0f}</b> "
            f"tokens per chip<br>B_opt = <b>{format_number(squeeze.optimal_batch_tokens / 1e6)} M</b> tokens "
            f"({squeeze.tokens_per_chip:,.0f} per chip)<br>"
            f"step at B_opt {format_seconds(squeeze.optimal_step_time_s)}; "
            f"time to target {format_number(squeeze.optimal_time_ratio)} x ideal"
        )
