"""Put computed values into a chapter's prose with MyST-NB's glue, never by hand.

Used by every chapter: ``hw.glue(roof_ridge=ridge)`` and then ``{glue:text}`roof_ridge:.1f```
in the Markdown. The output is the one ``myst_nb.glue(name, value, display=False)`` makes
(a display message whose MIME types carry the prefix below and whose metadata names the
value, the "scrapbook" convention MyST-NB reads), written here so that a chapter does not
import MyST-NB and, with it, Sphinx: that import alone took over a second per chapter.
"""

from __future__ import annotations

import numbers

import numpy as np

GLUE_MIME_PREFIX = "application/papermill.record/"
"""MIME prefix of a hidden glued value (``myst_nb.ext.glue.GLUE_PREFIX``)."""


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
