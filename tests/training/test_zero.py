"""hw.training_memory: the state split as a sharding says, each chip holding its own micro-batch's activations."""

import pytest

import hwlib as hw

LLAMA = hw.model("llama-3-8b")
H100 = hw.chip("H100-SXM")


def test_each_sharding_splits_what_zero_says():
    params = LLAMA.params()
    for sharding, split in (
        ("replicated", ()),
        ("zero-1", ("master", "optimizer")),
        ("zero-2", ("master", "optimizer", "gradients")),
        ("zero-3", ("master", "optimizer", "gradients", "weights")),
    ):
        memory = hw.training_memory(LLAMA, "zero_mixed_adam", H100, 4096, sharding=sharding, n_chips=8)
        recipe = hw.recipe("zero_mixed_adam").breakdown()
        for part, per_param in recipe.items():
            assert memory.parts[part] == pytest.approx(params * per_param / (8 if part in split else 1)), part
        layers = LLAMA.n_layers * hw.activation_bytes(4096, 1, LLAMA, flash_attention=True)
        assert memory.parts["activations"] == layers  # the chip's own micro-batch, never pooled
        assert memory.parts["logits"] == hw.logits_bytes(4096, 1, LLAMA)


def test_fewest_chips_is_the_closed_form_and_holds():
    memory = hw.training_memory(LLAMA, "zero_mixed_adam", H100, 4096, sharding="zero-3")
    assert memory.n_chips is not None
    at = hw.training_memory(LLAMA, "zero_mixed_adam", H100, 4096, sharding="zero-3", n_chips=memory.n_chips)
    below = hw.training_memory(LLAMA, "zero_mixed_adam", H100, 4096, sharding="zero-3", n_chips=memory.n_chips - 1)
    assert at.per_chip_bytes <= at.usable_bytes < below.per_chip_bytes
    assert hw.training_memory(LLAMA, "zero_mixed_adam", H100, 4096, sharding="fsdp").n_chips == memory.n_chips


def test_where_no_number_of_chips_holds_it_the_result_says_why():
    replicated = hw.training_memory(LLAMA, "zero_mixed_adam", H100, 4096, sharding="replicated")
    assert replicated.n_chips is None and "shard more" in replicated.reason
    long = hw.training_memory(hw.model("llama-3-70b"), "zero_mixed_adam", H100, 32768)
    assert long.n_chips is None and "tensor, sequence or context parallelism" in long.reason


def test_bad_input():
    with pytest.raises(ValueError, match="sharding must be one of"):
        hw.training_memory(LLAMA, "zero_mixed_adam", H100, 4096, sharding="zero-4")
    with pytest.raises(TypeError, match="model must be a ModelShape"):
        hw.training_memory("llama-3-8b", "zero_mixed_adam", H100, 4096)
    with pytest.raises(ValueError, match="seq_len must be > 0"):
        hw.training_memory(LLAMA, "zero_mixed_adam", H100, 0)
