"""scripts/opensearch.sh on a cache it fills from stand-ins: a fetch leaves the node where
``home`` finds it, so the next fetch reuses it instead of unpacking it again. Maven, Java and the
distribution are stand-ins (shell scripts, a small zip): the script's own logic is what runs."""

from __future__ import annotations

import os
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "opensearch.sh"
VERSION = "2.19.1"
JARS = [
    f"lang-painless-{VERSION}.jar",
    "antlr4-runtime-4.13.1.jar",
    "asm-9.7.jar",
    "asm-analysis-9.7.jar",
    "asm-commons-9.7.jar",
    "asm-tree-9.7.jar",
    "asm-util-9.7.jar",
    f"opensearch-scripting-painless-spi-{VERSION}.jar",
]


def executable(path: Path, text: str) -> None:
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def stand_ins(tmp_path: Path) -> dict[str, str]:
    cache, tools = tmp_path / "cache", tmp_path / "bin"
    cache.mkdir()
    tools.mkdir()
    # the two zips are already in the cache (the script downloads only what is missing)
    with zipfile.ZipFile(cache / f"opensearch-{VERSION}.zip", "w") as z:
        for name in ("opensearch", "opensearch-plugin"):
            info = zipfile.ZipInfo(f"opensearch-{VERSION}/bin/{name}")
            info.external_attr = 0o755 << 16
            z.writestr(info, "#!/bin/sh\nexit 0\n")
    (cache / f"opensearch-knn-{VERSION}.0.zip").write_bytes(b"stand-in")
    # mvn: copy-dependencies "downloads" the painless jars into -DoutputDirectory
    jars = " ".join(JARS)
    executable(
        tools / "mvn",
        f'for a in "$@"; do case "$a" in -DoutputDirectory=*) d="${{a#-DoutputDirectory=}}";; esac; done\n'
        f'mkdir -p "$d"; for j in {jars}; do touch "$d/$j"; done\n',
    )
    executable(tools / "java", "exit 0\n")
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    return {**env, "PATH": f"{tools}:{env['PATH']}", "MNEMO_OPENSEARCH_CACHE": str(cache)}


def run(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), command], env=env, capture_output=True, text=True, timeout=120)


def test_a_fetched_node_is_found_by_home_and_never_unpacked_again(stand_ins):
    fetched = run("fetch", stand_ins)
    assert fetched.returncode == 0, fetched.stderr
    home = Path(fetched.stdout.strip())
    (home / "left-by-the-first-fetch").touch()

    found = run("home", stand_ins)
    again = run("fetch", stand_ins)

    assert (found.returncode, found.stdout.strip()) == (0, str(home)), found.stderr
    assert (again.returncode, again.stdout.strip()) == (0, str(home)), again.stderr
    assert (home / "left-by-the-first-fetch").exists(), "the second fetch unpacked the node again"
