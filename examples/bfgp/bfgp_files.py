"""Where the installed BFGP++ wheel (PyPI `up-bfgp`) keeps its binary and translator.

The `up_bfgp` package cannot be imported here (it needs a unified-planning fork and
`pkg_resources`), so its folder is found without importing it.
"""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path


def package_dir() -> Path:
    spec = importlib.util.find_spec("up_bfgp")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("BFGP++ is not installed in this Python: run `make outside` (pip install up-bfgp tarski)")
    return Path(list(spec.submodule_search_locations)[0])


def main_bin() -> Path:
    return package_dir() / "bfgp_pp" / "main.bin"


def translate(domain: str, task: str, folder: Path, index: int) -> None:
    """BFGP++'s own translator: writes `folder/domain.txt` and `folder/<index>.txt`."""
    translator = package_dir() / "bfgp_pp" / "preprocess" / "pddl_translator.py"
    subprocess.run([sys.executable, str(translator), "-d", domain, "-i", task, "-o", str(folder) + "/",
                    "-id", str(index)], check=True, stdout=subprocess.DEVNULL)


def pddl_names(domain: str, task: str) -> dict[str, str]:
    """BFGP++ name -> PDDL name of every action and object (its translator writes `-` as `_` and
    lower-cases), to write its plans back in the task's own names."""
    words = re.findall(r"[A-Za-z][A-Za-z0-9_\-]*", Path(domain).read_text() + " " + Path(task).read_text())
    return {w.lower().replace("-", "_"): w for w in words}
