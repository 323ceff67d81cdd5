"""The one machinery every explorer shares: draw the figure once, then move only what changed.

An explorer is a set of ipywidgets controls, one matplotlib figure on an Agg canvas and an HTML
summary. On every control change :meth:`Explorer.update` redraws the whole figure only when the
subclass's :meth:`~Explorer.background_key` (chip, dtype, model, ...) has changed and keeps a copy
of it; otherwise it restores that copy and draws only the dynamic (animated) artists on top. The
canvas is then encoded as a lightly compressed PNG into an ``ipywidgets.Image``, which keeps an
update well under 100 ms and lets a built page show the saved state.

A subclass declares its controls (as attributes, so tools can find them), then calls
``Explorer.__init__(self, controls)`` and implements :meth:`~Explorer.setup` (axes and artists;
returns the dynamic ones), :meth:`~Explorer.draw_background` (what stays fixed for one key),
:meth:`~Explorer.refresh` (move the dynamic artists, return the summary HTML) and, where a
control depends on another, :meth:`~Explorer.sync`. Used by every chapter's explorer.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator, Sequence

import ipywidgets as widgets
import matplotlib as mpl
import PIL.Image
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hwlib.data.records import ENERGY_FIELDS, Chip, require_chips
from hwlib.viz.style import STYLE

_UNSET = object()
SAVED_STATE_NOTE = ("<small><i>This figure and summary show the state saved when the page was built; on a static "
                    "page the controls do not recompute. To explore, run the chapter in a kernel: <code>make lab</code> "
                    "in the repository opens every chapter as a notebook.</i></small>")
"""What an explorer says until a control moves (all a static page ever shows)."""
LIVE_NOTE = "<small><i>Live: every change recomputes the figure and the summary.</i></small>"
"""What it says once a control has moved in a running kernel."""


def _wrapping(widget: widgets.Widget) -> widgets.Widget:
    """``widget`` with every row of controls allowed to wrap onto the next line (narrow screens)."""
    if isinstance(widget, widgets.HBox):
        widget.layout.flex_flow = "row wrap"
    for child in getattr(widget, "children", ()):
        _wrapping(child)
    return widget


def png_bytes(canvas: FigureCanvasAgg) -> bytes:
    """The canvas as it stands, as PNG bytes for an ``ipywidgets.Image`` (fast, light compression)."""
    rgba = canvas.buffer_rgba()
    buffer = io.BytesIO()
    PIL.Image.frombuffer("RGBA", (rgba.shape[1], rgba.shape[0]), rgba).save(buffer, "png", compress_level=1)
    return buffer.getvalue()


def has_energy(chip: Chip) -> bool:
    """True when ``chip`` has every parameter the energy model needs (``ENERGY_FIELDS``)."""
    return all(getattr(chip, name) is not None for name in ENERGY_FIELDS)


def choose(name: str, value: object, offered: Sequence[object], kind: type, example: str) -> object:
    """``value`` if it is a ``kind`` record among ``offered``: else a TypeError (not a record) or a
    ValueError listing the offered records by label."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be a {kind.__name__} record such as {example}, got {value!r}")
    if not any(value is record for record in offered):
        labels = [getattr(record, "label", getattr(record, "name", repr(record))) for record in offered]
        raise ValueError(f"{name} {value!r} is not among the explorer's {name}s {labels}")
    return value


def records_of(name: str, values: object, kind: type) -> tuple:
    """``values`` as a non-empty tuple of ``kind`` records, else a TypeError naming ``name``."""
    if kind is Chip:
        return require_chips(values)
    records = tuple(values) if isinstance(values, (list, tuple)) else ()
    if not records or not all(isinstance(record, kind) for record in records):
        raise TypeError(f"{name} must be a non-empty sequence of {kind.__name__} records, got {values!r}")
    return records


def default_record(preferred: object, offered: Sequence[object]) -> object:
    """``preferred`` when it is among ``offered``, else the first offered record."""
    return preferred if any(preferred is record for record in offered) else offered[0]


def options_in(name: str, value: object, options: Sequence[object], what: str | None = None) -> object:
    """``value`` if it is one of ``options``, else a ValueError naming ``name`` and what is allowed."""
    if isinstance(value, bool) or value not in options:
        raise ValueError(f"{name} must be {what or f'one of {tuple(options)}'}, got {value!r}")
    return value


def number_in(name: str, value: object, low: float, high: float, what: str) -> float:
    """``value`` if it is a number in [low, high], else a ValueError naming ``name`` and ``what`` it is."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ValueError(f"{name} must be a number from {low:g} to {high:g} {what}, got {value!r}")
    return float(value)


def record_dropdown(records: Sequence[object], value: object, description: str, **options: object
                    ) -> widgets.Dropdown:
    """A Dropdown over records (chips, models, clusters, recipes): labels shown, the record is the value."""
    return widgets.Dropdown(options=[(getattr(r, "label", getattr(r, "name", str(r))), r) for r in records],
                            value=value, description=description, **options)


def chip_dropdown(chips: Sequence[Chip], value: Chip, description: str = "chip", **options: object
                  ) -> widgets.Dropdown:
    """A Dropdown of Chip records by label whose ``value`` is the record."""
    return record_dropdown(chips, value, description, **options)


class Explorer:
    """Base of every explorer: the figure, the PNG, the summary, the controls' wiring and the blitting.

    Class attributes: ``figsize`` (inches), ``dpi``, ``margins`` (left, bottom, right, top as figure
    fractions, for ``Figure.subplots_adjust``).
    Instance attributes after ``__init__``: ``controls``, ``summary`` (HTML), ``image`` (PNG),
    ``figure``, ``widget`` (what a notebook displays).
    """

    figsize: tuple[float, float] = (5.6, 3.5)
    dpi: float = 80
    margins = (0.14, 0.15, 0.97, 0.9)

    def __init__(self, controls: Sequence[widgets.ValueWidget]) -> None:
        self.controls = tuple(controls)
        self.summary = widgets.HTML()
        self.image = widgets.Image(format="png")
        self._holding = False
        self._key: object = _UNSET
        with mpl.rc_context(STYLE):
            self.figure = Figure(figsize=self.figsize, dpi=self.dpi)
            self.figure.subplots_adjust(*self.margins)
            self._canvas = FigureCanvasAgg(self.figure)
            self._dynamic: tuple[Artist, ...] = tuple(self.setup())
        for artist in self._dynamic:
            artist.set_animated(True)
        for control in self.controls:
            control.observe(self.update, names="value")
        self.banner = widgets.HTML(SAVED_STATE_NOTE, layout=widgets.Layout(margin="0 0 6px 0"))
        self.update()
        self.widget = widgets.VBox([self.banner, _wrapping(self.arrange())])

    # --- what subclasses provide ------------------------------------------------------------

    def setup(self) -> Sequence[Artist]:
        """Add the axes and every artist to ``self.figure``; return the dynamic artists."""
        raise NotImplementedError

    def background_key(self) -> object:
        """What the background depends on (chip, dtype, model ...); it is redrawn only when this changes."""
        return ()

    def draw_background(self) -> None:
        """Set the static artists for the current background key (called before the full draw)."""

    def sync(self, owner: object) -> None:
        """Adjust dependent controls after ``owner`` changed (updates are held meanwhile)."""

    def refresh(self) -> str:
        """Move the dynamic artists for the current controls and return the summary HTML."""
        raise NotImplementedError

    def arrange(self) -> widgets.Widget:
        """The displayed layout: controls and summary beside the image (subclasses may rearrange)."""
        return widgets.HBox([widgets.VBox([*self.controls, self.summary]), self.image])

    # --- the machinery ----------------------------------------------------------------------

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Within this block, control changes do not trigger updates (for setting several at once)."""
        previous, self._holding = self._holding, True
        try:
            yield
        finally:
            self._holding = previous

    def update(self, change: dict | None = None) -> None:
        """Recompute and redraw what moved (called on every control change)."""
        if self._holding:
            return
        with self.holding():
            self.sync(None if change is None else change.get("owner"))
        with mpl.rc_context(STYLE):
            key = self.background_key()
            if key != self._key:
                self.draw_background()
                self._canvas.draw()
                self._background = self._canvas.copy_from_bbox(self.figure.bbox)
                self._key = key
            else:
                self._canvas.restore_region(self._background)
            summary = self.refresh()
            for artist in self._dynamic:
                if artist.get_visible():
                    artist.axes.draw_artist(artist)
        self.summary.value = summary
        self.image.value = png_bytes(self._canvas)
        if change is not None:  # a control moved: a kernel is running, so the figure is live
            self.banner.value = LIVE_NOTE

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        return self.widget._repr_mimebundle_(**kwargs)
