"""The README says what exists: its layout table names every hwlib module, and the Hugging Face families that
``--config`` reads are the ones ``ModelShape.from_hf_config`` reads."""

import re
from pathlib import Path

from hwlib.data.records.hf_families import FAMILIES, MULTIMODAL

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _layout_row(path: str) -> str:
    return next(line for line in README.splitlines() if line.startswith(f"| `{path}` |"))


def test_the_layout_names_every_hwlib_module_and_no_other():
    row = _layout_row("hwlib/").split("|")[2]
    named = set(re.findall(r"`([a-z_0-9]+)/?`", row))
    modules = {path.stem for path in (ROOT / "hwlib").rglob("*.py") if path.stem not in ("__init__", "__main__")}
    packages = {path.parent.name for path in (ROOT / "hwlib").rglob("*.py")} - {"hwlib"}
    existing = modules | packages
    assert existing <= named, f"not in the README's layout: {sorted(existing - named)}"
    assert named <= existing, f"in the README's layout, not in hwlib: {sorted(named - existing)}"


def test_the_readme_names_the_model_types_that_config_reads():
    sentence = re.search(r"it reads\s+the `model_type`s (.*?)\.", README, re.S).group(1)
    assert re.findall(r"`([A-Za-z_0-9]+)`", sentence) == [*FAMILIES, *MULTIMODAL]
