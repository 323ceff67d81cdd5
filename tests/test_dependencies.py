"""requirements.lock pins every package requirements.txt asks for, at a version requirements.txt allows.

`make book` installs the lock; `make lock` writes it from requirements.txt. A requirement added or narrowed in
requirements.txt without `make lock` fails here.
"""

from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _requirements() -> list[Requirement]:
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [Requirement(line) for line in (line.split("#")[0].strip() for line in lines) if line and line[0] != "-"]


def _pins() -> dict[str, list[tuple[str, object]]]:
    """Each locked package's (version, marker) pins: a universal lock pins some twice, per Python version."""
    pins: dict[str, list[tuple[str, object]]] = {}
    for line in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith((" ", "#", "-")):
            requirement = Requirement(line)
            (version,) = [spec.version for spec in requirement.specifier if spec.operator == "=="]
            pins.setdefault(canonicalize_name(requirement.name), []).append((version, requirement.marker))
    return pins


def test_the_lock_installs_hwlib_itself_as_an_editable_package():
    assert "\n-e .\n" in (ROOT / "requirements.lock").read_text(encoding="utf-8")


@pytest.mark.parametrize("requirement", _requirements(), ids=str)
def test_the_lock_pins_each_requirement_at_an_allowed_version(requirement):
    environment = default_environment()
    pins = [
        (version, marker)
        for version, marker in _pins().get(canonicalize_name(requirement.name), [])
        if marker is None or marker.evaluate(environment)
    ]
    assert len(pins) == 1, f"requirements.lock pins {requirement.name} {len(pins)} times here: run `make lock`"
    assert requirement.specifier.contains(pins[0][0], prereleases=True), (
        f"requirements.lock pins {requirement.name}=={pins[0][0]}, outside {requirement}: run `make lock`"
    )
