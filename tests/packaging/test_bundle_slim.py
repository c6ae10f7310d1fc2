"""What the Linux bundle leaves out, checked without a PyInstaller build: one BLAS (faiss runs on numpy's
OpenBLAS through build/linux/faiss_blas.c, and gives the answers it gives on its own) and one Flet renderer
(every file the phone view's CanvasKit page loads is collected, the other renderers and builds are not)."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "build"))

from one_blas import shim  # noqa: E402  (build/ is not a package)

# IVF training (k-means: sgemm), exact search over many queries (sgemm), PCA (ssyrk, dsyev), a random rotation
# (sgeqrf, sorgqr), OPQ (sgesvd): printed as figures that do not depend on the sign of an eigenvector.
FAISS_WORK = """
import json, numpy as np, faiss
faiss.omp_set_num_threads(1)
rng = np.random.default_rng(0)
x = rng.standard_normal((3000, 64)).astype("float32")
q = rng.standard_normal((100, 64)).astype("float32")
flat = faiss.IndexFlatIP(64); flat.add(x); _, exact = flat.search(q, 10)
ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(64), 64, 32, faiss.METRIC_INNER_PRODUCT); ivf.train(x); ivf.add(x)
ivf.nprobe = 32; _, found = ivf.search(q, 10)
pca = faiss.PCAMatrix(64, 8); pca.train(x)
rotation = faiss.RandomRotationMatrix(64, 64); rotation.init(1)
opq = faiss.OPQMatrix(64, 8); opq.niter = 3; opq.train(x)
import os
loaded = {line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line.rsplit("/", 1)[-1]}
print(json.dumps({
    "blas": {path.rsplit("/", 1)[-1]: os.path.getsize(path) for path in loaded},
    "exact": exact.tolist(), "ivf_all_lists": found.tolist(),
    "pca": float(faiss.vector_to_array(pca.eigenvalues)[:8].sum()),
    "rotation_norms": np.linalg.norm(rotation.apply(q), axis=1).round(3).tolist(),
    "opq_norms": np.linalg.norm(opq.apply(q), axis=1).round(3).tolist(),
}))
"""


def spec_list(name: str) -> list[str]:
    """A list literal assigned at the top level of build/orkas.spec."""
    tree = ast.parse((ROOT / "build" / "orkas.spec").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError(f"build/orkas.spec assigns no {name}")


def faiss_work(pythonpath: Path | None = None) -> dict[str, Any]:
    env = {"PATH": "/usr/bin:/bin", **({"PYTHONPATH": str(pythonpath)} if pythonpath else {})}
    done = subprocess.run([sys.executable, "-c", FAISS_WORK], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.skipif(not shutil.which("cc") or sys.platform != "linux", reason="the shim is built on Linux with cc")
def test_faiss_on_numpys_openblas_answers_as_on_its_own(tmp_path: Path) -> None:
    import faiss
    import numpy

    blas, built, unused = shim(tmp_path / "shim")
    assert built.stat().st_size < 100_000  # a shim, not a second BLAS
    assert any(name.startswith("libgfortran") for name in unused)  # what only faiss's OpenBLAS loaded goes too
    # faiss and numpy laid out as in the bundle: faiss_cpu.libs/ holds the shim in place of faiss's OpenBLAS
    site = tmp_path / "site"
    shutil.copytree(Path(faiss.__file__).parent, site / "faiss", ignore=shutil.ignore_patterns("__pycache__"))
    wheel_libs = Path(faiss.__file__).parent.parent / "faiss_cpu.libs"
    (site / "faiss_cpu.libs").mkdir()
    for library in wheel_libs.iterdir():
        if library.name != blas and library.name not in unused:
            shutil.copy(library, site / "faiss_cpu.libs")
    shutil.copy(built, site / "faiss_cpu.libs" / blas)
    (site / "numpy").symlink_to(Path(numpy.__file__).parent)
    (site / "numpy.libs").symlink_to(Path(numpy.__file__).parent.parent / "numpy.libs")

    alone, shared = faiss_work(), faiss_work(site)
    assert len(alone["blas"]) == 2 and min(alone["blas"].values()) > 10_000_000  # the wheels' two OpenBLAS
    assert shared["blas"][blas] < 100_000 and len(shared["blas"]) == 2  # the shim, and numpy's behind it
    assert shared["exact"] == alone["exact"]
    assert shared["ivf_all_lists"] == alone["exact"]  # probing every list after k-means training: exact again
    assert shared["pca"] == pytest.approx(alone["pca"], rel=1e-4)
    assert shared["rotation_norms"] == pytest.approx(alone["rotation_norms"], abs=2e-3)
    assert shared["opq_norms"] == pytest.approx(alone["opq_norms"], abs=2e-3)


def test_the_bundle_carries_the_one_flet_renderer_the_phone_view_loads() -> None:
    from PyInstaller.utils.hooks import collect_data_files

    kept = {Path(target, Path(source).name).as_posix() for source, target in collect_data_files("flet_web")}
    bundled = {
        Path(target, Path(source).name).as_posix()
        for source, target in collect_data_files("flet_web", excludes=spec_list("FLET_UNSERVED"))
    }
    web = "flet_web/web/"
    canvaskit = {web + name for name in ("main.dart.js", "flutter_bootstrap.js", "flutter.js", "index.html")}
    canvaskit |= {web + "canvaskit/canvaskit.js", web + "canvaskit/canvaskit.wasm"}  # the full build (offline.py)
    assert canvaskit <= bundled, canvaskit - bundled
    left_out = kept - bundled
    assert {web + "main.dart.wasm", web + "canvaskit/skwasm.wasm", web + "canvaskit/skwasm_heavy.wasm"} <= left_out
    assert [name for name in bundled if name.endswith(".wasm")] == [web + "canvaskit/canvaskit.wasm"]
    assert not any("/pyodide/" in name or name.endswith(".symbols") for name in bundled)
