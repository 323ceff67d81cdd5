"""Put computed values into a chapter's prose with MyST-NB's glue, never by hand.

Used by every chapter: ``hw.glue(roof_ridge=ridge)`` and then ``{glue:text}`roof_ridge:.1f```
in the Markdown.
"""

from __future__ import annotations

import numbers

import numpy as np


def glue(**values: object) -> None:
    """Glue each keyword's value under its name, hidden where computed (numpy scalars as Python numbers)."""
    from myst_nb import glue as myst_glue

    for name, value in values.items():
        if isinstance(value, np.generic):
            value = value.item()
        if not isinstance(value, (numbers.Number, str)) or isinstance(value, bool):
            raise TypeError(f"{name} must be a number or a string to glue into prose, got {value!r}")
        myst_glue(name, value, display=False)
