"""The knowledge base: chunking, both arms, RRF fusion, incremental indexing, persistence."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

import pytest

from orkas.engine.memory.chunking import chunk_text
from orkas.engine.memory.embedders import E5Embedder, HashingEmbedder
from orkas.engine.memory.kb import KnowledgeBase
from orkas.engine.memory.terms import KEYWORD_INDEX, query_terms
from orkas.engine.sandbox import PathPolicy

DOCS = {
    "billing.md": "# Billing\nInvoices are generated on the first day of the month.\nRefunds take five working days.",
    "deploy.md": (
        "# Deploying\nRun `make release` and then `kubectl rollout restart deploy/ledger`.\nRollback with helm."
    ),
    "cats.md": "# Office pets\nThe office cat sleeps on the warm printer every afternoon.",
    "检索.md": "# 检索说明\n知识库使用混合检索：关键词检索和向量检索，用倒数排名融合合并结果。",
}


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder()


def filled(embedder: object | None = None) -> KnowledgeBase:
    kb = KnowledgeBase.in_memory(embedder=embedder)  # type: ignore[arg-type]
    for name, text in DOCS.items():
        kb.add_text(name, text)
    kb.embed_pending()
    return kb


def test_chunks_cut_at_lines_with_overlap_and_cover_everything() -> None:
    text = "\n".join(f"line {i} " + "word " * 20 for i in range(1, 41))
    chunks = chunk_text(text, max_tokens=120, overlap_lines=2)
    assert len(chunks) > 3 and chunks[0].start_line == 1 and chunks[-1].end_line == 40
    for before, after in itertools.pairwise(chunks):
        assert after.start_line == before.end_line - 1  # two lines of overlap
    long_line = "这是一个很长的句子。" * 200  # one line far over the size: split, nothing lost
    pieces = chunk_text(long_line, max_tokens=100)
    assert "".join(p.text for p in pieces) == long_line and all(p.start_line == 1 for p in pieces)


def test_a_long_line_without_sentence_ends_is_cut_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # 800 KB pasted as one line with no sentence end took ~11 minutes: each cut measured all that was left.
    from orkas.engine.memory import chunking

    measured = 0
    real = chunking.estimate_tokens

    def counting(text: str) -> int:
        nonlocal measured
        measured += len(text)
        return real(text)

    monkeypatch.setattr(chunking, "estimate_tokens", counting)
    for line in ("w " * 100_000, "没有句号的长句子" * 20_000):
        measured = 0
        pieces = chunk_text(line)
        assert "".join(p.text for p in pieces) == line and all(real(p.text) <= 128 for p in pieces)
        assert measured < 10 * len(line)  # a few looks at each character (~7), not one per cut (~1,000 here)


def test_keyword_search_finds_exact_strings_and_chinese_substrings() -> None:
    kb = filled()
    [hit, *_] = kb.search("kubectl rollout", mode="keyword")
    assert hit.doc_id == "deploy.md" and hit.citation == "deploy.md:1-3"
    assert kb.search("混合检索", mode="keyword")[0].doc_id == "检索.md"
    assert kb.search("the and what", mode="keyword") == []  # stop words alone search nothing
    assert query_terms("向量检索 is great") == ["向量", "量检", "检索", "great"]


def test_keyword_search_matches_two_character_chinese_words_word_forms_and_identifiers() -> None:
    kb = filled()
    # most Chinese words are two characters: a three-character index could not match these at all
    assert kb.search("排名", mode="keyword")[0].doc_id == "检索.md"
    assert kb.search("融合是什么意思", mode="keyword")[0].doc_id == "检索.md"  # 是什么 / 意思 left out or missed
    assert query_terms("融合是什么意思") == ["融合", "合是", "是什", "意思"]
    assert kb.search("generating invoice", mode="keyword")[0].doc_id == "billing.md"  # stems meet
    # an identifier is its words in a row, not any of them
    assert kb.search("deploy/ledger", mode="keyword")[0].doc_id == "deploy.md"
    assert kb.search("ledger/deploy", mode="keyword") == []
    assert query_terms("os.path.join(x) in src/app.py") == ["os path join", "src app py"]


def test_a_base_written_with_older_keyword_rules_is_reindexed_on_open(tmp_path: Path) -> None:
    kb = KnowledgeBase.open(tmp_path / "kb", embedder=None)
    for name, text in DOCS.items():
        kb.add_text(name, text)
    kb.close()
    # what an earlier version left behind in the file: a trigram index and no version mark
    with sqlite3.connect(tmp_path / "kb" / "kb.sqlite") as old:
        old.executescript(
            "DROP TABLE chunks_fts; DELETE FROM meta WHERE key = 'keyword_index'; "
            "CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content='chunks', content_rowid='id',"
            " tokenize='trigram');"
        )
    again = KnowledgeBase.open(tmp_path / "kb", embedder=None)
    with sqlite3.connect(tmp_path / "kb" / "kb.sqlite") as file:
        assert file.execute("SELECT value FROM meta WHERE key = 'keyword_index'").fetchone() == (KEYWORD_INDEX,)
    assert again.search("排名", mode="keyword")[0].doc_id == "检索.md"
    assert again.remove("检索.md") and again.search("排名", mode="keyword") == []
    assert again.search("kubectl", mode="keyword")[0].doc_id == "deploy.md"


def test_vector_search_finds_meaning_not_only_words(e5: E5Embedder) -> None:
    kb = filled(e5)
    assert kb.pending() == 0
    assert kb.search("where does the kitty nap?", mode="vector")[0].doc_id == "cats.md"
    assert kb.search("how long until I get my money back", mode="vector")[0].doc_id == "billing.md"


def test_hybrid_fuses_both_arms_by_the_default_setting_and_any_other_on_request(e5: E5Embedder) -> None:
    from orkas.engine.memory.fusion import DEFAULT, Setting

    kb = filled(e5)
    query = "restart ledger after the printer cat naps"
    arms = kb.rankings(query)
    assert arms.vector and arms.keyword and arms.evidence is not None
    documents = kb.chunk_documents()
    assert DEFAULT.how == "anchored" and kb.fusion == DEFAULT
    low, high = min(s for _, s in arms.vector), max(s for _, s in arms.vector)
    best_keyword = max(s for _, s in arms.keyword)
    expected: dict[int, float] = {}
    for cid, score in arms.vector:
        expected[cid] = DEFAULT.vector_weight * (score - low) / (high - low)
    for cid, score in arms.keyword:  # BM25 over [0, best]: its floor is 0
        expected[cid] = expected.get(cid, 0.0) + (1 - DEFAULT.vector_weight) * score / best_keyword
    ranked = sorted(expected.items(), key=lambda item: item[1], reverse=True)[:4]
    hybrid = kb.search(query, k=4)
    assert [(h.doc_id, pytest.approx(h.score)) for h in hybrid] == [(documents[c], s) for c, s in ranked]

    rrf = Setting("rrf", 0.8)
    keyword = [documents[c] for c, _ in arms.keyword]
    vector = [documents[c] for c, _ in arms.vector]
    for hit in kb.search(query, k=4, fusion=rrf):
        score = 0.0
        if hit.doc_id in vector:
            score += 0.8 / (60 + vector.index(hit.doc_id) + 1)
        if hit.doc_id in keyword:
            score += 0.2 / (60 + keyword.index(hit.doc_id) + 1)
        assert hit.score == pytest.approx(score)
    assert kb.fusion == DEFAULT  # an override is for that search only
    with pytest.raises(ValueError, match="fusion must be one of"):
        Setting("mean")  # type: ignore[arg-type]
    assert kb.search("kubectl", k=1, min_score=1.01) == []  # the threshold cuts (fused scores are within 0…1)


def test_keyword_search_works_before_anything_is_embedded() -> None:
    kb = KnowledgeBase.in_memory(embedder=HashingEmbedder())
    kb.add_text("deploy.md", DOCS["deploy.md"])
    assert kb.pending() == 1
    assert kb.search("kubectl")[0].doc_id == "deploy.md"  # hybrid with an empty vector arm
    assert kb.embed_pending() == 1 and kb.pending() == 0


def test_unchanged_documents_are_skipped_and_changed_ones_replaced() -> None:
    kb = KnowledgeBase.in_memory(embedder=HashingEmbedder())
    assert kb.add_text("a", "alpha bravo charlie") == 1
    assert kb.add_text("a", "alpha bravo charlie") == 0
    kb.embed_pending()
    assert kb.add_text("a", "delta echo foxtrot") == 1
    assert kb.search("bravo", mode="keyword") == [] and kb.search("foxtrot")[0].doc_id == "a"
    assert kb.pending() == 1
    assert kb.remove("a") and kb.search("foxtrot") == [] and kb.documents() == []


def test_folders_index_incrementally_and_drop_deleted_files(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\nThe quarterly plan is in Lisbon.")
    (folder / "page.html").write_text("<html><script>evil()</script><p>Opening hours: 9 to 5</p></html>")
    (folder / "image.png").write_bytes(b"\x89PNG")
    kb = KnowledgeBase.in_memory()
    policy = PathPolicy.source(folder, home=tmp_path / "home")
    report = kb.add_folder(folder, policy=policy)
    assert (report.added, report.unchanged, report.removed) == (2, 0, 0)
    assert kb.search("opening hours")[0].text == "Opening hours: 9 to 5"
    (folder / "a.md").unlink()
    again = kb.add_folder(folder, policy=policy)
    assert (again.added, again.unchanged, again.removed) == (0, 1, 1)
    assert kb.read(str((folder / "page.html").resolve())) == "Opening hours: 9 to 5"


def test_a_persistent_base_reopens_with_its_vectors(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    kb = KnowledgeBase.open(tmp_path / "kb", embedder=embedder)
    for name, text in DOCS.items():
        kb.add_text(name, text)
    kb.embed_pending()
    before = kb.search("printer cat", mode="vector")
    kb.close()
    reopened = KnowledgeBase.open(tmp_path / "kb", embedder=embedder)
    assert reopened.pending() == 0 and reopened.search("printer cat", mode="vector") == before
    (tmp_path / "kb" / "vectors.faiss").unlink()  # lost: rebuilt from the embedding cache, no re-embedding
    rebuilt = KnowledgeBase.open(tmp_path / "kb", embedder=embedder)
    assert rebuilt.pending() == 0 and rebuilt.search("printer cat", mode="vector") == before


def test_words_in_most_chunks_are_left_out_of_keyword_queries() -> None:
    kb = KnowledgeBase.in_memory()
    for i in range(300):
        kb.add_text(f"d{i}", f"The system log entry number {i} was written by the system service.")
    kb.add_text("rare", "The system restarted after the zorium module failed.")
    assert kb.search("system zorium", mode="keyword")[0].doc_id == "rare"
    kb.remove("rare")
    assert kb.search("zorium", mode="keyword") == []
    kb.add_text("rare2", "The zorium count is back.")  # counts followed the removal: it is rare again
    assert kb.search("system zorium", mode="keyword")[0].doc_id == "rare2"


def test_a_large_base_switches_to_an_approximate_index_that_still_finds_and_forgets(tmp_path: Path) -> None:

    embedder = HashingEmbedder()
    kb = KnowledgeBase.open(tmp_path / "kb", embedder=embedder, approximate_at=400)
    for i in range(450):
        kb.add_text(
            f"d{i}", f"Report {i}: the {['north', 'south', 'east', 'west'][i % 4]} depot shipped {i * 7} crates."
        )
    kb.embed_pending()
    assert kb.vector_index()["kind"] == "approximate" and kb.vector_index()["vectors"] == 450
    assert kb.search("Report 123: the west depot shipped 861 crates.", mode="vector")[0].doc_id == "d123"
    kb.remove("d123")
    assert kb.vector_index()["vectors"] == 449
    assert all(h.doc_id != "d123" for h in kb.search("Report 123", mode="vector"))
    kb.close()
    reopened = KnowledgeBase.open(tmp_path / "kb", embedder=embedder, approximate_at=400)
    assert reopened.vector_index() == {**reopened.vector_index(), "kind": "approximate", "vectors": 449}
    assert reopened.search("Report 78: the east depot shipped 546 crates.", mode="vector")[0].doc_id == "d78"


def test_an_approximate_index_is_trained_again_when_the_base_grows_fourfold() -> None:

    kb = KnowledgeBase.in_memory(embedder=HashingEmbedder(), approximate_at=100)
    for i in range(100):
        kb.add_text(f"d{i}", f"Entry {i} about topic {i % 9} and item {i * 3}.")
    kb.embed_pending()
    first = kb.vector_index()
    assert first["kind"] == "approximate"
    for i in range(100, 700):
        kb.add_text(f"d{i}", f"Entry {i} about topic {i % 9} and item {i * 3}.")
    kb.embed_pending()
    grown = kb.vector_index()
    assert grown["lists"] > first["lists"] and grown["vectors"] == 700
    assert kb.search("Entry 650 about topic 2 and item 1950.", mode="vector")[0].doc_id == "d650"


def test_the_knowledge_base_is_importable_from_the_memory_package() -> None:
    import orkas.engine.memory as memory
    from orkas.engine.memory.kb import KnowledgeBase as defined

    assert memory.KnowledgeBase is defined and "KnowledgeBase" in memory.__all__


def test_an_in_memory_base_has_a_vector_arm_by_default() -> None:
    kb = KnowledgeBase.in_memory()
    assert kb.embedder is not None
    kb.add_text("cat", "The cat sleeps on the warm printer all afternoon.")
    kb.add_text("tax", "File the quarterly tax return before the deadline.")
    kb.embed_pending()
    assert kb.search("a pet napping on office equipment", mode="vector")[0].doc_id == "cat"


def test_vector_search_without_an_embedder_says_so() -> None:
    kb = KnowledgeBase.in_memory(embedder=None)
    kb.add_text("cat", "The cat sleeps on the printer.")
    with pytest.raises(ValueError, match="needs an embedder"):
        kb.search("cat", mode="vector")
    assert kb.search("printer")[0].doc_id == "cat"  # hybrid falls back to keywords


def test_in_memory_and_open_rank_as_the_product_does(tmp_path: Path) -> None:
    """Both constructors default to the bundled embedder and the product's fusion: the same hits, the same scores
    (the benchmark measures what a person gets)."""
    from orkas.engine.memory.embedders import default_embedder
    from orkas.engine.memory.fusion import DEFAULT

    memory, folder = KnowledgeBase.in_memory(), KnowledgeBase.open(tmp_path / "kb")
    for kb in (memory, folder):
        assert kb.fusion == DEFAULT and kb.embedder is not None
        assert kb.embedder.name == default_embedder().name == "multilingual-e5-small"
        for name, text in DOCS.items():
            kb.add_text(name, text)
        kb.embed_pending()
    for query in ("restart ledger after the printer cat naps", "where does the kitty nap?", "排名", "kubectl"):
        ours = [(h.doc_id, h.start_line, round(h.score, 6)) for h in memory.search(query)]
        assert ours and ours == [(h.doc_id, h.start_line, round(h.score, 6)) for h in folder.search(query)]
    folder.close()


def test_the_other_fusions_and_the_keyword_arm_s_confidence() -> None:
    from orkas.engine.memory.fusion import KeywordEvidence, Setting, confidence, fuse

    vector = [(1, 0.9), (2, 0.8), (3, 0.1)]
    keyword = [(3, 12.0), (1, 2.0)]
    convex = dict(fuse(vector, keyword, Setting("convex", 0.5)))
    assert convex[1] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0) and convex[3] == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)
    assert convex[2] == pytest.approx(0.5 * (0.7 / 0.8))
    anchored = dict(fuse(vector, keyword, Setting("anchored", 0.5)))
    assert anchored[1] == pytest.approx(0.5 * 1.0 + 0.5 * 2.0 / 12.0)  # last of the keyword arm, yet not zero
    assert anchored[3] == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)
    unknown = KeywordEvidence(terms=3, frequencies={"a": 0, "b": 0, "c": 0}, chunks=1000)
    telling = KeywordEvidence(terms=2, frequencies={"kubectl": 1, "rollout": 2}, chunks=1000)
    everyday = KeywordEvidence(terms=2, frequencies={"the": 990, "file": 800}, chunks=1000)
    assert confidence(unknown) == 0.0 and confidence(telling) > 0.85 and confidence(everyday) < 0.05
    ignored = fuse(vector, keyword, Setting("adaptive", 0.5), unknown)
    assert [cid for cid, _ in ignored] == [1, 2, 3]  # a keyword match that tells nothing weighs nothing
    trusted = fuse(vector, keyword, Setting("adaptive", 0.5), telling)
    assert trusted[0][0] == 3  # a rare, fully matched identifier lifts its chunk
    alone = fuse([], keyword, Setting("convex", 0.8))
    assert [cid for cid, _ in alone] == [3, 1]  # nothing embedded yet: the keyword order as it is


def test_meaning_search_covers_everything_with_heads_first_then_full_vectors(e5: E5Embedder, tmp_path: Path) -> None:
    """The first tier (E5 on each chunk's first tokens) indexes every chunk; the full vectors then replace those,
    never twice in the index; a base reopened between the two passes keeps what it had and finishes."""
    long = "The launch checklist. " + " ".join(f"step {i}: verify the deployment of service {i}." for i in range(60))
    kb = KnowledgeBase.open(tmp_path / "kb", embedder=e5)
    kb.add_text("checklist.md", long)
    kb.add_text("deploy.md", DOCS["deploy.md"])
    chunks = kb._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    assert kb.pending() == chunks and kb.refining() == 0
    assert kb.embed_pending(refine=False) == chunks
    short = kb._db.execute(
        "SELECT COUNT(*) FROM indexed i JOIN chunks c ON c.id = i.chunk_id "
        "WHERE c.doc_id = 'deploy.md' AND i.model = ?",
        (e5.name,),
    ).fetchone()[0]
    assert short == 1  # a chunk the first tier sees whole has its full vector at once: nothing to refine
    assert kb.pending() == 0 and kb.refining() == chunks - 1  # meaning search covers everything already
    assert kb.search("roll out with kubectl", mode="vector", k=1)[0].doc_id == "deploy.md"
    kb.save()
    kb.close()
    reopened = KnowledgeBase.open(tmp_path / "kb", embedder=e5)
    assert reopened.pending() == 0 and reopened.refining() == chunks - 1
    assert reopened.embed_pending() == chunks - 1  # the refinement
    assert reopened.refining() == 0 and reopened._index is not None and reopened._index.ntotal == chunks
    full = {m for (m,) in reopened._db.execute("SELECT DISTINCT model FROM indexed")}
    assert full == {e5.name}
    assert reopened.search("roll out with kubectl", mode="vector", k=1)[0].doc_id == "deploy.md"
    reopened.close()


def test_an_embedder_without_a_first_tier_indexes_in_one_pass() -> None:
    kb = KnowledgeBase.in_memory(embedder=HashingEmbedder())
    kb.add_text("deploy.md", DOCS["deploy.md"])
    assert kb.embed_pending() == 1 and kb.pending() == 0 and kb.refining() == 0


def test_a_result_s_words_are_marked_as_the_keyword_index_matched_them() -> None:
    from orkas.engine.memory.terms import highlights

    texts = [
        "Lighthouses guide ships; a lighthouse keeper.",  # word forms, as the stemmer matches them
        "call os.path.join here, not os.join",  # an identifier's words in a row
        "我们用向量检索。",  # Chinese windows, merged where they overlap
        "nothing to see \x02 here",  # no match; a marker character in the text shifts nothing
        "😀 keeper",  # offsets in code points, as the page counts them
    ]
    marks = highlights(texts, "the lighthouse keepers os.path.join 向量检索")
    assert [[text[a:b] for a, b in found] for text, found in zip(texts, marks, strict=True)] == [
        ["Lighthouses", "lighthouse", "keeper"],
        ["os.path.join"],
        ["向量检索"],
        [],
        ["keeper"],
    ]
    assert highlights(["the and of"], "the") == [[]]  # stop words mark nothing
