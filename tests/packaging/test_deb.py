"""The Linux packages as a person gets them, from one build by build/build.py: the portable tar.gz
unpacked anywhere and run; the .deb installed with dpkg on this machine (CI runs as root), then used as an
installed app — `orkas --version`, `orkas serve` answering, `orkas run` against the fake model, a note
found by meaning, the window painting under Xvfb — and removed with `dpkg -r`, which leaves the data
folder alone. Slow (a PyInstaller build): once per run."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pptx
import pytest

from orkas import __version__
from orkas.adapter.settings.data_format import CURRENT
from tests.conftest import subprocess_env
from tests.desktop.test_window import need, screenshot, start, wait_for
from tests.display import start_xvfb, stop_group
from tests.fakes import anthropic
from tests.fakes.releases import artifact, new_key, release_host
from tests.fakes.server import FakeServer

ROOT = Path(__file__).resolve().parents[2]
INSTALLED = Path("/usr/bin/orkas")

pytestmark = pytest.mark.slow  # a PyInstaller build (~2 min): scheduled first, not the suite's tail


def dpkg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["dpkg", *args], capture_output=True, text=True, timeout=600)


def installed() -> bool:
    status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "orkas"], capture_output=True, text=True)
    return status.stdout.strip() == "install ok installed"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The .deb and the portable tar.gz, from one PyInstaller build."""
    if os.geteuid() != 0 or not shutil.which("dpkg-deb"):
        pytest.fail("the package test installs with dpkg as root (CI does; run scripts/check.sh as root)")
    if installed():
        pytest.fail("orkas is already installed on this machine: `dpkg -r orkas` first")
    out = tmp_path_factory.mktemp("dist")
    command = [sys.executable, str(ROOT / "build" / "build.py"), "--out", str(out), "--fast", "--formats", "deb,tar"]
    built = subprocess.run(command, capture_output=True, text=True, timeout=1500)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    [package] = out.glob("orkas_*.deb")
    [portable] = out.glob("orkas-*-linux-*.tar.gz")
    shutil.rmtree(out / "bundle")  # what is left is the package: the rest is gigabytes of build
    shutil.rmtree(out / "work")
    yield package, portable
    dpkg("--purge", "orkas")  # nothing of it stays on the machine, whatever the test did


def installed_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = subprocess_env(HOME=str(home), XDG_RUNTIME_DIR=str(tmp_path), ORKAS_HOME=str(tmp_path / "data"), **extra)
    env.pop("PYTHONPATH", None)  # the installed app is self-contained: nothing from this checkout
    env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return env


def test_the_portable_build_runs_from_wherever_it_is_unpacked(
    built: tuple[Path, Path], tmp_path: Path, anthropic_server: FakeServer
) -> None:
    with tarfile.open(built[1]) as archive:
        archive.extractall(tmp_path / "somewhere", filter="tar")
    [folder] = (tmp_path / "somewhere").iterdir()
    assert (folder / "orkas.desktop").exists() and (folder / "icons" / "hicolor" / "256x256" / "apps").is_dir()
    anthropic_server.script(anthropic.reply_text("Unpacked and answering."))
    env = installed_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    version = subprocess.run([str(folder / "orkas"), "--version"], env=env, capture_output=True, text=True)
    assert version.stdout.strip() == f"orkas {__version__}", version.stderr
    ran = subprocess.run(
        [str(folder / "orkas"), "run", "hello?", "--workspace", str(workspace)], env=env, capture_output=True, text=True
    )
    assert ran.returncode == 0 and ran.stdout.strip() == "Unpacked and answering.", ran.stderr


def repacked(portable: Path, out: Path) -> Path:
    """The same real build under the same folder name, with a RELEASE file: what an update would bring."""
    with tarfile.open(portable) as source, tarfile.open(out, "w:gz", compresslevel=0) as target:
        top = ""
        for member in source:
            top = top or member.name.split("/")[0]
            target.addfile(member, source.extractfile(member) if member.isfile() else None)
        info = tarfile.TarInfo(f"{top}/RELEASE")
        info.size = 7
        target.addfile(info, io.BytesIO(b"99.0.0\n"))
    return out


def test_the_portable_build_updates_itself_from_a_signed_feed_and_restarts_into_it(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    with tarfile.open(built[1]) as archive:
        archive.extractall(tmp_path / "apps", filter="tar")
    [folder] = (tmp_path / "apps").iterdir()
    before = folder.stat().st_ino
    key = new_key()
    release = repacked(built[1], tmp_path / "release.tar.gz")
    platform = f"linux-{os.uname().machine.lower()}"
    env = installed_env(tmp_path, ORKAS_UPDATE_KEY=key.public)
    with release_host() as host:
        url = host.put("/orkas.tar.gz", release)
        offer = {"notes": "", "data_format": CURRENT, "artifacts": [artifact(url, release, platform=platform)]}
        feed = host.publish(key, [{"version": "99.0.0", **offer}])
        (tmp_path / "data").mkdir()
        (tmp_path / "data" / "settings.json").write_text(json.dumps({"preferences": {"update_feed": feed}}))
        server = subprocess.Popen([str(folder / "orkas"), "serve"], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert server.stdout is not None
            first = server.stdout.readline().strip()
            base, token = first.split("/?", 1)[0], first.split("token=", 1)[1]
            with httpx.Client(base_url=base, headers={"X-Orkas-Token": token}, timeout=300) as client:
                assert client.post("/api/updates/check").json()["available"]["version"] == "99.0.0"
                answer = client.post("/api/updates/install")
                assert answer.status_code == 200 and answer.json()["restarting"] is True, answer.text
            again = server.stdout.readline().strip()  # the same process, now the new version, says its new URL
            assert again.startswith("http://127.0.0.1:") and again != first, server.stderr.read()
            base, token = again.split("/?", 1)[0], again.split("token=", 1)[1]
            assert httpx.get(f"{base}/api/status", headers={"X-Orkas-Token": token}, timeout=30).status_code == 200
        finally:
            server.terminate()
            server.wait(30)
        assert (folder / "RELEASE").read_text() == "99.0.0\n" and folder.stat().st_ino != before
        assert sorted(p.name for p in (tmp_path / "apps").iterdir()) == [folder.name]  # no staging, no old copy

        # From a terminal: a newer release, then one whose file is not what the feed signed.
        swapped = folder.stat().st_ino
        feed = host.publish(key, [{"version": "99.0.1", **offer}])
        applied = subprocess.run([str(folder / "orkas"), "update", "apply", "--feed", feed], env=env,
                                 capture_output=True, text=True, timeout=600)  # fmt: skip
        assert applied.returncode == 0 and f"is installed in {folder}" in applied.stdout, applied.stderr
        assert folder.stat().st_ino != swapped
        bad = {**offer, "artifacts": [{**offer["artifacts"][0], "sha256": "0" * 64}]}  # type: ignore[dict-item]
        feed = host.publish(key, [{"version": "99.0.2", **bad}])
        refused = subprocess.run([str(folder / "orkas"), "update", "apply", "--feed", feed], env=env,
                                 capture_output=True, text=True, timeout=600)  # fmt: skip
        assert refused.returncode == 1 and "SHA-256" in refused.stderr
        now = folder.stat().st_ino
    version = subprocess.run([str(folder / "orkas"), "--version"], env=env, capture_output=True, text=True)
    assert version.stdout.strip() == f"orkas {__version__}" and folder.stat().st_ino == now


def test_the_deb_installs_runs_and_uninstalls_keeping_the_data(
    built: tuple[Path, Path], tmp_path: Path, anthropic_server: FakeServer
) -> None:
    deb = built[0]
    fields = dpkg("-f", str(deb)).stdout
    assert "Package: orkas" in fields and f"Version: {__version__}" in fields
    assert "libxcb-cursor0" in fields and "libnss3" in fields  # the system libraries it links against

    installing = dpkg("-i", str(deb))
    assert installing.returncode == 0, installing.stderr
    assert INSTALLED.exists() and Path("/opt/orkas/orkas").exists()
    assert Path("/usr/share/applications/orkas.desktop").exists()
    assert Path("/usr/share/icons/hicolor/256x256/apps/orkas.png").exists()
    internal = Path("/opt/orkas/_internal")
    blas = [p.relative_to(internal).as_posix() for p in internal.rglob("*openblas*") if not p.is_symlink()]
    assert [name for name in blas if (internal / name).stat().st_size > 1_000_000] == [
        next(name for name in blas if name.startswith("numpy.libs/"))
    ]  # one BLAS: faiss calls numpy's through a shim (build/one_blas.py)
    assert not list(internal.glob("flet_web/web/canvaskit/skwasm*"))  # one Flet renderer: CanvasKit

    version = subprocess.run(["orkas", "--version"], env=installed_env(tmp_path), capture_output=True, text=True)
    assert version.stdout.strip() == f"orkas {__version__}", version.stderr

    key = new_key()  # an update of the installed package: verified, then handed to the system's package tool
    with release_host() as host:
        url = host.put("/orkas.deb", deb)
        entry = artifact(url, deb, platform=f"linux-{os.uname().machine.lower()}", kind="deb")
        feed = host.publish(key, [{"version": "99.0.0", "notes": "", "data_format": CURRENT, "artifacts": [entry]}])
        handed = subprocess.run(["orkas", "update", "apply", "--feed", feed], capture_output=True, text=True,
                                env=installed_env(tmp_path, ORKAS_UPDATE_KEY=key.public), timeout=300)  # fmt: skip
    assert handed.returncode == 0 and "install it with:\n  sudo apt install " in handed.stdout, handed.stderr
    assert Path("/opt/orkas/orkas").exists() and installed()  # nothing of the installed package was touched

    server = subprocess.Popen(
        ["orkas", "serve"], env=installed_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), server.stderr.read() if server.poll() is not None else url
        base, token = url.split("/?", 1)[0], url.split("token=", 1)[1]
        status = httpx.get(f"{base}/api/status", headers={"X-Orkas-Token": token}, timeout=30)
        assert status.status_code == 200
        page = httpx.get(base + "/", timeout=30)
        assert page.status_code == 200 and "<html" in page.text.lower()  # frontend/ is in the bundle
    finally:
        server.terminate()
        server.wait(30)

    anthropic_server.script(anthropic.reply_text("Installed and answering."))
    env = installed_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    ran = subprocess.run(
        ["orkas", "run", "are you there?", "--workspace", str(workspace)], env=env, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "Installed and answering."

    note = workspace / "tank.txt"
    note.write_text("The zebrafish tank is cleaned on Tuesdays.\n")
    assert subprocess.run(["orkas", "kb", "add", str(note)], env=env, capture_output=True).returncode == 0
    found = subprocess.run(["orkas", "kb", "search", "aquarium upkeep"], env=env, capture_output=True, text=True)
    assert "zebrafish" in found.stdout, found.stderr  # no word in common: the bundled embedding model found it
    slides = pptx.Presentation()  # python-pptx needs Pillow to read any deck, even one without pictures
    slides.slides.add_slide(slides.slide_layouts[5]).shapes.title.text = "The glacier lost thirty metres of ice."
    slides.save(workspace / "glacier.pptx")
    read = subprocess.run(["orkas", "kb", "add", str(workspace / "glacier.pptx")], env=env, capture_output=True)
    assert read.returncode == 0, read.stderr
    listed = subprocess.run(["orkas", "skills", "list"], env=env, capture_output=True, text=True)
    assert "skill-creator" in listed.stdout and "package-installer" in listed.stdout, listed.stderr  # bundled

    need("Xvfb", "xwd")
    xvfb, display = start_xvfb()
    report = tmp_path / "report.jsonl"
    window = start(["orkas"], installed_env(tmp_path, DISPLAY=display, ORKAS_DESKTOP_REPORT=str(report)))
    try:
        shown = wait_for(report, "shown", timeout=90)
        assert shown["ping"]["ok"] is True  # the bundled page and Python talk
        deadline = time.monotonic() + 30
        while (spread := screenshot(display, tmp_path / "installed.png")) <= 0.05 and time.monotonic() < deadline:
            time.sleep(0.3)
        assert spread > 0.05, f"the installed app's window looks blank (pixel spread {spread:.3f})"
    finally:
        stop_group(window)
        xvfb.terminate()
        xvfb.wait(10)

    data = sorted(p.relative_to(tmp_path) for p in (tmp_path / "data").rglob("*") if "logs" not in p.parts)
    assert any(p.parts[1] == "conversations" for p in data if len(p.parts) > 1)  # the run was kept
    removing = dpkg("-r", "orkas")
    assert removing.returncode == 0, removing.stderr
    assert not INSTALLED.exists() and not Path("/opt/orkas").exists()
    left = sorted(p.relative_to(tmp_path) for p in (tmp_path / "data").rglob("*") if "logs" not in p.parts)
    assert left == data  # the data folder is not the package's
