"""hwlib._checks: the validation every public function uses."""

import numpy as np
import pytest

from hwlib import _checks


def test_as_real_array_accepts_numbers_and_arrays():
    assert _checks.as_real_array("x", 3).dtype == np.float64
    np.testing.assert_array_equal(_checks.positive("x", [1, 2.5]), [1.0, 2.5])


@pytest.mark.parametrize("value", [None, "3", b"3", True, np.bool_(False), [1, "a"], 1 + 2j, {"a": 1}])
def test_non_numbers_are_type_errors(value):
    with pytest.raises(TypeError, match="x must be a real number"):
        _checks.as_real_array("x", value)


def test_ranges_and_special_values():
    with pytest.raises(ValueError, match="x must be > 0"):
        _checks.positive("x", [1.0, 0.0])
    with pytest.raises(ValueError, match="first offending value -1"):
        _checks.non_negative("x", [1.0, -1.0])
    with pytest.raises(ValueError, match="must be finite"):
        _checks.positive("x", np.inf)
    assert _checks.positive("x", np.inf, allow_inf=True) == np.inf
    with pytest.raises(ValueError, match="whole number"):
        _checks.positive("x", 2.5, integral=True)
    with pytest.raises(ValueError, match=r"in \(0, 1\]"):
        _checks.fraction("x", 1.5)


def test_broadcast_names_shapes():
    with pytest.raises(ValueError, match=r"a \(2,\), b \(3,\)"):
        _checks.broadcast(a=np.ones(2), b=np.ones(3))


def test_scalar_or_array():
    assert isinstance(_checks.scalar_or_array(np.asarray(2.0)), float)
    assert isinstance(_checks.scalar_or_array(np.ones(2)), np.ndarray)
