"""The collectives explorer: one collective's time against its array's size along one mesh axis of a real fabric.

Used by the chapter :ref:`ch-sharded-matmuls`.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from hwlib.collectives import COLLECTIVES, collective_time_s, switch, torus
from hwlib.data import cluster as find_cluster
from hwlib.placement import group_topology
from hwlib.units import format_quantity, format_seconds
from hwlib.viz.explorers.base import Explorer, options_in
from hwlib.viz.style import PALETTE

COLLECTIVE_FABRICS = (
    "TPU v5p ICI axis, wraparound",
    "TPU v5p ICI axis, no wraparound",
    "H100s: NVLink, then InfiniBand",
    "TPU v5p slices over DCN",
)
"""The fabrics the collectives explorer offers, each built from the catalogue by ``axis_topology``."""
COLLECTIVE_CHIPS = (2, 4, 8, 16)
"""Chips along the axis, |X|, that the explorer offers."""
COLLECTIVE_SIZES = tuple(float(10**exponent) for exponent in range(3, 11))
"""Array sizes Q_c the explorer offers (B): 1 kB to 10 GB."""
_CURVE = np.geomspace(1e3, 1e10, 160)


def axis_topology(fabric: str, n_chips: int) -> object:
    """The topology of ``n_chips`` along one mesh axis of ``fabric`` (one of ``COLLECTIVE_FABRICS``): a v5p ICI axis
    (a ring, or a line without wraparound, at one link's rate and hop latency; two chips are a line either way, one
    link between them, as ``hw.group_topology`` places a pair), H100s on NVLink and then across their nodes' NICs
    (``hw.group_topology``), or v5p slices over the data-centre network (a switch at the DCN's rate and latency).
    Chapter :ref:`ch-sharded-matmuls`."""
    options_in("fabric", fabric, COLLECTIVE_FABRICS)
    options_in("n_chips", n_chips, COLLECTIVE_CHIPS)
    if fabric.startswith("TPU v5p ICI"):
        v5p = find_cluster("tpu-v5p")
        hop = group_topology(v5p, 4, 1, 64)
        return torus(
            (n_chips,),
            v5p.chip.ici_link_bytes_per_s,
            hop.latency_s,
            wraparound=fabric.endswith(", wraparound") and n_chips > 2,
        )
    if fabric.startswith("H100s"):
        return group_topology(find_cluster("hgx-h100-ndr"), n_chips, 1, n_chips)
    dcn = find_cluster("tpu-v5p-multislice").dcn
    return switch(n_chips, dcn.bytes_per_s, dcn.latency_s)


def _size_label(n_bytes: float) -> str:
    """1 kB, 10 MB, ...: decimal prefixes, as the axis."""
    exponent = int(round(np.log10(n_bytes)))
    return f"{10 ** (exponent % 3)} {('kB', 'MB', 'GB')[exponent // 3 - 1]}"


class CollectiveExplorer(Explorer):
    """Collective, fabric, chips along the axis and array size -> the collective's time (``hw.collective_time_s``).

    The curve is the time against the array's size on that fabric, the dot the chosen size; the summary splits the
    time into latency and bandwidth and gives the bytes each chip sends. Explained in the chapter
    :ref:`ch-sharded-matmuls`.
    """

    figsize = (5.0, 3.4)
    margins = (0.16, 0.15, 0.96, 0.9)

    def __init__(
        self, kind: str = "all-gather", fabric: str = COLLECTIVE_FABRICS[0], n_chips: int = 4, n_bytes: float = 1e9
    ) -> None:
        options_in("kind", kind, COLLECTIVES)
        options_in("fabric", fabric, COLLECTIVE_FABRICS)
        options_in("n_chips", n_chips, COLLECTIVE_CHIPS)
        options_in("n_bytes", n_bytes, COLLECTIVE_SIZES, "one of 1e3, 1e4, ... 1e10 (bytes)")
        layout, style = widgets.Layout(width="300px"), {"description_width": "70px"}
        self.kind = widgets.Dropdown(
            options=COLLECTIVES, value=kind, description="collective", layout=layout, style=style
        )
        self.fabric = widgets.Dropdown(
            options=COLLECTIVE_FABRICS, value=fabric, description="fabric", layout=layout, style=style
        )
        self.n_chips = widgets.SelectionSlider(
            options=COLLECTIVE_CHIPS, value=n_chips, description="chips |X|", layout=layout, style=style
        )
        self.n_bytes = widgets.SelectionSlider(
            options=[(_size_label(size), size) for size in COLLECTIVE_SIZES],
            value=float(n_bytes),
            description="array Q_c",
            layout=layout,
            style=style,
        )
        super().__init__([self.kind, self.fabric, self.n_chips, self.n_bytes])

    def setup(self):
        ax = self.figure.add_subplot()
        (self._curve,) = ax.loglog(_CURVE, np.ones_like(_CURVE), color=PALETTE[0], lw=2)
        (self._dot,) = ax.plot([1e9], [1.0], "o", color=PALETTE[3], ms=8, mec="k", mew=0.6)
        ax.set(xlim=(_CURVE[0], _CURVE[-1]), ylim=(1e-7, 10), xlabel="array Q_c (B)", ylabel="time (s)")
        ax.minorticks_off()
        return [self._curve, self._dot]

    def refresh(self) -> str:
        kind, chips, size = self.kind.value, self.n_chips.value, self.n_bytes.value
        topology = axis_topology(self.fabric.value, chips)
        self._curve.set_ydata(collective_time_s(kind, _CURVE, topology))
        time_s = float(collective_time_s(kind, size, topology))
        latency_s = float(collective_time_s(kind, 0.0, topology))
        self._dot.set_data([size], [time_s])
        passes = 2 if kind == "all-reduce" else 1
        sent = passes * (chips - 1) / chips * size
        return (
            f"<b>{kind}</b> of {_size_label(size)} over {chips} chips: <b>{format_seconds(time_s)}</b><br>"
            f"latency {format_seconds(latency_s)}, bandwidth {format_seconds(time_s - latency_s)}<br>"
            f"each chip sends {format_quantity(sent, 'B')}"
        )
