"""The docs stand alone: a clone of the repository is all a reader has.

* Every Markdown link in every Markdown file of the repository stays inside it and points at
  something: a relative link resolves (from the file that holds it) to a file or folder of the
  repository, and an anchor (``#…``) names a heading of the target Markdown file, slugged the
  way GitHub does. Links to ``http(s)://`` and ``mailto:`` are allowed; any other scheme is not.
  Links inside code blocks and code spans are text, not links.
* Every reference to the contract or to the measured pitfalls names a file of the repository:
  the old names of the documents outside it (the upper-case words SPEC and PITFALLS) appear
  nowhere, and a section sign with a number ("§4") sits on a line that names ``contract.md``
  (or cites an RFC).

"The repository" is what git tracks plus new files it does not ignore, so a link to a build
output (``docs/openapi.json``, ``.venv``) fails, and a new doc can be linked before it is added.
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[2]
HERE = PurePosixPath(Path(__file__).resolve().relative_to(ROOT).as_posix())

ALLOWED_SCHEMES = ("http", "https", "mailto")
#: files whose text is scanned for references (by suffix, or by name)
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".sql", ".sh", ".json", ".cfg", ".ini"}
TEXT_NAMES = {"Makefile", "run"}
#: the names of documents that live outside the repository
OUTSIDE_NAMES = re.compile(r"\b(SPEC|PITFALLS)\b")
SECTION = re.compile(r"§\s*\d")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1")
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s)]*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
_HTML_LINK = re.compile(r"""<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$")
_HTML_ID = re.compile(r"""<a\b[^>]*?\b(?:name|id)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


# ---- the repository's files ---------------------------------------------------------------


def repository_files(root: Path = ROOT) -> set[PurePosixPath]:
    """Tracked files plus untracked ones git does not ignore, relative to ``root``."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    return {PurePosixPath(name) for name in listing.split("\0") if name and (root / name).is_file()}


def directories(files: Iterable[PurePosixPath]) -> set[PurePosixPath]:
    return {parent for name in files for parent in name.parents}


# ---- Markdown -------------------------------------------------------------------------------


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1, with code spans blanked out."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        out.append((number, _CODE_SPAN.sub(lambda m: "x" * len(m.group(0)), line)))
    return out


def links(text: str) -> list[tuple[int, str]]:
    """Every link target of a Markdown text, with its line number."""
    found: list[tuple[int, str]] = []
    for number, line in prose_lines(text):
        for pattern in (_INLINE_LINK, _REFERENCE_DEF, _HTML_LINK):
            for match in pattern.finditer(line):
                found.append((number, match.group(1).strip("<>")))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text, lower-cased, without punctuation, spaces as '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"<[^>]+>", "", text).lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors a Markdown text defines: its headings' slugs (numbered when repeated) and HTML ids."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    fence: str | None = None
    for line in text.splitlines():
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        heading = _HEADING.match(line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        found.update(_HTML_ID.findall(line))
    return found


def link_problems(root: Path, files: set[PurePosixPath]) -> list[str]:
    """Every Markdown link that leaves the repository or points at nothing, as ``file:line: why``."""
    folders = directories(files)
    problems: list[str] = []
    for name in sorted(n for n in files if n.suffix == ".md"):
        for number, target in links((root / name).read_text(encoding="utf-8")):
            where = f"{name}:{number}: {target or '(empty)'}"
            if not target:
                problems.append(f"{where}: an empty link")
                continue
            if target.startswith("//"):
                problems.append(f"{where}: leaves the repository")
                continue
            if _SCHEME.match(target):
                if target.split(":", 1)[0].lower() not in ALLOWED_SCHEMES:
                    problems.append(f"{where}: a link of another scheme than {', '.join(ALLOWED_SCHEMES)}")
                continue
            path_part, _, anchor = target.partition("#")
            path_part = unquote(path_part.split("?", 1)[0])
            if not path_part:
                resolved = name
            else:
                base = PurePosixPath() if path_part.startswith("/") else name.parent
                parts: list[str] = []
                for part in (base / path_part.lstrip("/")).parts:
                    if part == "..":
                        if not parts:
                            parts = ["<outside>"]
                            break
                        parts.pop()
                    elif part != ".":
                        parts.append(part)
                if parts[:1] == ["<outside>"]:
                    problems.append(f"{where}: leaves the repository")
                    continue
                resolved = PurePosixPath(*parts) if parts else PurePosixPath(".")
                if resolved not in files and resolved not in folders:
                    problems.append(f"{where}: no such file or folder in the repository")
                    continue
            checkable = anchor and resolved.suffix == ".md" and resolved in files
            if checkable and unquote(anchor) not in anchors((root / resolved).read_text(encoding="utf-8")):
                problems.append(f"{where}: no heading #{anchor} in {resolved}")
    return problems


# ---- references ---------------------------------------------------------------------------


def reference_problems(root: Path, files: set[PurePosixPath], *, exempt: Iterable[PurePosixPath] = ()) -> list[str]:
    """References to the contract or the pitfalls that do not name a file of the repository."""
    skip = set(exempt)
    problems: list[str] = []
    for name in sorted(files - skip):
        if name.suffix not in TEXT_SUFFIXES and name.name not in TEXT_NAMES:
            continue
        try:
            text = (root / name).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            for match in OUTSIDE_NAMES.finditer(line):
                problems.append(
                    f"{name}:{number}: {match.group(1)} names a document outside the repository "
                    "(cite docs/contract.md or docs/pitfalls.md)"
                )
            if name.name == "contract.md":
                continue  # the contract's own sections refer to each other
            for match in SECTION.finditer(line):
                if "contract.md" not in line and not re.search(r"RFC ?\d+\s*$", line[: match.start()]):
                    problems.append(f"{name}:{number}: '{match.group(0)}' does not say which file it cites")
    return problems


# ---- the tests ----------------------------------------------------------------------------


def test_every_markdown_link_stays_in_the_repository_and_resolves():
    assert link_problems(ROOT, repository_files()) == []


def test_every_contract_and_pitfall_reference_names_a_file_in_the_repository():
    assert reference_problems(ROOT, repository_files(), exempt=[HERE]) == []


def test_the_checks_catch_what_they_are_for(tmp_path):
    """The checkers themselves, on a small tree: each kind of bad link and reference is reported,
    and what is fine is not."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(
        "# Guide\n\n## Set up: step 1 (`make run`)\n\n## Set up: step 1 (`make run`)\n", encoding="utf-8"
    )
    (tmp_path / "README.md").write_text(
        "\n".join(
            [
                "[ok](docs/guide.md) [ok](docs/guide.md#guide) [ok](docs/guide.md#set-up-step-1-make-run-1)",
                "[ok](docs/) [ok](https://example.com/x) [ok](mailto:a@example.com) [ok](#readme)",
                '[ok](<docs/guide.md> "title") [ok: the text](docs/guide.md#set-up-step-1-make-run)',
                "[outside](../shared/SPEC.md)",
                "[missing](docs/nothing.md)",
                "[bad anchor](docs/guide.md#step-2)",
                "[scheme](file:///etc/passwd)",
                "[ref]: docs/gone.md",
                "`[in a code span](nowhere.md)`",
                "```",
                "[in a fence](nowhere.md)",
                "```",
                "# README",
            ]
        ),
        encoding="utf-8",
    )
    (tmp_path / "code.py").write_text(
        '"""See SPEC §4 and PITFALLS."""\n# docs/contract.md §4 and RFC 8259 §8.1 are fine\n# but §5 alone is not\n',
        encoding="utf-8",
    )
    files = {PurePosixPath(p.relative_to(tmp_path).as_posix()) for p in tmp_path.rglob("*") if p.is_file()}

    bad_links = [problem.split(": ", 1)[0] + " " + problem.split(": ")[1] for problem in link_problems(tmp_path, files)]
    bad_references = reference_problems(tmp_path, files)

    assert bad_links == [
        "README.md:4 ../shared/SPEC.md",
        "README.md:5 docs/nothing.md",
        "README.md:6 docs/guide.md#step-2",
        "README.md:7 file:///etc/passwd",
        "README.md:8 docs/gone.md",
    ]
    assert [problem.split(": ", 1)[0] for problem in bad_references] == [
        "README.md:4",  # the old name, in a link
        "code.py:1",  # SPEC
        "code.py:1",  # PITFALLS
        "code.py:1",  # a section sign without a file
        "code.py:3",
    ]
