"""The simulated main process: plays the start-up, owns the children and signals, serves HTTP.

Its life follows SGLang's launcher: print the arguments, spawn the ranks, wait for them (the
schedule), start uvicorn only then (the port refuses connections before), warm up through
real HTTP, print the ready line, serve. SIGTERM drains and exits 0; a child's SIGQUIT makes
it log, SIGKILL its children and then itself (exit status 137).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from collections.abc import Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any

from tui.sim.config import SGLANG_ENGINE, VLLM_ENGINE, SimConfig
from tui.sim.gpustate import GpuStateFile, state_path
from tui.sim.layout import ranks_for
from tui.sim.output import LogSink
from tui.sim.process import ProcessTree, kill_self, process_title
from tui.sim.sglang_startup import PACE
from tui.sim.sim_model import facts_for, plan_memory
from tui.sim.stats import ServerStats
from tui.sim.timeline import Bind, Exit, Gpu, Log, Raw, Ready, Signal, Spawn, Timeline
from tui.sim.tokens import Pacing, TokenEngine
from tui.sim.vllm_failures import port_busy

if TYPE_CHECKING:
    from tui.sim.http_common import ServerState
    from tui.sim.server import SimServer


class SimRunner:
    """One simulated server process from launch to exit."""

    def __init__(self, config: SimConfig, timeline: Timeline, played: int = 0) -> None:
        self.cfg = config
        self.tree = ProcessTree()
        self.sink = LogSink(config, self.tree.pid_of)
        self.timeline = timeline
        self.played = played
        self.ranks = ranks_for(config)
        self.gpus = GpuStateFile(state_path(config.state_file), [r.gpu for r in self.ranks])
        self.leader = next((r.tag for r in self.ranks if r.leader), None)
        self.server: SimServer | None = None
        self.state: ServerState | None = None
        self.serving = False
        self.ending = False
        self.tasks: set[asyncio.Task[None]] = set()
        self._squatter: socket.socket | None = None
        self._socket: socket.socket | None = None

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self.done: asyncio.Future[int] = loop.create_future()
        self.t0 = loop.time()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._on_term, signum)
        loop.add_signal_handler(signal.SIGQUIT, self._on_sigquit)
        if self.cfg.scenario == "port-in-use":
            self._squatter = _occupy(self.cfg.host, self.cfg.port)
        self._start(self._lifecycle())
        self._start(self._watch_children())
        self._start(self._flush_gpus())
        code = await self.done
        for task in list(self.tasks):
            task.cancel()
        return code

    def _start(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    # -- start-up -------------------------------------------------------------------------

    async def _lifecycle(self) -> None:
        await self._play()
        if not self.timeline.ready:
            return
        self.serving = True
        if self.cfg.node_rank == 0:
            await self._serve()
        else:
            await self._serve_dummy()

    async def _play(self) -> None:
        loop = asyncio.get_running_loop()
        scale = self.cfg.time_scale
        for step in self.timeline.steps[self.played :]:
            delay = self.t0 + step.at * scale - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if self.done.done():
                return
            self._perform(step.action)

    def _perform(self, action: object) -> None:
        if isinstance(action, Log):
            self.sink.log(action.who, action.msg, action.level, action.src, action.shown)
        elif isinstance(action, Raw):
            self.sink.raw(action.text, action.who, action.stamped)
        elif isinstance(action, Gpu):
            self.gpus.set_memory(action.rank, action.used_gb, action.util)
        elif isinstance(action, Signal):
            self.tree.tell(action.rank, action.how)
        elif isinstance(action, Spawn):
            for name, tag in action.children:
                self.tree.spawn(name, tag, process_title(self.cfg.engine, name, tag))
            self.gpus.set_pids([child.pid for child in self.tree.children])
            self.gpus.flush()
        elif isinstance(action, Bind):
            self._bind()
        elif isinstance(action, Exit):
            self._finish(action.code)
        elif isinstance(action, Ready):
            self.gpus.flush()

    def _bind(self) -> None:
        """vLLM binds its socket before building the engine; a busy port ends the launch."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.cfg.host, self.cfg.port))
        except OSError:
            sock.close()
            self.sink.raw(port_busy(self.cfg.host, self.cfg.port) + "\n", "APIServer")
            self._finish(1)
            return
        self._socket = sock

    # -- serving --------------------------------------------------------------------------

    def _make_state(self) -> ServerState:
        from tui.sim.http_common import ServerState

        cfg = self.cfg
        facts = facts_for(cfg)
        memory = plan_memory(cfg, facts)
        loop = asyncio.get_running_loop()
        stats = ServerStats(
            loop.time, self._log_leader, memory.kv_tokens, cfg.speculative, cfg.max_accept
        )
        stats.note = partial(self.sink.log, self.leader)
        pacing = Pacing(
            cfg.decode_tok_s,
            cfg.ttft_ms / 1000,
            cfg.mean_accept,
            cfg.max_accept,
            cfg.max_running,
            cfg.seed,
            cfg.collapse_after if cfg.scenario == "accept-collapse" else None,
        )
        return ServerState(
            config=cfg,
            engine=TokenEngine(pacing, stats),
            stats=stats,
            times=self.timeline.times,
            facts=facts,
            memory=memory,
            log_main=lambda msg: self.sink.log(None, msg, "WARNING"),
            status="up" if cfg.engine == VLLM_ENGINE else "starting",
            warmup_delay_s=PACE.warmup * cfg.time_scale if cfg.engine == SGLANG_ENGINE else 0.0,
            warmup_pending=cfg.engine == SGLANG_ENGINE,
            fail_warmup=cfg.scenario == "warmup-fail",
            health_lies=cfg.scenario == "health-lies",
            health_503_left=cfg.health_503,
        )

    def _log_leader(self, msg: str) -> None:
        if self.cfg.engine == SGLANG_ENGINE:
            self.sink.log(self.leader, msg)

    async def _serve(self) -> None:
        from tui.sim.server import build_app, make_server

        self.state = self._make_state()
        app = build_app(self.state, self._on_http_startup)
        self.server = make_server(self.state, app)
        sockets = [self._socket] if self._socket is not None else None
        try:
            await self.server.serve(sockets=sockets)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
            self._finish(code)
            return
        self._finish(0)

    async def _serve_dummy(self) -> None:
        from tui.sim.server import dummy_health_app, make_server

        self.state = self._make_state()
        host, port = self.cfg.host, self.cfg.port
        self.sink.log(
            None, f"Dummy health check server started in background thread at {host}:{port}"
        )
        self.server = make_server(self.state, dummy_health_app(), quiet=True)
        try:
            await self.server.serve()
        except SystemExit as exc:
            self._finish(exc.code if isinstance(exc.code, int) else 1)
            return
        self._finish(0)

    def _on_http_startup(self) -> None:
        if self.cfg.engine == VLLM_ENGINE:
            from tui.sim.vllm_stats import vllm_stats_loop

            self._start(vllm_stats_loop(self.cfg, self.sink, self._state()))
        else:
            self._start(self._warmup())

    def _state(self) -> ServerState:
        assert self.state is not None
        return self.state

    async def _warmup(self) -> None:
        from tui.sim.warmup import run_warmup

        server, state = self.server, self._state()
        assert server is not None
        await server.listening.wait()
        ok = await run_warmup(self.cfg, self.sink)
        if self.ending:
            return
        if not ok:
            self._kill_tree(include_parent=True)
            return
        state.status = "up"
        self.sink.log(None, "The server is fired up and ready to roll!")
        if self.cfg.scenario == "health-lies":
            self._start(self._scheduler_dies())

    async def _scheduler_dies(self) -> None:
        from tui.sim.sim_failures import scheduler_runtime_crash

        await asyncio.sleep(30 * self.cfg.time_scale)
        self.sink.log(self.leader, scheduler_runtime_crash(), "ERROR")
        self.tree.tell(0, "exit")
        self._state().engine.kill()

    # -- endings --------------------------------------------------------------------------

    def _on_term(self, signum: int) -> None:
        if self.ending:
            return
        self.ending = True
        if self.cfg.engine == VLLM_ENGINE:
            if self.server is not None:
                self.sink.log(None, "Shutting down FastAPI HTTP server.", src="launcher.py:122")
        elif signum == signal.SIGTERM:
            self.sink.log(
                None,
                f"SIGTERM received. signum={signum}, frame=None. Draining "
                "requests and shutting down...",
            )
        if self.state is not None:
            self.state.status = "stopping"
            self.state.engine.stop()
        if self.server is not None:
            self.server.should_exit = True
            return
        self._finish(0)

    def _on_sigquit(self) -> None:
        if self.done.done():
            return
        if self.serving:
            text = "SIGQUIT received. signum=3, frame=None. It usually means one child failed."
        else:
            text = "Received sigquit from a child process. It usually means the child failed."
        self.sink.log(None, text, "ERROR")
        self._kill_tree(include_parent=True)

    def _kill_tree(self, include_parent: bool) -> None:
        pid = os.getpid()
        self.sink.log(
            None,
            f"kill_process_tree called: parent_pid={pid}, "
            f"include_parent={include_parent}, pid={pid}",
        )
        self.tree.kill_all()
        if include_parent:
            kill_self()

    def _finish(self, code: int) -> None:
        if self.done.done():
            return
        if self.cfg.engine == SGLANG_ENGINE:
            self._kill_tree(include_parent=False)
        else:
            self.tree.kill_all()
        self.gpus.remove()
        if self.cfg.pid_file and code == 0:
            _remove(self.cfg.pid_file)
        self.done.set_result(code)

    async def _watch_children(self) -> None:
        while True:
            await asyncio.sleep(0.05)
            child = self.tree.crashed()
            quiet = self.done.done() or self.ending or self.cfg.scenario == "health-lies"
            if child is None or quiet:
                continue
            code = child.popen.returncode
            self.sink.log(
                None,
                f"Subprocess {child.name} (pid={child.pid}) crashed with exit "
                f"code {code}. Triggering SIGQUIT for cleanup...",
                "ERROR",
            )
            os.kill(os.getpid(), signal.SIGQUIT)

    async def _flush_gpus(self) -> None:
        while True:
            if self.state is not None:
                running = len(self.state.stats.running)
                self.gpus.set_util(min(100, 40 + 6 * running) if running else 0)
            self.gpus.flush()
            await asyncio.sleep(0.2)


def _occupy(host: str, port: int) -> socket.socket | None:
    """Hold the port as another program would (it may already be held: then do nothing)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((host, port))
        sock.listen(8)
    except OSError:
        sock.close()
        return None
    return sock


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        return
