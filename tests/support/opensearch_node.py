"""A real, throw-away, single-node OpenSearch for tests (stdlib only, no pytest import).

The distribution (the integ-test-zip: core analyzers only, no painless) is fetched once through
Maven by ``scripts/opensearch.sh fetch``. Each ``OpenSearchNode`` gets its own temp directory
(config copy, data, logs, tmp), two free ports on 127.0.0.1 and a 512 MB heap.

OpenSearch refuses to start as root (``can not run opensearch as root``; there is no setting to
allow it). When this process is root, the node runs as an unprivileged user via ``setpriv``
(util-linux): ``$MNEMO_OPENSEARCH_USER`` or ``nobody``; the node's temp directory is chowned to that
user and the distribution is only read. The node gets ``PR_SET_PDEATHSIG=SIGTERM``, so it dies with
the process (thread) that started it even if that process is killed.

    node = OpenSearchNode().start()     # blocks until /_cluster/health reports yellow or green
    node.url                            # http://127.0.0.1:<port>
    node.pause(); node.resume()         # stop the process, restart it on the same data dir and port
    node.freeze(); node.thaw()          # SIGSTOP/SIGCONT: a hung server rather than a dead one
    node.stop()                         # stop and delete the temp directory
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path

__all__ = ["OpenSearchError", "OpenSearchNode", "available", "fetch"]

REPO_ROOT = Path(__file__).resolve().parents[2]
FETCH_SCRIPT = REPO_ROOT / "scripts" / "opensearch.sh"
HOST = "127.0.0.1"

# Never let an http(s)_proxy variable route a health check anywhere but the loopback node.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_LIVE: weakref.WeakSet[OpenSearchNode] = weakref.WeakSet()


class OpenSearchError(RuntimeError):
    """The distribution could not be fetched, or the node did not start or stop cleanly."""


def _java_home() -> Path | None:
    for var in ("OPENSEARCH_JAVA_HOME", "JAVA_HOME"):
        value = os.environ.get(var)
        if value and (Path(value) / "bin" / "java").is_file():
            return Path(value)
    java = shutil.which("java")
    return Path(os.path.realpath(java)).parents[1] if java else None


def fetched_home() -> Path | None:
    """The unpacked distribution if the fetch script already completed (no Maven needed then)."""
    proc = subprocess.run(["bash", str(FETCH_SCRIPT), "home"], capture_output=True, text=True, check=False)
    return Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else None


def available() -> tuple[bool, str]:
    """Whether a node can be started here: (True, what will be used) or (False, why not)."""
    java = _java_home()
    if java is None:
        return False, "java not found (install a JDK 17, e.g. openjdk-17-jdk-headless, or set JAVA_HOME)"
    if not FETCH_SCRIPT.is_file():
        return False, f"{FETCH_SCRIPT} is missing"
    home = fetched_home()
    mvn = shutil.which("mvn")
    if home is None and mvn is None:
        return False, "mvn not found and OpenSearch not fetched yet (install Maven: apt-get install maven)"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return False, "running as root, and setpriv (util-linux) is missing to drop privileges for OpenSearch"
    return True, f"java in {java}; " + (f"distribution at {home}" if home else f"mvn at {mvn} will fetch it")


def fetch() -> Path:
    """Download and unpack the distribution if needed (idempotent); returns its home directory."""
    proc = subprocess.run(["bash", str(FETCH_SCRIPT), "fetch"], capture_output=True, text=True, check=False)
    home = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    if proc.returncode != 0 or not home:
        raise OpenSearchError(f"{FETCH_SCRIPT} fetch failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return Path(home)


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _run_as() -> tuple[int, int] | None:
    """(uid, gid) to drop to when root, else None."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("MNEMO_OPENSEARCH_USER", "nobody")
    try:
        pw = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
    except KeyError as exc:
        raise OpenSearchError(f"running as root and user {name!r} does not exist (set MNEMO_OPENSEARCH_USER)") from exc
    if pw.pw_uid == 0:
        raise OpenSearchError("MNEMO_OPENSEARCH_USER must not be root: OpenSearch refuses to run as root")
    return pw.pw_uid, pw.pw_gid


def _as_user(uid: int, gid: int) -> list[str]:
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]


class OpenSearchNode:
    """One single-node OpenSearch cluster on 127.0.0.1, in its own temp directory."""

    def __init__(
        self,
        *,
        heap: str = "512m",
        startup_timeout: float = 120.0,
        settings: dict[str, object] | None = None,
        java_opts: str = "-XX:TieredStopAtLevel=1",
    ) -> None:
        """`settings` are extra opensearch.yml entries; `java_opts` are appended to the heap options.

        The default `java_opts` keeps the JIT at C1: on a busy 2-core box start-up goes from 15-30 s
        to 10-13 s. Pass ``java_opts=""`` for full C2 (benchmarks).
        """
        self.heap = heap
        self.startup_timeout = startup_timeout
        self.extra_settings = dict(settings or {})
        self.java_opts = java_opts
        self.http_port, self.transport_port = _free_ports(2)
        self.home: Path | None = None
        self.base_dir: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._frozen = False
        self.startup_seconds: float | None = None  # wall time of the last successful start()

    # -- addresses and state --------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.http_port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def data_dir(self) -> Path:
        assert self.base_dir is not None, "node was never started"
        return self.base_dir / "data"

    @property
    def logs_dir(self) -> Path:
        assert self.base_dir is not None, "node was never started"
        return self.base_dir / "logs"

    def rss_bytes(self) -> int | None:
        """Resident set size of the OpenSearch JVM (Linux /proc), or None when not running."""
        if not self.running:
            return None
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        except OSError:
            pass
        return None

    def log_tail(self, lines: int = 60) -> str:
        if self.base_dir is None:
            return ""
        try:
            text = (self.base_dir / "logs" / "console.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> OpenSearchNode:
        """Start (or restart after pause()/stop()) and wait for yellow health; returns self.

        A restart reuses the data directory (if not cleaned up) and always the same ports.
        """
        if self.running:
            return self
        t0 = time.monotonic()
        if self.home is None:
            self.home = fetch()
        first = self.base_dir is None
        if first:
            self.base_dir = Path(tempfile.mkdtemp(prefix="mnemo-opensearch-"))
        for attempt in range(3):
            try:
                self._prepare()
                self._spawn()
                self._wait_healthy()
                break
            except BaseException as exc:  # incl. KeyboardInterrupt: never leave a half-started JVM
                self._kill(timeout=10)
                bind_clash = "BindException" in str(exc) or "Address already in use" in str(exc)
                if first and bind_clash and attempt < 2:  # a port picked by _free_ports got taken
                    self.http_port, self.transport_port = _free_ports(2)
                    continue
                if first:  # nothing worth keeping; the log tail is in the exception
                    self.stop(cleanup=True)
                raise
        self.startup_seconds = time.monotonic() - t0
        _LIVE.add(self)
        return self

    def stop(self, timeout: float = 30.0, *, cleanup: bool = True) -> None:
        """SIGTERM, wait up to `timeout`, then SIGKILL; with cleanup, delete the temp directory."""
        self._kill(timeout)
        if cleanup and self.base_dir is not None:
            shutil.rmtree(self.base_dir, ignore_errors=True)
            self.base_dir = None
            _LIVE.discard(self)

    def pause(self, timeout: float = 30.0) -> None:
        """Stop the process but keep its data directory and ports, for resume()."""
        self.stop(timeout, cleanup=False)

    def resume(self) -> OpenSearchNode:
        """Start again on the same data directory and port (refused connections in between)."""
        return self.start()

    def freeze(self) -> None:
        """SIGSTOP the node: connections are accepted by the kernel but never answered."""
        if self.running and not self._frozen:
            os.killpg(self._proc.pid, signal.SIGSTOP)  # type: ignore[union-attr]
            self._frozen = True

    def thaw(self) -> None:
        if self._frozen and self.running:
            os.killpg(self._proc.pid, signal.SIGCONT)  # type: ignore[union-attr]
        self._frozen = False

    def __enter__(self) -> OpenSearchNode:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals ----------------------------------------------------------------------------

    def _prepare(self) -> None:
        """Write config (fresh each start), create data/logs/tmp, hand the tree to the run-as user."""
        assert self.home is not None and self.base_dir is not None
        base = self.base_dir
        conf = base / "config"
        shutil.rmtree(conf, ignore_errors=True)
        shutil.copytree(self.home / "config", conf)
        for sub in ("data", "logs", "tmp"):
            (base / sub).mkdir(exist_ok=True)
        settings: dict[str, object] = {
            "cluster.name": f"mnemo-test-{self.http_port}",
            "node.name": "mnemo-test-node",
            "discovery.type": "single-node",
            "network.host": HOST,
            "http.port": self.http_port,
            "transport.port": self.transport_port,
            "path.data": str(base / "data"),
            "path.logs": str(base / "logs"),
            "cluster.routing.allocation.disk.threshold_enabled": False,
            "bootstrap.memory_lock": False,
            **self.extra_settings,
        }
        (conf / "opensearch.yml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in settings.items()))
        # The stock jvm.options writes gc.log/hs_err/heap dumps relative to the (read-only) home.
        logs = base / "logs"
        jvm = (self.home / "config" / "jvm.options").read_text()
        jvm = re.sub(r"(?<=[=:])logs/", f"{logs}/", jvm)
        jvm = jvm.replace("HeapDumpPath=data", f"HeapDumpPath={base / 'tmp'}")
        jvm = re.sub(r"(?m)^-Xm[sx]\S*$", "", jvm)
        (conf / "jvm.options").write_text(jvm)
        run_as = _run_as()
        if run_as is not None:
            uid, gid = run_as
            for path in [base, *base.rglob("*")]:
                os.lchown(path, uid, gid)
            self._check_access(uid, gid)

    def _check_access(self, uid: int, gid: int) -> None:
        assert self.home is not None and self.base_dir is not None
        probe = [*_as_user(uid, gid), "test", "-x", str(self.home / "bin" / "opensearch"), "-a", "-r", str(self.home)]
        if subprocess.run(probe, check=False).returncode != 0:  # home under /root etc.: use a private copy
            copy = self.base_dir / "dist"
            if not copy.exists():
                shutil.copytree(self.home, copy, symlinks=True)
                for path in [copy, *copy.rglob("*")]:
                    os.lchown(path, uid, gid)
            self.home = copy
        if subprocess.run([*_as_user(uid, gid), "test", "-w", str(self.base_dir)], check=False).returncode != 0:
            raise OpenSearchError(
                f"uid {uid} cannot write {self.base_dir}; set TMPDIR to a directory it can reach (e.g. /tmp)"
            )

    def _spawn(self) -> None:
        assert self.home is not None and self.base_dir is not None
        java_home = _java_home()
        if java_home is None:
            raise OpenSearchError("java not found (set JAVA_HOME)")
        env = {k: v for k, v in os.environ.items() if k not in ("JAVA_TOOL_OPTIONS", "JAVA_OPTS", "_JAVA_OPTIONS")}
        env.update(
            OPENSEARCH_JAVA_HOME=str(java_home),
            JAVA_HOME=str(java_home),
            OPENSEARCH_PATH_CONF=str(self.base_dir / "config"),
            OPENSEARCH_TMPDIR=str(self.base_dir / "tmp"),
            # No pre-touching of the whole heap: faster start, honest RSS.
            OPENSEARCH_JAVA_OPTS=f"-Xms{self.heap} -Xmx{self.heap} -XX:-AlwaysPreTouch {self.java_opts}".strip(),
            HOME=str(self.base_dir),
        )
        cmd = [str(self.home / "bin" / "opensearch")]
        if shutil.which("setpriv"):
            cmd = ["setpriv", "--pdeathsig=TERM", "--", *cmd]  # set after any uid change, which clears it
        run_as = _run_as()
        if run_as is not None:
            uid, gid = run_as
            cmd = [*_as_user(uid, gid), *cmd]
        log = open(self.base_dir / "logs" / "console.log", "ab")  # noqa: SIM115 - the child keeps it
        try:
            self._proc = subprocess.Popen(
                cmd,
                cwd=self.base_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group: stop() signals the launcher and the JVM
            )
        finally:
            log.close()
        self._frozen = False

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        health = f"{self.url}/_cluster/health?wait_for_status=yellow&timeout=5s"
        last = "no answer yet"
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise OpenSearchError(
                    f"OpenSearch exited with {self._proc.returncode} during start-up; log tail:\n{self.log_tail()}"
                )
            try:
                with _OPENER.open(health, timeout=10) as resp:
                    body = json.load(resp)
                if body.get("status") in ("yellow", "green") and not body.get("timed_out"):
                    return
                last = f"health {body}"
            except urllib.error.HTTPError as exc:  # 503 while the cluster forms, 408 on wait timeout
                last = f"HTTP {exc.code}"
            except (OSError, ValueError) as exc:  # refused / reset while starting
                last = repr(exc)
            time.sleep(0.25)
        raise OpenSearchError(
            f"OpenSearch on {self.url} not healthy after {self.startup_timeout:.0f}s ({last}); "
            f"log tail:\n{self.log_tail()}"
        )

    def _kill(self, timeout: float) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                if self._frozen:
                    os.killpg(proc.pid, signal.SIGCONT)
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        self._proc = None
        self._frozen = False


@atexit.register
def _stop_all() -> None:
    for node in list(_LIVE):
        with contextlib.suppress(Exception):
            node.stop(timeout=15)
