"""The benchmark corpus is deterministic and within its documented bounds (no timing here)."""

from __future__ import annotations

from collections import Counter

from bench import corpus


def test_the_same_parameters_give_the_same_corpus_and_a_smaller_one_is_a_prefix() -> None:
    # Given two generations with the same seed, and a smaller one
    first = corpus.generate(corpus.CorpusParams(300))
    again = corpus.generate(corpus.CorpusParams(300))
    small = corpus.generate(corpus.CorpusParams(100))
    # Then they are identical, and the smaller is the start of the larger
    assert first == again
    assert small == first[:100]


def test_every_memory_is_50_to_400_bytes_and_the_corpus_mixes_english_and_chinese() -> None:
    docs = corpus.generate(corpus.CorpusParams(500))
    sizes = [len(d.content.encode()) for d in docs]
    assert min(sizes) >= 50
    assert max(sizes) <= 400
    chinese = sum(any("\u4e00" <= ch <= "\u9fff" for ch in d.content) for d in docs)
    assert 0.3 < chinese / len(docs) < 0.6  # 25 % Chinese + 20 % mixed


def test_queries_follow_the_documented_mix_and_never_use_function_words() -> None:
    qs = corpus.queries(7, 500)
    shares = Counter(cls for cls, _ in qs)
    assert shares == {name: 5 * share for name, share in corpus.QUERY_MIX}
    words = {w for _, q in qs for w in q.split()}
    assert not words & set(corpus.FUNCTION_WORDS)
    assert not words & set(corpus.CHINESE_FUNCTION_WORDS)
