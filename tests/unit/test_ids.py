"""Ids are ULIDs: python-ulid decodes them to the time they were made, and they sort by it."""

from __future__ import annotations

import time

from mnemo.ids import memory_id, new_id, ulid
from mnemo.models.common import MEMORY_ID_RE
from ulid import ULID


def test_an_id_is_a_ulid_of_the_time_it_was_made():
    before = time.time_ns() // 1_000_000
    value = ulid()
    after = time.time_ns() // 1_000_000

    decoded = ULID.from_str(value)
    assert str(decoded) == value
    assert before <= decoded.milliseconds <= after


def test_ids_carry_their_prefix_and_memory_ids_match_the_contract_pattern():
    assert MEMORY_ID_RE.match(memory_id())
    assert new_id("ws").startswith("ws_") and len(new_id("ws")) == 29


def test_ids_sort_by_time_and_never_repeat():
    first = ulid()
    time.sleep(0.002)
    later = [ulid() for _ in range(1000)]

    assert all(first < value for value in later)
    assert len(set(later)) == len(later)
