"""Every term of ``hwlib.serving.engine`` pinned by hand: the scheduler loop ``run`` (arrivals, admission by the
batch cap, the token budget and the cache's blocks, prefill-first and chunked steps, preemption and its recompute,
decode stretches cut at the next arrival, speculative gains, closed-loop clients and the front end's delay) and the
prices ``Priced`` and ``Engine`` give its steps.

``run`` is driven here by a stub engine whose step costs A + B x tokens + C x sequences + D x tokens read (each
sequence's context and new tokens) seconds, all binary fractions so that every clock sum below is exact, and whose
cache holds one byte a token in blocks of ``block`` tokens (as ``Engine.held_bytes``). Every schedule is followed
by hand from the rules of ``run``'s docstring and ``hw.simulate_serving``'s (``hwlib.serving.simulate``): which
requests a step holds, its tokens, its sequences and the clock after it. The real prices are pinned on a tiny
Llama-shaped model against ``StepPricer.price``, the pricer the engine's tables come from.
"""

from types import SimpleNamespace

import numpy as np
import pytest

import hwlib as hw
from hwlib.efficiency import Efficiency, resolve
from hwlib.precision import as_precision
from hwlib.serving.engine import SPECULATIVE_STRETCH, Engine, Priced, run
from hwlib.serving.pricing import StepPricer

A, B, C, D = 1.0, 1 / 8, 1 / 4, 1 / 1024  # the stub's seconds: a step, a new token, a sequence, a token read


def price(new, context):
    """The stub's seconds of one step whose sequences take ``new`` tokens after ``context`` tokens each."""
    return A + B * sum(new) + C * len(new) + D * (sum(context) + sum(new))


def decodes(context, steps):
    """The stub's seconds of ``steps`` decode steps of one token per sequence, the first after ``context``."""
    return [price([1] * len(context), [c + i for c in context]) for i in range(steps)]


class Stub:
    """An engine for ``run`` priced by ``price`` (see the module docstring). ``line``: offer decode stretches in
    closed form (``decode_line``), else step by step (``decode_s``). ``gains``: the tokens each speculative decode
    step gives each sequence, one row a step. It prices at most ``MOST_CALLS`` times, so that a scheduler that
    loops for ever fails instead of hanging."""

    count = 7
    MOST_CALLS = 10_000

    def __init__(
        self,
        budget=64,
        max_sequences=4,
        block=4,
        room=1e6,
        chunked=False,
        reserve=False,
        line=True,
        spec=None,
        gains=None,
        seconds=None,
        kv_per_token=1.0,
    ):
        self.budget, self.max_sequences, self.block, self.room = budget, max_sequences, block, room
        self.chunked, self.reserve, self.line, self.spec = chunked, reserve, line, spec
        self.gains, self.seconds, self.kv_per_token = gains, seconds, kv_per_token
        self.calls = []  # (tokens, sequences, new, context) of each step priced one at a time
        self.stretches = []  # (context, steps) of each speculative stretch asked for
        self.asked = 0

    def ask(self):
        self.asked += 1
        assert self.asked <= self.MOST_CALLS, "the scheduler keeps pricing: a runaway loop"

    def held_bytes(self, tokens):
        return -(-np.asarray(tokens) // self.block) * self.block * self.kv_per_token

    def one_held_bytes(self, tokens):
        return float(-(-tokens // self.block) * self.block * self.kv_per_token)

    def step_s(self, tokens, sequences, new, context, verifying=None):
        self.ask()
        new = np.broadcast_to(new, np.shape(context))
        self.calls.append((tokens, sequences, list(new), list(context)))
        return A + B * tokens + C * sequences + D * float(np.sum(context + new))

    def decode_s(self, context, steps):
        self.ask()
        return np.array(decodes(list(context), steps))

    def decode_line(self, context):
        self.ask()
        if not self.line:
            return None
        b = context.size
        return A + B * b + C * b + D * (float(context.sum()) + b), D * b, np.inf

    def speculative_steps(self, context, steps, rng):
        self.ask()
        self.stretches.append((list(context), steps))
        gains = np.array(self.gains(steps, context.size), dtype=np.int64)
        seconds = np.full(steps, 0.5) if self.seconds is None else np.asarray(self.seconds[:steps])
        return seconds, gains


class Draws:
    """A random generator whose ``geometric`` draws are given: each call returns the next row."""

    def __init__(self, *rows):
        self.rows, self.asked = list(rows), []

    def geometric(self, p, size):
        self.asked.append((p, size))
        return np.array(self.rows.pop(0))


def serve(stub, arrival, prompts, answers, cached=None, rng=None, **options):
    prompts, answers = np.array(prompts), np.array(answers)
    cached = np.zeros_like(prompts) if cached is None else np.array(cached)
    return run(stub, np.array(arrival, dtype=float), prompts, answers, cached, rng, **options)


def ends(*steps):
    """The clock after each of ``steps`` seconds, from 0."""
    return np.cumsum(steps)


# --- one request, step by step -----------------------------------------------------------------------------------


@pytest.mark.parametrize("line", [True, False])
def test_a_lone_request_prefills_whole_then_decodes_one_token_a_step(line):
    """The first step prefills the prompt (context 0) and samples the first token; each decode then reads the whole
    context and feeds the last token (the cache holding prompt + generated - 1 before it)."""
    stub = Stub(line=line)
    out = serve(stub, [0.0], [8], [4])
    prefill = price([8], [0])
    steps = [prefill, *decodes([8], 3)]  # decodes after 8, 9 and 10 cached tokens
    np.testing.assert_allclose(out.step_end_s, ends(*steps), rtol=1e-15)
    assert out.first_token_s[0] == prefill
    assert out.finish_s[0] == pytest.approx(sum(steps), rel=1e-15)
    assert list(out.step_tokens) == [8, 1, 1, 1] and list(out.step_sequences) == [1, 1, 1, 1]
    assert out.preemptions == 0 and out.n_chips == 7 and list(out.arrival_s) == [0.0]
    assert list(out.prompt_tokens) == [8] and list(out.output_tokens) == [4]


def test_an_idle_engine_waits_for_the_next_arrival():
    """With nothing running and nothing waiting the clock jumps to the next arrival."""
    out = serve(Stub(), [3.0, 100.0], [8, 8], [2, 2])
    first = 3.0 + price([8], [0])
    assert out.first_token_s[0] == first and out.finish_s[0] == first + price([1], [8])
    assert out.first_token_s[1] == 100.0 + price([8], [0])


def test_a_prefix_hit_prefills_only_the_rest_after_the_cached_prefix():
    """A request with ``cached`` tokens starts its prefill past them: new = prompt - cached, context = cached."""
    stub = Stub()
    out = serve(stub, [0.0], [10], [2], cached=[4])
    assert stub.calls[0] == (6, 1, [6], [4])
    assert out.first_token_s[0] == price([6], [4])
    assert out.finish_s[0] == price([6], [4]) + price([1], [10])  # the cache holds all ten prompt tokens
    assert list(out.step_tokens) == [6, 1]


def test_a_one_token_answer_finishes_with_its_prefill():
    """The step that finishes the prompt samples the first token, which ends a one-token answer."""
    out = serve(Stub(), [0.0], [8], [1])
    assert out.finish_s[0] == out.first_token_s[0] == price([8], [0]) and list(out.step_tokens) == [8]


# --- prefill-first admission ---------------------------------------------------------------------------------


def test_without_chunks_a_step_takes_whole_prompts_up_to_the_budget_and_decodes_nothing():
    """Prompts join first come first served while their sum fits the budget (12 fits the 12 left exactly); the
    third waits for the next step, which prefills it alone while the running requests do not decode."""
    stub = Stub(budget=20)
    out = serve(stub, [0.0, 0.0, 0.0], [8, 12, 8], [2, 2, 2])
    s1 = price([8, 12], [0, 0])
    s2 = price([8], [0])  # the two running requests wait: a prefill step decodes nothing
    s3 = price([1, 1, 1], [8, 12, 8])
    assert stub.calls[1] == (8, 1, [8], [0])
    assert list(out.step_tokens) == [20, 8, 3] and list(out.step_sequences) == [2, 1, 3]
    np.testing.assert_array_equal(out.first_token_s, [s1, s1, s1 + s2])
    np.testing.assert_array_equal(out.finish_s, [s1 + s2 + s3] * 3)


def test_a_prompt_past_the_budget_left_waits_even_if_a_later_one_fits():
    """First come first served: a prompt that does not fit what is left of the budget stops admission."""
    out = serve(Stub(budget=20), [0.0] * 3, [8, 16, 4], [1, 1, 1])
    assert list(out.step_tokens) == [8, 20]  # then 16 + 4 together
    assert list(out.step_sequences) == [1, 2]


def test_the_batch_cap_holds_requests_until_one_finishes():
    """``max_sequences`` running at most: the third request joins after the first finishes."""
    out = serve(Stub(max_sequences=2), [0.0] * 3, [4, 4, 4], [2, 3, 2])
    s1 = price([4, 4], [0, 0])
    s2 = price([1, 1], [4, 4])  # request 0 finishes
    s3 = price([4], [0])  # request 2 prefills; request 1 waits
    s4 = price([1, 1], [5, 4])  # request 1 after 4 + 2 tokens, request 2 after 4 + 1
    assert list(out.step_tokens) == [8, 2, 4, 2] and list(out.step_sequences) == [2, 2, 1, 2]
    np.testing.assert_array_equal(out.first_token_s, [s1, s1, s1 + s2 + s3])
    np.testing.assert_array_equal(out.finish_s, [s1 + s2, s1 + s2 + s3 + s4, s1 + s2 + s3 + s4])


def test_an_arrival_at_a_steps_end_joins_the_next_step():
    """A request whose arrival equals the clock after a step is waiting for the next one (arrival <= t)."""
    t1 = price([8], [0])
    out = serve(Stub(), [0.0, t1], [8, 8], [3, 2])
    assert list(out.step_tokens[:2]) == [8, 8]  # request 1 prefills before request 0's first decode
    assert out.first_token_s[1] == t1 + price([8], [0])


# --- the cache's room ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("room", [24, 23])
def test_admission_counts_the_running_blocks_and_the_prompts_blocks_with_its_first_token(room):
    """Blocks of 4: request 0 holds 6 + 1 tokens, 2 blocks (8 bytes); request 1 needs blocks for its 12 prompt
    tokens and its first token, 4 (16): it joins while 8 + 16 <= room, else after request 0 finishes."""
    out = serve(Stub(room=room), [0.0, price([6], [0])], [6, 12], [2, 1])
    t1 = price([6], [0])
    if room == 24:
        assert list(out.step_tokens) == [6, 12, 1]
        assert out.finish_s[1] == t1 + price([12], [0]) and out.finish_s[0] == out.finish_s[1] + price([1], [6])
    else:
        assert list(out.step_tokens) == [6, 1, 12]
        assert out.finish_s[0] == t1 + price([1], [6]) and out.finish_s[1] == out.finish_s[0] + price([12], [0])
    assert out.preemptions == 0


@pytest.mark.parametrize("room", [24, 23])
def test_reserving_the_answer_counts_each_prompt_and_its_whole_answer(room):
    """``reserve``: a request needs blocks for prompt + answer (3 + 6 = 9 tokens, 3 blocks) and a running one holds
    them from admission: the second joins the first at room 24, not 23."""
    t1 = price([3], [0])
    out = serve(Stub(room=room, reserve=True), [0.0, t1], [3, 3], [6, 6])
    if room == 24:
        assert list(out.step_tokens[:3]) == [3, 3, 2]
    else:
        assert list(out.step_tokens) == [3, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1]
    assert out.preemptions == 0


def test_without_a_reserve_a_request_joins_on_its_prompts_blocks_alone():
    """The same requests at room 15 without the reserve: each needs one block (3 + 1 tokens), so the second joins
    as the first's prefill ends."""
    out = serve(Stub(room=15), [0.0, price([3], [0])], [3, 3], [2, 2])
    assert list(out.step_tokens[:2]) == [3, 3] and list(out.step_sequences[:2]) == [1, 1]


# --- preemption --------------------------------------------------------------------------------------------------


def test_a_full_cache_preempts_the_latest_admitted_which_recomputes_what_it_had():
    """Budget 7, room 16, blocks of 4. Request 0 prefills; request 1 joins (8 + 8 <= 16) and prefills; both hold
    8 tokens, and a decode would need 3 blocks each (24 > 16): request 1 gives its blocks back, keeping its one
    generated token, and waits at the head of the queue. Request 0 decodes its last two tokens; then request 1
    recomputes 7 + 1 = 8 tokens, more than the budget but alone in its step, which samples its second token, and
    decodes its third after 8 cached tokens. Its first token stays the one it first had."""
    stub = Stub(budget=7, room=16)
    out = serve(stub, [0.0, 0.0], [7, 7], [3, 3])
    s = [price([7], [0]), price([7], [0]), *decodes([7], 2), price([8], [0]), price([1], [8])]
    t = ends(*s)
    assert out.preemptions == 1
    assert list(out.step_tokens) == [7, 7, 1, 1, 8, 1] and list(out.step_sequences) == [1, 1, 1, 1, 1, 1]
    np.testing.assert_array_equal(out.step_end_s, t)
    np.testing.assert_array_equal(out.first_token_s, [t[0], t[1]])
    np.testing.assert_array_equal(out.finish_s, [t[3], t[5]])
    assert stub.calls[-1] == (8, 1, [8], [0])  # the recompute starts from nothing


def test_a_decode_stretch_that_would_outgrow_the_cache_goes_a_step_at_a_time():
    """Room 16, blocks of 4, two requests of 3 + 6 tokens. After the prefill each holds 4 tokens; the five decodes
    left would take each to 9 (3 blocks), so the engine decodes one step at a time while 2 + 2 blocks hold the next
    token, and preempts request 1 when both hold 8. Request 0 finishes; request 1 recomputes 3 + 5 tokens, whose
    step samples its sixth and last token."""
    out = serve(Stub(room=16), [0.0, 0.0], [3, 3], [6, 6])
    s = [price([3, 3], [0, 0])]
    s += [price([1, 1], [3 + i, 3 + i]) for i in range(4)]  # both decode to 8 tokens
    s += [price([1], [7]), price([8], [0])]
    t = ends(*s)
    assert out.preemptions == 1
    assert list(out.step_tokens) == [6, 2, 2, 2, 2, 1, 8]
    np.testing.assert_array_equal(out.step_end_s, t)
    np.testing.assert_array_equal(out.finish_s, [t[5], t[6]])


@pytest.mark.parametrize("kv", [1.0, 2.0])
def test_the_exact_block_count_decides_a_preemption(kv):
    """Room for 12 tokens, blocks of 4: two requests of 3 prompt tokens hold one block each after the prefill
    (4 + 4 <= 12); their next tokens need a second block each (16 > 12), though 5 + 5 tokens would fit: request 1 is
    preempted. The same in bytes at 2 bytes a token."""
    out = serve(Stub(room=12 * kv, kv_per_token=kv), [0.0, 0.0], [3, 3], [3, 3])
    assert out.preemptions == 1
    s = [price([3, 3], [0, 0]), *decodes([3], 2), price([4], [0]), price([1], [4])]
    assert list(out.step_tokens) == [6, 1, 1, 4, 1]
    np.testing.assert_array_equal(out.step_end_s, ends(*s))


def test_a_preempted_request_waits_at_the_head_of_the_queue_and_recomputes_its_prompt_and_its_tokens():
    """Room 16, blocks of 4, budget 7, two at a time. Request 0 (3 + 6 tokens) prefills and decodes once before
    request 1 (3 + 6) arrives mid-step and prefills; request 2 (3 + 1) arrives during that prefill and waits for a
    slot. Both decode a step at a time (two steps more would need a third block) until request 0 holds 8 tokens and
    request 1 holds 7: their next tokens need 3 + 2 blocks, and request 1, with 4 tokens generated, gives its blocks
    back and goes ahead of request 2. Request 0 finishes; request 1 recomputes its 3 + 4 tokens, which fill the
    budget, so request 2 prefills in the next step; request 1 then decodes its sixth token after 7 cached."""
    t1 = price([3], [0])
    p = price([1], [3])
    t2 = t1 + p
    t3 = t2 + price([3], [0])
    stub = Stub(budget=7, max_sequences=2, room=16)
    out = serve(stub, [0.0, t1 + p / 2, t2 + 1 / 64], [3, 3, 3], [6, 6, 1])
    s = [t1, p, price([3], [0])]
    s += [price([1, 1], [4 + i, 3 + i]) for i in range(3)]  # request 0 after 4, 5, 6; request 1 after 3, 4, 5
    s += [price([1], [7]), price([7], [0]), price([3], [0]), price([1], [7])]
    t = ends(*s)
    assert t[2] == t3 and out.preemptions == 1
    assert list(out.step_tokens) == [3, 1, 3, 2, 2, 2, 1, 7, 3, 1]
    assert list(out.step_sequences) == [1, 1, 1, 2, 2, 2, 1, 1, 1, 1]
    np.testing.assert_array_equal(out.step_end_s, t)
    np.testing.assert_array_equal(out.first_token_s, [t[0], t[2], t[8]])
    np.testing.assert_array_equal(out.finish_s, [t[6], t[9], t[8]])


def test_a_lone_request_is_never_preempted_even_past_the_cache():
    """The latest admitted is preempted only while another runs: alone, a request decodes on past its blocks."""
    out = serve(Stub(room=8), [0.0], [6], [4])
    assert out.preemptions == 0 and list(out.step_tokens) == [6, 1, 1, 1]
    assert out.finish_s[0] == price([6], [0]) + sum(decodes([6], 3))


def test_a_cached_prefix_counts_only_the_rest_against_the_budget():
    """Budget 10, prompts of 8 with 4 cached: each needs 4 tokens of the budget, so both prefill in one step."""
    stub = Stub(budget=10)
    out = serve(stub, [0.0, 0.0], [8, 8], [1, 1], cached=[4, 4])
    assert stub.calls == [(8, 2, [4, 4], [4, 4])] and list(out.step_tokens) == [8]


def test_a_prompt_joins_a_chunked_step_only_while_the_budget_has_tokens_for_it():
    """Budget 8, room 31, blocks of 4. Request 0 (12 tokens) takes 8 and then its last 4; request 1 (4 tokens),
    waiting, takes the other 4; request 2 gets nothing of that step and stays waiting. When both have their first
    token they hold 13 and 5 tokens (4 + 2 blocks, 24 bytes), and request 2's prompt and first token (2 blocks)
    would make 32 > 31: it waits until both finish."""
    stub = Stub(budget=8, chunked=True, room=31)
    out = serve(stub, [0.0, 0.5, 0.5], [12, 4, 4], [2, 2, 2])
    s = [price([8], [0]), price([4, 4], [8, 0]), price([1, 1], [12, 4]), price([4], [0]), price([1], [4])]
    assert list(out.step_tokens) == [8, 8, 2, 4, 1] and list(out.step_sequences) == [1, 2, 2, 1, 1]
    np.testing.assert_array_equal(out.step_end_s, ends(*s))


def test_a_speculative_decode_needs_room_for_its_k_plus_one_tokens():
    """Room 12, blocks of 4, k = 2, every draft accepted: two requests of 2 prompt tokens hold 3 each after the
    prefill; one more token each would fit (2 blocks), but k + 1 = 3 more need 4 blocks (16 > 12): request 1 is
    preempted. Request 0 finishes in one verifying step; request 1 recomputes 2 + 1 tokens and finishes in one."""
    spec = SimpleNamespace(draft_tokens=2, acceptance=1.0)
    stub = Stub(room=12, spec=spec, gains=lambda steps, b: np.full((steps, b), 3))
    out = serve(stub, [0.0, 0.0], [2, 2], [4, 4])
    assert out.preemptions == 1 and stub.stretches == [([2], 3), ([3], 2)]
    assert list(out.step_tokens) == [4, 3, 3, 3]
    np.testing.assert_array_equal(out.step_end_s, ends(price([2, 2], [0, 0]), 0.5, price([3], [0]), 0.5))


def test_an_engine_that_can_take_nothing_says_so():
    """A prompt whose blocks exceed the whole cache waits for ever: past the last arrival the engine stops."""
    with pytest.raises(RuntimeError, match="can take no waiting request and runs none"):
        serve(Stub(room=4), [0.0, 5.0], [7, 7], [2, 2])


# --- chunked prefill ---------------------------------------------------------------------------------------------


def test_chunks_split_a_prompt_at_the_budget_and_give_the_rest_to_the_next_arrival():
    """Budget 8: request 0's 13 tokens take 8 then 5; request 1 (6 tokens) takes the 3 left of the second step,
    then its last 3 beside request 0's decode after 13, which gives request 0 its second and last token."""
    stub = Stub(budget=8, chunked=True)
    out = serve(stub, [0.0, 0.0], [13, 6], [2, 2])
    s = [price([8], [0]), price([5, 3], [8, 0]), price([1, 3], [13, 3]), price([1], [6])]
    t = ends(*s)
    assert list(out.step_tokens) == [8, 8, 4, 1] and list(out.step_sequences) == [1, 2, 2, 1]
    np.testing.assert_array_equal(out.step_end_s, t)
    np.testing.assert_array_equal(out.first_token_s, [t[1], t[2]])
    np.testing.assert_array_equal(out.finish_s, [t[2], t[3]])
    assert stub.calls[1] == (8, 2, [5, 3], [8, 0])


def test_chunked_steps_decode_every_running_sequence_and_give_the_rest_of_the_budget_to_prompts():
    """Budget 8. Request 0 (2 + 3 tokens) prefills; request 1 (10 + 2) arrives as it ends and takes the 7 tokens
    its decode leaves, then its last 3 beside request 0's next decode; request 0 finishes in that step, request 1
    with its decode after 10 + 1 tokens."""
    t1 = price([2], [0])
    stub = Stub(budget=8, chunked=True)
    out = serve(stub, [0.0, t1], [2, 10], [3, 2])
    s = [t1, price([1, 7], [2, 0]), price([1, 3], [3, 7]), price([1], [10])]
    t = ends(*s)
    assert list(out.step_tokens) == [2, 8, 4, 1] and list(out.step_sequences) == [1, 2, 2, 1]
    assert [call[2:] for call in stub.calls[1:3]] == [([1, 7], [2, 0]), ([1, 3], [3, 7])]
    np.testing.assert_array_equal(out.first_token_s, [t[0], t[2]])
    np.testing.assert_array_equal(out.finish_s, [t[2], t[3]])


def test_with_a_request_waiting_a_partly_prefilled_prompt_gets_what_the_decodes_leave():
    """Budget 8: requests 0 (2 tokens) and 1 (20) join together, 2 + 6 tokens; request 2 arrives during that step.
    Next, request 0's decode leaves 7 tokens, all of them request 1's, and none is left for request 2."""
    stub = Stub(budget=8, chunked=True)
    out = serve(stub, [0.0, 0.0, 0.5], [2, 20, 4], [5, 1, 1])
    assert stub.calls[:2] == [(8, 2, [2, 6], [0, 0]), (8, 2, [1, 7], [2, 6])]
    assert list(out.step_tokens[:2]) == [8, 8] and list(out.step_sequences[:2]) == [2, 2]


def test_chunks_of_prompts_admitted_together_share_the_budget_in_order():
    """Budget 8: requests of 2 and 9 tokens join together, the first whole and the second 6 tokens; then request
    2 (9 tokens) takes the 4 tokens left after request 0's decode and request 1's last 3, and its last 5 beside
    two decodes."""
    stub = Stub(budget=8, chunked=True)
    out = serve(stub, [0.0, 0.0, 0.0], [2, 9, 9], [5, 5, 5])
    assert stub.calls[0] == (8, 2, [2, 6], [0, 0])
    assert stub.calls[1] == (8, 3, [1, 3, 4], [2, 6, 0])
    assert stub.calls[2] == (7, 3, [1, 1, 5], [3, 9, 4])  # contexts: 2 + 2 - 1, 9 + 1 - 1, and 4 prefilled
    assert list(out.step_tokens[:4]) == [8, 8, 7, 3]


# --- decode stretches and the next arrival -----------------------------------------------------------------------


@pytest.mark.parametrize("line", [True, False])
@pytest.mark.parametrize("share", [0.5, 1.0])
def test_a_decode_stretch_ends_at_the_step_that_reaches_the_next_arrival(line, share):
    """With none waiting, decoding stops at the first step ending at or after the next arrival (mid-step or at its
    very end); the new request then prefills alone, both decode, and request 0 decodes its last six alone."""
    p = decodes([8], 2)
    t1 = price([8], [0])
    out = serve(Stub(line=line), [0.0, t1 + p[0] + share * p[1]], [8, 8], [10, 2])
    s = [t1, *p, price([8], [0]), price([1, 1], [10, 8]), *decodes([11], 6)]
    assert list(out.step_tokens) == [8, 1, 1, 8, 2, 1, 1, 1, 1, 1, 1]
    np.testing.assert_allclose(out.step_end_s, ends(*s), rtol=1e-15)
    assert out.finish_s[1] == pytest.approx(sum(s[:5]), rel=1e-15)
    assert out.finish_s[0] == pytest.approx(sum(s), rel=1e-15)


def test_requests_arriving_together_after_a_decode_stretch():
    """Two requests arriving at the same moment both wait for the step ending at or after it, and join together."""
    t1 = price([4], [0])
    p = decodes([4], 3)
    gap = t1 + p[0] + p[1] / 4
    out = serve(Stub(), [0.0, gap, gap], [4, 4, 4], [5, 1, 1])
    assert list(out.step_tokens) == [4, 1, 1, 8, 1, 1]
    np.testing.assert_array_equal(out.finish_s[1:], [t1 + p[0] + p[1] + price([4, 4], [0, 0])] * 2)


@pytest.mark.parametrize("line", [True, False])
def test_a_scheduler_that_receives_every_third_decode_takes_an_arrival_at_the_next_multiple(line):
    """``recv_interval`` 3 (SGLang's ``SchedulerRecvSkipper``): request 1 reaches the scheduler at t = 3, during
    request 0's first decode step (the prefill ends at about 2.26 s, each decode takes about 1.38 s), so it is taken
    in after the third decode step since the prefill, and then prefilled; every step, after the first."""
    s1 = price([8], [0])
    steps = decodes([8], 3)
    every_third = serve(Stub(line=line), [0.0, 3.0], [8, 8], [10, 2], recv_interval=3)
    assert every_third.first_token_s[1] == s1 + sum(steps[:3]) + price([8], [0])
    every = serve(Stub(line=line), [0.0, 3.0], [8, 8], [10, 2])
    assert every.first_token_s[1] == s1 + steps[0] + price([8], [0])


def test_a_step_that_takes_a_prompt_makes_the_scheduler_receive_at_once():
    """A request that arrives during a prompt's step is taken in right after it, whatever the interval."""
    out = serve(Stub(), [0.0, 0.5], [8, 8], [10, 2], recv_interval=7)
    assert out.first_token_s[1] == price([8], [0]) + price([8], [0])


def test_a_scheduler_that_receives_rarely_still_takes_an_arrival_when_it_runs_nothing():
    """An idle engine takes in the next arrival at once, whatever its interval."""
    out = serve(Stub(), [3.0, 100.0], [8, 8], [2, 2], recv_interval=7)
    assert out.first_token_s[1] == 100.0 + price([8], [0])


def test_a_decode_stretch_runs_on_to_the_step_that_receives():
    """Request 1 arrives at t = 4, in request 0's second decode step: with an interval of 4 the decodes run to the
    fourth since the prefill before it is taken in, with 1 to the step that reaches it; the intakes count again from
    the prompt's step (the second request's prefill restarts the count)."""
    s1 = price([8], [0])
    steps = decodes([8], 6)
    for interval, decoded in ((1, 2), (4, 4), (3, 3)):
        out = serve(Stub(), [0.0, 4.0], [8, 8], [20, 2], recv_interval=interval)
        assert out.first_token_s[1] == s1 + sum(steps[:decoded]) + price([8], [0])


# --- speculative decoding --------------------------------------------------------------------------------------


def test_speculative_decode_stretches_stop_at_the_step_whose_gains_finish_a_sequence():
    """k = 2: each stretch step counts k + 1 tokens per sequence; the gains drawn (3, 1, 2, 3, ...) reach the 9
    tokens left after the prefill's first at the fourth step, which ends the request."""
    spec = SimpleNamespace(draft_tokens=2, acceptance=0.5)
    gains = [3, 1, 2, 3, 3, 3, 3, 3, 3]
    seconds = [0.5, 0.25, 0.125, 1, 2, 2, 2, 2, 2]
    stub = Stub(spec=spec, gains=lambda steps, b: [[g] * b for g in gains[:steps]], seconds=seconds)
    out = serve(stub, [0.0], [4], [10])
    t1 = price([4], [0])
    assert stub.stretches == [([4], 9)]  # after 4 + 1 tokens, the cache holding 4; 9 tokens left
    np.testing.assert_array_equal(out.step_end_s, ends(t1, 0.5, 0.25, 0.125, 1))
    assert list(out.step_tokens) == [4, 3, 3, 3, 3] and list(out.step_sequences) == [1] * 5
    assert out.finish_s[0] == t1 + 1.875


def test_speculative_stretches_are_at_most_the_stretch_limit_and_stop_at_the_next_arrival():
    """No draft accepted (one token a step): a stretch prices at most ``SPECULATIVE_STRETCH`` steps; an arrival
    cuts a stretch at the step that reaches it."""
    spec = SimpleNamespace(draft_tokens=1, acceptance=0.5)
    stub = Stub(spec=spec, gains=lambda steps, b: np.ones((steps, b)))
    left = SPECULATIVE_STRETCH + 10
    out = serve(stub, [0.0], [4], [left + 1])
    assert [steps for _, steps in stub.stretches] == [SPECULATIVE_STRETCH, 10]
    assert [context for context, _ in stub.stretches] == [[4], [4 + SPECULATIVE_STRETCH]]
    assert out.finish_s[0] == price([4], [0]) + 0.5 * left
    stub = Stub(spec=spec, gains=lambda steps, b: np.ones((steps, b)))
    t1 = price([4], [0])
    out = serve(stub, [0.0, t1 + 1.25], [4, 4], [9, 1])
    assert stub.stretches[0] == ([4], 8)
    assert list(out.step_tokens[:5]) == [4, 2, 2, 2, 4]  # three half-second steps reach t1 + 1.25


def test_a_speculative_stretch_that_would_outgrow_the_cache_goes_a_step_at_a_time():
    """Room 16, blocks of 4, k = 1, no draft accepted: a stretch of s steps needs room for (k + 1) s more tokens.
    After the prefill of 3 tokens the cache holds 4 and 7 tokens are left: 4 + 14 tokens need 20 bytes, so one step;
    at 5 tokens, 5 + 12 again; at 6 tokens the last 5 steps' 6 + 10 fit exactly."""
    spec = SimpleNamespace(draft_tokens=1, acceptance=0.5)
    stub = Stub(room=16, spec=spec, gains=lambda steps, b: np.ones((steps, b)))
    out = serve(stub, [0.0], [3], [8])
    assert stub.stretches == [([3], 1), ([4], 1), ([5], 5)]
    assert out.finish_s[0] == price([3], [0]) + 0.5 * 7 and out.preemptions == 0


def test_speculative_decodes_that_take_the_whole_budget_stall_a_chunked_prompt():
    """Budget 8, k = 2: three decodes take 3 x 3 = 9 tokens, more than the budget, and the partly prefilled prompt
    (5 of its 20 tokens) gets no chunk until they finish."""
    spec = SimpleNamespace(draft_tokens=2, acceptance=1.0)
    stub = Stub(budget=8, chunked=True, spec=spec, block=4, gains=lambda steps, b: np.full((steps, b), 3))
    out = serve(stub, [0.0] * 4, [1, 1, 1, 20], [10, 10, 10, 2], rng=Draws())
    assert stub.calls[0] == (8, 4, [1, 1, 1, 5], [0, 0, 0, 0])
    assert [call[:2] for call in stub.calls[1:4]] == [(9, 3)] * 3
    assert [call[3] for call in stub.calls[1:4]] == [[1, 1, 1], [4, 4, 4], [7, 7, 7]]
    assert stub.calls[4] == (8, 1, [8], [5]) and list(out.step_tokens[:6]) == [8, 9, 9, 9, 8, 7]


def test_a_stalled_prompts_blocks_count_when_the_decodes_need_room():
    """The same requests with room for 36 bytes: before the fourth step the decodes hold 8 tokens each and would
    hold 11 (3 blocks each, 36 bytes) beside the stalled prompt's 5 (2 blocks, 8 bytes): 44 > 36, so the latest
    admitted, the stalled prompt, gives its blocks back."""
    spec = SimpleNamespace(draft_tokens=2, acceptance=1.0)
    stub = Stub(budget=8, chunked=True, spec=spec, room=36, block=4, gains=lambda steps, b: np.full((steps, b), 3))
    out = serve(stub, [0.0] * 4, [1, 1, 1, 20], [10, 10, 10, 2], rng=Draws())
    assert out.preemptions >= 1


def test_a_mixed_step_draws_each_decodes_accepted_drafts():
    """Chunked, k = 2: a decode takes k + 1 tokens of the budget of 8 and gains 1 + min(accepted, k) tokens,
    accepted = geometric(1 - acceptance) - 1 drawn over every running sequence."""
    spec = SimpleNamespace(draft_tokens=2, acceptance=0.25)
    t1 = price([2], [0])
    stub = Stub(budget=8, chunked=True, spec=spec)
    draws = Draws([2, 5], [1, 1])
    out = serve(stub, [0.0, t1], [2, 10], [4, 1], rng=draws)
    # request 0 decodes 3 tokens after 2; request 1 takes the 5 left; request 0 gains 1 + 1, then request 1 its
    # last 5 beside request 0's 3 after 2 + 3 - 1 cached, gaining 1 + 0: 4 tokens, its answer
    s = [t1, price([3, 5], [2, 0]), price([3, 5], [4, 5])]
    assert draws.asked == [(0.75, 2), (0.75, 2)]
    assert list(out.step_tokens) == [2, 8, 8] and list(out.step_sequences) == [1, 2, 2]
    np.testing.assert_array_equal(out.finish_s, [sum(s), sum(s)])
    assert out.first_token_s[1] == sum(s)


def test_a_sure_draft_gains_every_draft_without_a_draw():
    """acceptance 1: every decode gains k + 1 tokens and nothing is drawn."""
    spec = SimpleNamespace(draft_tokens=2, acceptance=1.0)
    draws = Draws()
    out = serve(Stub(budget=8, chunked=True, spec=spec), [0.0, price([2], [0])], [2, 8], [4, 1], rng=draws)
    assert draws.asked == [] and list(out.step_tokens) == [2, 8, 3]
    assert out.finish_s[0] == out.step_end_s[1]  # 1 + 3 tokens


# --- closed loops and the front end ------------------------------------------------------------------------------


def test_one_client_sends_each_request_as_the_last_ends_and_the_front_end_delays_each(fixed_front_end):
    """concurrency 1, delay 0.5: each request reaches the engine half a second after it is sent; the next is sent
    when it finishes; the arrivals returned are the sends."""
    out = serve(Stub(), [9.0, 9.0, 9.0], [4, 4, 4], [2, 2, 2], concurrency=1, delay_s=0.5)
    one = price([4], [0]) + price([1], [4])
    sent = [0.0, 0.5 + one, 1.0 + 2 * one]
    np.testing.assert_array_equal(out.arrival_s, sent)
    np.testing.assert_array_equal(out.finish_s, [s + 0.5 + one for s in sent])
    np.testing.assert_array_equal(out.first_token_s, [s + 0.5 + price([4], [0]) for s in sent])


def test_c_clients_send_as_many_requests_as_finish_until_all_are_sent():
    """concurrency 2 over 3 requests: both first requests finish in one step, but only one request is left."""
    out = serve(Stub(), [0.0] * 3, [4, 4, 4], [1, 1, 1], concurrency=2)
    t1 = price([4, 4], [0, 0])
    np.testing.assert_array_equal(out.arrival_s, [0.0, 0.0, t1])
    np.testing.assert_array_equal(out.finish_s, [t1, t1, t1 + price([4], [0])])


def test_more_clients_than_requests_send_them_all_at_once():
    """More clients than requests: every request is sent at 0 and none is sent after a finish."""
    out = serve(Stub(), [5.0] * 2, [4, 4], [1, 2], concurrency=3)
    assert list(out.arrival_s) == [0.0, 0.0] and list(out.step_tokens) == [8, 1]


def test_open_loop_arrivals_reach_the_engine_after_the_front_end(fixed_front_end):
    """Each request reaches the scheduler ``delay_s`` after it is sent; the arrivals returned are the sends."""
    out = serve(Stub(), [1.0, 5.0], [4, 4], [1, 1], delay_s=0.25)
    np.testing.assert_array_equal(out.arrival_s, [1.0, 5.0])
    np.testing.assert_array_equal(out.first_token_s, [1.25 + price([4], [0]), 5.25 + price([4], [0])])


def test_prefilled_requests_arrive_with_their_first_token_and_decode_together():
    """A decode pool's requests (``prefilled``): the cache holds the prompt, one token is generated, and no step
    prefills; they decode from the prompt's length."""
    stub = Stub(budget=1)
    out = serve(stub, [0.0, 0.0], [8, 6], [3, 3], prefilled=True)
    s = [price([1, 1], [8, 6]), price([1, 1], [9, 7])]
    assert list(out.step_tokens) == [2, 2] and stub.calls == []
    np.testing.assert_array_equal(out.finish_s, [sum(s)] * 2)
    assert np.isnan(out.first_token_s).all()


# --- the real prices: Priced and Engine on a tiny model ----------------------------------------------------------

TINY = {
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "vocab_size": 256,
}
MODEL = hw.ModelShape.from_hf_config(TINY, key="tiny-llama")
WINDOWED = hw.ModelShape.from_hf_config({**TINY, "model_type": "mistral", "sliding_window": 8}, key="tiny-mistral")
DRAFTER = hw.ModelShape.from_hf_config({**TINY, "num_hidden_layers": 1}, key="tiny-drafter")
# 4 GFLOP/s and 1 GB/s: a decode of 8 sequences is compute-bound at first, and memory-bound once their caches grow
TOY = hw.custom_chip("toy", peak_flops_per_s=4e9, hbm_bytes_per_s=1e9, hbm_bytes=1e6)
NODE = hw.cluster("hgx-h100-ndr")
BF16 = as_precision("bf16")
FP8_KV = as_precision(None, weight_dtype="bf16", kv_dtype="fp8", activation_dtype="bf16", compute_dtype="bf16")
KV_PER_TOKEN = 2 * 2 * 2 * 16 * 2  # K and V, 2 layers, 2 KV heads of 64 / 4 = 16, 2 bytes (bf16)


def options(estimate="bound", efficiency=None):
    return dict(expert_parallel=False, efficiency=efficiency or Efficiency(), estimate=estimate)


def place(n_chips):
    return (TOY, None) if n_chips == 1 else (NODE.chip, hw.group_topology(NODE, n_chips, 1, n_chips))


def priced(model, n_chips, estimate, new, context, precision=BF16, efficiency=None):
    """Seconds of one step from ``StepPricer.price``: its tokens and sequences, the attention FLOPs of each
    sequence's new tokens after its context, and the KV bytes each sequence then holds (stored ``copies`` times
    where the chips outnumber the KV heads: ceil(2 / n) x n / 2)."""
    chip, topology = place(n_chips)
    pricer = StepPricer(model, chip, topology, n_chips, precision, efficiency=efficiency or Efficiency())
    copies = -(-2 // n_chips) * n_chips / 2
    flops = sum(model.table().attention_flops(n, c) for n, c in zip(new, context))
    moved = sum(model.kv_bytes(n + c, precision.kv_dtype) for n, c in zip(new, context)) * copies
    price_, _, _ = pricer.price(sum(new), len(new), flops, moved)
    return price_.bound_s if estimate == "bound" else price_.forecast_s


def target(model, n_chips, estimate, precision=BF16, efficiency=None, max_tokens=16):
    chip, topology = place(n_chips)
    return Priced(model, chip, topology, n_chips, precision, options(estimate, efficiency), max_tokens)


def test_the_tiny_model_is_the_one_the_arithmetic_assumes():
    """The tiny model's KV bytes a token and its window, as the hand arithmetic below takes them."""
    assert MODEL.kv_bytes_per_token("bf16") == KV_PER_TOKEN and MODEL.windows == () and MODEL.mla is None
    assert WINDOWED.windows == (8, 8) and WINDOWED.kv_bytes(20) == 2 * 8 * KV_PER_TOKEN / 2  # 8 tokens a layer


@pytest.mark.parametrize("model", [MODEL, WINDOWED], ids=["plain", "windowed"])
@pytest.mark.parametrize("n_chips", [1, 2, 4])
@pytest.mark.parametrize("estimate", ["bound", "forecast"])
@pytest.mark.parametrize("overlap", [False, True])
def test_a_steps_price_is_the_pricers_for_its_tokens_sequences_and_attention(model, n_chips, estimate, overlap):
    """``Priced.step_s`` combines the pricer's tables as ``hwlib.pricing.step_seconds`` combines a step: the same
    seconds as pricing the step whole (the bound hides the collectives behind the work, the forecast adds them
    and its overheads; the parts overlap or not as the efficiency says), on one chip and on 2 and 4 of a node (4
    chips store the two KV heads twice)."""
    efficiency = Efficiency(parts_overlap=overlap)
    new, context = [5, 1, 1], [0, 12, 30]
    for precision in (BF16, FP8_KV):
        step = target(model, n_chips, estimate, precision, efficiency).step_s(7, 3, np.array(new), np.array(context))
        expected = priced(model, n_chips, estimate, new, context, precision, efficiency)
        assert float(step) == pytest.approx(expected, rel=1e-12)


def test_a_step_past_the_tables_grows_them():
    """The tables are sized for the engine's budget; a longer step (a preempted request's recompute) grows them."""
    priced_ = target(MODEL, 1, "bound", max_tokens=16)
    for tokens in (17, 40, 16):
        step = priced_.step_s(tokens, 1, np.array([tokens]), np.array([3]))
        assert float(step) == pytest.approx(priced(MODEL, 1, "bound", [tokens], [3]), rel=1e-12)


@pytest.mark.parametrize("model", [MODEL, WINDOWED], ids=["plain", "windowed"])
def test_decode_steps_read_one_more_token_each_step(model):
    """``decode_s``: the i-th decode step of one token per sequence comes after context + i tokens."""
    context = np.array([10, 3, 25])
    for estimate, n_chips in (("bound", 1), ("forecast", 1), ("forecast", 4)):
        steps = target(model, n_chips, estimate).decode_s(context, 4)
        expected = [priced(model, n_chips, estimate, [1, 1, 1], context + i) for i in range(4)]
        np.testing.assert_allclose(steps, expected, rtol=1e-12)


def test_a_decode_line_holds_while_the_same_roofline_term_is_the_larger():
    """At the bound on the toy chip 8 decodes are compute-bound at first: the steps are first + growth x i while
    the compute term is the larger, and the line's step count is the number of such steps; after it the memory
    term (a KV read costs 256 / 1e9 s, twice a pair's 512 FLOPs at 4e9) takes over, above the line."""
    context = np.array([10, 20, 30, 5, 7, 9, 11, 40])
    first, growth, steps = target(MODEL, 1, "bound").decode_line(context)
    at = [priced(MODEL, 1, "bound", [1] * 8, context + i) for i in (0, 1)]
    assert first == pytest.approx(at[0], rel=1e-12) and growth == pytest.approx(at[1] - at[0], rel=1e-9)
    assert growth == pytest.approx(8 * 2 * 2 * 4 * 16 * 2 / 4e9, rel=1e-12)  # 8 pairs more: 4 FLOPs x heads x dim
    pricer = StepPricer(MODEL, TOY, None, 1, BF16)

    def terms(i):
        flops = sum(MODEL.table().attention_flops(1, c + i) for c in context)
        price_, _, _ = pricer.price(8, 8, flops, KV_PER_TOKEN * float((context + i + 1).sum()))
        return price_.compute_s, price_.memory_s, price_.bound_s

    last, after = terms(steps - 1), terms(steps)
    assert last[0] >= last[1] and after[0] < after[1]  # the compute term the larger through the line's last step
    assert first + growth * (steps - 1) == pytest.approx(last[2], rel=1e-9)
    assert after[2] > first + growth * steps * (1 + 1e-9)


def test_a_decode_line_is_endless_where_the_larger_term_also_grows_faster():
    """With an fp8 cache a read costs 128 / 1e9 s, the same as a pair's FLOPs: the compute term stays the larger."""
    context = np.array([10, 20, 30, 5, 7, 9, 11, 40])
    first, growth, steps = target(MODEL, 1, "bound", FP8_KV).decode_line(context)
    assert steps == np.inf and first == pytest.approx(priced(MODEL, 1, "bound", [1] * 8, context, FP8_KV), rel=1e-12)
    far = priced(MODEL, 1, "bound", [1] * 8, context + 1000, FP8_KV)
    assert first + 1000 * growth == pytest.approx(far, rel=1e-9)


@pytest.mark.parametrize("n_chips", [1, 2])
@pytest.mark.parametrize("overlap", [False, True])
def test_a_forecast_decode_line_follows_the_forecast(n_chips, overlap):
    """The forecast's line: the parts one after another (attention at the slower of its two rates per read) or
    overlapped (the larger roofline term), with the exposed collectives and the overheads added."""
    context = np.array([100, 7, 300])
    efficiency = Efficiency(parts_overlap=overlap)
    first, growth, steps = target(MODEL, n_chips, "forecast", efficiency=efficiency).decode_line(context)
    for i in (0, 1, 40, min(steps - 1, 500)):
        expected = priced(MODEL, n_chips, "forecast", [1] * 3, context + i, efficiency=efficiency)
        assert first + growth * i == pytest.approx(expected, rel=1e-9), i
    if np.isfinite(steps):
        after = priced(MODEL, n_chips, "forecast", [1] * 3, context + steps, efficiency=efficiency)
        assert after > first + growth * steps


def test_no_line_for_windows_or_collectives_the_bound_hides():
    """Windowed caches stop growing: those steps are priced one by one, as are the bound's where collectives run
    behind the work (the step is the slower of the two)."""
    context = np.array([10, 20])
    assert target(WINDOWED, 1, "bound").decode_line(context) is None
    assert target(WINDOWED, 1, "forecast").decode_line(context) is None
    assert target(MODEL, 2, "bound").decode_line(context) is None
    assert target(MODEL, 2, "forecast").decode_line(context) is not None


@pytest.mark.parametrize("estimate", ["bound", "forecast"])
def test_a_latent_cache_is_a_line_once_every_sequence_absorbs(estimate):
    """DeepSeek-V3 (128 heads, a 512-wide latent, 64 rope dims, keys 192 and values 128 wide): absorbed, a pair costs
    2 x 128 x (2 x 512 + 64) = 278,528 FLOPs a layer; expanded, 2 x 128 x 320 = 81,920 and 2 x 512 x 128 x 256 =
    33,554,432 per cached token. From one cached token on absorbing is cheaper, and the decode steps are a line at
    the absorbed pair's FLOPs, as step by step; a sequence with nothing cached breaks the line."""
    deepseek = hw.model("deepseek-v3")
    latent = Priced(deepseek, TOY, None, 1, BF16, options(estimate), 4)
    extra, expansion = 278_528 - 81_920, 33_554_432
    assert latent.line_from == np.ceil(extra / (expansion - extra)) == 1
    assert latent.pair_flops == deepseek.n_layers * 278_528
    context = np.array([10, 20])
    first, growth, steps = latent.decode_line(context)
    by_step = [float(latent.step_s(2, 2, np.ones(2), context + i)) for i in range(6)]
    for i in range(int(min(steps, 6))):
        assert first + growth * i == pytest.approx(by_step[i], rel=1e-9)
    np.testing.assert_allclose(latent.decode_s(context, 6), by_step, rtol=1e-12)
    assert latent.decode_line(np.array([0, 20])) is None
    np.testing.assert_allclose(
        latent.decode_s(np.array([0, 20]), 2),
        [float(latent.step_s(2, 2, np.ones(2), np.array([i, 20 + i]))) for i in (0, 1)],
    )


def tiny_engine(n_chips=1, *, kv_fraction=0.5, block=16, spec=None, model=MODEL, estimate="bound", hbm=1e6):
    chip = hw.custom_chip("toy", peak_flops_per_s=4e9, hbm_bytes_per_s=1e9, hbm_bytes=hbm) if n_chips == 1 else NODE
    efficiency = Efficiency(kv_fraction=kv_fraction)
    return Engine(model, chip, n_chips, BF16, options(estimate, efficiency), 64, 8, block, False, spec, False)


def test_the_cache_is_the_engines_share_of_the_memory_the_weights_leave():
    """room = kv_fraction x (chips x capacity - the weights' bytes), the default share where none is given."""
    weights = 2 * MODEL.params()
    assert tiny_engine().room == pytest.approx(0.5 * (1e6 - weights), rel=1e-12)
    assert tiny_engine(kv_fraction=0.25, hbm=2e6).room == pytest.approx(0.25 * (2e6 - weights), rel=1e-12)
    two = tiny_engine(2, kv_fraction=0.75)
    assert two.room == pytest.approx(0.75 * (2 * NODE.chip.capacity_bytes - weights), rel=1e-12)
    default = Engine(MODEL, TOY, 1, BF16, options(), 64, 8, 16, False, None, False)
    fraction = resolve(TOY, "bf16", Efficiency()).kv_fraction
    assert default.room == pytest.approx(fraction * (1e6 - weights), rel=1e-12)
    with pytest.raises(ValueError, match="tiny-llama's weights do not fit on 1 x"):
        tiny_engine(hbm=weights)


def test_a_sequence_holds_its_cache_in_whole_blocks():
    """Blocks of 16 tokens: 1 and 16 tokens hold one block, 17 two; 4 chips store the 2 KV heads twice."""
    engine = tiny_engine(block=16)
    np.testing.assert_array_equal(engine.held_bytes(np.array([1, 16, 17])), np.array([16, 16, 32]) * KV_PER_TOKEN)
    assert engine.one_held_bytes(17) == 32 * KV_PER_TOKEN and engine.one_held_bytes(16) == 16 * KV_PER_TOKEN
    four = tiny_engine(4, block=4)
    assert four.one_held_bytes(5) == 8 * KV_PER_TOKEN * 2
    np.testing.assert_array_equal(four.held_bytes(np.array([4, 5])), np.array([4, 8]) * KV_PER_TOKEN * 2)


def test_a_windowed_sequence_holds_at_most_its_window_of_each_layers_blocks():
    """Window 8, blocks of 4: 3 tokens hold one block a layer, 9 round up to 12 and 20 to 20, each layer keeping 8."""
    engine = tiny_engine(block=4, model=WINDOWED)
    per_layer = KV_PER_TOKEN / 2
    np.testing.assert_array_equal(engine.held_bytes(np.array([3, 9, 20])), np.array([4, 8, 8]) * 2 * per_layer)
    assert engine.one_held_bytes(3) == 4 * 2 * per_layer and engine.one_held_bytes(9) == 8 * 2 * per_layer
    four = tiny_engine(4, block=4, model=WINDOWED)
    assert four.one_held_bytes(3) == 4 * 2 * per_layer * 2


def test_an_engine_prices_decodes_as_its_model():
    """Without a drafter the engine's steps and decode stretches are its model's (``Priced``)."""
    engine, context = tiny_engine(), np.array([10, 20])
    assert engine.decode_line(context) == engine.target.decode_line(context)
    np.testing.assert_array_equal(engine.decode_s(context, 3), engine.target.decode_s(context, 3))
    plain = engine.step_s(3, 2, np.array([1, 2]), context)
    assert plain == pytest.approx(priced(MODEL, 1, "bound", [1, 2], [10, 20]), rel=1e-12)


@pytest.mark.parametrize("estimate", ["bound", "forecast"])
def test_a_verifying_step_adds_the_drafters_k_single_token_steps(estimate):
    """k = 2: each decode verifies 3 tokens after its context; the drafter first proposes 2, one token a step, after
    context and context + 1 tokens, over the sequences that verify."""
    spec = hw.Speculation(2, 0.5, DRAFTER)
    engine, context = tiny_engine(spec=spec, estimate=estimate), np.array([10, 20])
    verify = priced(MODEL, 1, estimate, [3, 3], context)
    drafts = sum(priced(DRAFTER, 1, estimate, [1, 1], context + ahead) for ahead in range(2))
    assert engine.step_s(6, 2, np.array([3, 3]), context) == pytest.approx(verify + drafts, rel=1e-12)


def test_a_prefill_step_of_a_speculative_engine_drafts_nothing():
    """Only the sequences that verify drafts draft (``Engine.step_s``): a prefill step is the model's alone."""
    engine = tiny_engine(spec=hw.Speculation(2, 0.5, DRAFTER))
    step = engine.step_s(12, 1, np.array([12]), np.array([0]))
    assert step == pytest.approx(priced(MODEL, 1, "bound", [12], [0]), rel=1e-12)


@pytest.mark.parametrize("estimate", ["bound", "forecast"])
def test_speculative_stretches_gain_one_token_and_the_accepted_drafts(estimate):
    """A stretch's steps: each sequence gains 1 + min(accepted, k) tokens, accepted = geometric(1 - acceptance) - 1,
    and each step verifies k + 1 tokens after the tokens gained before it, after the drafter's k steps."""
    spec = hw.Speculation(2, 0.75, DRAFTER)
    engine, context = tiny_engine(spec=spec, estimate=estimate), np.array([10, 20])
    draws = Draws([[1, 3], [2, 1], [5, 1]])
    seconds, gains = engine.speculative_steps(context, 3, draws)
    assert draws.asked == [(0.25, (3, 2))]  # a draft missed with probability 1 - 0.75
    np.testing.assert_array_equal(gains, [[1, 3], [2, 1], [3, 1]])
    before = context + np.array([[0, 0], [1, 3], [3, 4]])  # the tokens gained before each step
    expected = [
        priced(MODEL, 1, estimate, [3, 3], c) + sum(priced(DRAFTER, 1, estimate, [1, 1], c + a) for a in range(2))
        for c in before
    ]
    np.testing.assert_allclose(seconds, expected, rtol=1e-12)
    sure = tiny_engine(spec=hw.Speculation(2, 1.0, DRAFTER), estimate=estimate)
    seconds, gains = sure.speculative_steps(context, 2, Draws())
    np.testing.assert_array_equal(gains, [[3, 3], [3, 3]])
    second = priced(MODEL, 1, estimate, [3, 3], context + 3)
    second += sum(priced(DRAFTER, 1, estimate, [1, 1], context + 3 + a) for a in range(2))
    assert seconds[1] == pytest.approx(second, rel=1e-12)


# --- an engine that does not split a decode's attention: the longest walk ---------------------------------------


def walking(estimate="forecast", share=0.01, splits=False, overlap=False):
    """``Priced`` on the toy chip for an engine whose decode attention walks each (sequence, KV head) in one block
    (``splits=False``), one SM reaching ``share`` times its even share of HBM."""
    settings = {**options(estimate, Efficiency(walk_share=share, parts_overlap=overlap)), "splits_attention": splits}
    return Priced(MODEL, TOY, None, 1, BF16, settings, 16)


def walk_per_token(share=0.01):
    """Seconds one cached token adds to the longest walk: a KV head's 16-bit K and V in both layers (KV_PER_TOKEN over
    the 2 KV heads) at share x the toy chip's bandwidth over its SMs (the pessimistic record's)."""
    sms = float(hw.efficiency.kernel_record(TOY).parallel_tiles.value)
    return KV_PER_TOKEN / 2 / (share * 1e9 / sms)


def test_an_unsplit_decode_waits_for_its_longest_walk_alone():
    """A decode step grows by the walk's time per token with its longest sequence's context, whatever the shorter
    ones hold; with a fast walk, an engine that splits, or at the bound, the step is the split engine's."""
    priced_ = walking()
    step = lambda context: float(priced_.step_s(3, 3, np.ones(3), np.array(context)))  # noqa: E731
    assert step([10, 3, 40]) - step([10, 3, 25]) == pytest.approx(15 * walk_per_token(), rel=1e-9)
    assert step([24, 3, 40]) == pytest.approx(step([10, 3, 40]), rel=1e-12)  # the shorter walks end first
    split = float(walking(splits=True).step_s(3, 3, np.ones(3), np.array([10, 3, 40])))
    assert step([10, 3, 40]) > split
    context = np.array([10, 3, 40])
    plain = float(
        target(MODEL, 1, "forecast", efficiency=Efficiency(parts_overlap=False)).step_s(3, 3, np.ones(3), context)
    )
    for same in (walking(share=np.inf), walking(share=0.01, splits=True)):
        assert float(same.step_s(3, 3, np.ones(3), context)) == pytest.approx(plain, rel=1e-12)
    bound = float(target(MODEL, 1, "bound").step_s(3, 3, np.ones(3), context))
    assert float(walking(estimate="bound").step_s(3, 3, np.ones(3), context)) == pytest.approx(bound, rel=1e-12)
    with pytest.raises(ValueError, match="walk_share"):
        Efficiency(walk_share=0.0)


def test_a_prompt_chunk_walks_nothing():
    """Only decodes (one new token) walk: a step of one prompt chunk is the split engine's."""
    chunk = (8, 1, np.array([8]), np.array([0]))
    assert float(walking().step_s(*chunk)) == pytest.approx(float(walking(splits=True).step_s(*chunk)), rel=1e-12)


@pytest.mark.parametrize("share", [0.01, 0.3, 3.0])
def test_an_unsplit_decode_line_is_the_steps_while_the_same_term_is_the_larger(share):
    """``decode_line`` of an unsplit engine: its steps match ``decode_s`` step by step for as many steps as it says
    (the walk's line or the reads' line, whichever is the larger at first), and with parts overlapping there is no
    line (the roofline's memory term and the walk make a max)."""
    context = np.array([10, 20, 30, 5, 7, 9, 11, 40])
    priced_ = walking(share=share)
    first, growth, steps = priced_.decode_line(context)
    shown = int(min(steps, 50))
    expected = priced_.decode_s(context, shown)
    np.testing.assert_allclose(first + growth * np.arange(shown), expected, rtol=1e-9)
    if np.isfinite(steps):
        after = priced_.decode_s(context, shown + 1)[-1]
        assert after > first + growth * shown * (1 + 1e-12)
    assert walking(share=share, overlap=True).decode_line(context) is None


# --- the front end's time per request, drawn ----------------------------------------------------------------------


def test_front_end_waits_are_exponential_with_their_mean_from_a_stream_of_their_own():
    """Drawn with the mean given (exponential: its standard deviation equals its mean), none for no front end, and
    from a child stream: the run's generator then draws what it would have drawn without them."""
    from hwlib.serving.engine import front_end_waits

    rng = np.random.default_rng(3)
    waits = front_end_waits(rng, 0.01, 40_000)
    assert waits.mean() == pytest.approx(0.01, rel=0.03) and waits.std() == pytest.approx(0.01, rel=0.03)
    assert rng.random() == np.random.default_rng(3).random()
    assert not front_end_waits(rng, 0.0, 5).any()


def test_requests_reach_the_scheduler_in_the_order_sent():
    """Drawn waits never let a later request overtake an earlier one: each reaches the scheduler no sooner than the
    one sent before it, and at least its own wait after its send."""
    from hwlib.serving.engine import front_end_waits

    out = serve(Stub(), np.arange(50) * 1e-3, [4] * 50, [1] * 50, rng=np.random.default_rng(0), delay_s=0.02)
    waits = front_end_waits(np.random.default_rng(0), 0.02, 50)
    reached = np.maximum.accumulate(np.arange(50) * 1e-3 + waits)
    assert (np.diff(reached) >= 0).all() and (reached > np.arange(50) * 1e-3 + waits - 1e-15).all()
    np.testing.assert_array_equal(out.arrival_s, np.arange(50) * 1e-3)  # the sends
    assert (out.first_token_s >= reached).all()


def test_drawn_waits_break_a_closed_loops_lockstep(monkeypatch):
    """Identical requests from 16 clients: with the wait fixed each wave's first tokens come in one step, every
    request's the same time after its send; drawn they spread over more steps and their times to first token vary."""
    model, node = hw.model("llama-3-8b"), hw.cluster("hgx-h100-ndr")
    options = dict(prompt_len=200, output_len=50, n_requests=160, concurrency=16, engine="trtllm")
    drawn = hw.simulate_serving(model, node, **options)
    monkeypatch.setattr(hw.data.assumptions, "FRONT_END_SPREAD", "fixed")
    fixed = hw.simulate_serving(model, node, **options)
    assert len(np.unique(fixed.first_token_s)) == 10 and fixed.ttft_s.std() < 1e-12
    assert len(np.unique(drawn.first_token_s)) > 2 * 10 and drawn.ttft_s.std() > 0.1 * drawn.ttft_s.mean()


def test_an_unsplit_step_and_its_decode_stretch_price_the_same_walk():
    """One decode step priced alone (``step_s``: the walk reads its context and the new token) costs what the first
    step of a decode stretch from the same context costs (``decode_s``), and an fp8 cache walks as long per token
    as a 16-bit one (it is widened before its dot products)."""
    context = np.array([40, 3, 17])
    for share in (0.01, 3.0):
        priced_ = walking(share=share)
        alone = float(priced_.step_s(3, 3, np.ones(3), context))
        assert alone == pytest.approx(float(priced_.decode_s(context, 1)[0]), rel=1e-12)
    settings = {**options("forecast", Efficiency(walk_share=0.01)), "splits_attention": False}
    fp8 = Priced(MODEL, TOY, None, 1, FP8_KV, settings, 16)
    assert fp8.walk == pytest.approx(walking().walk, rel=1e-12) and fp8.walk == pytest.approx(walk_per_token())
