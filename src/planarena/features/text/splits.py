"""Per-split text embedding files of the ``embed_text`` stage: rendering, arrays, writing, reading.

:func:`render_trajectories` renders the states, actions and goals of one (domain, split) with the
templates of :mod:`planarena.features.text.templates`; :func:`embed_split` encodes them through an
:class:`~planarena.features.text.cache.EmbeddingCache` into the arrays of one ``.npz`` file (layout
in :func:`planarena.features.text.encoder.run_stage`); :func:`save_npz` writes such a file
byte-stably, :func:`load_split_embeddings` reads it, :func:`embeddings_file` names it.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from planarena.config import Layout
from planarena.core.io import atomic_write
from planarena.core.trajectories import Trajectory
from planarena.features.text.templates import Renderer, TemplateSet

if TYPE_CHECKING:
    from planarena.features.text.cache import EmbeddingCache

#: Version of the ``.npz``/``meta.json`` layout written by :func:`planarena.features.text.encoder.run_stage`.
FORMAT_VERSION = 1


@dataclass
class SplitTexts:
    """Rendered texts of one (domain, split): parallel index arrays for states and actions.

    ``state_traj[i]``/``state_step[i]``: trajectory index and time step ``t`` of ``state_texts[i]``
    (``0..T``); ``action_step[j] = t`` means action ``j`` leads from state ``t`` to ``t + 1``.
    """

    state_texts: list[str] = field(default_factory=list)
    state_traj: list[int] = field(default_factory=list)
    state_step: list[int] = field(default_factory=list)
    action_texts: list[str] = field(default_factory=list)
    action_traj: list[int] = field(default_factory=list)
    action_step: list[int] = field(default_factory=list)
    goal_texts: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    plan_sources: list[str] = field(default_factory=list)


def render_trajectories(tset: TemplateSet, trajectories: Sequence[Trajectory]) -> SplitTexts:
    """Render every state (fluent atoms; kinds from the static atoms), action and goal."""
    out = SplitTexts()
    for ti, traj in enumerate(trajectories):
        render = Renderer(tset, static=traj.static)  # kinds are per problem; memoises sentences
        for t, atoms in enumerate(traj.states):
            out.state_texts.append(render.state(atoms))
            out.state_traj.append(ti)
            out.state_step.append(t)
        for t, action in enumerate(traj.actions):
            out.action_texts.append(render.action(action))
            out.action_traj.append(ti)
            out.action_step.append(t)
        out.goal_texts.append(render.goal(traj.goal))
        out.problems.append(traj.problem)
        out.plan_sources.append(traj.plan_source)
    return out


def _uids(texts: list[str]) -> np.ndarray:
    seen: dict[str, int] = {}
    return np.asarray([seen.setdefault(t, len(seen)) for t in texts], dtype=np.int32)


def _str_array(values: list[str]) -> np.ndarray:
    return np.asarray(values, dtype=str) if values else np.zeros((0,), dtype="<U1")


def embed_split(cache: EmbeddingCache, texts: SplitTexts) -> dict[str, np.ndarray]:
    """Encode one split's texts through ``cache``; return the arrays of the ``.npz`` file
    (see :func:`run_stage`)."""
    all_texts = texts.state_texts + texts.action_texts + texts.goal_texts
    emb = cache.encode(all_texts) if all_texts else np.zeros((0, cache.dim), dtype=np.float32)
    ns, na = len(texts.state_texts), len(texts.action_texts)
    i32 = lambda v: np.asarray(v, dtype=np.int32)  # noqa: E731
    return {
        "states": emb[:ns],
        "traj_index": i32(texts.state_traj),
        "step": i32(texts.state_step),
        "state_uid": _uids(texts.state_texts),
        "actions": emb[ns : ns + na],
        "action_traj_index": i32(texts.action_traj),
        "action_step": i32(texts.action_step),
        "goals": emb[ns + na :],
        "problems": _str_array(texts.problems),
        "plan_source": _str_array(texts.plan_sources),
    }


def save_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` readable by ``np.load``, byte-identical for
    identical arrays (fixed zip timestamps, sorted names; ``np.savez`` stamps the current time, which
    would change the DVC hash of every rerun and retrigger downstream stages). Atomic (temp + rename).
    """
    path = Path(path)
    def write(raw) -> None:
        with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name in sorted(arrays):
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                with zf.open(info, "w", force_zip64=True) as fh:
                    np.lib.format.write_array(fh, np.asarray(arrays[name]), allow_pickle=False)

    atomic_write(path, write)


def embeddings_file(layout: Layout, slug: str, domain: str, split: str) -> Path:
    """``layout.embeddings / "text" / slug / domain / f"{split}.npz"``."""
    return layout.embeddings / "text" / slug / domain / f"{split}.npz"


def load_split_embeddings(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Read one ``.npz`` written by :func:`run_stage` into a dict of arrays.

    Raises:
        FileNotFoundError: the file does not exist (names it and the stage that writes it).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no text embeddings; run `dvc repro embed_text` first")
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


__all__ = ["FORMAT_VERSION", "SplitTexts", "embed_split", "embeddings_file", "load_split_embeddings",
           "render_trajectories", "save_npz"]
