"""The one machinery every explorer shares: draw the figure once, then move only what changed.

An explorer is a set of ipywidgets controls, one matplotlib figure on an Agg canvas and an HTML
summary. On every control change :meth:`Explorer.update` redraws the whole figure only when the
subclass's :meth:`~Explorer.background_key` (chip, dtype, model, ...) has changed and keeps a copy
of it; otherwise it restores that copy and draws only the dynamic (animated) artists on top. The
canvas is then encoded as a lightly compressed PNG into an ``ipywidgets.Image``, which keeps an
update well under 100 ms and lets a built page show the saved state.

Honest on a static page: the controls are built disabled, so the widget state a book build saves
(its kernel has no front end) shows them greyed out under a note that says the figure is saved and
that ``make lab`` runs it live. A front end attached to a live kernel (JupyterLab, Notebook, VS Code)
runs a small link between two traits of a hidden beacon widget as soon as it loads it; the change
reaches the kernel, which then enables the controls (:meth:`Explorer.go_live`). A static page runs
the link too but has no kernel to tell. Controls fit a phone-width screen (rows wrap, dropdowns are
as wide as their longest label and put their description above them there), and the MIME bundle
carries the figure as ``image/png`` too, which a PDF prints where it cannot show a widget.

A subclass declares its controls (as attributes, so tools can find them), then calls
``Explorer.__init__(self, controls)`` and implements :meth:`~Explorer.setup` (axes and artists;
returns the dynamic ones), :meth:`~Explorer.draw_background` (what stays fixed for one key),
:meth:`~Explorer.refresh` (move the dynamic artists, return the summary HTML) and, where a
control depends on another, :meth:`~Explorer.sync`. Used by every chapter's explorer.
"""

from __future__ import annotations

import base64
import contextlib
import io
import re
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
_NOTE_BOX = (
    "border-left: 3px solid #8a8a80; background: #f7f7f4; padding: 4px 8px; font-size: 0.92em; "
    "line-height: 1.45; max-width: 40em"
)
_NARROW_CSS = (
    "<style>@media (max-width: 560px) {"
    " .hw-explorer .widget-dropdown { flex-wrap: wrap; height: auto !important;"
    " width: calc(100% - 4px) !important; }"
    " .hw-explorer .widget-dropdown > .widget-label { width: 100% !important; max-width: 100% !important;"
    " height: auto; line-height: 1.5; text-align: left; }"
    " .hw-explorer .widget-dropdown > select { flex: 1 1 100%; max-width: 100%; }"
    " .hw-explorer .widget-hbox > .widget-vbox { flex: 1 1 100%; } }</style>"
)
"""On a phone-width screen a dropdown's description moves above it, so long option labels keep the full width."""
SAVED_STATE_NOTE = (
    f'<div class="hw-explorer-note" style="{_NOTE_BOX}"><b>Saved figure.</b> This is the state '
    "saved when the page was built: on a static page the controls do not recompute, so they are "
    "greyed out. To explore, run the chapter live in a kernel: <code>make lab</code>, from a clone "
    f"of the book's repository.</div>{_NARROW_CSS}"
)
"""What an explorer says until a live front end is attached (all a static page ever shows)."""
LIVE_NOTE = (
    f'<div class="hw-explorer-note" style="{_NOTE_BOX}"><b>Live.</b> Every change recomputes the figure '
    f"and the summary.</div>{_NARROW_CSS}"
)
"""What it says once a front end with a running kernel is attached (its controls are enabled then)."""
PRINT_DPI = 160
"""Resolution of the static figure in an explorer's ``image/png`` form (what the PDF edition prints)."""
_CHAR_PX, _DROPDOWN_PAD_PX, _DEFAULT_DESCRIPTION_PX, _DEFAULT_WIDTH_PX = 7.4, 36, 80, 300
"""A dropdown's room for its labels: ~7.4 px per character at the widgets' 13 px font, the arrow and padding,
and ipywidgets' default description and control widths."""
_FULL_WIDTH = "calc(100% - 4px)"
"""The widest a control may be: its container's width less its own 2 px margins."""


def _wrapping(widget: widgets.Widget) -> widgets.Widget:
    """``widget`` with every row of controls allowed to wrap onto the next line (narrow screens)."""
    if isinstance(widget, widgets.HBox):
        widget.layout.flex_flow = "row wrap"
    for child in getattr(widget, "children", ()):
        _wrapping(child)
    return widget


def _tree(widget: widgets.Widget) -> Iterator[widgets.Widget]:
    """``widget`` and every widget inside it, depth first."""
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _tree(child)


def _pixels(value: object, default: float) -> float:
    """A CSS length in px (``"330px"``) as a number; ``default`` when unset or in other units."""
    match = isinstance(value, str) and re.fullmatch(r"\s*([0-9.]+)px\s*", value)
    return float(match.group(1)) if match else default


def _own_layout(widget: widgets.Widget, **changes: str) -> None:
    """Give ``widget`` a Layout of its own (controls often share one) with ``changes`` applied."""
    traits = {
        name: getattr(widget.layout, name)
        for name in widget.layout.keys
        if not name.startswith("_") and getattr(widget.layout, name) is not None
    }
    widget.layout = widgets.Layout(**{**traits, **changes})


def fit_dropdown(dropdown: widgets.Dropdown) -> None:
    """Widen ``dropdown`` until its longest option label shows whole (its layout caps it at its container's
    width; on a phone-width screen ``_NARROW_CSS`` puts its description above it)."""
    description = _pixels(dropdown.style.description_width, _DEFAULT_DESCRIPTION_PX if dropdown.description else 0)
    longest = max((len(label) for label in dropdown._options_labels), default=0)
    needed = description + _CHAR_PX * longest + _DROPDOWN_PAD_PX
    dropdown.layout.width = f"{max(_pixels(dropdown.layout.width, _DEFAULT_WIDTH_PX), needed):.0f}px"


def _fit_to_screen(root: widgets.Widget) -> None:
    """Every control within its container's width, every dropdown wide enough for its labels."""
    for widget in _tree(root):
        if isinstance(widget, widgets.Dropdown):
            _own_layout(widget, max_width=_FULL_WIDTH)
            fit_dropdown(widget)
            widget.observe(lambda change: fit_dropdown(change["owner"]), names="_options_labels")  # new options
        elif isinstance(widget, widgets.Image):
            _own_layout(widget, max_width="100%", height="auto", margin="2px 0")
        elif isinstance(widget, widgets.Box) and widget.layout.max_width is None:
            widget.layout.max_width = "100%"
        elif isinstance(widget, (widgets.ValueWidget, widgets.HTML)) and widget.layout.max_width is None:
            widget.layout.max_width = _FULL_WIDTH


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


def offered_records(
    name: str, given: object, chosen: object, defaults: Sequence[object], preferred: object, kind: type, example: str
) -> tuple[tuple, object]:
    """A dropdown's records (``given``, else ``defaults``) and the one it shows (``chosen``, else ``preferred``
    where offered), each checked as ``records_of`` and ``choose`` check them."""
    records = tuple(defaults) if given is None else records_of(f"{name}s", given, kind)
    value = default_record(preferred, records) if chosen is None else chosen
    return records, choose(name, value, records, kind, example)


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


def record_dropdown(records: Sequence[object], value: object, description: str, **options: object) -> widgets.Dropdown:
    """A Dropdown over records (chips, models, clusters, recipes): labels shown, the record is the value."""
    return widgets.Dropdown(
        options=[(getattr(r, "label", getattr(r, "name", str(r))), r) for r in records],
        value=value,
        description=description,
        **options,
    )


def chip_dropdown(chips: Sequence[Chip], value: Chip, description: str = "chip", **options: object) -> widgets.Dropdown:
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
        self.live = False
        self.update()
        self.widget = widgets.VBox([self.banner, _wrapping(self.arrange())])
        self.widget.add_class("hw-explorer")
        _fit_to_screen(self.widget)
        # Honest on a static page: every control starts disabled, and so does the state saved when the book is
        # built (the build's kernel has no front end). A front end attached to a live kernel runs the link below
        # as soon as it loads it: it copies the beacon's value into its placeholder and sends that to the kernel,
        # whose observer then enables the controls (go_live). A static page runs the link too, but has no
        # kernel to tell, so its controls stay greyed out.
        self._inputs = [w for w in dict.fromkeys([*self.controls, *_tree(self.widget)]) if w.has_trait("disabled")]
        self._enabled = {id(w): w.disabled for w in self._inputs}
        for widget in self._inputs:
            widget.disabled = True
        self._beacon = widgets.Text(value="live", placeholder="")
        self._beacon.observe(lambda change: self.go_live(), names="placeholder")
        self._beacon_link = widgets.jsdlink((self._beacon, "value"), (self._beacon, "placeholder"))

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

    def go_live(self) -> None:
        """Enable the controls and say so: a front end with a running kernel is attached (or a caller says so)."""
        if self.live:
            return
        self.live = True
        for widget in self._inputs:
            widget.disabled = self._enabled[id(widget)]
        self.banner.value = LIVE_NOTE

    def print_png(self, dpi: float = PRINT_DPI) -> bytes:
        """The figure as the controls stand, as PNG bytes at ``dpi`` (what a printed edition shows)."""
        with mpl.rc_context(STYLE):
            for artist in self._dynamic:
                artist.set_animated(False)
            try:
                buffer = io.BytesIO()
                self.figure.savefig(buffer, format="png", dpi=dpi)
            finally:
                for artist in self._dynamic:
                    artist.set_animated(True)
        self._key = _UNSET  # the canvas was redrawn at another size: the next update draws it whole again
        return buffer.getvalue()

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        """The widget view, and beside it the figure as a PNG and a line of text for outputs that cannot show
        widgets (a PDF prints the PNG; the HTML book and JupyterLab prefer the widget view)."""
        bundle = dict(self.widget._repr_mimebundle_(**kwargs))
        bundle["image/png"] = base64.b64encode(self.print_png()).decode("ascii")
        bundle["text/plain"] = f"{type(self).__name__}: an interactive figure; run its chapter in a kernel to explore"
        return bundle
