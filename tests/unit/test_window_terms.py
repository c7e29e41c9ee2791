"""The read-your-writes merge (``backends/aws/fresh.py``) matches a change against its analysed words
and stems, computed once per process per text: equal to the index's own document for every
language, and not recomputed for the next search of the same burst."""

from __future__ import annotations

from datetime import timedelta

import pytest
from mnemo import text
from mnemo.backends.aws import fresh
from mnemo.backends.aws.items import RecentChange
from mnemo.backends.aws.mapping import TERM_FIELDS, document
from mnemo.models.common import utc_now
from mnemo.models.records import MemoryRecord
from mnemo.ports import IndexQuery, MemoryFilter, Scope

from tests.support.records import memory_record

SCOPE = Scope("ws_1", "prj_1")
NOW = utc_now()

TEXTS = {
    "english": ("Deploying the caches stopped the latency spikes", ("Ops", "on-call"), "infra/Runbooks"),
    "chinese": ("数据库延迟在部署以后下降了", ("性能",), "运维/记录"),
    "japanese": ("キャッシュを東京リージョンに移した", ("インフラ",), None),
    "korean": ("서울 리전으로 캐시를 옮겼다", ("인프라",), "운영"),
    "mixed": ("Redis 缓存 hit rate 提高到 98%, café naïve ﬁle", ("cache", "缓存"), "prj/zh-en"),
    "digits and case": ("Release 2024-11 raised TIMEOUTS to 30s", (), "Releases/2024"),
}


def record(memory_id: str, content: str, tags: tuple[str, ...] = (), path: str | None = None) -> MemoryRecord:
    return memory_record(content, id=memory_id, scope=SCOPE, at=NOW, tags=list(tags), path=path)


@pytest.mark.parametrize("language", sorted(TEXTS))
def test_the_analysis_is_the_indexed_documents_words_and_their_stems(language):
    # Given a record in this language, with tags and a path
    rec = record("mem_1", *TEXTS[language])

    # When the merge analyses it
    found = fresh.analysed(rec)

    # Then its words are those the indexer writes into the *_terms fields, and its stems theirs
    doc = document(rec)
    words = {word for name in TERM_FIELDS for word in doc[name].split()}
    assert set(found.words) == words
    assert len(found.words) == len(words)
    assert found.stems == {text.stem(word) for word in words}


@pytest.mark.parametrize("language", sorted(TEXTS))
def test_a_query_term_matches_the_analysis_exactly_when_it_matches_the_document(language):
    # Given a record, and query terms made of its own words, their prefixes and other words
    rec = record("mem_1", *TEXTS[language])
    doc = document(rec)
    words = {word for name in TERM_FIELDS for word in doc[name].split()}
    candidates = [
        *text.query_terms(" ".join(words), latin_prefix=True),
        *text.query_terms(" ".join(word[:3] for word in words), latin_prefix=True),
        *text.query_terms(" ".join(word[:1] for word in words)),
        *text.query_terms("deploy cached spike 延迟 東京 캐시 缓 unrelated 99"),
    ]

    # Then the merge's rule and the reference rule agree on every one
    for term in candidates:
        assert fresh.analysed(rec).has(term) == text.term_matches(term, words), term


def test_a_second_search_of_a_burst_analyses_none_of_its_changes_again():
    # Given a burst of 50 changes with texts this process has never analysed
    marker = f"burst{id(object())}"
    changes = [
        RecentChange(f"mem_{i}", 1, record(f"mem_{i}", f"{marker} note {i} about deploys", ("ops",), f"run/{i}"))
        for i in range(50)
    ]

    def search(words: str) -> list[str]:
        query = IndexQuery(SCOPE, text.query_terms(words), "any", MemoryFilter(now=NOW + timedelta(seconds=1)), 10)
        merged = fresh.merge(query, fresh.IndexPage(hits=[], size=10), changes)
        return [hit.record.id for hit in merged.hits]

    before = fresh._analyse.cache_info()
    first = search(f"{marker} deploy")
    after_first = fresh._analyse.cache_info()

    # When another search, with other terms, merges the same burst
    second = search("note ops")
    after_second = fresh._analyse.cache_info()

    # Then the first analysed each change once, the second none, and both matched them
    assert after_first.misses - before.misses == 50
    assert after_second.misses == after_first.misses
    assert after_second.hits - after_first.hits >= 50
    assert len(first) == len(second) == 10


def test_an_id_used_again_at_version_one_is_matched_by_its_new_text():
    # Given a memory analysed once, then deleted and its id used again (version 1 again) for other text
    old = record("mem_again", "kafka partitions rebalanced")
    new = record("mem_again", "postgres vacuum finished")
    query = IndexQuery(SCOPE, text.query_terms("postgres"), "any", MemoryFilter(now=NOW + timedelta(seconds=1)), 10)
    assert fresh.qualifies(query, old) is None

    # When the new one is merged
    found = fresh.qualifies(query, new)

    # Then it matches by its own words, not the old analysis
    assert found == 1
