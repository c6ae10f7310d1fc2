"""One BLAS in the Linux bundle: faiss's OpenBLAS replaced by build/linux/faiss_blas.c, which answers faiss's
BLAS and LAPACK calls with numpy's OpenBLAS (-38.7 MB, and the libgfortran and libquadmath only it loaded).

numpy's OpenBLAS speaks the 64-bit-integer interface under its own names (`scipy_sgemm_64_`), faiss calls the
32-bit one (`sgemm_`): the shim, built here with the system's C compiler under the file name libfaiss.so
asks for, converts between them. The build fails, rather than ship a faiss that cannot load, when faiss
needs a symbol from its BLAS that the shim does not define.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

SHIM = Path(__file__).resolve().parent / "linux" / "faiss_blas.c"


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise SystemExit(f"one_blas: {name} is not installed")
    return Path(spec.origin).parent


def _symbols(library: Path, which: str) -> set[str]:
    listed = subprocess.run(["nm", "-D", which, str(library)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in listed.splitlines() if line.strip()}


def _needed(library: Path) -> list[str]:
    dynamic = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)


def shim(workdir: Path) -> tuple[str, Path, set[str]]:
    """Build the shim. Returns the file name it stands in for (faiss_cpu.libs/<faiss's OpenBLAS>), its path,
    and the names (under faiss_cpu.libs/) of the libraries only faiss's OpenBLAS needed, to leave out."""
    faiss_dir = _package_dir("faiss")
    faiss_libs = faiss_dir.parent / "faiss_cpu.libs"
    numpy_libs = _package_dir("numpy").parent / "numpy.libs"
    [numpy_blas] = numpy_libs.glob("libscipy_openblas64_*.so")
    [faiss_blas] = [faiss_libs / name for name in _needed(faiss_dir / "libfaiss.so") if "openblas" in name]
    workdir.mkdir(parents=True, exist_ok=True)
    built = workdir / faiss_blas.name
    subprocess.run(
        ["cc", "-O2", "-shared", "-fPIC", "-Wall", "-Werror", str(SHIM), str(numpy_blas), "-o", str(built),
         f"-Wl,-soname,{faiss_blas.name}", "-Wl,-rpath,$ORIGIN/../numpy.libs"],
        check=True,
    )  # fmt: skip
    wanted = (_symbols(faiss_dir / "libfaiss.so", "--undefined-only") | _symbols_of_extensions(faiss_dir)) & (
        _symbols(faiss_blas, "--defined-only")
    )
    missing = wanted - _symbols(built, "--defined-only")
    if missing:
        raise SystemExit(f"one_blas: faiss calls {sorted(missing)} from its BLAS: add them to {SHIM.name}")
    unused = {p.name for p in faiss_libs.iterdir()} - _still_needed(faiss_dir, faiss_libs) - {faiss_blas.name}
    return faiss_blas.name, built, unused


def _still_needed(faiss_dir: Path, faiss_libs: Path) -> set[str]:
    """What faiss loads from faiss_cpu.libs, its BLAS aside (the shim needs only numpy's)."""
    kept: set[str] = set()
    pending = [faiss_dir / "libfaiss.so", *faiss_dir.glob("_swigfaiss*.so")]
    while pending:
        for name in _needed(pending.pop()):
            if "openblas" not in name and name not in kept and (faiss_libs / name).exists():
                kept.add(name)
                pending.append(faiss_libs / name)
    return kept


def _symbols_of_extensions(faiss_dir: Path) -> set[str]:
    found: set[str] = set()
    for extension in faiss_dir.glob("_swigfaiss*.so"):
        found |= _symbols(extension, "--undefined-only")
    return found
