"""SGLang's start-up, stage by stage, with each scenario's failure cut in where it happens.

Wording follows SGLang 0.5.2x: ``Init parallel begin.``, ``Load weight end. elapsed=...``,
``Capture target decode CUDA graph begin. backend=...``, draft graphs on TP0 only. Every rank
prints its own stage lines; only global rank 0 draws the tqdm bars; only TP0 prints the
``max_total_num_tokens`` summary. Durations in messages are real seconds (scaled).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from tui.sim import jit_builds
from tui.sim import sim_failures as failures
from tui.sim.bars import BAR_DELAY, graph_draws, shard_draws
from tui.sim.config import SimConfig
from tui.sim.layout import Rank, failing_rank, ranks_for
from tui.sim.serverargs import has_extra, sglang_server_args
from tui.sim.sim_model import BASELINE_GB, CONTEXT_GB, GPU_TOTAL_GB, facts_for, plan_memory
from tui.sim.timeline import Gpu, Raw, Ready, Script, Signal, Spawn, StartupTimes, Timeline

Message: TypeAlias = Callable[[Rank, float], str | None]


@dataclass(frozen=True, slots=True)
class Pace:
    """Simulated seconds per stage at ``--time-scale 1``: a large model at TP8."""

    template: float = 1.2
    spawn: float = 8.5
    dist_init: float = 6.0
    load: float = 330.0
    draft_load: float = 12.0
    kv: float = 3.0
    draft_kv: float = 1.0
    graph: float = 125.0
    draft_graph: float = 40.0
    draft_extend: float = 30.0
    tokenizer: float = 1.5
    warmup: float = 20.0
    jitter: float = 0.02
    slow: float = 2.5
    node_lag: float = 60.0
    jit_build: float = 40.0
    """One kernel module built on a cold cache (``jit-cold-cache``, ``jit-hang``)."""
    jit_hang_after: int = 2
    """Modules ``jit-hang`` builds before the one that never finishes."""


PACE = Pace()


class StartFailed(Exception):
    """Raised inside the builder once a failure has been scheduled; nothing follows it."""


def capture_sizes(limit: int) -> list[int]:
    """SGLang's CUDA-graph batch sizes up to ``limit`` (36 of them up to 256)."""
    sizes = [1, 2, 4, 8, 12, *range(16, 257, 8)]
    return [size for size in sizes if size <= max(limit, 1)]


def build_sglang(config: SimConfig) -> Timeline:
    """The whole start-up of this node as a pure schedule."""
    return _Builder(config).build()


class _Builder:
    def __init__(self, config: SimConfig) -> None:
        self.cfg = config
        self.ranks = ranks_for(config)
        self.bad = failing_rank(config, self.ranks)
        self.facts = facts_for(config)
        self.mem = plan_memory(config, self.facts)
        self.rng = random.Random(config.seed)
        self.script = Script()
        self.times: dict[str, float] = {}
        self.draft = self.facts.draft_architecture is not None

    def real(self, seconds: float) -> float:
        return seconds * self.cfg.time_scale

    def build(self) -> Timeline:
        try:
            at = self._prelaunch()
            at = self._dist_init(at)
            at = self._load(at, draft=False)
            if self.draft:
                at = self._load(at, draft=True)
            at = self._kv(at)
            at = self._jit_builds(at)
            at = self._graphs(at)
            if self.draft:
                at = self._draft_graphs(at)
            self._ready(at)
        except StartFailed:
            return self.script.timeline(StartupTimes.from_phases(self.times), ready=False)
        return self.script.timeline(StartupTimes.from_phases(self.times), ready=True)

    # -- stages ---------------------------------------------------------------------------

    def _prelaunch(self) -> float:
        log = self.script.log
        if not has_extra(self.cfg, "attention_backend"):
            log(0.0, None, "Attention backend not specified. Use fa3 backend by default.")
        if self.cfg.speculative and self.cfg.max_running == 48:
            log(0.0, None, "Max running requests is reset to 48 for speculative decoding.")
        log(0.02, None, f"server_args={sglang_server_args(self.cfg)}")
        children = [(f"scheduler_{rank.local}", rank.tag) for rank in self.ranks]
        self.script.add(0.05, Spawn((*children, ("detokenizer", None))))
        log(
            PACE.template,
            None,
            "Using default HuggingFace chat template with detected content format: string",
        )
        if self.cfg.dp_size > 1 and not self.cfg.enable_dp_attention:
            for rank in self.ranks:
                if rank.leader:
                    log(
                        PACE.template + 0.3,
                        None,
                        f"Launch DP{rank.dp_rank} starting at GPU #{rank.gpu}.",
                    )
        return PACE.spawn

    @property
    def last_node(self) -> bool:
        """The node the multi-node scenarios pick: the last one (node 1 of 2)."""
        return self.cfg.node_rank == max(self.cfg.nnodes, 1) - 1

    def _dist_init(self, start: float) -> float:
        pace = PACE.dist_init
        if self.cfg.scenario == "node-lag" and self.cfg.nnodes > 1:
            if self.last_node:
                start += PACE.node_lag
            else:
                pace += PACE.node_lag
        for rank in self.ranks:
            self.script.add(start, Gpu(rank.local, CONTEXT_GB, 0))
        end = self._per_rank(
            start,
            pace,
            lambda r, s: "Init parallel begin.",
            lambda r, s: f"Init parallel ends. elapsed={s:.2f} s",
        )
        for rank in self.ranks:
            self.script.log(
                end + 0.3, rank.tag, f"Memory baseline taken. mem usage={BASELINE_GB:.2f} GB"
            )
            self.script.add(end + 0.3, Gpu(rank.local, CONTEXT_GB + BASELINE_GB, 0))
        if self.cfg.scenario == "nccl-timeout":
            self._nccl_timeout(start)
        return end + 1.0

    def _load(self, start: float, draft: bool) -> float:
        facts, mem = self.facts, self.mem
        avail = mem.after_weights if draft else mem.start_avail
        after = mem.after_draft if draft else mem.after_weights
        size = facts.draft_gb if draft else facts.weight_gb
        arch = facts.draft_architecture if draft else facts.architecture
        pace = PACE.draft_load if draft else PACE.load
        slow = self.cfg.scenario == "slow-rank" and not draft
        stuck = self._stuck_in_load(draft)
        end = self._per_rank(
            start,
            pace,
            lambda r, s: f"Load weight begin. avail mem={avail:.2f} GB",
            lambda r, s: (
                None
                if r.local == stuck
                else f"Load weight end. elapsed={s:.2f} s, "
                f"type={arch}, avail mem={after:.2f} GB, mem usage={size:.2f} GB."
            ),
            slow=slow,
        )
        shards = facts.draft_shards if draft else facts.shards
        self._shard_bar(start, pace, shards, GPU_TOTAL_GB - avail, size)
        self.times["load_weight"] = self.times.get("load_weight", 0.0) + self.real(end - start)
        if self.cfg.scenario == "rank-crash" and not draft:
            self._crash(start + 0.35 * pace, failures.weight_load_crash())
        if self.cfg.scenario == "node-hang" and not draft:
            self.script.cut(end)
            raise StartFailed
        if after < 1.0:
            self._weights_do_not_fit(start, pace, avail, size)
        return end + 0.5

    def _stuck_in_load(self, draft: bool) -> int | None:
        """With ``node-hang``, the local index of the last node's rank that never finishes
        loading its target weights; every other rank waits for it in the next collective."""
        if self.cfg.scenario != "node-hang" or draft or not self.last_node:
            return None
        return self.bad.local

    def _weights_do_not_fit(self, start: float, pace: float, avail: float, size: float) -> None:
        """The allocator refuses a shard once the GPU is full, part-way through the load."""
        fraction = max(min((avail - 1.0) / size, 0.95), 0.05)
        total = GPU_TOTAL_GB - CONTEXT_GB
        text = failures.load_cuda_oom(self.bad.gpu, 2.0, total, 0.8)
        self._crash(start + BAR_DELAY + fraction * pace, text)

    def _kv(self, start: float) -> float:
        mem, facts = self.mem, self.facts
        if self.cfg.scenario == "oom-kv-cache" or mem.kv_gb < 0.5:
            self._kv_failure(start)
        tokens = mem.kv_tokens
        sizes = (
            f"KV size: {mem.kv_gb:.2f} GB"
            if facts.mla
            else f"K size: {mem.kv_gb / 2:.2f} GB, V size: {mem.kv_gb / 2:.2f} GB"
        )
        kv_line = f"KV Cache is allocated. dtype: torch.bfloat16, #tokens: {tokens}, {sizes}"
        end = self._per_rank(start, PACE.kv, lambda r, s: None, lambda r, s: kv_line)
        self._all(
            end + 0.05,
            f"Memory pool end. avail mem={mem.after_kv:.2f} GB",
            GPU_TOTAL_GB - mem.after_kv,
        )
        if self.draft:
            half = mem.draft_kv_gb / 2
            draft_line = (
                f"KV Cache is allocated. dtype: torch.bfloat16, #tokens: {tokens}, "
                f"K size: {half:.2f} GB, V size: {half:.2f} GB"
            )
            end = self._per_rank(
                end + 0.1, PACE.draft_kv, lambda r, s: None, lambda r, s: draft_line
            )
            self._all(
                end + 0.05,
                f"Memory pool end. avail mem={mem.after_draft_kv:.2f} GB",
                GPU_TOTAL_GB - mem.after_draft_kv,
            )
        self.times["kv_cache_allocation"] = self.real(end - start)
        return end + 0.5

    def _graphs(self, start: float) -> float:
        mem, cfg = self.mem, self.cfg
        phase = "verify" if cfg.speculative else "decode"
        per_req = cfg.speculative_num_draft_tokens if cfg.speculative else 1
        sizes = capture_sizes(min(cfg.max_running, 256))
        end = self._per_rank(
            start,
            PACE.graph,
            lambda r, s: (
                f"Capture target {phase} CUDA graph begin. backend=full, "
                f"num_tokens_per_req={per_req}, avail mem={mem.after_draft_kv:.2f} GB"
            ),
            lambda r, s: (
                f"Capture target {phase} CUDA graph end. bs={sizes}, elapsed={s:.2f} s, "
                f"mem usage={mem.graph_gb:.2f} GB, avail mem={mem.after_graphs:.2f} GB."
            ),
        )
        self._graph_bar(start, PACE.graph, sizes, mem.after_draft_kv, mem.after_graphs)
        for rank in self.ranks:
            self.script.add(end, Gpu(rank.local, GPU_TOTAL_GB - mem.after_graphs, 0))
        self.times["target_verify" if cfg.speculative else "decode"] = self.real(end - start)
        if cfg.scenario == "cuda-graph-hang":
            self._graph_hang(start + 0.4 * PACE.graph)
        return end + 0.5

    def _draft_graphs(self, start: float) -> float:
        cfg, mem = self.cfg, self.mem
        sizes = capture_sizes(min(cfg.max_running, 256))
        at = start
        avail = mem.after_graphs
        for kind, pace, per_req in (
            ("decode", PACE.draft_graph, cfg.speculative_eagle_topk),
            ("extend", PACE.draft_extend, cfg.speculative_num_steps + 1),
        ):
            used = mem.draft_graph_gb / 2
            for rank in self.ranks:
                if rank.leader:
                    self.script.log(
                        at,
                        rank.tag,
                        f"Capture draft {kind} CUDA graph begin. "
                        f"backend=full, num_tokens_per_req={per_req}, bs={sizes}, "
                        f"avail mem={avail:.2f} GB",
                    )
                    self.script.log(
                        at + pace,
                        rank.tag,
                        f"Capture draft {kind} CUDA graph "
                        f"end. elapsed={self.real(pace):.2f} s, mem usage="
                        f"{used:.2f} GB, avail mem={avail - used:.2f} GB.",
                    )
            self._graph_bar(at, pace, sizes, avail, avail - used)
            self.times[f"draft_{kind}"] = self.real(pace)
            at += pace + 0.3
            avail -= used
        return at

    def _jit_builds(self, start: float) -> float:
        """A cold kernel cache: rank 0's process builds its modules one by one after the KV
        pool (``jit-cold-cache``); with ``jit-hang`` one build never finishes (and nothing
        else is logged: the processes hang until killed)."""
        scenario = self.cfg.scenario
        if scenario not in ("jit-cold-cache", "jit-hang"):
            return start
        at = start
        for number, module in enumerate(jit_builds.MODULES):
            self._draw(at, jit_builds.build_started(module))
            if scenario == "jit-hang" and number == PACE.jit_hang_after:
                self.script.cut(at + 0.1)  # nothing ends the wait: the build hangs until killed
                raise StartFailed
            pace = PACE.jit_build * (1.0 + 0.1 * (number % 3))
            at += pace
            self._draw(at, jit_builds.build_finished(module, self.real(pace)))
            at += 0.05
        self.times["jit_builds"] = self.real(at - start)
        return at + 0.2

    def _ready(self, start: float) -> None:
        cfg, mem = self.cfg, self.mem
        for rank in self.ranks:
            self.script.add(start, Gpu(rank.local, GPU_TOTAL_GB - mem.after_draft_graphs, 0))
            if rank.leader:
                self.script.log(
                    start,
                    rank.tag,
                    f"max_total_num_tokens={mem.kv_tokens}, chunked_prefill_size=8192, "
                    f"max_prefill_tokens=16384, max_running_requests={cfg.max_running}, "
                    f"context_len={self.facts.context_len}, "
                    f"available_gpu_mem={mem.after_draft_graphs:.2f} GB",
                )
        self.times["scheduler_e2e"] = self.real(start - PACE.spawn)
        done = start + PACE.tokenizer
        self.times["tokenizer_e2e"] = self.real(done)
        if cfg.node_rank == 0:
            self.script.log(done, None, StartupTimes.from_phases(self.times).summary())
        self.script.add(done, Ready())

    # -- failures -------------------------------------------------------------------------

    def _crash(self, at: float, text: str) -> None:
        self.script.cut(at)
        self.script.log(at, self.bad.tag, text, level="ERROR")
        self.script.add(at + 0.02, Signal(self.bad.local, "sigquit"))
        raise StartFailed

    def _kv_failure(self, start: float) -> None:
        mem, cfg = self.mem, self.cfg
        if cfg.mem_fraction_static >= 0.9 and mem.kv_gb >= 0.5:
            free = GPU_TOTAL_GB * (1 - cfg.mem_fraction_static) * 0.6
            text = failures.kv_cuda_oom(
                self.bad.gpu, max(mem.kv_gb / 2, free + 1.0), GPU_TOTAL_GB - CONTEXT_GB, free
            )
        else:
            text = failures.kv_not_enough_memory(cfg.mem_fraction_static)
        self._crash(start + 0.6 * PACE.kv, text)

    def _nccl_timeout(self, start: float) -> None:
        self.script.cut(start + 0.2)
        waiting = next((r for r in self.ranks if r.local != self.bad.local), self.bad)
        timeout = self.cfg.dist_timeout or 600.0
        global_rank = self.cfg.node_rank * len(self.ranks) + waiting.local
        text = failures.nccl_timeout(global_rank, self.real(timeout))
        self.script.add(start + timeout, Raw(text, stamped=True))
        self.script.add(start + timeout + 0.01, Signal(waiting.local, "abort"))
        raise StartFailed

    def _graph_hang(self, at: float) -> None:
        self.script.cut(at)
        fire = at + self.cfg.watchdog_timeout
        text = failures.scheduler_watchdog(self.real(self.cfg.watchdog_timeout))
        self.script.log(fire, self.bad.tag, text, level="ERROR")
        self.script.add(fire + 5.0, Signal(self.bad.local, "sigquit"))
        raise StartFailed

    # -- helpers --------------------------------------------------------------------------

    def _per_rank(
        self, start: float, pace: float, begin: Message, end: Message, slow: bool = False
    ) -> float:
        """Each rank begins with a little jitter; rank 0 is the fastest so its bar closes
        before the others report. Returns when the last rank is done (a collective)."""
        finish = start
        for rank in self.ranks:
            offset = 0.0 if rank.first else self.rng.uniform(0.0, 0.15)
            factor = 1.0 if rank.first else 1.0 + self.rng.uniform(0.005, PACE.jitter)
            if slow and rank.local == self.bad.local and len(self.ranks) > 1:
                factor *= PACE.slow
            began, done = start + offset, start + offset + pace * factor
            for at, text in ((began, begin(rank, 0.0)), (done, end(rank, self.real(done - began)))):
                if text is not None:
                    self.script.log(at, rank.tag, text)
            finish = max(finish, done)
        return finish

    def _all(self, at: float, text: str, used_gb: float) -> None:
        for rank in self.ranks:
            self.script.log(at, rank.tag, text)
            self.script.add(at, Gpu(rank.local, used_gb, 0))

    def _shard_bar(self, start: float, pace: float, total: int, used: float, size: float) -> None:
        for at, text, loaded in shard_draws(start, pace, total, self.cfg.time_scale):
            self._draw(at, text)
            self.script.add(at, Gpu(None, used + size * loaded, 0))

    def _graph_bar(
        self, start: float, pace: float, sizes: list[int], avail: float, after: float
    ) -> None:
        for at, text, _ in graph_draws(start, pace, sizes, avail, after, self.cfg.time_scale):
            self._draw(at, text)

    def _draw(self, at: float, text: str) -> None:
        if any(rank.first for rank in self.ranks):
            self.script.add(at, Raw(text))
