"""Skills at scale: 2,000 skills across the roots (custom, ~/.claude/skills, ~/.codex/skills,
~/.agents/skills, a package), measured side by side with a naive baseline.

    .venv/bin/python -m bench.skills [--skills 2000] [--corpus DIR] [--runs 5] [--queries 200]

- index build: every root scanned into records (priority, shadowing, the guard's verdicts) and one
  agent's catalogue with its prompt index — cold (no file parsed before, guard verdicts cached as after
  the first start) and warm (a rescan: only changed files parsed). Baseline: reading every SKILL.md whole
  and parsing its frontmatter with PyYAML's pure-Python loader, as a hand-rolled loader would.
- a change noticed: a SKILL.md written in ~/.claude/skills until the registry lists it, through
  watchdog (inotify here) and the debounce. Baseline: polling every root's mtimes once a second
  (the original product's approach, without its explicit invalidation) — expected half a second plus
  a rescan.
- skill_search: p50/p95 over `--queries` queries (words from the skills' own descriptions and names),
  keyword arm alone and fused with the knowledge base's hybrid search (bundled E5 embedder) over
  names, descriptions and bodies. Baseline: a substring scan over every description.

`--corpus DIR` takes skills from a folder of skill folders (e.g. a clone of a public skill collection)
instead of generated ones.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from orkas.adapter.skills.guard import SkillGuard
from orkas.adapter.skills.records import Root
from orkas.adapter.skills.roots import SkillRegistry
from orkas.adapter.skills.watch import SkillWatcher

WORDS = (
    "pdf csv invoice ledger report chart deploy docker kubernetes lint test review release changelog email "
    "calendar slides spreadsheet translate summary meeting notes budget forecast scrape api schema migrate "
    "backup restore image resize video transcript audio tag search index cache queue invoice tax payroll"
).split()
ROOTS = ((".claude/skills", 0.4), (".codex/skills", 0.2), (".agents/skills", 0.1))


def generate(count: int, data: Path, home: Path, corpus: Path | None) -> list[Path]:
    """Skill folders spread over the roots; returns every SKILL.md written."""
    rng = random.Random(7)
    sources = sorted(p for p in corpus.iterdir() if (p / "SKILL.md").is_file()) if corpus else []
    places = [data / "skills"] * int(count * 0.2) + [data / "packages-bench"] * int(count * 0.1)
    for root, share in ROOTS:
        places += [home / root] * int(count * share)
    places += [home / ".claude/skills"] * (count - len(places))
    written = []
    for i, root in enumerate(places):
        if sources:
            source = sources[i % len(sources)]
            folder = root / f"{source.name[:40]}-{i}"
            folder.mkdir(parents=True)
            shutil.copyfile(source / "SKILL.md", folder / "SKILL.md")
        else:
            topic = rng.sample(WORDS, 3)
            name = f"{'-'.join(topic[:2])}-{i}"
            folder = root / name
            folder.mkdir(parents=True)
            body = "\n".join(f"{n}. {' '.join(rng.choices(WORDS, k=12))}." for n in range(40))
            (folder / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: Use when the person asks about {topic[0]} and {topic[1]} "
                f"({topic[2]}).\ntags: [{topic[0]}, {topic[2]}]\n---\n# {name}\n{body}\n"
            )
        written.append(folder / "SKILL.md")
    return written


def registry(data: Path, home: Path) -> SkillRegistry:
    guard = SkillGuard(data / "cache" / "guard.json", background=False)
    package = data / "packages-bench"
    return SkillRegistry(
        data, home=home, bundled=None, packages=lambda: [Root("package", package, "package bench")], guard=guard
    )


def baseline_build(files: list[Path]) -> float:
    began = time.perf_counter()
    for path in files:
        text = path.read_text(errors="replace")
        if text.startswith("---"):
            head = text.split("\n---", 1)[0][3:]
            try:
                yaml.load(head, Loader=yaml.SafeLoader)
            except yaml.YAMLError:
                pass
    return time.perf_counter() - began


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skills", type=int, default=2000)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embed-seconds", type=float, default=60, help="let the worker embed bodies this long first")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data, home = Path(folder) / "data", Path(folder) / "home"
        files = generate(args.skills, data, home, args.corpus)
        first = registry(data, home)
        began = time.perf_counter()
        first.refresh()  # the very first start: every open-tier description judged by the guard's rules
        very_first = time.perf_counter() - began
        cold, uncached, warm, naive = [], [], [], []
        for _ in range(args.runs):
            (data / "cache" / "skills.json").unlink()
            fresh = registry(data, home)  # every SKILL.md parsed again; the guard's verdicts cached
            began = time.perf_counter()
            fresh.refresh()
            fresh.catalog(None).index(200_000)
            uncached.append(time.perf_counter() - began)
            fresh = registry(data, home)  # a new start as usual: the parsed frontmatter cached
            began = time.perf_counter()
            fresh.refresh()
            fresh.catalog(None).index(200_000)
            cold.append(time.perf_counter() - began)
            began = time.perf_counter()
            fresh.refresh()
            warm.append(time.perf_counter() - began)
            naive.append(baseline_build(files))
        usable = len(fresh.catalog(None))
        source = f"corpus {args.corpus}" if args.corpus else "generated"
        print(f"{len(files)} skills, {usable} usable by the commander ({source})")
        print(f"index build, median of {args.runs}:")
        first_ms = very_first * 1000
        print(f"  start       {statistics.median(cold) * 1000:7.1f} ms   (first ever: {first_ms:.0f} ms)")
        print(f"  no cache    {statistics.median(uncached) * 1000:7.1f} ms   (every SKILL.md parsed)")
        print(f"  rescan      {statistics.median(warm) * 1000:7.1f} ms")
        ratio = statistics.median(cold) / statistics.median(naive)
        ratio_uncached = statistics.median(uncached) / statistics.median(naive)
        print(f"  baseline    {statistics.median(naive) * 1000:7.1f} ms", end="   ")
        print(f"start/baseline {ratio:.2f}×, no cache/baseline {ratio_uncached:.2f}×")
        noticed = measure_changes(fresh, home, args.runs)
        median, worst = statistics.median(noticed) * 1000, max(noticed) * 1000
        print(f"a change noticed (watchdog + debounce), median {median:.0f} ms, max {worst:.0f} ms")
        rescan = statistics.median(warm)
        print(f"  baseline: 1 s mtime polling ≈ {500 + rescan * 1000:.0f} ms mean, {1000 + rescan * 1000:.0f} ms worst")
        measure_search(fresh, data, args.queries, args.embed_seconds)


def measure_changes(reg: SkillRegistry, home: Path, runs: int) -> list[float]:
    watcher = SkillWatcher(reg)
    watcher.start()
    times = []
    try:
        for i in range(runs):
            folder = home / ".claude/skills" / f"fresh-{i}"
            folder.mkdir()
            began = time.perf_counter()
            (folder / "SKILL.md").write_text(
                f"---\nname: fresh-{i}\ndescription: Use when testing change {i}.\n---\nx\n"
            )
            while reg.catalog(None).get(f"fresh-{i}") is None:
                time.sleep(0.005)
                if time.perf_counter() - began > 10:
                    raise SystemExit("a change was not noticed within 10 s")
            times.append(time.perf_counter() - began)
            time.sleep(0.3)
    finally:
        watcher.close()
    return times


def measure_search(reg: SkillRegistry, data: Path, count: int, embed_seconds: float) -> None:
    from orkas.adapter.knowledge.service import KnowledgeService
    from orkas.adapter.skills.index import SkillIndex
    from orkas.engine.memory.embedders import default_embedder

    rng = random.Random(11)
    catalog = reg.catalog(None)
    skills = list(catalog.skills)
    queries = []
    for _ in range(count):
        words = rng.choice(skills).text.description.split()
        start = rng.randrange(max(1, len(words) - 3))
        queries.append(" ".join(words[start : start + 3]))
    timings: dict[str, list[float]] = {"keyword": [], "baseline": []}
    catalog.search("warm up")
    for query in queries:
        began = time.perf_counter()
        catalog.search(query)
        timings["keyword"].append(time.perf_counter() - began)
        began = time.perf_counter()
        needle = query.casefold()
        [s for s in skills if needle in s.text.description.casefold()]
        timings["baseline"].append(time.perf_counter() - began)
    knowledge = KnowledgeService(data / "kb", default_embedder)
    try:
        index = SkillIndex(reg, knowledge)
        knowledge.warm()
        began = time.perf_counter()
        index.sync()
        synced = time.perf_counter() - began
        deadline = time.monotonic() + embed_seconds  # the worker embeds bodies meanwhile (minutes for all)
        while knowledge.skills.pending() and time.monotonic() < deadline:
            time.sleep(0.5)
        hybrid = reg.catalog(None, meaning=index.search)
        hybrid.search("warm up")
        for name in ("hybrid, worker embedding", "hybrid, worker idle"):
            if name.endswith("idle"):  # stop the embedding worker (the state once every body is embedded)
                knowledge._stop.set()
                knowledge._wake.set()
                if knowledge._worker is not None:
                    knowledge._worker.join(120)
            label = f"{name} ({knowledge.skills.vector_index()['vectors']} vectors)"
            timings[label] = []
            for query in queries:
                began = time.perf_counter()
                hybrid.search(query)
                timings[label].append(time.perf_counter() - began)
    finally:
        knowledge.close()
    print(f"skill_search over {len(skills)} skills, {count} queries", end=" ")
    print(f"(writing bodies into the index took {synced:.1f} s):")
    for name, values in timings.items():
        p50, p95 = percentile(values, 0.5) * 1000, percentile(values, 0.95) * 1000
        print(f"  {name:<44} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms")


if __name__ == "__main__":
    os.environ.setdefault("ORKAS_LOG_LEVEL", "warning")
    main()
