"""benchmarks/bench_authors_decode.py without the authors' checkout (offline, about a second): its
``--help``, its one-line error when ``--authors`` is not a checkout, the import of their package
``code`` past the standard library's module of that name, and the model adapter's exactness (their
loop's ``phi(s) + predict([phi(s), phi(g)])`` must be planarena's target ``v`` bit for bit)."""

import importlib.util
import subprocess
import sys

import numpy as np
from conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "bench_authors_decode.py"
REPO = "https://github.com/ai4society/state-centric-gen-planning"


def _run(*args, **kw):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60, **kw)


def _bench():
    spec = importlib.util.spec_from_file_location("bench_authors_decode", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_help_names_the_authors_repository():
    proc = _run("--help")
    assert proc.returncode == 0, proc.stderr
    assert "--authors" in proc.stdout and "--workspace" in proc.stdout and "--stage" in proc.stdout
    assert f"git clone {REPO}" in proc.stdout


def test_not_a_checkout_is_one_clear_line(tmp_path):
    for authors in (tmp_path, tmp_path / "missing"):
        proc = _run("--authors", str(authors), "--workspace", str(tmp_path))
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert "not a checkout" in lines[0] and f"git clone {REPO}" in lines[0]
        assert "Traceback" not in proc.stderr


def _fake_checkout(root):
    for pkg in ("code", "code/modeling", "code/common"):
        (root / pkg).mkdir(parents=True, exist_ok=True)
        (root / pkg / "__init__.py").write_text("")
    (root / "code/modeling/inference_xgb.py").write_text("WHO = 'authors'\n")
    (root / "code/common/wl_wrapper.py").write_text("")
    (root / "code/common/utils.py").write_text("")


def test_their_code_package_is_imported_past_the_standard_library_module(tmp_path):
    _fake_checkout(tmp_path)
    probe = (f"import code, sys; sys.path.insert(0, {str(SCRIPT.parent)!r}); import bench_authors_decode as b; "
             f"from pathlib import Path; ax = b.import_authors(Path({str(tmp_path)!r})); print(ax.WHO)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "authors"
    # a folder with their files but no git history: accepted, its commit named as unknown
    assert _bench().authors_checkout(tmp_path) == "unknown (not a git checkout)"


class _DeltaModel:
    """planarena's delta-mode contract: ``step`` returns ``v = phi(s) + Delta`` in float32."""

    def __init__(self, dim, seed=0):
        self.dim, self.rng = dim, np.random.default_rng(seed)

    def step(self, phi_s, phi_g, rec=None):
        delta = self.rng.normal(scale=3.0, size=phi_s.shape).astype(np.float32)
        self.last = (np.asarray(phi_s, np.float32) + delta).astype(np.float32)
        return self.last, None


def test_adapter_gives_their_loop_planarenas_target_exactly():
    bench = _bench()
    rng = np.random.default_rng(1)
    dim = 64
    model = _DeltaModel(dim)
    adapter = bench.AuthorsModel(model, dim)
    for _ in range(50):
        phi_s = rng.integers(0, 40, size=(1, dim)).astype(np.float32)   # WL counts, float32
        phi_g = rng.integers(0, 40, size=(1, dim)).astype(np.float32)
        pred = adapter.predict(np.hstack([phi_s, phi_g])).reshape(1, -1)   # what their loop does
        assert np.array_equal(phi_s + pred, model.last)
    assert adapter.calls == 50
