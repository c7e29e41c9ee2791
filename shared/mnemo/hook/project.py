"""The project a working directory names: ``MNEMO_PROJECT``, else the git remote's repository
name (read from ``.git/config``, no ``git`` process), else the folder's name."""

from __future__ import annotations

import re
from pathlib import Path

from mnemo.clientconfig import read
from mnemo.hook.client import HookFailed


def slugify(name: str) -> str | None:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:63].strip("-")
    return slug or None


def _git_dir(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = dot_git.read_text(errors="replace").strip()
            if text.startswith("gitdir:"):
                git_dir = (folder / text[len("gitdir:") :].strip()).resolve()
                common = git_dir / "commondir"
                if common.is_file():
                    return (git_dir / common.read_text().strip()).resolve()
                return git_dir
    return None


def repository_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def remote_repository(cwd: Path) -> str | None:
    """The name of the repository the ``origin`` remote (else the first remote) points at."""
    git_dir = _git_dir(cwd)
    if git_dir is None:
        return None
    try:
        config = (git_dir / "config").read_text(errors="replace")
    except OSError:
        return None
    urls: list[tuple[str, str]] = []
    remote = None
    for line in config.splitlines():
        line = line.strip()
        section = re.match(r'\[remote\s+"([^"]+)"\]', line)
        if section:
            remote = section.group(1)
        elif line.startswith("["):
            remote = None
        elif remote is not None:
            m = re.match(r"url\s*=\s*(\S+)", line)
            if m:
                urls.append((remote, m.group(1)))
    if not urls:
        return None
    url = next((u for r, u in urls if r == "origin"), urls[0][1])
    name = re.split(r"[/:]", url.rstrip("/"))[-1]
    return name.removesuffix(".git") or None


def resolve_project(cwd: Path, env: dict[str, str]) -> tuple[str, str]:
    """The project's slug and where it came from."""
    cfg = read(env)
    if cfg.project:
        return cfg.project, "MNEMO_PROJECT"
    if cfg.hook_project_from != "folder":
        name = remote_repository(cwd)
        slug = slugify(name) if name else None
        if slug:
            return slug, "the git remote's repository name"
    folder = repository_root(cwd) or cwd
    slug = slugify(folder.name)
    if slug is None:
        raise HookFailed(f"cannot name a project after the folder {str(folder)!r}: set MNEMO_PROJECT")
    return slug, "the folder's name"
