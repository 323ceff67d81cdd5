"""Names a package loads on first use: ``hw.viz`` and ``hw.measure`` keep ``import hwlib`` light with it."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_names(
    package: str, names: Mapping[str, tuple[str, ...]]
) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for ``package``, where ``names`` maps each module to its names.

    A name imports its module when first read and is then kept in the package.
    """
    module_of = {name: module for module, module_names in names.items() for name in module_names}
    public = sorted(module_of)

    def __getattr__(name: str) -> object:
        if name not in module_of:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module_of[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return list(public)

    return public, __getattr__, __dir__
