"""The simulator's cold-cache scenarios through the real engine and judge, on a clock that
follows the simulated one: long JIT builds are not a hang while they finish, and a build that
hangs is STALLED within the phase's usual bound."""

from __future__ import annotations

from tests.engine.multinode_logs import FakeClock, Timed, node_log
from tui.engine.judge.judge import Signals, judge
from tui.engine.judge.stall import StallPolicy
from tui.engine.judge.verdict import Watched
from tui.engine.logs.log_engine import LogEngine
from tui.engine.startup.vocabulary import Phase, Stage, Verdict
from tui.engine.timing.estimate import default_expectations

EXPECTED = default_expectations(600.0)
POLICY = StallPolicy()
LOG_ONLY = Signals(watched=Watched(log=True, health=False))


def _verdicts(
    log: list[Timed], step: float = 5.0
) -> tuple[LogEngine, list[tuple[float, Verdict, str]]]:
    """Feed the log as the simulator writes it, judging every ``step`` seconds in between."""
    clock = FakeClock()
    engine = LogEngine(clock=clock)
    judged: list[tuple[float, Verdict, str]] = []
    at = 0.0
    for written, data in [*log, (log[-1][0] + 600.0, b"")]:
        while at < written:
            clock.now = at
            verdict = judge(engine.snapshot, LOG_ONLY, EXPECTED, at, POLICY)
            judged.append((at, verdict.verdict, verdict.reason))
            at += step
        clock.now = written
        engine.feed(data)
    return engine, judged


def test_a_cold_cache_shows_the_builds_and_is_never_stalled() -> None:
    engine, judged = _verdicts(node_log(2, 1, 0, scenario="jit-cold-cache"))
    verdicts = {verdict for _, verdict, _ in judged}
    assert Verdict.STALLED not in verdicts
    assert judged[-1][1] is Verdict.READY
    building = [reason for _, verdict, reason in judged if "AITER build" in reason]
    assert any("AITER build 5 done (module_moe_sorting)" in reason for reason in building)
    tp0 = engine.snapshot.rank("TP0")
    assert tp0 is not None
    assert [span.phase for span in tp0.phases] == [Phase.AITER_BUILD] * 8


def test_a_build_that_hangs_is_stalled_within_the_usual_bound() -> None:
    log = node_log(2, 1, 0, scenario="jit-hang")
    hung_at = next(at for at, data in log if b"start build [module_rmsnorm]" in data)
    _, judged = _verdicts(log)
    stalled = [(at, reason) for at, verdict, reason in judged if verdict is Verdict.STALLED]
    assert stalled, "the hanging build was never STALLED"
    first, reason = stalled[0]
    limit = POLICY.threshold(EXPECTED.phase_step(Phase.AITER_BUILD))
    assert first - hung_at <= limit + 5.0
    assert "no AITER build step" in reason
    assert Stage.KV_CACHE.label in reason
    assert judged[-1][1] is Verdict.STALLED  # and it stays so: nothing ends the hang
