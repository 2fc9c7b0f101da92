"""Decode figures are kept as raw text and read late, with the same result as reading each."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.engine.bench.bench_view import accepts_between
from tui.engine.servers.hits import DecodeHit, SpecHit
from tui.engine.startup.decode_stats import DecodeTracker
from tui.engine.startup.decode_tail import LABELS, RING, TAIL_LINES, Block, FigureTail, Slot
from tui.engine.startup.snapshot import DecodeSummary, FigureSlots

LINES = [
    "[2026-01-01 00:00:00 TP0] Decode batch, accept len: 2.50, accept rate: 0.61, "
    "gen throughput (token/s): 41.25, #queue-req: 0, ",
    "Decode batch, #running-req: 1, gen throughput (token/s): 7.0, ",
    "Decode batch, accept len: 1.2.3, accept rate: ., gen throughput (token/s): 9" + "9" * 400,
    "Decode batch, accept len: accept len: 3.5, accept rate: 0.9",
    "Decode batch, nothing here",
    "accept rate: 0.25, accept rate: 0.5",
]
SLOTS: list[tuple[list[Slot], list[Slot], list[Slot]]] = [
    ([41.25], [2.5], [0.61]),
    ([7.0], [], []),
    ([None], [None], [None]),  # 10**400 is not finite, 1.2.3 and . are not numbers
    ([], [None, 3.5], [0.9]),  # the first label's slot holds the second label, not a number
    ([], [], []),
    ([], [], [0.25, 0.5]),
]
"""The slots of each line of ``LINES`` (gen throughput, accept length, accept rate), by hand."""
Step = tuple[str, int, int]
"""What happens next: ``("text", line index, repeats)``, ``("queue", ...)`` or
``("value", kind, value)``."""


def _reference(steps: list[Step]) -> tuple[list[list[Slot]], int]:
    """Every slot of every kind, read one line at a time, and the accept-length count."""
    slots: list[list[Slot]] = [[], [], []]
    count = 0
    for action, first, second in steps:
        if action == "value":
            slots[first].append(float(second))
            count += first == 1
            continue
        for kind in range(len(LABELS)):
            found = SLOTS[first][kind] * second
            slots[kind].extend(found)
            count += len(found) if kind == 1 else 0
    return slots, count


def _apply(tracker: DecodeTracker, step: Step) -> None:
    action, first, second = step
    if action == "text":
        tracker.add_text("\n".join([LINES[first]] * second), second)
    elif action == "queue":
        tracker.pending.extend([LINES[first]] * second)
    elif first == 0:
        tracker.add(DecodeHit(float(second)))
    else:
        tracker.add_spec(SpecHit(float(second), None) if first == 1 else SpecHit(None, second))


STEPS = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(["text", "queue"]),
            st.integers(0, len(LINES) - 1),
            st.sampled_from([1, 3, 200, RING, 3 * RING]),
        ),
        st.tuples(st.just("value"), st.integers(0, 2), st.integers(0, 9)),
    ),
    max_size=25,
)


@settings(max_examples=80, deadline=None)
@given(STEPS, st.integers(0, 30))
def test_late_reading_gives_the_latest_slots_of_each_kind(steps: list[Step], look: int) -> None:
    tracker = DecodeTracker()
    early: list[tuple[int, DecodeSummary]] = []
    for index, step in enumerate(steps):
        _apply(tracker, step)
        if index == look:
            early.append((index, tracker.summary()))
    summary = tracker.summary()
    slots, count = _reference(steps)
    gen, accept, rate = (tuple(kind[-RING:]) for kind in slots)
    assert summary.slots() == (gen, accept, rate)
    assert summary.accept_count == count
    assert summary.accept_len == tuple(value for value in accept if value is not None)
    for index, before in early:  # a summary taken earlier still reads what it saw then
        then, then_count = _reference(steps[: index + 1])
        assert before.slots() == tuple(tuple(kind[-RING:]) for kind in then)
        assert before.accept_count == then_count


def test_gaps_count_as_slots_but_only_readable_values_come_back() -> None:
    tracker = DecodeTracker()
    tracker.add_text("accept len: 2.0, accept len: x", 1)
    before = tracker.summary()
    huge = "9" * 400  # not a finite number
    tracker.add_text(f"accept len: {huge}\naccept len: 3.0, accept len: .\naccept len: 4.5", 3)
    after = tracker.summary()
    assert after.accept_count == 6
    assert after.accept_len == (2.0, 3.0, 4.5)
    assert accepts_between(before, after) == (3.0, 4.5)
    assert after.latest_accepts(1) == (4.5,)
    assert after.latest_accepts(0) == ()


def test_figures_are_read_once_and_only_when_looked_at() -> None:
    calls: list[int] = []

    def read() -> FigureSlots:
        calls.append(1)
        return ((1.0, None), (), (0.5,))

    summary = DecodeSummary(2, read=read)
    assert summary.lines == 2
    assert not calls
    assert summary.gen_throughput == (1.0,)
    assert summary.accept_rate == (0.5,)
    assert summary == DecodeSummary(2, read=read)
    assert len(calls) == 2  # one per summary
    assert summary != DecodeSummary(2, (1.0,), (), (0.5,))  # the gap is part of the value
    assert "gen_throughput=(1.0, None)" in repr(summary)


def test_a_summary_of_plain_values_compares_and_hashes_by_value() -> None:
    one = DecodeSummary(3, (1.0, 2.0), (2.5,), (), 1)
    assert one == DecodeSummary(3, (1.0, 2.0), (2.5,), (), 1)
    assert hash(one) == hash(DecodeSummary(3, (1.0, 2.0), (2.5,), (), 1))
    assert one != DecodeSummary(3, (1.0, 2.0), (2.5,), (), 2)
    assert one != "DecodeSummary"


def test_the_kept_text_stays_bounded_and_rare_figures_survive_in_the_floor() -> None:
    plain = "\n".join(["Decode batch, gen throughput (token/s): 1.0, "] * 300)
    tail = FigureTail()
    for _ in range(200):
        tail.add_block(Block(plain, 300))
    assert sum(block.lines for block in tail.blocks) <= TAIL_LINES + 300
    tracker = DecodeTracker()
    tracker.add_text("accept rate: 0.5", 1)
    for _ in range(200):
        tracker.add_text(plain, 300)
    summary = tracker.summary()
    assert summary.accept_rate == (0.5,)
    assert summary.gen_throughput == (1.0,) * RING
    assert summary.lines == 60_001
