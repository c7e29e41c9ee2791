"""tests/support/doc_runner.py cuts a document's shell block into the commands a user pastes."""

from __future__ import annotations

from tests.support.doc_runner import commands


def test_a_here_document_stays_one_command_with_its_body():
    block = "cat > notes.txt <<'EOF'\nfirst line\nsecond line\nEOF\necho done"

    cut = [c.text for c in commands(block)]

    assert cut == ["cat > notes.txt <<'EOF'\nfirst line\nsecond line\nEOF", "echo done"]


def test_quotes_and_continuations_join_lines_and_stated_answers_attach():
    block = 'curl -s -X POST \\\n  -d \'{"a":\n 1}\' http://x\n# → {"ok": true}\necho "two"'

    cut = commands(block)

    assert [c.text.count("\n") for c in cut] == [2, 0]
    assert cut[0].states == ['{"ok": true}']
