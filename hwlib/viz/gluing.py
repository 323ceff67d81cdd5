"""Put computed values into a chapter's prose with MyST-NB's glue, never by hand.

Used by every chapter: ``hw.viz.glue(roof_ridge=ridge)`` and then ``{glue:text}`roof_ridge:.1f```
in the Markdown. The output is the one ``myst_nb.glue(name, value, display=False)`` makes
(a display message whose MIME types carry the prefix below and whose metadata names the
value, the "scrapbook" convention MyST-NB reads), written here so that a chapter does not
import MyST-NB and, with it, Sphinx: that import alone took over a second per chapter.

Every glued value is also kept in the kernel (``GLUED``), so that ``hw.viz.glued_text("roof_ridge", ".1f")``
gives the very text ``{glue:text}`roof_ridge:.1f``` pastes into the built page: `make lab` rewrites each
glue role of a chapter's JupyterLab copy into such an ``{eval}`` expression, which jupyterlab-myst
evaluates in the kernel when the cell is rendered.
"""

from __future__ import annotations

import ast
import numbers

import numpy as np

GLUE_MIME_PREFIX = "application/papermill.record/"
"""MIME prefix of a hidden glued value (``myst_nb.ext.glue.GLUE_PREFIX``)."""
GLUED: dict[str, str] = {}
"""The ``text/plain`` form of every value glued in this kernel, by name (the latest glue of a name wins)."""


def glue(**values: object) -> None:
    """Glue each keyword's value under its name, hidden where computed (numpy scalars as Python numbers)."""
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    for name, value in values.items():
        if isinstance(value, np.generic):
            value = value.item()
        if not isinstance(value, (numbers.Number, str)) or isinstance(value, bool):
            raise TypeError(f"{name} must be a number or a string to glue into prose, got {value!r}")
        bundle, metadata = format_display_data(value)
        metadata["scrapbook"] = {"name": name, "mime_prefix": GLUE_MIME_PREFIX}
        display({GLUE_MIME_PREFIX + mime: data for mime, data in bundle.items()}, raw=True, metadata=metadata)
        GLUED[name] = bundle["text/plain"]


class GluedText(str):
    """Text whose ``repr`` is itself, so a notebook shows it bare (no quotes), as a built page does."""

    def __repr__(self) -> str:
        return str(self)


def glued_text(name: str, fmt: str = "s", default: str | None = None) -> GluedText:
    """The text ``{glue:text}`name:fmt``` shows for the value glued as ``name`` in this kernel.

    It repeats MyST-NB's rule (``myst_nb.core.variables.format_plain_text``): the value is read
    back from its ``text/plain`` form, converted by the format's type letter (``d``: int, ``f``,
    ``g``, ``%`` ...: float, ``s``: str; an empty format: str) and formatted. A name not glued in
    this kernel yet gives ``default`` (what the book's last build showed, where `make lab` knows
    it), else a KeyError that says the value is computed further down.
    """
    if name not in GLUED:
        if default is not None:
            return GluedText(default)
        raise KeyError(
            f"nothing is glued as {name!r} in this kernel yet: it is computed further down; run the "
            "chapter's cells, then this one again"
        )
    return GluedText(format_glued_text(GLUED[name], fmt))


def format_glued_text(text: str, fmt: str = "s") -> str:
    """A glued value's ``text/plain`` form ``text`` as ``{glue:text}`name:fmt``` shows it (MyST-NB's rule)."""
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if fmt == "":
        return str(value)
    kind = fmt[-1]
    try:
        if kind == "s":
            value = str(value)
        elif kind in "bcdoxX":
            value = int(value)
        elif kind in "eEfFgGn%":
            value = float(value)
        return format(value, fmt)
    except (TypeError, ValueError) as error:
        raise ValueError(f"fmt {fmt!r} cannot format the glued value {text!r}: {error}") from None
