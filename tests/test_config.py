"""Configuration: every field parses, every mistake names its file, line and key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tui.cli import main
from tui.commands.init import example_text
from tui.config import (
    BenchConfig,
    Config,
    ConfigError,
    DurationError,
    LaunchConfig,
    MonitorConfig,
    Profile,
    SshAddress,
    StallConfig,
    format_duration,
    load_config,
    parse_config,
    parse_duration,
    parse_ssh_target,
)
from tui.config.config_slurm import SlurmConfig

FULL = """\
theme = "nord"
default_profile = "big"
notify = "never"
data_dir = "data"

[keys]
quit = "q,ctrl+q"
"bench" = "B"

[profiles.big]
engine = "vllm"
hosts = ["gpu1", "me@gpu2", "me@10.0.0.3:2222", "[::1]:22"]
log = "/logs/{profile}.log"
log_dir = "/logs/runs"
port = 8100
host_key_policy = "accept-new"
ssh_config = "ssh/config"
known_hosts = "~/kh"
expected_startup = "15m"
read_only = true
nvidia_smi = "'/opt/nvidia tools/nvidia-smi' --id=0"
kernel_log = ["journalctl -k -q --no-pager -n 500", ["/usr/bin/dmesg", "-T"]]

[profiles.big.launch]
command = "vllm serve {model} --port {port} -tp {tp}"
cwd = "/work"
conda_env = "vllm"
venv = "/venvs/v"
grace_period = "1m30s"
model = "/models/m"
drafter = "/models/d"
env = { NCCL_DEBUG = "INFO", CUDA_VISIBLE_DEVICES = "0,1" }

[profiles.big.bench]
mode = "ask"
num_prompts = 64
input_len = 1024
output_len = 128
concurrency = [1, 4, 16]
warmup_requests = 2
ignore_eos = false
seed = 7
prompts = "prompts.jsonl"
endpoint = "chat"
official = true

[profiles.big.stall]
factor = 2.5
floor = 45

[profiles.small]
host = "box"
"""


def parse(text: str) -> Config:
    return parse_config(text, Path("/etc/bringup/config.toml"))


def test_every_field_parses() -> None:
    config = parse(FULL)
    assert (config.theme, config.default_profile, config.notify) == ("nord", "big", "never")
    assert config.data_dir == Path("/etc/bringup/data")
    assert dict(config.keys) == {"quit": "q,ctrl+q", "bench": "B"}
    big = config.profile()
    assert big.engine == "vllm"
    assert big.targets == (
        SshAddress(None, "gpu1", None),
        SshAddress("me", "gpu2", None),
        SshAddress("me", "10.0.0.3", 2222),
        SshAddress(None, "::1", 22),
    )
    assert (big.log_path, big.log_dir, big.port_for()) == ("/logs/big.log", "/logs/runs", 8100)
    assert big.host_key_policy == "accept-new"
    assert big.ssh_config == Path("/etc/bringup/ssh/config")
    assert big.known_hosts == Path("~/kh").expanduser()
    assert (big.expected_startup, big.read_only) == (900.0, True)
    assert big.nvidia_smi == ("/opt/nvidia tools/nvidia-smi", "--id=0")
    assert big.kernel_log == (
        ("journalctl", "-k", "-q", "--no-pager", "-n", "500"),
        ("/usr/bin/dmesg", "-T"),
    )
    assert parse("[profiles.a]\n").profile("a").kernel_log[1] == ("dmesg",)


def test_every_launch_bench_and_stall_field_parses() -> None:
    big = parse(FULL).profile("big")
    launch = big.launch
    assert launch.command == ("vllm", "serve", "{model}", "--port", "{port}", "-tp", "{tp}")
    assert launch.argv({"model": "/m x", "port": 1, "tp": 8})[2] == "/m x"
    assert (launch.cwd, launch.conda_env, launch.venv) == ("/work", "vllm", "/venvs/v")
    assert (launch.grace_period, launch.model, launch.drafter) == (90.0, "/models/m", "/models/d")
    assert dict(launch.env) == {"NCCL_DEBUG": "INFO", "CUDA_VISIBLE_DEVICES": "0,1"}
    assert big.bench == BenchConfig(
        mode="ask",
        num_prompts=64,
        input_len=1024,
        output_len=128,
        concurrency=(1, 4, 16),
        warmup_requests=2,
        ignore_eos=False,
        seed=7,
        prompts=Path("/etc/bringup/prompts.jsonl"),
        endpoint="chat",
        official=True,
    )
    assert (big.stall.factor, big.stall.floor) == (2.5, 45.0)


def test_defaults_and_single_host() -> None:
    small = parse(FULL).profile("small")
    assert small.hosts == ("box",)
    assert small == Profile(name="small", hosts=("box",))
    assert small.port_for() == 30000
    assert small.port_for("vllm") == 8000
    assert small.bench.endpoint_for("vllm") == "completions"
    assert small.bench.endpoint_for("sglang") == "generate"
    assert small.log_path is None


ERRORS = [
    ("colour = 1\n", 1, "colour", "unknown key"),
    ("[profiles.a]\nengine = 'tgi'\n", 2, "profiles.a.engine", "must be one of"),
    ("[profiles.a]\nport = 0\n", 2, "profiles.a.port", "between 1 and 65535"),
    ("[profiles.a]\nport = '80'\n", 2, "profiles.a.port", "expected an integer"),
    ("[profiles.a]\nread_only = 1\n", 2, "profiles.a.read_only", "true or false"),
    ("[profiles.a]\n\nexpected_startup = '10 minutes'\n", 3, "profiles.a.expected_startup", ""),
    ("[profiles.a]\nexpected_startup = 0\n", 2, "profiles.a.expected_startup", "longer"),
    ("[profiles.a]\nhosts = ['ok', '-oProxyCommand=x']\n", 2, "profiles.a.hosts[1]", "host"),
    ("[profiles.a]\nhost = 'a'\nhosts = ['b']\n", 2, "profiles.a.host", "not both"),
    ("[profiles.a]\nhost = 'me@h:99999'\n", 2, "profiles.a.host", "port"),
    ("[profiles.a]\nlog = '/x/{user}.log'\n", 2, "profiles.a.log", "placeholder {user}"),
    ("[profiles.a]\nlaunch.cwd = 3\n", 2, "profiles.a.launch.cwd", "expected a string"),
    ("[profiles.a.launch]\ncommand = 'run {modle}'\n", 2, "profiles.a.launch.command", "{modle}"),
    ("[profiles.a.launch]\ncommand = 'run \"x'\n", 2, "profiles.a.launch.command", "split"),
    ("[profiles.a.launch]\ncommand = []\n", 2, "profiles.a.launch.command", "empty"),
    ("[profiles.a]\nnvidia_smi = 'smi \"x'\n", 2, "profiles.a.nvidia_smi", "split"),
    ("[profiles.a]\nnvidia_smi = []\n", 2, "profiles.a.nvidia_smi", "empty"),
    ("[profiles.a]\nnvidia_smi = ''\n", 2, "profiles.a.nvidia_smi", "empty"),
    ("[profiles.a]\nnvidia_smi = ['smi', 3]\n", 2, "profiles.a.nvidia_smi[1]", "expected a string"),
    ("[profiles.a]\nkernel_log = []\n", 2, "profiles.a.kernel_log", "at least one"),
    ("[profiles.a]\nkernel_log = 'dmesg'\n", 2, "profiles.a.kernel_log", "expected an array"),
    ("[profiles.a]\nkernel_log = ['x \"y']\n", 2, "profiles.a.kernel_log[0]", "split"),
    ("[profiles.a]\nkernel_log = ['dmesg', 3]\n", 2, "profiles.a.kernel_log[1]", "a string or"),
    ("[profiles.a]\nkernel_log = [['']]\n", 2, "profiles.a.kernel_log[0]", "empty"),
    ("[profiles.a.launch]\ncommand = ['a', '{0}']\n", 2, "profiles.a.launch.command[1]", ""),
    ("[profiles.a.launch]\nmodle = 'x'\n", 2, "profiles.a.launch.modle", "unknown key"),
    ("[profiles.a.launch.env]\n'BAD NAME' = 'x'\n", 2, 'profiles.a.launch.env."BAD NAME"', ""),
    ("[profiles.a.launch.env]\nA = 1\n", 2, "profiles.a.launch.env.A", "expected a string"),
    ("[profiles.a.bench]\nconcurrency = [1, 0]\n", 2, "profiles.a.bench.concurrency[1]", ""),
    ("[profiles.a.bench]\nconcurrency = []\n", 2, "profiles.a.bench.concurrency", "at least"),
    ("[profiles.a.bench]\nnum_prompts = 1.5\n", 2, "profiles.a.bench.num_prompts", "integer"),
    ("[profiles.a.bench]\nendpoint = 'x'\n", 2, "profiles.a.bench.endpoint", "one of"),
    ("[profiles.a.bench]\nprompt = 'x'\n", 2, "profiles.a.bench.prompt", "unknown key"),
    ("[profiles.a.stall]\nfactor = 0.5\n", 2, "profiles.a.stall.factor", "between"),
    ("[profiles.a.stall]\nfloor = -1\n", 2, "profiles.a.stall.floor", "range"),
    ("[profiles.a.stall]\nceiling = 1\n", 2, "profiles.a.stall.ceiling", "unknown key"),
    ("[profiles.'bad name']\n", 1, 'profiles."bad name"', "profile names"),
    ("[profiles]\na = 3\n", 2, "profiles.a", "expected a table"),
    ("[keys]\nquit = 'q q'\n", 2, "keys.quit", "key names"),
    ("notify = 'loud'\n", 1, "notify", "one of"),
    ('theme = "a\\u001b[31m"\n', 1, "theme", "control character \\x1b"),
    ("default_profile = 'nope'\n[profiles.a]\n", 1, "default_profile", "available profiles: a"),
]


@pytest.mark.parametrize(("text", "line", "key", "problem"), ERRORS)
def test_errors_name_file_line_and_key(text: str, line: int, key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(text)
    error = caught.value
    assert (error.file, error.line, error.key) == ("/etc/bringup/config.toml", line, key)
    assert problem in error.problem
    assert str(error) == f"/etc/bringup/config.toml:{line}: {key}: {error.problem}"


def test_errors_quote_text_safely_and_briefly() -> None:
    with pytest.raises(ConfigError) as long_value:
        parse("notify = '" + "x" * 200 + "'\n")
    quoted = long_value.value.problem.split("got ", 1)[1]
    assert len(quoted) == 80
    assert quoted.endswith("…")
    with pytest.raises(ConfigError) as odd_key:
        parse('[profiles."a\\u0007b"]\n')
    assert odd_key.value.key == 'profiles."a\ufffdb"'


def test_syntax_errors_carry_the_line() -> None:
    with pytest.raises(ConfigError, match=r"^/etc/bringup/config.toml:3: TOML syntax"):
        parse("a = 1\n\nb = = 2\n")


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(b"theme = 'x'\ntheme2 = '\xff'\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}:2: not valid UTF-8")):
        load_config(path, env={})


def test_missing_default_file_gives_an_empty_config(tmp_path: Path) -> None:
    assert load_config(env={"XDG_CONFIG_HOME": str(tmp_path)}) == Config()
    assert Config().profile() == Profile()


def test_explicitly_asked_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "none.toml", env={})
    with pytest.raises(ConfigError, match="no such file"):
        load_config(env={"BRINGUP_CONFIG": str(tmp_path / "none.toml")})
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path, env={})


def test_file_is_found_through_env_and_xdg(tmp_path: Path) -> None:
    xdg = tmp_path / "bringup" / "config.toml"
    xdg.parent.mkdir()
    xdg.write_text("theme = 'xdg'\n")
    other = tmp_path / "other.toml"
    other.write_text("theme = 'env'\n")
    assert load_config(env={"XDG_CONFIG_HOME": str(tmp_path)}).theme == "xdg"
    env = {"XDG_CONFIG_HOME": str(tmp_path), "BRINGUP_CONFIG": str(other)}
    assert load_config(env=env).theme == "env"
    assert load_config(xdg, env=env).theme == "xdg"
    assert load_config(env={"HOME": str(tmp_path), "XDG_CONFIG_HOME": ""}) == Config()


def test_profile_choice_lists_what_exists() -> None:
    config = parse("[profiles.a]\n[profiles.b]\n")
    with pytest.raises(ConfigError, match=r"profiles\.c: no such profile .*: a, b\)"):
        config.profile("c")
    with pytest.raises(ConfigError, match="several profiles"):
        config.profile()
    assert config.profile("b").name == "b"
    assert parse("[profiles.only]\n").profile().name == "only"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(90, 90.0), (2.5, 2.5), ("90", 90.0), ("90s", 90.0), ("15m", 900.0), ("1h", 3600.0),
     ("1h30m", 5400.0), ("250ms", 0.25), (" 2 m ", 120.0), ("1.5h", 5400.0), ("1d", 86400.0)],
)  # fmt: skip
def test_parse_duration(value: object, seconds: float) -> None:
    assert parse_duration(value) == seconds


@pytest.mark.parametrize("value", ["", "m", "10 minutes", "-5", -5, True, None, "1h-1m", "1e9"])
def test_parse_duration_rejects(value: object) -> None:
    with pytest.raises(DurationError):
        parse_duration(value)


def test_format_duration_round_trips() -> None:
    for seconds in (0.0, 1.5, 45.0, 90.0, 600.0, 5400.0, 7322.0):
        assert parse_duration(format_duration(seconds)) == pytest.approx(seconds)
    assert format_duration(600) == "10m"


@pytest.mark.parametrize(
    ("text", "target"),
    [("gpu", (None, "gpu", None)), ("u@gpu", ("u", "gpu", None)),
     ("u@gpu.lan:2222", ("u", "gpu.lan", 2222)), ("[fe80::1%eth0]:22", (None, "fe80::1%eth0", 22))],
)  # fmt: skip
def test_parse_ssh_target(text: str, target: tuple[str | None, str, int | None]) -> None:
    assert parse_ssh_target(text) == target
    assert str(parse_ssh_target(text)) == text


@pytest.mark.parametrize("text", ["", "-oX", "u@", "@h", "h:0", "h:x", "a b", "h:1:2", "u;x@h"])
def test_parse_ssh_target_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=r"invalid|missing"):
        parse_ssh_target(text)


_FRAGMENTS = st.sampled_from(
    ["[profiles.a]", "[profiles.a.launch]", "[profiles.a.bench]", "[keys]", "[profiles.a.stall]",
     "engine = 'vllm'", "port = 70000", "hosts = ['a', 1]", "command = '{x'", "x = 1",
     "concurrency = [1, 'a']", "floor = '3q'", "log = '{profile}'", "[[profiles]]", "a = [",
     "'k' = \"\\u0007\"", "env = {A = 1}", "theme = 3", "expected_startup = 1e400"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=30)), max_size=12))
def test_arbitrary_text_raises_only_config_errors(lines: list[str]) -> None:
    message = ""
    try:
        parse("\n".join(lines))
    except ConfigError as exc:
        message = str(exc)
    assert "\x1b" not in message
    assert "\x07" not in message


def test_deep_nesting_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        parse("a = " + "[" * 5000)


def _uncommented(text: str) -> str:
    """Every ``# key = value`` line of the example without its ``# `` (not ``# e.g.`` ones)."""
    return re.sub(r"(?m)^# (\[|[A-Za-z_][A-Za-z0-9_-]* = )", r"\1", text)


def test_init_writes_an_example_that_loads(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "config.toml"
    assert main(["init", "--path", str(path)]) == 0
    assert path.read_text() == example_text()
    config = load_config(path, env={})
    assert config.profile().name == "main"
    assert config.profile().launch.model == "/models/my-model"
    assert main(["init", "--path", str(path)]) == 1
    path.write_text("changed")
    assert main(["init", "--path", str(path), "--force"]) == 0
    assert path.read_text() == example_text()


def test_example_defaults_are_the_real_defaults() -> None:
    from dataclasses import replace

    from tui.config.binding_ids import BINDING_DEFAULTS

    example = example_text()
    commented, uncommented = parse(example), parse(_uncommented(example))
    assert _uncommented(example) != example
    assert "# history_dir" not in example
    assert commented.keys == {}
    assert len(uncommented.keys) >= 8
    assert {key: BINDING_DEFAULTS[key] for key in uncommented.keys} == dict(uncommented.keys)
    assert uncommented.keys["launch"] == "L"
    assert replace(uncommented, keys=commented.keys) == commented
    profile = commented.profile()
    assert profile.bench == BenchConfig()
    assert profile.stall == StallConfig()
    assert replace(profile.launch, command=(), model=None, tp=None) == LaunchConfig()


def test_documentation_covers_every_field_and_its_example_loads() -> None:
    text = (REPO / "docs" / "configuration.md").read_text()
    for kind in (Config, Profile, LaunchConfig, BenchConfig, StallConfig, SlurmConfig):
        for name in kind.__dataclass_fields__:
            if name in {"keys", "profiles", "launch", "bench", "stall", "slurm"}:
                assert f"NAME.{name}]`" in text or f"`[{name}" in text, name
            elif name not in {"path", "name"}:
                assert f"`{name}`" in text, name
    example = text.split("```toml\n")[1].split("```")[0]
    assert parse(example).profile().bench.concurrency == (1, 4, 16)


def test_the_examples_launch_command_fills_every_placeholder() -> None:
    from datetime import datetime

    from tui.engine.launch.launch_plan import plan_launch
    from tui.io.launch.launch_profile import spec_from_profile

    profile = parse(example_text()).profile()
    (node,) = plan_launch(spec_from_profile(profile), ["/home/me"], datetime(2026, 1, 2, 3, 4, 5))
    assert node.argv[node.argv.index("--tp") + 1] == "8"
    assert node.argv[node.argv.index("--dist-init-addr") + 1] == "gpu-node-1:20000"
    assert not any("{" in part for part in node.argv)


def test_the_serving_table_sets_the_scrape_and_the_alarm_thresholds() -> None:
    from tui.engine.metrics.alarms import AlarmThresholds

    profile = parse(
        "[profiles.a.serving]\nmetrics = false\ninterval = '5s'\naccept_floor = 2.0\n"
        "accept_drop = 0.5\naccept_baseline = '1m'\nstall_after = '10s'\nkv_ceiling = 0.9\n"
        "ttft_p99_slo = '3s'\n"
    ).profile()
    assert (profile.serving.metrics, profile.serving.interval) == (False, 5.0)
    assert profile.serving.alarms == AlarmThresholds(2.0, 0.5, 60.0, 10.0, 0.9, 3.0)
    assert parse("[profiles.a]\n").profile().serving.alarms == AlarmThresholds()


def test_idle_interval_spaces_out_the_scrapes_of_an_idle_server() -> None:
    def serving(text: str) -> tuple[float, float]:
        config = parse(f"[profiles.a.serving]\n{text}").profile().serving
        return config.interval, config.idle_interval

    assert serving("") == (2.0, 30.0)
    assert serving("idle_interval = '1m'\n") == (2.0, 60.0)
    assert serving("interval = '40s'\n") == (40.0, 40.0)  # never closer than interval
    assert serving("interval = '5s'\nidle_interval = '5s'\n") == (5.0, 5.0)
    assert parse(_uncommented(example_text())).profile().serving.idle_interval == 30.0
    shorter = "[profiles.a.serving]\ninterval = '5s'\nidle_interval = '2s'\n"
    with pytest.raises(
        ConfigError, match=r"serving\.idle_interval.*must be at least interval \(5 s\)"
    ):
        parse(shorter)
    with pytest.raises(ConfigError, match=r"serving\.idle_interval"):
        parse("[profiles.a.serving]\nidle_interval = 'often'\n")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[profiles.a.serving]\ninterval = '0.01s'\n", "profiles.a.serving.interval"),
        ("[profiles.a.serving]\nkv_ceiling = 2\n", "profiles.a.serving.kv_ceiling"),
        ("[profiles.a.serving]\nalarm = 1\n", "profiles.a.serving.alarm"),
    ],
)
def test_a_bad_serving_value_names_its_key(text: str, key: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(key)):
        parse(text)


def test_the_monitor_table_sets_how_often_the_host_is_asked() -> None:
    text = '[profiles.a.monitor]\nhealth_interval_serving = "30s"\ngpu_interval_serving = "1s"\n'
    monitor = parse(text).profile("a").monitor
    assert monitor == MonitorConfig(health_interval_serving=30.0, gpu_interval_serving=1.0)
    assert parse(_uncommented(example_text())).profile().monitor == MonitorConfig()
    with pytest.raises(ConfigError, match=r"at least 0\.1 s"):
        parse('[profiles.a.monitor]\nhealth_interval = "10ms"\n')
