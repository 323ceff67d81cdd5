"""Fabrics, clusters and deployments: hwlib.data.vendor_systems and document 002's fabrics.

Ported from the 0.1 tests/test_fabrics.py (hwlib.fabrics became hwlib.data.vendor_systems and hwlib.collectives).
"""

import dataclasses
import re

import pytest

import hwlib as hw
from hwlib.data import doc002, vendor_fabrics, vendor_other_systems, vendor_systems
from hwlib.data.records import Fabric, Sourced
from hwlib.training.regimes import regime_fabric

PER_DIRECTION = {  # key: bytes/s per device per direction
    "nvlink3": 300e9,
    "nvlink4": 450e9,
    "nvlink5": 900e9,
    "ici-v5p": 600e9,
    "ib-hdr": 25e9,
    "ib-ndr": 50e9,
    "ib-xdr": 100e9,
    "roce-400": 50e9,
}


def test_per_direction_bandwidths():
    for key, value in PER_DIRECTION.items():
        assert hw.fabric(key).bytes_per_s == value
    assert hw.fabric("nvlink", source="doc002").bytes_per_s == 300e9
    assert hw.fabric("ib", source="doc002").bytes_per_s == 25e9


def test_document_002_values_are_the_layer_models_and_half_the_vendor_totals():
    a100 = hw.chip("A100-80GB", source="doc002")
    assert hw.fabric("nvlink", "doc002").bytes_per_s == regime_fabric(a100, "scale-up").bytes_per_s
    assert hw.fabric("ib", "doc002").bytes_per_s == regime_fabric(a100, "scale-out").bytes_per_s
    # document 002's "NVLink 300 GB/s" is the one-direction half of NVIDIA's 600 GB/s total
    assert hw.fabric("nvlink3").bytes_per_s == hw.fabric("nvlink", "doc002").bytes_per_s
    assert hw.fabric("nvlink3").bandwidth.value == 600e9 and hw.fabric("nvlink3").directions == 2
    # HDR's 200 Gb/s line rate per direction is document 002's 25 GB/s
    assert hw.fabric("hdr").bytes_per_s == hw.fabric("ib", "doc002").bytes_per_s


def test_totals_are_stored_once_in_the_chip_catalogue():
    assert hw.fabric("nvlink3").bandwidth is hw.chip("A100-80GB").interconnect
    assert hw.fabric("nvlink4").bandwidth is hw.chip("H100-SXM").interconnect
    assert hw.fabric("nvlink4-h800").bandwidth is hw.chip("H800").interconnect
    assert hw.fabric("nvlink5").bandwidth is hw.chip("B200").interconnect
    assert hw.fabric("ici-v5p").bandwidth is hw.chip("v5p").interconnect


def test_every_fabric_number_is_sourced_and_dated():
    for record in hw.fabrics():
        values = [record.bandwidth] + ([record.domain_size] if record.domain_size else [])
        for value in values:
            assert isinstance(value, Sourced)
            assert "2026-11-30" <= value.read_on <= "2026-12-06" and value.source and value.quoted
        assert record.bandwidth.unit == "B/s"
        if record.source == "vendor":
            assert re.search(r"https?://", record.bandwidth.source)
        assert str(record).startswith("Fabric(")


def test_domain_sizes():
    assert [hw.fabric(k).domain_chips for k in ("nvlink3", "nvlink4", "nvlink5")] == [8, 8, 8]
    assert hw.fabric("ici-v5p").domain_chips == 6144
    assert hw.fabric("ndr").domain_chips is None
    assert hw.fabric("nvlink", "doc002").domain_chips is None  # the document's unbounded NVLink


def test_lookup_by_alias_and_filters():
    assert hw.fabric("NDR") is hw.fabric("ib-ndr") is hw.fabric("InfiniBand NDR (400 Gb/s)")
    assert hw.fabric("NVLink 4") is hw.fabric("nvlink4")
    assert hw.fabric("nvlink", "doc002").label == "NVLink 300 GB/s [doc002]"
    assert {f.key for f in hw.fabrics("vendor", "scale-out")} == {
        "ib-hdr",
        "ib-ndr",
        "ib-xdr",
        "roce-400",
        "gaudi3-scale-out",
        "pollara-400",
    }
    # 0.2 keeps every fabric document 002 gives (one per GPU), not only the A100's two
    assert {f.key for f in hw.fabrics("doc002")} == {"nvlink-300", "nvlink-450", "nvlink-900", "ib-25", "ib-50"}
    assert hw.fabrics() == (*vendor_fabrics.FABRICS, *vendor_other_systems.FABRICS, *doc002.FABRICS)
    h100 = hw.chip("H100-SXM", source="doc002")
    assert [f.key for f in hw.fabrics(source="doc002", kind="scale-out", chip=h100)] == ["ib-50"]
    assert [f.key for f in hw.fabrics(source="doc002", kind="scale-up", chip=h100)] == ["nvlink-450"]
    assert {f.key for f in hw.fabrics(chip=hw.chip("v5p"))} == {"ici-v5p", "ib-hdr", "ib-ndr", "ib-xdr", "roce-400"}
    assert all(isinstance(f, Fabric) for f in hw.fabrics())


def test_clusters():
    hgx = hw.cluster("hgx-h100-ndr")
    assert hgx.chip is hw.chip("H100-SXM") and hgx.node_size == 8 and hgx.max_chips is None
    assert hgx.network is hw.fabric("ndr") and hgx.node_fabric is hw.fabric("nvlink4")
    doc = hw.cluster("doc002-nvlink")
    assert doc.chip is hw.chip("A100-80GB", source="doc002") and doc.node_size is None
    tpu = hw.cluster("tpu-v5p")
    assert tpu.network is None and tpu.max_chips == 6144
    assert {c.key for c in hw.clusters()} >= {"hgx-a100-hdr", "hgx-b200-ndr", "hgx-b200-xdr", "doc002-ib"}
    assert repr(hgx) == "Cluster('HGX H100 + NDR')"


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: hw.fabric("nvlink9"), KeyError, "unknown fabric 'nvlink9'"),
        (lambda: hw.fabric("nvlink4", source="doc002"), KeyError, "has no record from source 'doc002'"),
        (lambda: hw.fabric("nvlink6", source="doc002"), KeyError, r"Known: \['ib-25', 'ib-50', 'nvlink-300'"),
        (lambda: hw.fabric(400), TypeError, "name must be a fabric name string"),
        (lambda: hw.fabric("ndr", source="datasheet"), ValueError, "source must be one of"),
        (lambda: hw.fabrics(kind="scale-sideways"), ValueError, "kind must be one of"),
        (lambda: hw.fabrics(source="web"), ValueError, "source must be one of"),
        (lambda: hw.fabrics(chip="v5p"), TypeError, "chip must be a Chip record"),
        (lambda: hw.cluster("dgx-z100"), KeyError, "unknown cluster 'dgx-z100'"),
        (lambda: hw.cluster(None), TypeError, "key must be a cluster key string"),
        (
            lambda: Fabric("x", "x", "scale-up", "vendor", hw.fabric("ndr").bandwidth, 3),
            ValueError,
            "directions must be 1 or 2",
        ),
        (lambda: Fabric("x", "x", "mesh", "vendor", hw.fabric("ndr").bandwidth, 1), ValueError, "kind must be one of"),
        (lambda: hw.Cluster("x", "x", "A100", hw.fabric("nvlink3")), TypeError, "chip must be a Chip record"),
        (lambda: hw.Cluster("x", "x", hw.chip("A100-80GB"), 300e9), TypeError, "node_fabric must be a Fabric"),
        (
            lambda: hw.Cluster("x", "x", hw.chip("A100-80GB"), hw.fabric("nvlink3"), "ndr"),
            TypeError,
            "network must be a Fabric record or None",
        ),
    ],
)
def test_bad_input_names_the_problem(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_fabric_table():
    table = hw.viz.fabric_table()
    assert len(table) == len(hw.fabrics())
    row = table.loc["NVLink 3 (A100)"]
    assert row["per direction (GB/s)"] == 300 and row["quote is"] == "both directions summed"
    assert row["domain (chips)"] == 8 and row["ring-step latency (µs)"] == "0.6"
    assert table.loc["InfiniBand HDR (200 Gb/s)", "quote is"] == "per direction"
    assert table.loc["InfiniBand HDR (200 Gb/s)", "ring-step latency (µs)"] == "2.7"
    assert table.loc["IB HDR 25 GB/s [doc002]", "ring-step latency (µs)"] == ""
    assert table.loc["IB HDR 25 GB/s [doc002]", "per direction (GB/s)"] == 25
    with pytest.raises(TypeError, match="records must be a non-empty sequence of Fabric records"):
        hw.viz.fabric_table(["ndr"])


def test_deployments_are_validated_and_sourced():
    plan = hw.deployment(hw.chip("v5e"))
    assert plan.sizes == (1, 4, 8, 16, 32, 64, 128, 256) and plan.largest == 256
    assert plan.names[3] == "v5litepod-16" and plan.topologies[3] == "4x4"
    assert hw.deployment(hw.chip("H100")).sizes == (8,) and hw.deployment(hw.chip("H100")).kind == "node"
    assert hw.deployments() == vendor_systems.DEPLOYMENTS
    with pytest.raises(ValueError, match="sizes must ascend"):
        dataclasses.replace(plan, sizes=(4, 1, 8, 16, 32, 64, 128, 256))
    with pytest.raises(ValueError, match="kind must be one of"):
        dataclasses.replace(plan, kind="pod")
