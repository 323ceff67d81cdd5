"""Every public name resolves: ``hw.__all__``, ``hw.viz.__all__`` and ``hw.measure.__all__`` list no stale name."""

import pytest

import hwlib as hw


@pytest.mark.parametrize("namespace", [hw, hw.viz, hw.measure], ids=lambda namespace: namespace.__name__)
def test_every_listed_name_resolves(namespace):
    missing = []
    for name in namespace.__all__:
        try:
            getattr(namespace, name)
        except Exception as error:  # noqa: BLE001 (report every name that fails)
            missing.append(f"{name}: {error!r}")
    assert not missing, "\n".join(missing)
    assert set(dir(namespace)) == set(namespace.__all__)


@pytest.mark.parametrize("package", ["hwlib", "hwlib.viz", "hwlib.measure"])
def test_star_import_gives_every_listed_name(package):
    namespace = {}
    exec(f"from {package} import *", namespace)  # the import a reader would type
    listed = __import__(package, fromlist=["__all__"]).__all__
    assert set(listed) <= set(namespace), set(listed) - set(namespace)


def test_an_unknown_name_raises_attribute_error_naming_the_package():
    with pytest.raises(AttributeError, match="'hwlib.viz' has no attribute 'plan_training'"):
        hw.viz.plan_training  # noqa: B018 (a stale name stays gone)
    with pytest.raises(AttributeError, match="'hwlib.measure' has no attribute 'chip_table'"):
        hw.measure.chip_table  # noqa: B018
