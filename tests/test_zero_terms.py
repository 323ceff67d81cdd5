"""Every term of ``hwlib.training.zero`` pinned by hand: which parts each sharding and each ZeRO stage splits, by
how much, the parallel degrees of ``chip_bytes``, the closed form of the fewest chips and its boundaries, the
reasons, the defaults and the errors for bad input.

The expected values are written out from the module's docstrings (Rajbhandari et al., "ZeRO", SC 2020, Sec. 5):
a chip holds A + S / N bytes (A its unsplit parts and activations, S the split parts) and the fewest chips is
ceil(S / (u M - A)) where u M > A. The model is a small Mixtral-shaped config (so an expert term exists); the
recipe is one with 1, 2, 4 and 8 bytes per parameter for weights, gradients, master copy and optimizer state, so
that every subset of parts sums to a different number and a swapped or dropped part always shows. The per-layer
activations come from ``hw.activation_bytes`` (pinned in the memory tests); everything ``zero.py`` does with them
is written out here.
"""

import dataclasses

import pytest

import hwlib as hw
from hwlib.data.records import TrainingRecipe
from hwlib.training import zero
from hwlib.training.step import step_memory
from hwlib.training.zero import (
    SHARDINGS,
    ZERO_SHARDED,
    ZERO_STAGES,
    TrainingMemory,
    chip_bytes,
    training_memory,
    zero_stage,
)

TINY = {
    "model_type": "mixtral",
    "hidden_size": 64,
    "num_hidden_layers": 6,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "intermediate_size": 96,
    "vocab_size": 100,
    "num_local_experts": 4,
    "num_experts_per_tok": 2,
}
MODEL = hw.ModelShape.from_hf_config(TINY, key="tiny-mixtral")
P = MODEL.params()
E = MODEL.param_breakdown()["experts"]
L, V = 6, 100  # six layers: no other count of the shape is 6, so n_layers cannot be confused
POW2 = TrainingRecipe(
    key="pow2",
    label="1 + 2 + 4 + 8",
    weights=1,
    gradients=2,
    master=4,
    optimizer=8,
    parts={"weights": "w", "gradients": "g", "master": "m", "optimizer": "o"},
    source="test",
)
S, B = 10, 3  # seq_len and sequences of the micro-batch


def per_layer(seq_len=S, batch=B, tp=1, sp=False, recompute="none", flash=True, model=MODEL):
    return hw.activation_bytes(
        seq_len, batch, model, tensor_parallel=tp, sequence_parallel=sp, recompute=recompute, flash_attention=flash
    )


def logits(seq_len=S, batch=B, vocab=V):
    # logits_bytes: s b V x 4 bytes (fp32), the logits and their gradient: 2 x 4 x s x b x V
    return 2 * 4 * seq_len * batch * vocab


def chip(hbm):
    return hw.custom_chip("test chip", peak_flops_per_s=1e15, hbm_bytes_per_s=1e12, hbm_bytes=hbm)


# --- the tables ------------------------------------------------------------------------------------------------


def test_the_tables_of_what_each_sharding_and_stage_splits():
    # module docstring: replicated splits nothing; zero-1 the master copy and optimizer; zero-2 the gradients too;
    # zero-3 / fsdp the weights too
    assert SHARDINGS == {
        "replicated": (),
        "zero-1": ("master", "optimizer"),
        "zero-2": ("master", "optimizer", "gradients"),
        "zero-3": ("master", "optimizer", "gradients", "weights"),
        "fsdp": ("master", "optimizer", "gradients", "weights"),
    }
    assert list(SHARDINGS) == ["replicated", "zero-1", "zero-2", "zero-3", "fsdp"]
    # ZERO_STAGES docstring: 0 keeps the state whole, 1 splits master and optimizer, 2 the gradients too
    assert ZERO_STAGES == (0, 1, 2)
    assert ZERO_SHARDED == {0: (), 1: ("master", "optimizer"), 2: ("master", "optimizer", "gradients")}


def test_the_model_here_is_the_one_the_arithmetic_assumes():
    assert (MODEL.n_layers, MODEL.vocab, MODEL.d_model) == (L, V, 64)
    assert L not in (MODEL.n_heads, MODEL.n_kv_heads, MODEL.head_dim, MODEL.n_experts, MODEL.experts_per_token)
    assert 0 < E < P and P == 518976 and E == 442368  # 6 layers x 4 experts x 3 x 64 x 96 = 442,368


# --- chip_bytes --------------------------------------------------------------------------------------------------


def test_chip_bytes_unsharded_is_bytes_per_param_times_params_and_one_chips_activations():
    parts = chip_bytes(MODEL, POW2, S, B)
    # training_state_breakdown: params x bytes per parameter of each part; activations: per layer x n_layers;
    # logits: 2 x 4 x s x b x V
    assert parts == {
        "weights": 1 * P,
        "gradients": 2 * P,
        "master": 4 * P,
        "optimizer": 8 * P,
        "activations": per_layer() * L,
        "logits": 2 * 4 * 10 * 3 * 100,
    }
    assert list(parts) == ["weights", "gradients", "master", "optimizer", "activations", "logits"]
    assert parts["logits"] == 24000
    explicit = chip_bytes(
        MODEL,
        POW2,
        S,
        B,
        sharded=(),
        shards=1,
        tp=1,
        pp=1,
        cp=1,
        ep=1,
        in_flight=1,
        recompute="none",
        flash_attention=True,
    )
    assert explicit == parts  # the defaults


@pytest.mark.parametrize("dp", [1, 2, 4, 5])
@pytest.mark.parametrize(
    ("stage", "per_param"),
    [
        # zero_mixed_adam: 2 (bf16 weights) + 2 (bf16 gradients) + 4 (fp32 master) + 8 (fp32 Adam m and v), and
        # bytes per parameter per chip under each ZeRO stage over dp ranks (ZeRO Sec. 5, Figure 1)
        (0, lambda dp: (2, 2, 4, 8)),
        (1, lambda dp: (2, 2, 4 / dp, 8 / dp)),
        (2, lambda dp: (2, 2 / dp, 4 / dp, 8 / dp)),
    ],
)
def test_each_zero_stage_divides_its_parts_by_the_dp_degree(stage, per_param, dp):
    parts = chip_bytes(MODEL, "zero_mixed_adam", S, B, sharded=ZERO_SHARDED[stage], shards=dp)
    weights, gradients, master, optimizer = per_param(dp)
    assert parts["weights"] == pytest.approx(weights * P, rel=1e-15)
    assert parts["gradients"] == pytest.approx(gradients * P, rel=1e-15)
    assert parts["master"] == pytest.approx(master * P, rel=1e-15)
    assert parts["optimizer"] == pytest.approx(optimizer * P, rel=1e-15)
    assert parts["activations"] == per_layer() * L  # never split by ZeRO
    assert parts["logits"] == 24000


@pytest.mark.parametrize("dp", [1, 3, 8])
@pytest.mark.parametrize(
    ("sharding", "per_param"),
    [
        ("replicated", lambda n: 1 + 2 + 4 + 8),
        ("zero-1", lambda n: 1 + 2 + (4 + 8) / n),
        ("zero-2", lambda n: 1 + (2 + 4 + 8) / n),
        ("zero-3", lambda n: (1 + 2 + 4 + 8) / n),
        ("fsdp", lambda n: (1 + 2 + 4 + 8) / n),
    ],
)
def test_each_sharding_holds_a_plus_s_over_n(sharding, per_param, dp):
    # a chip holds A + S / N: A its unsplit state and activations, S the split state
    memory = training_memory(MODEL, POW2, chip(2**40), S, B, sharding=sharding, n_chips=dp, usable_fraction=1.0)
    state = sum(memory.parts[name] for name in ("weights", "gradients", "master", "optimizer"))
    assert state == pytest.approx(per_param(dp) * P, rel=1e-15)
    assert memory.per_chip_bytes == pytest.approx(per_param(dp) * P + per_layer() * L + 24000, rel=1e-15)


def test_the_dp_ranks_of_a_step_divide_exactly_what_each_zero_stage_splits():
    cluster, dp = hw.cluster("hgx-h100-ndr"), 4
    whole, _ = step_memory(MODEL, cluster, hw.Mesh(dp=dp), 4 * 64, 64, zero=0)
    # zero_mixed_adam: 2 + 2 + 4 + 8 bytes per parameter, the step's default recipe
    assert (whole["weights"], whole["gradients"], whole["master"], whole["optimizer"]) == (2 * P, 2 * P, 4 * P, 8 * P)
    for stage in (1, 2):
        parts, _ = step_memory(MODEL, cluster, hw.Mesh(dp=dp), 4 * 64, 64, zero=stage)
        for name, value in whole.items():
            split = name in ("master", "optimizer") or (stage == 2 and name == "gradients")
            assert parts[name] == (value / dp if split else value), (stage, name)


def test_chip_bytes_parallel_degrees_each_divide_their_own_term():
    tp, pp, cp, ep, in_flight, shards = 2, 5, 3, 4, 5, 3
    parts = chip_bytes(
        MODEL,
        POW2,
        S,
        B,
        sharded=("weights", "optimizer"),
        shards=shards,
        tp=tp,
        pp=pp,
        cp=cp,
        ep=ep,
        in_flight=in_flight,
    )
    # local parameters: (params - experts + experts / ep) / (tp x pp)
    local = (P - E + E / 4) / (2 * 5)
    assert local == (518976 - 442368 + 110592) / 10 == 18720
    assert parts["weights"] == 1 * local / 3  # sharded over the 3 data-parallel ranks
    assert parts["gradients"] == 2 * local  # not sharded
    assert parts["master"] == 4 * local
    assert parts["optimizer"] == 8 * local / 3
    # activations: the stage's layers (n_layers / pp) for in_flight micro-batches of seq_len // cp tokens, tensor
    # and sequence parallel over tp > 1
    assert S // cp == 3
    assert parts["activations"] == per_layer(seq_len=3, tp=2, sp=True) * 6 / 5 * 5  # 1.2 layers a stage
    # logits of seq_len // cp tokens, split over tp: 2 x 4 x 3 x 3 x 100 / 2
    assert parts["logits"] == 2 * 4 * 3 * 3 * 100 / 2 == 3600


def test_chip_bytes_uses_sequence_parallelism_exactly_where_tp_is_above_one():
    assert per_layer(tp=2, sp=True) != per_layer(tp=2, sp=False)  # so the flag shows
    assert chip_bytes(MODEL, POW2, S, B, tp=2)["activations"] == per_layer(tp=2, sp=True) * L
    assert chip_bytes(MODEL, POW2, S, B, tp=1)["activations"] == per_layer(tp=1, sp=False) * L
    assert chip_bytes(MODEL, POW2, S, B, tp=2)["logits"] == 24000 / 2


@pytest.mark.parametrize("ep", [1, 2, 8])
def test_only_the_experts_divide_by_ep(ep):
    parts = chip_bytes(MODEL, POW2, S, B, ep=ep)
    assert parts["weights"] == (P - E) + E / ep
    assert parts["optimizer"] == 8 * ((P - E) + E / ep)


@pytest.mark.parametrize(("tp", "pp"), [(1, 2), (2, 1), (4, 2)])
def test_the_state_divides_by_tp_times_pp(tp, pp):
    parts = chip_bytes(MODEL, POW2, S, B, tp=tp, pp=pp)
    assert parts["weights"] == P / (tp * pp)
    assert parts["master"] == 4 * P / (tp * pp)
    assert parts["activations"] == per_layer(tp=tp, sp=tp > 1) * L / pp


def test_a_dense_model_has_no_expert_term():
    llama = hw.model("llama-3-8b")
    assert "experts" not in llama.param_breakdown() or llama.param_breakdown()["experts"] == 0
    assert chip_bytes(llama, POW2, S, 1, ep=4)["weights"] == llama.params()


@pytest.mark.parametrize(("recompute", "flash"), [("none", False), ("selective", False), ("full", True)])
def test_recompute_and_flash_attention_reach_the_activations(recompute, flash):
    assert per_layer(recompute="none", flash=False) != per_layer(recompute="none", flash=True)
    assert per_layer(recompute="full") != per_layer(recompute="none")
    parts = chip_bytes(MODEL, POW2, S, B, recompute=recompute, flash_attention=flash)
    kept = per_layer(recompute=recompute, flash=flash)
    working = per_layer(recompute="none", flash=flash) - kept  # the layer in its backward holds all of its own
    assert (working > 0) == (recompute != "none")
    assert parts["activations"] == kept * L + working
    memory = training_memory(MODEL, POW2, chip(2**40), S, B, recompute=recompute, flash_attention=flash)
    assert memory.parts["activations"] == kept * L + working


def test_in_flight_multiplies_the_activations_only():
    one, three = chip_bytes(MODEL, POW2, S, B), chip_bytes(MODEL, POW2, S, B, in_flight=3)
    assert three["activations"] == 3 * one["activations"]
    assert {k: v for k, v in three.items() if k != "activations"} == {
        k: v for k, v in one.items() if k != "activations"
    }


# --- training_memory: the fewest chips and its boundaries --------------------------------------------------------

A = per_layer() * L + 24000  # activations and logits of one chip's micro-batch


def fit(sharding, hbm, model=MODEL, **options):
    return training_memory(model, POW2, chip(hbm), S, B, sharding=sharding, usable_fraction=1.0, **options)


def test_zero_1_fewest_chips_is_ceil_split_over_room_minus_whole():
    # zero-1: S = (4 + 8) P split, A = (1 + 2) P + activations + logits whole; H = 7P + A gives u M - A = 4P
    hbm = 7 * P + A
    memory = fit("zero-1", hbm)
    assert memory.n_chips == 3  # ceil(12 P / 4 P), exactly, with no rounding up of a whole ratio
    assert memory.usable_bytes == hbm
    assert memory.reason == f"zero-1 splits {12 * P / 2**30:,.1f} GiB"
    assert memory.parts == {
        "weights": 1 * P,
        "gradients": 2 * P,
        "master": 4 * P / 3,
        "optimizer": 8 * P / 3,
        "activations": per_layer() * L,
        "logits": 24000,
    }
    assert memory.per_chip_bytes == pytest.approx(hbm, rel=1e-15)  # fills the chip exactly
    assert memory.total_bytes == sum(memory.parts.values()) == memory.per_chip_bytes
    assert fit("zero-1", hbm - 1).n_chips == 4  # a byte less: 12P / (4P - 1) > 3
    assert fit("zero-1", hbm + 1).n_chips == 3
    assert fit("zero-1", 3 * P + A + 12 * P).n_chips == 1  # 12 P / 12 P
    assert fit("zero-1", 3 * P + A + 6 * P).n_chips == 2


@pytest.mark.parametrize(
    ("sharding", "whole_per_param", "split_per_param", "room_per_param", "fewest"),
    [
        ("zero-2", 1, 2 + 4 + 8, 7, 2),  # 14 P / 7 P
        ("zero-3", 0, 1 + 2 + 4 + 8, 3, 5),  # 15 P / 3 P
        ("fsdp", 0, 1 + 2 + 4 + 8, 5, 3),  # 15 P / 5 P
        ("zero-1", 1 + 2, 4 + 8, 2, 6),  # 12 P / 2 P
    ],
)
def test_fewest_chips_of_each_sharding(sharding, whole_per_param, split_per_param, room_per_param, fewest):
    memory = fit(sharding, whole_per_param * P + A + room_per_param * P)
    assert memory.n_chips == fewest == split_per_param // room_per_param
    assert memory.per_chip_bytes == pytest.approx(whole_per_param * P + A + split_per_param * P / fewest, rel=1e-15)
    assert memory.reason == f"{sharding} splits {split_per_param * P / 2**30:,.1f} GiB"


def test_replicated_needs_one_chip_or_none():
    # replicated: S = 0, every chip holds (1 + 2 + 4 + 8) P + A
    whole = 15 * P + A
    one = fit("replicated", whole + 1)
    assert one.n_chips == 1 and one.reason == "replicated: every chip holds everything, so one chip must"
    assert one.per_chip_bytes == whole
    exact = fit("replicated", whole)  # activations and state exactly fill it: '>=' says no
    assert exact.n_chips is None and "tensor, sequence or context parallelism" in exact.reason
    state = fit("replicated", 15 * P)  # the state alone exactly fills it
    assert state.n_chips is None and state.reason.endswith("shard more of it")
    assert fit("replicated", whole + 1, n_chips=4).per_chip_bytes == whole  # n_chips splits nothing


def test_the_two_ways_no_number_of_chips_holds_it_and_their_boundaries():
    unsplit = 3 * P  # zero-1 leaves weights (1) and gradients (2) whole
    at = fit("zero-1", unsplit)
    assert at.n_chips is None and at.reason.endswith("no number of chips holds it; shard more of it")
    above = fit("zero-1", unsplit + 1)  # the state fits, its activations do not
    assert above.n_chips is None and above.reason.endswith(
        "no number of chips holds it under zero-1; tensor, sequence or context parallelism must split the activations"
    )
    edge = fit("zero-1", unsplit + A)  # activations and unsplit state exactly the room
    assert edge.n_chips is None and "tensor, sequence or context parallelism" in edge.reason
    past = fit("zero-1", unsplit + A + 1)  # one byte of room: S / 1 chips
    assert past.n_chips == 12 * P
    # where no number does, the parts are those of one chip (or of n_chips where given)
    assert at.parts == chip_bytes(MODEL, POW2, S, B)
    assert fit("zero-1", unsplit, n_chips=4).parts["master"] == 4 * P / 4
    # zero-3 leaves no state whole: never 'shard more', only the activations can overflow
    full = fit("zero-3", A)
    assert full.n_chips is None and "tensor, sequence or context parallelism" in full.reason
    assert fit("zero-3", A + 15 * P).n_chips == 1


def test_the_reasons_in_full():
    llama, gib = hw.model("llama-3-8b"), 2**30
    p = llama.params()
    a = per_layer(batch=1, model=llama) * llama.n_layers + 2 * 4 * S * 1 * llama.vocab
    memory = training_memory(llama, POW2, chip(3 * p), S, 1, sharding="zero-1", usable_fraction=1.0)
    assert memory.reason == (
        f"the state zero-1 leaves whole ({3 * p / gib:,.1f} GiB) exceeds one chip's usable {3 * p / gib:,.1f} GiB: "
        "no number of chips holds it; shard more of it"
    )
    assert f"({3 * p / gib:,.1f} GiB)" == "(22.4 GiB)"  # 3 x 8.03e9 bytes in GiB
    hbm = 3 * p + a // 2
    memory = training_memory(llama, POW2, chip(hbm), S, 1, sharding="zero-1", usable_fraction=1.0)
    assert memory.reason == (
        f"one chip's activations and unsplit state ({(3 * p + a) / gib:,.1f} GiB) exceed its usable "
        f"{hbm / gib:,.1f} GiB: no number of chips holds it under zero-1; tensor, sequence or context parallelism "
        "must split the activations"
    )
    memory = training_memory(llama, POW2, chip(7 * p + a), S, 1, sharding="zero-2", usable_fraction=1.0)
    assert memory.reason == f"zero-2 splits {14 * p / gib:,.1f} GiB" == "zero-2 splits 104.7 GiB"


def test_usable_fraction_scales_the_room():
    # usable_bytes: usable_fraction x capacity
    hbm = 2 * (7 * P + A)
    half = training_memory(MODEL, POW2, chip(hbm), S, B, sharding="zero-1", usable_fraction=0.5)
    assert half.usable_bytes == 7 * P + A and half.n_chips == 3
    default = training_memory(MODEL, POW2, chip(hbm), S, B, sharding="zero-1")
    assert default.usable_bytes == 0.8 * hbm  # assumptions.USABLE_HBM_FRACTION
    assert default == training_memory(MODEL, POW2, chip(hbm), S, B, sharding="zero-1", usable_fraction=0.8)


def test_n_chips_sets_the_parts_and_leaves_the_fewest():
    hbm = 7 * P + A
    given = fit("zero-1", hbm, n_chips=8)
    assert given.n_chips == 3  # still the fewest
    assert given.parts["master"] == 4 * P / 8 and given.parts["optimizer"] == 8 * P / 8
    assert given.parts["weights"] == P and given.parts["gradients"] == 2 * P
    assert given.per_chip_bytes == 3 * P + 12 * P / 8 + A
    assert fit("zero-1", hbm, n_chips=1).parts == chip_bytes(MODEL, POW2, S, B)


def test_training_memory_defaults():
    hbm = 2**40
    default = training_memory(MODEL, POW2, chip(hbm), S)
    explicit = training_memory(
        MODEL,
        POW2,
        chip(hbm),
        S,
        1,
        sharding="zero-3",
        n_chips=None,
        recompute="none",
        flash_attention=True,
        usable_fraction=0.8,
    )
    assert default == explicit and default.sharding == "zero-3"
    assert default.parts["activations"] == per_layer(batch=1) * L  # batch 1 sequence
    no_flash = training_memory(MODEL, POW2, chip(hbm), S, flash_attention=False)
    assert no_flash.parts["activations"] == per_layer(batch=1, flash=False, recompute="none") * L
    assert isinstance(default, TrainingMemory)


def test_total_bytes_is_the_sum_of_the_parts():
    memory = TrainingMemory("zero-1", {"a": 1.0, "b": 2.0, "c": 4.0}, 1, 7.0, 8.0, "")
    assert memory.total_bytes == 7.0
    assert dataclasses.fields(TrainingMemory)[0].name == "sharding"


# --- zero_stage ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, 2, 1.0, 2.0])
def test_zero_stage_returns_the_int(value):
    stage = zero_stage(value)
    assert stage == int(value) and type(stage) is int


def test_zero_stage_three_is_fsdp():
    with pytest.raises(
        ValueError, match=r"^zero=3 over the dp ranks is FSDP: put those ranks on the mesh's fsdp axis$"
    ):
        zero_stage(3)
    with pytest.raises(ValueError, match="FSDP"):
        zero_stage(3.0)


@pytest.mark.parametrize("value", [-1, 4, True, False, "1", None, 1.5, (1,)])
def test_zero_stage_rejects_everything_else_naming_zero(value):
    with pytest.raises(ValueError, match=r"^zero must be one of \(0, 1, 2\), got "):
        zero_stage(value)


# --- bad input of training_memory ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        (dict(sharding="zero-4"), ValueError, "sharding must be one of"),
        (dict(sharding=3), TypeError, "sharding must be a string"),
        (dict(recompute="some"), ValueError, "recompute must be one of"),
        (dict(seq_len=0), ValueError, "seq_len must be > 0"),
        (dict(seq_len=10.5), ValueError, "seq_len must be a whole number"),
        (dict(batch=0), ValueError, "batch must be > 0"),
        (dict(batch=1.5), ValueError, "batch must be a whole number"),
        (dict(n_chips=0), ValueError, "n_chips must be > 0"),
        (dict(n_chips=2.5), ValueError, "n_chips must be a whole number"),
        (dict(usable_fraction=0), ValueError, "usable_fraction must be > 0"),
        (dict(usable_fraction=1.5), ValueError, r"usable_fraction must be in \(0, 1\]"),
        (dict(model="tiny"), TypeError, "model must be a ModelShape"),
        (dict(chip="H100-SXM"), TypeError, "chip must be a Chip"),
        (dict(recipe=16), TypeError, "recipe must be a recipe key"),
    ],
)
def test_bad_input_names_the_parameter(changes, error, message):
    arguments = dict(model=MODEL, recipe=POW2, chip=chip(2**40), seq_len=S, batch=B)
    arguments.update(changes)
    with pytest.raises(error, match=message):
        training_memory(**arguments)


def test_the_module_exports_what_the_step_uses():
    assert zero.chip_bytes is chip_bytes and zero.zero_stage is zero_stage and zero.ZERO_SHARDED is ZERO_SHARDED
