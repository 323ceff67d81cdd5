"""Tests of hwlib/training/, one file per module."""
