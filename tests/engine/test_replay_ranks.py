"""``bringup replay`` for people: ranks with the same timeline print as one group, the failure
excerpt keeps the innermost frames of the engine's code, kinds print as words."""

from __future__ import annotations

import json
from pathlib import Path

from tests.engine.engine_helpers import run_text, sglang_lines
from tests.engine.test_corpus import _replay
from tui.engine.logs.replay_report import rank_groups, report_json, report_text

DP16_FILE = "012_sglang_ascend-dp16-ep-deepseek-r1-npu-oom-graph-capture.log"


def _dp16_log() -> str:
    """A DP16 start: every rank walks the same stages, weight loading takes 10 to 25 s."""
    text = sglang_lines("server_args=ServerArgs(model_path='/m', tp_size=16, dp_size=16)", rank="")
    for i in range(16):
        tag = f"DP{i} TP{i} EP{i}"
        text += sglang_lines("Init torch distributed begin.", rank=tag, second=1)
        text += sglang_lines("Load weight begin. avail mem=70.00 GB", rank=tag, second=3)
        text += sglang_lines(
            "Load weight end. type=X, dtype=torch.bfloat16, avail mem=60.00 GB, "
            "mem usage=10.00 GB.",
            rank=tag,
            second=13 + i,
        )
        text += sglang_lines(
            "KV Cache is allocated. #tokens: 1000, K size: 1.00 GB, V size: 1.00 GB",
            rank=tag,
            second=30,
        )
    return text + sglang_lines("The server is fired up and ready to roll!", rank="", second=50)


def test_sixteen_identical_ranks_print_as_one_group() -> None:
    snapshot, _ = run_text(_dp16_log())
    assert len(snapshot.ranks) == 17
    assert [len(group) for group in rank_groups(snapshot.ranks)] == [1, 16]
    text = report_text(snapshot)
    assert text.count("weight loading") == 1
    weights = next(line for line in text.splitlines() if "weight loading" in line)
    assert weights.split()[-5:] == ["10.0", "/", "17.5", "/", "25.0"]
    assert "16 ranks" in text
    assert "DP0 TP0 EP0, DP1 TP1 EP1, … DP15 TP15 EP15" in text
    assert "DP7 TP7 EP7" not in text


def test_json_keeps_every_rank() -> None:
    snapshot, _ = run_text(_dp16_log())
    report = report_json(snapshot)
    assert len(report["stages"]) == 17
    assert report["stages"]["DP15 TP15 EP15"][2]["seconds"] == 25.0


def test_a_rank_with_another_timeline_gets_its_own_rows() -> None:
    late = sglang_lines("Init torch distributed begin.", rank="DP16 TP16 EP16", second=1)
    snapshot, _ = run_text(_dp16_log() + late)
    assert [len(group) for group in rank_groups(snapshot.ranks)] == [1, 16, 1]
    assert "DP16 TP16 EP16" in report_text(snapshot)


def test_multi_rank_corpus_log_collapses(shared: Path) -> None:
    snapshot = _replay(shared / "corpus" / "logs" / DP16_FILE)
    text = report_text(snapshot)
    assert "16 ranks" in text
    assert text.count("weight loading") == 1
    assert text.count("EP") < 10, "the sixteen rank tags are shortened"
    assert "failure   CUDA out of memory" in text


def _traceback(exception: str) -> str:
    frames = [
        ("/opt/sglang/python/sglang/srt/managers/scheduler.py", 3918, "run_scheduler_process"),
        ("/opt/sglang/python/sglang/srt/managers/tp_worker.py", 260, "__init__"),
        ("/opt/sglang/python/sglang/srt/model_executor/model_runner.py", 625, "initialize"),
        ("/opt/sglang/python/sglang/srt/model_executor/model_runner.py", 1380, "load_model"),
        ("/opt/sglang/python/sglang/srt/model_loader/loader.py", 704, "load_weights"),
        ("/usr/lib/python3/site-packages/torch/nn/modules/module.py", 1739, "_call_impl"),
    ]
    lines = "".join(
        f'  File "{path}", line {line}, in {name}\n    call()\n' for path, line, name in frames
    )
    head = sglang_lines(
        "server_args=ServerArgs(model_path='/m', tp_size=2)", rank=""
    ) + sglang_lines(
        "Load weight begin. avail mem=70.00 GB",
        "Scheduler hit an exception: Traceback (most recent call last):",
        rank="TP1",
        second=1,
    )
    return head + lines + exception + "\n"


def test_excerpt_keeps_the_innermost_frames_of_the_engine_and_the_exception() -> None:
    snapshot, _ = run_text(_traceback("RuntimeError: start (6) + length (6) exceeds size (6)."))
    failure = snapshot.failure
    assert failure is not None
    lines = failure.excerpt.splitlines()
    assert lines[0].startswith("Scheduler hit an exception")
    assert lines[-1] == "RuntimeError: start (6) + length (6) exceeds size (6)."
    frames = lines[1:-1]
    assert [frame.split(", in ")[-1] for frame in frames] == [
        "initialize",
        "load_model",
        "load_weights",
    ]
    assert all("line " in frame and "/sglang/" in frame for frame in frames)
    assert not any("torch" in line for line in lines)


def test_kinds_print_as_words_and_json_keeps_codes() -> None:
    snapshot, _ = run_text(_traceback("RuntimeError: bad shard"))
    text = report_text(snapshot)
    assert "failure   other exception on TP1 at line" in text
    assert "traceback_other" not in text
    assert json.loads(json.dumps(report_json(snapshot)))["failure"]["kind"] == "traceback_other"
    oom, _ = run_text(_traceback("torch.OutOfMemoryError: CUDA out of memory. Tried 1 GiB"))
    assert "failure   CUDA out of memory on TP1" in report_text(oom)
    assert report_json(oom)["failure"]["kind"] == "oom"
