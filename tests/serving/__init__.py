"""Tests of hwlib/serving/, one file per module."""
