"""hwlib.measure.hlo: the collectives read from HLO text (literal snippets, no compilation), bad input, and one
real sharded program compiled on eight host devices in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import hwlib as hw

MODULE = """HloModule jit_f, is_scheduled=true, num_partitions=8
ENTRY %main (p0: bf16[128,512], p1: f32[256,128]) -> f32[256,128] {
  %param.0 = bf16[128,512]{1,0} parameter(0)
  %param.1 = f32[256,128]{1,0} parameter(1)
  %all-gather = bf16[256,512]{1,0} all-gather(%param.0), channel_id=1, replica_groups={{0,4},{1,5},{2,6},{3,7}}, \
dimensions={0}, use_global_device_ids=true
  %all-reduce = f32[256,128]{1,0} all-reduce(%param.1), channel_id=2, replica_groups=[2,4]<=[8], to_apply=%add
  %rs = f32[128,128]{1,0} reduce-scatter(%param.1), channel_id=3, replica_groups=mesh['a'=1,'X'=2,'Y'=4] {'X'}, \
dimensions={0}, to_apply=%add
  %a2a = (f32[64,1,128]{2,1,0}, f32[64,1,128]{2,1,0}) all-to-all(%s0, %s1), channel_id=4, \
replica_groups=mesh['a'=1,'Y'=2,'X'=4], device_ids=([2,4]T(1,0)) {'Y'}
  %everyone = f32[256,128]{1,0} all-reduce(f32[256,128]{1,0} %param.1), replica_groups={}, to_apply=%add
  ROOT %cp = f32[256,128]{1,0} collective-permute(%param.1), channel_id=5, source_target_pairs={{0,1},{1,0}}
  %s0 = f32[64,1,128]{2,1,0} slice(%param.1), slice={[0:64], [0:1], [0:128]}
  %s1 = f32[64,1,128]{2,1,0} slice(%param.1), slice={[64:128], [0:1], [0:128]}
}
"""

ASYNC = """
  %p = f32[128,512]{1,0} parameter(0)
  %q = bf16[64,64]{1,0} parameter(1)
  %ags = (f32[128,512]{1,0}, f32[256,512]{1,0}) all-gather-start(f32[128,512]{1,0} %p), channel_id=1, \
replica_groups={{0,1}}, dimensions={0}
  %agd = f32[256,512]{1,0} all-gather-done((f32[128,512]{1,0}, f32[256,512]{1,0}) %ags)
  %ars = f32[128,512]{1,0} all-reduce-start(f32[128,512]{1,0} %p), replica_groups={{0,1,2,3}}, to_apply=%add
  %ard = f32[128,512]{1,0} all-reduce-done(f32[128,512]{1,0} %ars)
  %cps = (bf16[64,64]{1,0}, bf16[64,64]{1,0}, u32[], u32[]) collective-permute-start(bf16[64,64]{1,0} %q), \
source_target_pairs={{0,1},{1,0}}
  %cpd = bf16[64,64]{1,0} collective-permute-done((bf16[64,64]{1,0}, bf16[64,64]{1,0}, u32[], u32[]) %cps)
  %rss = ((f32[128,512]{1,0}), f32[64,512]{1,0}) async-start(f32[128,512]{1,0} %p), calls=%wrapped
  %rs.1 = f32[64,512]{1,0} reduce-scatter(f32[128,512]{1,0} %p), replica_groups={{0,1}}, dimensions={0}
  %rsd = f32[64,512]{1,0} async-done(((f32[128,512]{1,0}), f32[64,512]{1,0}) %rss)
"""


def rows(text):
    return hw.measure.hlo_collectives(text).set_index("name")


def test_each_collective_kind_its_shapes_bytes_and_groups():
    table = rows(MODULE)
    assert list(table["kind"]) == [
        "all-gather", "all-reduce", "reduce-scatter", "all-to-all", "all-reduce", "collective-permute"
    ]  # fmt: skip
    gather = table.loc["all-gather"]
    assert (gather["dtype"], gather["operand_shape"], gather["result_shape"]) == (
        "bf16",
        "bf16[128,512]",
        "bf16[256,512]",
    )
    assert (gather["operand_bytes"], gather["result_bytes"], gather["n_bytes"]) == (
        128 * 512 * 2,
        256 * 512 * 2,
        256 * 512 * 2,
    )
    assert (gather["group_size"], gather["n_groups"]) == (2, 4)
    assert (table.loc["all-reduce", "group_size"], table.loc["all-reduce", "n_groups"]) == (4, 2)  # iota [2,4]<=[8]
    scatter = table.loc["rs"]
    assert (scatter["operand_bytes"], scatter["result_bytes"]) == (256 * 128 * 4, 128 * 128 * 4)
    assert scatter["n_bytes"] == scatter["operand_bytes"] and scatter["group_size"] == 2 and scatter["n_groups"] == 4
    everyone = table.loc["everyone"]  # replica_groups={}: every one of num_partitions=8 devices
    assert (everyone["group_size"], everyone["n_groups"], everyone["dtype"]) == (8, 1, "f32")
    permute = table.loc["cp"]
    assert permute["operand_bytes"] == permute["result_bytes"] == 256 * 128 * 4 and permute["group_size"] is pd_na()


def pd_na():
    import pandas as pd

    return pd.NA


def test_tuple_shaped_all_to_all_adds_its_parts():
    a2a = rows(MODULE).loc["a2a"]
    assert a2a["operand_shape"] == a2a["result_shape"] == "(f32[64,1,128], f32[64,1,128])"
    assert a2a["operand_bytes"] == a2a["result_bytes"] == 2 * 64 * 128 * 4
    assert (a2a["group_size"], a2a["n_groups"]) == (2, 4)  # the mesh axis 'Y' of size 2 in this snippet


def test_async_pairs_count_once_at_their_start():
    table = rows(ASYNC)
    assert sorted(table["kind"]) == ["all-gather", "all-reduce", "collective-permute", "reduce-scatter"]
    assert (table.loc["ags", "operand_bytes"], table.loc["ags", "result_bytes"]) == (128 * 512 * 4, 256 * 512 * 4)
    assert table.loc["ags", "result_shape"] == "f32[256,512]"
    assert table.loc["ars", "result_bytes"] == 128 * 512 * 4 and table.loc["ars", "group_size"] == 4
    assert table.loc["cps", "result_shape"] == "bf16[64,64]" and table.loc["cps", "result_bytes"] == 64 * 64 * 2
    assert table.loc["rs.1", "result_bytes"] == 64 * 512 * 4


def test_a_module_without_collectives_gives_an_empty_table():
    table = hw.measure.hlo_collectives("%p = f32[4]{0} parameter(0)\nROOT %n = f32[4]{0} negate(%p)")
    assert table.empty and list(table.columns) == list(hw.measure.hlo.COLUMNS)


@pytest.mark.parametrize(
    ("text", "error", "words"),
    [
        (b"HloModule m", TypeError, "hlo_text must be XLA's HLO text"),
        (None, TypeError, "hlo_text must be"),
        ("not HLO at all", ValueError, "holds no HLO instruction"),
        ("%a = f32[4]{0} all-gather(%missing), replica_groups={{0,1}}", ValueError, "'%missing' of a"),
        ("%p = f32[4]{0} parameter(0)\n%a = f32[8]{0} all-gather(%p), replica_groups=??", ValueError, "replica groups"),
        ("%p = q7[4]{0} parameter(0)\n%a = q7[8]{0} all-gather(%p), replica_groups={{0,1}}", ValueError, "'q7'"),
    ],
)
def test_bad_input_raises_clear_errors(text, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace("?", r"\?")):
        hw.measure.hlo_collectives(text)


def test_compiled_collectives_rejects_what_is_not_a_function():
    with pytest.raises(TypeError, match="fn must be a function"):
        hw.measure.compiled_collectives("matmul")


PROGRAM = textwrap.dedent(
    """
    import json
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import hwlib as hw

    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("X", "Y"))
    put = lambda x, *spec: jax.device_put(x, NamedSharding(mesh, P(*spec)))
    a, b = jnp.ones((256, 512)), jnp.ones((512, 128))
    gathered = hw.measure.compiled_collectives(
        jnp.matmul, put(a, None, "X"), put(b), out_shardings=NamedSharding(mesh, P()))
    reduced = hw.measure.compiled_collectives(
        jnp.matmul, put(a, None, "X"), put(b, "X", None), out_shardings=NamedSharding(mesh, P()))
    none = hw.measure.compiled_collectives(
        jnp.matmul, put(a, "X", None), put(b, None, "Y"), out_shardings=NamedSharding(mesh, P("X", "Y")))
    print(json.dumps({"devices": len(jax.devices()), "gathered": gathered.to_dict("records"),
                      "reduced": reduced.to_dict("records"), "none": len(none)}, default=int))
    """
)


def test_a_sharded_matmul_compiled_on_eight_host_devices():
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    result = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["devices"] == 8 and found["none"] == 0  # no contracting dimension sharded: no collective
    (gather,) = found["gathered"]  # A[m, k_X] with B whole: A is gathered over X (2 devices)
    assert (gather["kind"], gather["group_size"], gather["result_bytes"]) == ("all-gather", 2, 256 * 512 * 4)
    assert gather["operand_bytes"] == 256 * 512 * 4 / 2
    (reduce,) = found["reduced"]  # both contracting dimensions over X: partial sums, all-reduced
    assert (reduce["kind"], reduce["group_size"], reduce["n_bytes"]) == ("all-reduce", 2, 256 * 128 * 4)
