"""Fixtures of the serving tests."""

import pytest

import hwlib as hw


@pytest.fixture
def fixed_front_end(monkeypatch):
    """The front end's time per request fixed at its mean (``assumptions.FRONT_END_SPREAD``), for tests that follow a
    request's time by hand."""
    monkeypatch.setattr(hw.data.assumptions, "FRONT_END_SPREAD", "fixed")
