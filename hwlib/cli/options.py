"""The values ``hwlib``'s options take, each checked as argparse reads it, and the model an option names."""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import hwlib as hw
from hwlib.training.mesh import MESH_AXES


def _real(text: str, ok: Callable[[float], bool], what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and ok(value)):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


def count(text: str) -> int:
    """A whole number >= 1; '1,024', '1_024' and '1e6' are accepted."""
    return int(
        _real(
            text.replace(",", "").replace("_", ""),
            lambda value: value.is_integer() and value >= 1,
            "a whole number >= 1",
        )
    )


def milliseconds(text: str) -> float:
    """A duration in ms, > 0."""
    return _real(text, lambda value: value > 0, "a number of milliseconds > 0")


def whole(text: str) -> int:
    """A whole number >= 0."""
    return int(
        _real(text.replace(",", "").replace("_", ""), lambda v: v.is_integer() and v >= 0, "a whole number >= 0")
    )


def share(text: str) -> float:
    """A share in [0, 1]."""
    return _real(text, lambda value: 0 <= value <= 1, "a share in [0, 1], e.g. 0.7")


def per_second(text: str) -> float:
    """A rate per second, > 0 ('inf': all at once)."""
    return _real(text, lambda value: value > 0, "a rate per second > 0, or inf") if text != "inf" else math.inf


def fraction(text: str) -> float:
    """A share in (0, 1]."""
    return _real(text, lambda value: 0 < value <= 1, "a fraction in (0, 1], e.g. 0.8")


def precision(text: str) -> str:
    """A key of ``hw.PRECISIONS``, matched ignoring case, spaces and punctuation ('int8-weights')."""

    def squash(name: str) -> str:
        return re.sub(r"[^a-z0-9]", "", name.lower())

    for key in hw.PRECISIONS:
        if squash(key) == squash(text):
            return key
    raise argparse.ArgumentTypeError(f"unknown precision {text!r}; one of {', '.join(map(repr, hw.PRECISIONS))}")


def mesh(text: str) -> dict[str, int]:
    """'dp=8,tp=4' -> {'dp': 8, 'tp': 4}; axes are MESH_AXES, sizes whole numbers >= 1."""
    sizes = {}
    for item in filter(None, text.replace(" ", "").split(",")):
        axis, _, size = item.partition("=")
        if axis not in MESH_AXES or not size:
            raise argparse.ArgumentTypeError(f"must be axis=size pairs over {', '.join(MESH_AXES)}, got {text!r}")
        if axis in sizes:
            raise argparse.ArgumentTypeError(f"names {axis} twice in {text!r}: give each axis once")
        sizes[axis] = count(size)
    if not sizes:
        raise argparse.ArgumentTypeError(f"must name at least one axis, e.g. dp=8,tp=4, got {text!r}")
    return sizes


EFFICIENCY_NAMES = tuple(name for name in hw.Efficiency.__dataclass_fields__ if name != "quantization")


def efficiency(text: str) -> dict[str, object]:
    """'matmul=0.6,hbm=0.8' -> {'matmul': 0.6, 'hbm': 0.8}: ``hw.Efficiency`` fields, numbers (quantization: on or
    off), each checked by ``hw.Efficiency`` itself."""
    values: dict[str, object] = {}
    for item in filter(None, text.replace(" ", "").split(",")):
        name, _, value = item.partition("=")
        if name in values:
            raise argparse.ArgumentTypeError(f"names {name} twice in {text!r}: give each once")
        if name == "quantization" and value in ("on", "off"):
            values[name] = value == "on"
            continue
        if name not in EFFICIENCY_NAMES or not value:
            allowed = ", ".join((*EFFICIENCY_NAMES, "quantization=on|off"))
            raise argparse.ArgumentTypeError(f"must be name=value pairs over {allowed}, got {text!r}")
        values[name] = _real(value, lambda _: True, "a number")
    if not values:
        raise argparse.ArgumentTypeError(f"must name at least one efficiency, e.g. matmul=0.6, got {text!r}")
    try:
        hw.Efficiency(**values)
    except (TypeError, ValueError) as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return values


def load_efficiency(args: argparse.Namespace) -> hw.Efficiency | None:
    """The ``hw.Efficiency`` of ``--efficiency`` (None: the sourced records and the calibrated fit)."""
    return None if args.efficiency is None else hw.Efficiency(**args.efficiency)


def config_file(path: Path) -> tuple[Path, str]:
    """The config.json that ``--config`` names, and a key for its model: the file itself; a folder that holds one
    (a downloaded model, a snapshot of the Hugging Face cache); or a model's folder in that cache
    (``models--org--name``), whose snapshot ``refs/main`` names (else its newest). Read from disk only."""
    if path.is_dir() and path.name.startswith("models--"):
        snapshots = path / "snapshots"
        ref = path / "refs" / "main"
        named = snapshots / ref.read_text(encoding="utf-8").strip() if ref.is_file() else None
        found = (
            sorted(snapshots.glob("*/config.json"), key=lambda file: file.stat().st_mtime) if snapshots.is_dir() else []
        )
        chosen = named / "config.json" if named is not None and (named / "config.json").is_file() else None
        if chosen is None and not found:
            raise ValueError(f"--config {path}: no snapshot with a config.json in this Hugging Face cache folder")
        return chosen or found[-1], path.name.split("--")[-1].lower()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ValueError(f"--config {path}: a folder must hold a config.json")
        key = path.parent.parent.name.split("--")[-1] if path.parent.name == "snapshots" else path.name
        return path / "config.json", key.lower()
    return path, path.stem


def load_model(args: argparse.Namespace) -> hw.ModelShape:
    """The model of ``--model`` (``hw.model``) or of ``--config`` (a Hugging Face config.json, or a folder holding
    one: ``config_file``)."""
    if args.config is None:
        return hw.model(args.model)
    path, key = config_file(Path(args.config))
    try:
        with path.open(encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError) as error:  # no such file, or not JSON
        raise ValueError(f"--config {args.config}: {getattr(error, 'strerror', None) or error}") from None
    return hw.ModelShape.from_hf_config(config, key=key)
