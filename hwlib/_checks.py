"""Input validation shared by every public hwlib function.

Each check names the parameter, shows the bad value and says what is allowed, so a
reader who passes a string, a NaN or a negative size gets a clear message instead of
a silent NaN or a traceback from deep inside numpy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

Number = float | int | np.ndarray


def describe(value: object) -> str:
    """``repr(value)``, cut to 60 characters for error messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_SCALARS = (int, float, np.float64, np.float32, np.int64, np.int32)
"""Types checked as one number, without building an array."""


def as_real_array(
    name: str,
    value: object,
    *,
    minimum: float | None = None,
    strictly_above: bool = False,
    allow_inf: bool = False,
    integral: bool = False,
) -> np.ndarray:
    """Return ``value`` as a float64 array, or raise naming ``name``.

    ``minimum`` with ``strictly_above`` gives the allowed range (``> minimum`` or
    ``>= minimum``); ``integral`` demands whole numbers; NaN is never allowed and
    infinity only with ``allow_inf``.
    """
    if isinstance(value, (bool, np.bool_)) or value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a real number or an array of them, got {describe(value)}")
    if type(value) in _SCALARS:  # one number: the same checks without the array machinery
        number = float(value)
        if number != number:
            raise ValueError(f"{name} must not be NaN, got {describe(value)}")
        if not allow_inf and number in (math.inf, -math.inf):
            raise ValueError(f"{name} must be finite, got {describe(value)}")
        if minimum is not None and (number <= minimum if strictly_above else number < minimum):
            raise ValueError(f"{name} must be {'>' if strictly_above else '>='} {minimum:g}, got {describe(value)}")
        if integral and math.isfinite(number) and number != round(number):
            raise ValueError(f"{name} must be a whole number, got {describe(value)}")
        return np.float64(number)
    try:
        array = np.asarray(value)
    except Exception as error:  # ragged lists and other non-array input
        raise TypeError(f"{name} must be a real number or an array of them, got {describe(value)}") from error
    if array.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must be a real number or an array of them, got {describe(value)} (dtype {array.dtype})"
        )
    array = array.astype(np.float64, copy=False)
    if np.isnan(array).any():
        raise ValueError(f"{name} must not be NaN, got {describe(value)}")
    if not allow_inf and np.isinf(array).any():
        raise ValueError(f"{name} must be finite, got {describe(value)}")
    if minimum is not None:
        bad = array <= minimum if strictly_above else array < minimum
        if bad.any():
            relation = ">" if strictly_above else ">="
            raise ValueError(
                f"{name} must be {relation} {minimum:g}, got {describe(value)}"
                + (f" (first offending value {array[bad].flat[0]:g})" if array.ndim else "")
            )
    if integral and (np.isfinite(array) & (array != np.round(array))).any():
        raise ValueError(f"{name} must be a whole number, got {describe(value)}")
    return array


def positive(name: str, value: object, **options: bool) -> np.ndarray:
    """``as_real_array`` for quantities that must be > 0 (sizes, rates, counts)."""
    return as_real_array(name, value, minimum=0.0, strictly_above=True, **options)


def whole_count(name: str, value: object) -> int:
    """One whole number > 0 (a chip count: one sharding per call), not an array."""
    if np.ndim(value):
        raise TypeError(f"{name} must be one whole number of chips (one sharding per step), got {describe(value)}")
    return int(positive(name, value, integral=True))


def seed_value(name: str, value: object) -> int:
    """A random generator's seed: one whole number >= 0 (numpy's ``default_rng`` takes it), else a TypeError or
    ValueError naming ``name``."""
    if np.ndim(value) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be one whole number >= 0, got {describe(value)}")
    return int(non_negative(name, value, integral=True))


def non_negative(name: str, value: object, **options: bool) -> np.ndarray:
    """``as_real_array`` for quantities that must be >= 0."""
    return as_real_array(name, value, minimum=0.0, **options)


def fraction(name: str, value: object) -> np.ndarray:
    """A fraction in (0, 1]."""
    array = positive(name, value)
    if (array > 1).any():
        raise ValueError(f"{name} must be in (0, 1], got {describe(value)}")
    return array


def broadcast(**arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Broadcast validated arrays together, or raise naming each parameter's shape."""
    try:
        return tuple(np.broadcast_arrays(*arrays.values()))
    except ValueError as error:
        shapes = ", ".join(f"{name} {np.shape(a)}" for name, a in arrays.items())
        raise ValueError(f"array arguments must broadcast together, got shapes {shapes}") from error


def broadcast_shape(**arrays: np.ndarray) -> tuple[int, ...]:
    """The shape validated arrays broadcast to, or a ValueError naming each parameter's shape.

    Unlike ``broadcast`` it leaves the arrays as they are, so that an outer product of a
    column of d and a row of T is formed only where a formula needs it.
    """
    try:
        return np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError as error:
        shapes = ", ".join(f"{name} {np.shape(a)}" for name, a in arrays.items())
        raise ValueError(f"array arguments must broadcast together, got shapes {shapes}") from error


def scalar_or_array(result: np.ndarray) -> Number:
    """Give back a Python float for 0-d results and the array otherwise."""
    return float(result) if np.ndim(result) == 0 else result


def whole_or_array(counts: np.ndarray) -> int | np.ndarray:
    """Give back a Python int for 0-d counts and an int64 array otherwise."""
    counts = np.asarray(counts)
    return int(counts) if counts.ndim == 0 else counts.astype(np.int64)


def one_of(name: str, value: object, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed`` strings, else raise naming them."""
    allowed = tuple(allowed)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {allowed}, got {describe(value)}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value
