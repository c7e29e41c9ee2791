"""recall_context's packer: never over budget, never a silent cut (no backend needed)."""

from __future__ import annotations

from datetime import UTC, datetime

from mnemo.service.retrieval.matching import Match
from mnemo.service.retrieval.packing import SEPARATOR, TRUNCATION_MARK, cut_to, pack
from mnemo.text import estimate_tokens

from tests.support.records import memory_record

NOW = datetime(2026, 1, 1, tzinfo=UTC)
CONTENTS = [
    "The billing service retries failed card payments three times before it emails the customer.",
    "数据库延迟在高峰期很高，我们决定先加一层缓存，再评估是否需要读写分离。",
    "short",
    "Mixed 中文 and English：部署失败 after the rollout; see the runbook, section 4.",
    "x" * 600,
]


def match(number: int, content: str, **fields: object) -> Match:
    record = memory_record(content, id=f"mem_01ARZ3NDEKTSV4RRFFQ69G5F{number:02d}", at=NOW, **fields)
    return Match(record, 1.0, {"content": [], "tags": [], "path": []}, [])


MATCHES = [match(i, c, kind="fact", path="acme/ops", tags=["a", "b"]) for i, c in enumerate(CONTENTS)]


def check_packing(max_tokens: int) -> None:
    packed = pack(MATCHES, max_tokens)
    block = "".join(packed.parts)

    assert estimate_tokens(block) <= max_tokens
    whole = [item for item in packed.items if not item.truncated]
    cut = [item for item in packed.items if item.truncated]
    assert len(cut) <= 1 and (not cut or packed.items[-1] is cut[0])
    for item, original in zip(packed.items, CONTENTS, strict=False):
        if item.truncated:
            assert item.content.endswith(TRUNCATION_MARK)
            assert original.startswith(item.content.removesuffix(TRUNCATION_MARK))
        else:
            assert item.content == original
        assert item.content in block
    if len(whole) < len(CONTENTS):
        assert packed.truncated
        assert block.endswith(TRUNCATION_MARK) or estimate_tokens(TRUNCATION_MARK) > max_tokens


def test_at_every_budget_the_block_fits_and_every_cut_is_marked():
    for max_tokens in range(1, 400):
        try:
            check_packing(max_tokens)
        except AssertionError as exc:
            raise AssertionError(f"max_tokens={max_tokens}") from exc


def test_everything_that_fits_is_whole_and_untruncated():
    packed = pack(MATCHES, 50000)

    assert not packed.truncated
    assert [item.content for item in packed.items] == CONTENTS
    assert "".join(packed.parts).count(SEPARATOR) == len(CONTENTS) - 1


def test_headers_name_the_reference_kind_path_and_tags():
    block = "".join(pack(MATCHES[:1], 500).parts)

    assert block.startswith(f"[1] {MATCHES[0].record.id} | kind: fact | path: acme/ops | tags: a, b\n")


def test_a_cut_ends_at_a_word_boundary_when_one_is_near():
    assert cut_to("alpha beta gamma", 4 * 3) == "alpha beta"  # 12 characters would split "gamma"
    assert cut_to("数据库延迟", 4 * 2) == "数据"
    assert cut_to("abc", 100) == "abc"
