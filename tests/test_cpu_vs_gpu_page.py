"""The committed CPU-vs-GPU page is what ``benchmarks/cpu_vs_gpu.py`` renders from its JSON files
(no number in it is written by hand)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_cpu_vs_gpu_page_is_rendered_from_its_json_files():
    spec = importlib.util.spec_from_file_location("cpu_vs_gpu", ROOT / "benchmarks" / "cpu_vs_gpu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    folder = ROOT / "reports" / "cpu-vs-gpu"
    page = mod.render(folder)
    assert (folder / "README.md").read_text() == page
    assert "| 17.2 s | 27.8 s | 1.6x |" in page   # rgnn_cuda.json / rgnn_cpu1.json: s_per_episode
