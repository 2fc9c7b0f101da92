"""Which ranks run on this node, and the tags each engine prints for them."""

from __future__ import annotations

import random
from dataclasses import dataclass

from tui.sim.config import VLLM_ENGINE, SimConfig


@dataclass(frozen=True, slots=True)
class Rank:
    """One scheduler (SGLang) or worker (vLLM) process on this node."""

    local: int
    tp_rank: int
    dp_rank: int | None
    ep_rank: int | None
    gpu: int
    tag: str
    leader: bool
    first: bool


def ranks_for(config: SimConfig) -> tuple[Rank, ...]:
    """The ranks of this node, in launch order."""
    world = _global_ranks(config)
    per_node = len(world) // config.nnodes
    mine = world[config.node_rank * per_node : (config.node_rank + 1) * per_node]
    return tuple(
        Rank(
            local=index,
            tp_rank=tp,
            dp_rank=dp,
            ep_rank=ep,
            gpu=config.base_gpu_id + index,
            tag=_tag(config, tp, dp, ep),
            leader=tp == 0,
            first=config.node_rank == 0 and index == 0,
        )
        for index, (tp, dp, ep) in enumerate(mine)
    )


def failing_rank(config: SimConfig, ranks: tuple[Rank, ...]) -> Rank:
    """The rank a failure scenario picks: ``--fail-rank`` or a seeded non-zero rank."""
    if config.fail_rank is not None:
        if not 0 <= config.fail_rank < len(ranks):
            raise ValueError(
                f"--fail-rank {config.fail_rank} is not a rank of this node (0..{len(ranks) - 1})"
            )
        return ranks[config.fail_rank]
    if len(ranks) == 1:
        return ranks[0]
    return ranks[random.Random(config.seed).randrange(1, len(ranks))]


def _global_ranks(config: SimConfig) -> list[tuple[int, int | None, int | None]]:
    """(tp rank, dp rank, ep rank) of every rank in the job, in global order."""
    tp, dp = config.tp_size, config.dp_size
    if dp > 1 and config.enable_dp_attention:
        group = tp // dp
        return [(t, t // group, _ep_rank(config, t)) for t in range(tp)]
    replica: int | None = None
    ranks: list[tuple[int, int | None, int | None]] = []
    for d in range(dp):
        replica = d if dp > 1 else None
        ranks.extend((t, replica, _ep_rank(config, t)) for t in range(tp))
    return ranks


def _ep_rank(config: SimConfig, tp_rank: int) -> int | None:
    if config.ep_size <= 1:
        return None
    return tp_rank // (config.tp_size // config.ep_size)


def _tag(config: SimConfig, tp: int, dp: int | None, ep: int | None) -> str:
    if config.engine == VLLM_ENGINE:
        return _vllm_tag(config, tp, dp, ep)
    parts = []
    if dp is not None:
        parts.append(f"DP{dp}")
    if config.tp_size > 1:
        parts.append(f"TP{tp}")
    if ep is not None:
        parts.append(f"EP{ep}")
    return " ".join(parts)


def _vllm_tag(config: SimConfig, tp: int, dp: int | None, ep: int | None) -> str:
    """vLLM names worker processes ``Worker_DPk_TPk_EPk``; at TP=1 the engine core works."""
    if config.tp_size == 1:
        return f"EngineCore_DP{dp or 0}"
    name = "Worker"
    if dp is not None:
        name += f"_DP{dp}"
    name += f"_TP{tp}"
    if ep is not None:
        name += f"_EP{ep}"
    return name
