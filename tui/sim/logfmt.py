"""How SGLang and vLLM lay out their log lines, tqdm bars and uvicorn records."""

from __future__ import annotations

import time
from typing import Any

LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}
_BLOCKS = " ▏▎▍▌▋▊▉█"
SGLANG_DATEFMT = "%Y-%m-%d %H:%M:%S"
VLLM_DATEFMT = "%m-%d %H:%M:%S"


def sglang_line(now: float, who: str | None, msg: str, millis: bool = False) -> str:
    """``[2025-11-29 14:35:01 TP3] msg``: no level name; tags only where SGLang adds them.

    A multi-line message (a traceback) keeps its continuation lines bare, as SGLang does.
    """
    stamp = time.strftime(SGLANG_DATEFMT, time.localtime(now))
    if millis:
        stamp += f".{int(now * 1000) % 1000:03d}"
    tags = f" {who}" if who else ""
    return f"[{stamp}{tags}] {msg}\n"


def vllm_line(now: float, proc: str, pid: int, level: str, src: str, msg: str) -> str:
    """``(Worker_TP0 pid=12) INFO 11-29 14:35:01 [file.py:12] msg``, the header on every line."""
    head = f"({proc} pid={pid}) {level} {time.strftime(VLLM_DATEFMT, time.localtime(now))} "
    head += f"[{src}] " if src else ""
    return "".join(f"{head}{line}\n" for line in msg.split("\n"))


def vllm_raw(proc: str, pid: int, text: str) -> str:
    """vLLM prefixes everything its processes write, tqdm redraws included."""
    return f"({proc} pid={pid}) {text}"


def format_interval(seconds: float) -> str:
    """tqdm's ``mm:ss`` (``h:mm:ss`` past an hour)."""
    whole = int(seconds)
    minutes, secs = divmod(whole, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def _meter_tail(n: int, total: int, elapsed: float) -> str:
    if n == 0 or elapsed <= 0:
        return f"{n}/{total} [{format_interval(elapsed)}<?, ?it/s]"
    rate = n / elapsed
    remaining = (total - n) / rate
    speed = f"{rate:5.2f}it/s" if rate >= 1 else f"{1 / rate:5.2f}s/it"
    return f"{n}/{total} [{format_interval(elapsed)}<{format_interval(remaining)}, {speed}]"


def shard_bar(desc: str, n: int, total: int, elapsed: float) -> str:
    """SGLang's weight-loading bar: ``{desc}: 45% Completed | 9/20 [00:10<00:12,  1.10s/it]``."""
    percent = 100 * n / total if total else 100.0
    return f"{desc}: {percent:3.0f}% Completed | {_meter_tail(n, total, elapsed)}"


def graph_bar(desc: str, n: int, total: int, elapsed: float) -> str:
    """tqdm's default meter: ``{desc}:  50%|█████     | 18/36 [00:10<00:10,  1.80it/s]``."""
    fraction = n / total if total else 1.0
    percent = 100 * fraction
    return f"{desc}: {percent:3.0f}%|{_bar(fraction)}| {_meter_tail(n, total, elapsed)}"


def _bar(fraction: float, width: int = 10) -> str:
    cells = fraction * width
    full = int(cells)
    if full >= width:
        return _BLOCKS[-1] * width
    partial = _BLOCKS[int((cells - full) * (len(_BLOCKS) - 1))]
    return _BLOCKS[-1] * full + partial + " " * (width - full - 1)


def uvicorn_log_config(level: str, prefix: str = "", timestamps: bool = True) -> dict[str, Any]:
    """uvicorn's logging set up the way each engine configures it.

    SGLang adds ``[%(asctime)s]`` (``set_uvicorn_logging_configs``); vLLM keeps uvicorn's
    default layout behind its process prefix. Both records go to stderr here.
    """
    stamp = "[%(asctime)s] " if timestamps else ""
    access = '%(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s'
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "default": {
                "()": "uvicorn.logging.DefaultFormatter",
                "fmt": f"{prefix}{stamp}%(levelprefix)s %(message)s",
                "datefmt": SGLANG_DATEFMT,
                "use_colors": False,
            },
            "access": {
                "()": "uvicorn.logging.AccessFormatter",
                "fmt": f"{prefix}{stamp}{access}",
                "datefmt": SGLANG_DATEFMT,
                "use_colors": False,
            },
        },
        "handlers": {
            name: {
                "formatter": name,
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
            }
            for name in ("default", "access")
        },
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level.upper(), "propagate": False},
            "uvicorn.error": {"level": level.upper()},
            "uvicorn.access": {"handlers": ["access"], "level": level.upper(), "propagate": False},
        },
    }
