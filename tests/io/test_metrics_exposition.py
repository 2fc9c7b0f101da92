"""``/metrics`` of both engines parsed and windowed: rates, ratios and quantiles over the last
interval, the short and the long window; old and new names; a server restart."""

from __future__ import annotations

import pytest

from tests.engine.metrics_fixtures import sglang, vllm
from tui.engine.metrics.metrics_window import MetricsWindow
from tui.engine.metrics.reading import engine_names, read_scrape
from tui.engine.servers import registry
from tui.engine.servers.sglang.sglang_dialect import SGLANG
from tui.engine.servers.vllm.vllm_dialect import VLLM
from tui.io.metrics.exposition import ExpositionError, ExpositionReader, parse_exposition

TTFT_A = (0, 0, 0, 0, 2, 6, 8, 9, 10, 10, 10, 10, 10, 10, 10)
TTFT_B = (0, 0, 0, 0, 2, 6, 8, 9, 10, 30, 40, 50, 50, 50, 50)
ITL_A = (0, 100, 200, 300, 400, 400, 400, 400, 400, 400, 400)
ITL_B = (0, 100, 600, 1300, 1400, 1400, 1400, 1400, 1400, 1400, 1400)


def _vllm(old: bool = False, **changes: object) -> str:
    values: dict[str, object] = {
        "running": 8,
        "waiting": 2,
        "kv": 0.25,
        "generated": 10_000,
        "hits": 1000,
        "queries": 4000,
        "preemptions": 0,
        "drafts": 2000,
        "accepted": 3000,
        "ttft": TTFT_A,
        "itl": ITL_A,
    }
    values.update(changes)
    return vllm(old=old, **values)  # type: ignore[arg-type]


def _window(texts: list[tuple[float, str]], engine: str = "vllm") -> MetricsWindow:
    names = (VLLM if engine == "vllm" else SGLANG).metric_names
    window = MetricsWindow()
    for at, text in texts:
        window.add(read_scrape(parse_exposition(text, at), names))
    return window


@pytest.mark.parametrize("old", [False, True])
def test_vllm_rates_ratios_and_quantiles_over_an_interval(old: bool) -> None:
    later = _vllm(
        old,
        generated=12_000,
        hits=3000,
        queries=8000,
        drafts=2500,
        accepted=4000,
        ttft=TTFT_B,
        itl=ITL_B,
        kv=0.5,
    )
    window = _window([(100.0, _vllm(old)), (102.0, later)])
    figures = window.intervals[-1]
    assert figures.seconds == pytest.approx(2.0)
    assert figures.tok_s == pytest.approx(1000.0)
    assert figures.prefix_hit_rate == pytest.approx(0.5)
    assert figures.accept_length == pytest.approx(1 + 1000 / 500)
    assert figures.acceptance_rate == pytest.approx(1000 / 1500)
    assert figures.kv_usage == pytest.approx(0.5)
    assert figures.running == 8
    assert figures.queued == 2
    # 40 new first tokens: 20 in (0.25, 0.5], 10 in (0.5, 0.75], 10 in (0.75, 1.0].
    assert figures.ttft_p50 == pytest.approx(0.5)
    assert figures.ttft_p99 == pytest.approx(0.75 + 0.25 * 9.6 / 10)
    # 1000 new gaps: 400 in (0.025, 0.05], 600 in (0.05, 0.075].
    assert figures.itl_p50 == pytest.approx(0.05 + 0.025 * 100 / 600)
    assert figures.itl_p99 == pytest.approx(0.05 + 0.025 * 590 / 600)
    assert figures.preemptions == 0


def test_the_scrape_names_its_engine() -> None:
    candidates = [(d.name, d.metric_names) for d in registry.dialects()]
    assert engine_names(parse_exposition(_vllm(), 0.0), candidates) == "vllm"
    text = sglang(
        running=1,
        queued=0,
        usage=0.1,
        throughput=50.0,
        hit_rate=0.0,
        accept_length=2.0,
        generated=10,
        ttft=TTFT_A,
    )
    assert engine_names(parse_exposition(text, 0.0), candidates) == "sglang"
    assert engine_names(parse_exposition("# nothing\n", 0.0), candidates) is None


def test_a_restarted_server_counts_its_new_totals_not_a_negative_rate() -> None:
    restarted = _vllm(generated=500, drafts=100, accepted=150, hits=0, queries=0, ttft=TTFT_A)
    window = _window(
        [
            (0.0, _vllm()),
            (2.0, _vllm(generated=11_000, drafts=2200, accepted=3300)),
            (4.0, restarted),
            (6.0, _vllm(generated=1500, drafts=300, accepted=450, hits=0, queries=0)),
        ]
    )
    after_restart = window.intervals[1]
    assert after_restart.tok_s == pytest.approx(250.0)
    assert after_restart.accept_length == pytest.approx(1 + 150 / 100)
    short = window.over(10.0)
    assert short.generated == pytest.approx(1000 + 500 + 1000)
    assert short.tok_s == pytest.approx(2500 / 6)
    assert short.accept_length == pytest.approx(1 + (300 + 150 + 300) / (200 + 100 + 200))


def test_sglang_gauges_are_averaged_over_the_window() -> None:
    def text(throughput: float, accept: float, generated: int) -> str:
        return sglang(
            running=4,
            queued=1,
            usage=0.3,
            throughput=throughput,
            hit_rate=0.25,
            accept_length=accept,
            generated=generated,
            ttft=TTFT_A,
        )

    window = _window(
        [(0.0, text(100, 3.0, 0)), (2.0, text(120, 3.0, 240)), (4.0, text(80, 1.0, 400))],
        engine="sglang",
    )
    assert window.intervals[-1].accept_length == pytest.approx(1.0)
    assert window.intervals[-1].tok_s == pytest.approx(80.0)
    short = window.over(10.0)
    assert short.accept_length == pytest.approx(2.0)
    assert short.tok_s == pytest.approx(100.0)
    assert short.prefix_hit_rate == pytest.approx(0.25)
    assert short.kv_usage == pytest.approx(0.3)
    assert short.ttft_p50 is None  # no new first tokens


def test_the_long_window_forgets_readings_older_than_five_minutes() -> None:
    texts = [(float(at), _vllm(generated=10_000 + 10 * at)) for at in range(0, 400, 2)]
    window = _window(texts)
    assert window.over(300.0).seconds == pytest.approx(300.0)
    assert window.over(300.0).tok_s == pytest.approx(10.0)
    assert window.over(10.0).seconds == pytest.approx(10.0)


@pytest.mark.parametrize("text", ["vllm:x{ 1\n", '# TYPE a gauge\na{le="x} 1\n', "a b c d\n"])
def test_text_that_is_not_the_exposition_format_is_refused(text: str) -> None:
    with pytest.raises(ExpositionError):
        parse_exposition(text, 0.0)


def test_only_the_wanted_series_are_parsed() -> None:
    from tui.io.metrics.exposition import series_names

    wanted = series_names(VLLM.metric_names.names())
    noise = (
        "# HELP python_gc_objects_collected_total Objects collected during gc\n"
        "# TYPE python_gc_objects_collected_total counter\n"
        'python_gc_objects_collected_total{generation="0"} 1234.0\n'
        'http_request_duration_seconds_bucket{le="0.1",handler="/v1/completions"} 7.0\n'
    )
    scrape = parse_exposition(noise + _vllm(), 0.0, wanted)
    names = scrape.names()
    assert "python_gc_objects_collected_total" not in names
    assert "http_request_duration_seconds_bucket" not in names
    assert "vllm:generation_tokens_total" in names
    assert "vllm:time_to_first_token_seconds_bucket" in names
    assert "vllm:prompt_tokens_total" in names  # read to tell an idle server
    full = read_scrape(parse_exposition(_vllm(), 0.0), VLLM.metric_names)
    assert read_scrape(scrape, VLLM.metric_names) == full


def test_the_reader_parses_an_answer_only_when_its_series_change() -> None:
    reader = ExpositionReader()
    first, later = _vllm(), _vllm(generated=12_000, kv=0.5, itl=ITL_B)
    assert reader.read(first, 1.0) == parse_exposition(first, 1.0)
    assert reader.read(later, 2.0) == parse_exposition(later, 2.0)
    assert reader.parsed == 1
    restarted = _vllm(old=True)
    assert reader.read(restarted, 3.0) == parse_exposition(restarted, 3.0)
    assert reader.parsed == 2


def test_the_reader_keeps_the_parsers_names_and_refuses_what_it_refuses() -> None:
    # A counter written without ``_total`` is named with it by the parser, also when reused.
    text = '# TYPE x:tokens counter\nx:tokens{a="1"} 5\nx:gauge NaN\nx:g{le="+Inf"} +Inf\n'
    reader = ExpositionReader()
    for at in (1.0, 2.0):
        samples = reader.read(text.replace("5", str(int(at * 5))), at).samples
        assert [(s.name, s.labels) for s in samples] == [
            ("x:tokens_total", (("a", "1"),)), ("x:gauge", ()), ("x:g", (("le", "+Inf"),)),
        ]  # fmt: skip
        assert samples[0].value == at * 5
    assert reader.parsed == 1
    with pytest.raises(ExpositionError):
        reader.read(text.replace("5", "five"), 3.0)
