"""DQN training of the width-based R-GNN policies with lifted hindsight relabelling (pymimir-rl).

Source: Aichmüller et al. (docs/papers/rgnn-policies.md), Section 6 and Section 7 "Training": deep
Q-learning (Mnih et al. 2015) with the lifted hindsight relabelling of Ståhlberg and Geffner (2026)
(pymimir-rl's ``LiftedHindsightTrajectoryRefiner``), reward -1 per jump, discount 0.999, a
Boltzmann exploration policy whose temperature decays linearly 1.0 -> 0.1 over 1,000 episodes, a
learning rate decaying linearly 1e-3 -> 1e-5 over 300 episodes, per episode 4 trajectories (capped at
20 jumps, or 200 steps for flat policies) and 32 optimisation steps of batch 32, replay buffers of
100 (IW) / 1,000 (flat) transitions. Model selection: coverage of the selection problems (the paper's
validation set; which problems, :meth:`~planarena.methods.rgnn_policies.method.RGNNPolicy._entries`),
then the shortest total plan length, then the lowest TD error (the paper's last tie-breaker, random selection, is replaced by
the later episode, so that selection is deterministic).

pymimir-rl supplies the off-policy loop (``OffPolicyAlgorithm``: sample, relabel, replay,
optimise), the DQN loss (``DQNOptimization``: Huber loss on r + gamma * mellowmax Q_target), the
prioritised replay buffers, the Boltzmann rollout sampler and the reward function; the jumps of a
lookahead enter it as "actions" (:class:`~planarena.methods.rgnn_policies.lookahead.Jump`).
Paper-silent choices (stated in docs/papers/rgnn-policies.md#what-is-reproduced): the target network
is synchronised after every episode, mellowmax's factor is ``mellowmax`` (large: close to max), half
of each batch comes from unrelabelled solved/dead-end trajectories when there are any (pymimir-rl's
default), and the relabelling emits at most ``her_max`` trajectories per episode.
"""

from __future__ import annotations

import math
import random
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from planarena.methods.rgnn_policies.encodings import PolicyNetwork
from planarena.methods.rgnn_policies.policy import LookaheadCache, LookaheadQModel, greedy_episodes


@dataclass(frozen=True)
class TrainConfig:
    """Training hyperparameters (params ``rgnn_policies.train``; defaults: the paper's Section 7).

    Units: episodes (one episode = ``rollouts`` trajectories + ``train_steps`` optimisation steps);
    ``lr_episodes`` and ``temperature_episodes`` below 1 are fractions of ``episodes`` (so that a
    longer or shorter run keeps its schedule's shape), 1 or more episode counts; CPU seconds of the
    training process for ``max_seconds`` (a cap per model, 0 = none: CPU time, so that machine load
    does not decide where training stops)."""

    episodes: int = 1000
    lr: float = 1e-3
    min_lr: float = 1e-5
    lr_episodes: float = 300
    temperature: float = 1.0
    min_temperature: float = 0.1
    temperature_episodes: float = 1000
    gamma: float = 0.999
    train_steps: int = 32
    batch: int = 32
    rollouts: int = 4
    max_jumps: int = 20
    max_steps: int = 200
    buffer_iw: int = 100
    buffer_flat: int = 1000
    her_max: int = 16
    mellowmax: float = 100.0
    eval_every: int = 50
    eval_choices: int = 100
    max_seconds: float = 0.0

    @classmethod
    def from_params(cls, block: dict | None) -> "TrainConfig":
        """From a params dict; unknown keys raise :class:`planarena.config.ConfigError` naming them."""
        from planarena.config import dataclass_from_params

        return dataclass_from_params(cls, block, "rgnn_policies.train")


@dataclass
class TrainResult:
    """What one training run produced: ``state`` the selected weights (None if no validation
    score was ever computed and no episode ran), ``best`` its (coverage, -plan length, -TD error)
    score, ``best_episode``, ``episodes_run``, ``td_errors`` mean TD error per episode,
    ``validation`` the history of (episode, coverage, total plan length), ``seconds``, ``status``
    (``trained`` | ``diverged`` | ``time cap``)."""

    state: dict | None = None
    best: tuple | None = None
    best_episode: int | None = None
    episodes_run: int = 0
    td_errors: list = field(default_factory=list)
    validation: list = field(default_factory=list)
    seconds: float = 0.0
    status: str = "trained"
    diverged_at: int | None = None


def scoring_points(cfg: TrainConfig) -> int:
    """Checkpoints scored in a full run: every ``eval_every`` episodes and at the last one. With
    fewer than two there is nothing to select, and no selection rollouts run."""
    every = max(1, cfg.eval_every)
    return cfg.episodes // every + (cfg.episodes % every != 0)


def span_episodes(value: float, episodes: int) -> int:
    """A schedule's length in episodes: ``value`` below 1 is that fraction of ``episodes`` (at least
    one), 1 or more a count."""
    return max(1, round(float(value) * episodes)) if 0 < float(value) < 1 else int(value)


def linear(start: float, end: float, episode: int, span: int) -> float:
    """Linear schedule from ``start`` (episode 0) to ``end`` (episode ``span`` and after)."""
    if span <= 0 or episode >= span:
        return end
    return start + (end - start) * episode / span


@contextmanager
def library_random(seed: int):
    """Give pymimir-rl a private ``random.Random(seed)`` while the block runs.

    pymimir-rl draws from Python's module-level ``random`` (problem sampling, lifted hindsight
    goals). That generator is shared by every thread of the process: on a Dask worker the
    communication thread draws from it too (``distributed.protocol.compression`` samples with
    ``random.randint``), so seeding it did not make a unit reproducible - the same (domain, seed)
    trained different policies in the stage process and on a worker. The library's modules look
    ``random`` up at call time, so pointing their ``random`` global at the private generator makes
    every draw of training come from ``seed`` alone. Not thread-safe across two trainings in one
    process (the executor runs one unit per process at a time).
    """
    import pymimir_rl  # noqa: F401  (its submodules are in sys.modules after this)

    rng = random.Random(seed)
    modules = [m for name, m in list(sys.modules.items())
               if name.startswith("pymimir_rl.") and getattr(m, "random", None) is random]
    for m in modules:
        m.random = rng
    try:
        yield rng
    finally:
        for m in modules:
            m.random = random


def train_policy(network: PolicyNetwork, cache: LookaheadCache, problems: list, validation: list,
                 cfg: TrainConfig, seed: int, flat: bool) -> TrainResult:
    """Train ``network``; see :func:`_train_policy`. Every random draw comes from ``seed``
    (:func:`library_random`, ``torch.manual_seed``), whatever else runs in the process."""
    with library_random(seed):
        return _train_policy(network, cache, problems, validation, cfg, seed, flat)


def _train_policy(network: PolicyNetwork, cache: LookaheadCache, problems: list, validation: list,
                  cfg: TrainConfig, seed: int, flat: bool) -> TrainResult:
    """Train ``network`` by DQN with lifted hindsight relabelling on the training ``problems``.

    Args:
        network: the Q-function (trained in place; the returned ``state`` is the selected one).
        cache: lookahead trees, with every training and validation problem registered.
        problems / validation: pymimir problems (validation may be empty: then the last episode's
            weights are kept, score by TD error only). ``validation``: the checkpoint-selection
            problems (:meth:`~planarena.methods.rgnn_policies.method.RGNNPolicy._entries`; may be
            separate parses of the training problems, never the same objects).
        seed: seeds pymimir-rl's samplers (a private ``random.Random``, :func:`library_random`)
            and torch.
        flat: primitive-successor policy (horizon ``max_steps``, buffer ``buffer_flat``) or a
            width-based one (``max_jumps``, ``buffer_iw``).

    Returns:
        :class:`TrainResult`; a NaN loss stops training as ``diverged`` (the best weights before it
        are kept).
    """
    import pymimir_rl as rl

    torch.manual_seed(seed)
    start, cpu_start = time.perf_counter(), time.process_time()
    model = LookaheadQModel(network, cache)
    target_net = network.clone()
    target = LookaheadQModel(target_net, cache)
    optimiser = torch.optim.Adam(network.parameters(), lr=cfg.lr)
    steps = max(1, span_episodes(cfg.lr_episodes, cfg.episodes) * cfg.train_steps)
    temperature_span = span_episodes(cfg.temperature_episodes, cfg.episodes)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimiser, 1.0, cfg.min_lr / cfg.lr, total_iters=steps)
    loss = rl.DQNOptimization(model, optimiser, scheduler, target, float(cfg.gamma), float(cfg.mellowmax))
    reward = rl.ConstantRewardFunction(-1.0)
    capacity = cfg.buffer_flat if flat else cfg.buffer_iw
    sampler = rl.BoltzmannTrajectorySampler(model, reward, float(cfg.temperature))
    algo = rl.OffPolicyAlgorithm(
        problems, loss, reward, rl.PrioritizedReplayBuffer(capacity), rl.PrioritizedReplayBuffer(capacity), sampler,
        horizon=int(cfg.max_steps if flat else cfg.max_jumps), rollout_count=int(cfg.rollouts),
        batch_size=int(cfg.batch), train_steps=int(cfg.train_steps),
        trajectory_refiner=rl.LiftedHindsightTrajectoryRefiner(problems, int(cfg.her_max)))
    episode_losses: list[float] = []
    algo.register_on_train_step(lambda transitions, losses: episode_losses.append(float(losses.mean())))
    res = TrainResult()

    # validation rollouts only when there is a choice to make (two or more scoring points)
    use_validation = bool(validation) and scoring_points(cfg) > 1

    def score(episode: int) -> None:
        td = sum(episode_losses) / len(episode_losses) if episode_losses else math.inf
        if use_validation:
            eps = greedy_episodes(network, cache, validation, cfg.eval_choices, [math.inf] * len(validation))
            solved = [e for e in eps if e.outcome == "solved"]
            coverage = len(solved) / len(eps)
            length = sum(len(e.plan) for e in solved)
            res.validation.append((episode, coverage, length))
            key = (coverage, -length, -td)
        else:
            key = (0.0, 0, -td)
        if res.best is None or key >= res.best:  # ties: the later episode
            res.best, res.best_episode = key, episode
            res.state = snapshot(network.state_dict())

    for episode in range(cfg.episodes):
        if cfg.max_seconds and time.process_time() - cpu_start > cfg.max_seconds:
            res.status = "time cap"
            break
        sampler.set_temperature(float(linear(cfg.temperature, cfg.min_temperature, episode, temperature_span)))
        episode_losses.clear()
        algo.fit()
        res.episodes_run = episode + 1
        td = sum(episode_losses) / len(episode_losses) if episode_losses else float("nan")
        res.td_errors.append(td)
        if episode_losses and not math.isfinite(td):
            res.status, res.diverged_at = "diverged", episode
            break
        target_net.load_state_dict(network.state_dict())
        if (episode + 1) % max(1, cfg.eval_every) == 0 or episode + 1 == cfg.episodes:
            score(episode + 1)
    if res.best is None and res.status != "diverged" and res.episodes_run:
        score(res.episodes_run)
    res.seconds = time.perf_counter() - start
    return res


def snapshot(state: dict) -> dict:
    """A copy of a ``state_dict`` in which entries that share storage still share it (a module
    registered under two names, as pymimir-rgnn registers its message MLPs, is copied and saved once:
    cloning entry by entry stored those weights twice, half of every R-GNN unit's ``model.pt``)."""
    copies: dict[tuple, torch.Tensor] = {}
    out = {}
    for k, v in state.items():
        key = (v.untyped_storage().data_ptr(), v.storage_offset(), tuple(v.shape), tuple(v.stride()), v.dtype)
        if key not in copies:
            copies[key] = v.detach().clone()
        out[k] = copies[key]
    return out


__all__ = ["TrainConfig", "TrainResult", "library_random", "linear", "scoring_points", "snapshot", "span_episodes",
           "train_policy"]
