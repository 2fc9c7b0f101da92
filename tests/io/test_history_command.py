"""``bringup history`` over a real sqlite file in ``$BRINGUP_DATA_DIR``."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tests.engine.startup_factory import FP, finished_run
from tui.cli import main
from tui.commands.history import summarize, trend
from tui.engine.startup.vocabulary import FailureKind, Outcome
from tui.io.store.history_store import add_run, database_path

HOSTILE_MODEL = "evil\x1b]52;c;cm0gLXJmIC8=\x07model"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BRINGUP_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("BRINGUP_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path


def _fill(scales: list[float], *, profile: str = "kimi") -> None:
    database_path().parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(database_path())) as db:
        for i, scale in enumerate(scales):
            add_run(db, dataclasses.replace(finished_run(scale, recorded_at=i), profile=profile))
        hung = finished_run(1.0, recorded_at=100.0)
        hung = dataclasses.replace(
            hung, outcome=Outcome.FAILED, failure=FailureKind.HANG, total_seconds=None,
            profile=profile,
        )  # fmt: skip
        add_run(db, hung)
        other = dataclasses.replace(FP, model=HOSTILE_MODEL)
        add_run(db, dataclasses.replace(finished_run(2.0, fingerprint=other), profile="other"))


def test_json_gives_median_p95_counts_and_trend(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill([1.0, 1.0, 1.0, 1.2, 1.2, 1.2])
    assert main(["history", "kimi", "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["fingerprints"]
    assert entry["runs"] == 7
    assert entry["outcomes"] == {"ready": 6, "failed": 1}
    assert entry["failures"] == {"hang": 1}
    assert entry["total"]["median"] == pytest.approx(660.0)
    assert entry["trend"]["change"] == pytest.approx(0.2)
    stages = {(s["stage"], s["draft"]): s for s in entry["stages"]}
    assert stages[("cuda_graph", False)]["median"] == pytest.approx(165.0)
    assert entry["fingerprint"]["model"] == FP.model


def test_text_lists_every_fingerprint_without_escapes(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill([1.0, 1.1, 0.9, 1.0])
    assert main(["history"]) == 0
    out = capsys.readouterr().out
    assert "Kimi-K2.5" in out
    assert "runs: 5 (1 failed, 4 ready); failures: hang 1" in out
    assert "trend: steady" in out
    assert "CUDA graphs" in out
    assert "\x1b" not in out
    assert "\x07" not in out
    assert "evil" in out


def test_no_history_is_not_an_error(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "nobody"]) == 0
    assert "No start-up history for profile 'nobody'" in capsys.readouterr().out
    assert main(["history", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fingerprints"] == []
    assert not database_path().exists()


def test_a_corrupt_database_gives_a_clear_error(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database_path().write_bytes(b"this is not a database" * 100)
    assert main(["history"]) == 4
    assert "cannot read" in capsys.readouterr().err


def test_the_configured_data_dir_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("BRINGUP_DATA_DIR", raising=False)
    config = tmp_path / "config.toml"
    config.write_text(f'data_dir = "{tmp_path / "kept"}"\n')
    monkeypatch.setenv("BRINGUP_DATA_DIR", str(tmp_path / "kept"))
    _fill([1.0])
    monkeypatch.delenv("BRINGUP_DATA_DIR")
    assert main(["history", "--json", "--config", str(config)]) == 0
    assert len(json.loads(capsys.readouterr().out)["fingerprints"]) == 2
    config.write_text("data_dir = 3\n")
    assert main(["history", "--config", str(config)]) == 4
    assert "config.toml" in capsys.readouterr().err


def test_trend_needs_earlier_runs() -> None:
    assert trend([600.0, 610.0, 620.0]) is None
    shifted = trend([600.0, 600.0, 660.0, 660.0, 660.0])
    assert shifted is not None
    assert shifted.change == pytest.approx(0.1)
    assert summarize([]) == []


def test_the_installed_command_runs(data_dir: Path) -> None:
    _fill([1.0])
    result = subprocess.run(
        [sys.executable, "-m", "tui", "history", "--json"],
        capture_output=True, text=True, check=False,
        env={"BRINGUP_DATA_DIR": str(data_dir), "HOME": str(data_dir)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["fingerprints"]) == 2
