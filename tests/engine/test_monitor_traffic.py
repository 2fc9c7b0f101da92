"""The monitor's own lines in a log: its requests and the prefill a health check makes."""

from __future__ import annotations

from tui.engine.servers.monitor_traffic import monitor_only, monitor_path

HEALTH = f'INFO:     127.0.0.1:5 - "GET {monitor_path("/health")} HTTP/1.1" 200 OK\n'.encode()
SCRAPE = f'INFO:     127.0.0.1:5 - "GET {monitor_path("/metrics")} HTTP/1.1" 200 OK\n'.encode()
PREFILL = (
    b"[2026-01-01 00:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 0, "
    b"token usage: 0.00, #running-req: 0, #queue-req: 0\n"
)
USER_PREFILL = PREFILL.replace(b"#new-token: 1,", b"#new-token: 812,")
DECODE = b"[2026-01-01 00:00:01 TP0] Decode batch, #running-req: 1, #token: 90\n"


def test_a_health_check_with_its_prefill_is_the_monitors_own() -> None:
    assert monitor_only(HEALTH + PREFILL)
    assert monitor_only(PREFILL + HEALTH)
    assert monitor_only(PREFILL)
    assert monitor_only(SCRAPE + HEALTH + PREFILL)


def test_a_line_of_the_servers_own_is_not() -> None:
    assert not monitor_only(HEALTH + USER_PREFILL)
    assert not monitor_only(HEALTH + PREFILL + DECODE)
    assert not monitor_only(DECODE)
    assert not monitor_only(b"")


def test_only_whole_lines_count() -> None:
    assert not monitor_only(HEALTH + PREFILL[:40])
    assert not monitor_only(HEALTH[:-1])


def test_many_lines_are_counted_not_looked_at() -> None:
    """Marker lines alone pass at any length; many lines without the marker never do."""
    assert monitor_only(SCRAPE * 500)
    assert not monitor_only((HEALTH + PREFILL) * 50)
