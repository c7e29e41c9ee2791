"""A real, throw-away Keycloak for tests (stdlib only, no pytest import): the authorization server
that issues the tokens Mnemo must accept.

The distribution (``org.keycloak:keycloak-quarkus-dist``, from Maven Central) is fetched and built
once (``kc.sh build --db=dev-mem``: minutes on a loaded machine) by ``scripts/keycloak.sh fetch``
into ``.cache/keycloak`` (``MNEMO_KEYCLOAK_CACHE``); each node then runs ``start --optimized``
(no rebuild) from its own temp directory: a copy of ``bin`` and ``conf``, the jars linked from the
cache, and the realm of ``tests/fixtures/keycloak`` imported at start — written with this node's
resource (the audience its tokens carry). Keycloak
26 needs Java 21+: ``$MNEMO_KEYCLOAK_JAVA_HOME``, else a JDK 21+ found under /usr/lib/jvm, else
``JAVA_HOME``. In-memory database, HTTP on a free port of 127.0.0.1, killed with its parent.

    node = KeycloakNode(resource="http://mnemo.test").start()
    node.issuer                          # http://127.0.0.1:<port>/realms/mnemo
    node.client_token("mnemo-gateway", GATEWAY_SECRET, scope="memory:read")
    node.stop()
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["GATEWAY_SECRET", "OTHER_SECRET", "REALM", "KeycloakError", "KeycloakNode", "available"]

REPO_ROOT = Path(__file__).resolve().parents[2]
FETCH_SCRIPT = REPO_ROOT / "scripts" / "keycloak.sh"
REALM_FILE = REPO_ROOT / "tests" / "fixtures" / "keycloak" / "realm.json"
REALM = "mnemo"
GATEWAY_SECRET = "gateway-secret-for-tests-only"
OTHER_SECRET = "other-secret-for-tests-only"
HOST = "127.0.0.1"
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class KeycloakError(RuntimeError):
    """The distribution could not be fetched, or the node did not start."""


def java_home() -> Path | None:
    """A JDK of version 21 or later (Keycloak 26 refuses older ones)."""
    candidates = [os.environ.get("MNEMO_KEYCLOAK_JAVA_HOME", "")]
    candidates += sorted((str(p) for p in Path("/usr/lib/jvm").glob("*")), reverse=True)
    candidates.append(os.environ.get("JAVA_HOME", ""))
    for home in filter(None, candidates):
        java = Path(home) / "bin" / "java"
        if not java.is_file():
            continue
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, check=False).stderr
        match = re.search(r'version "(\d+)', out)
        if match and int(match.group(1)) >= 21:
            return Path(home)
    return None


def fetched_home() -> Path | None:
    proc = subprocess.run(["bash", str(FETCH_SCRIPT), "home"], capture_output=True, text=True, check=False)
    return Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else None


def available() -> tuple[bool, str]:
    if java_home() is None:
        return False, "no JDK 21+ (Keycloak 26 needs one): install one or set MNEMO_KEYCLOAK_JAVA_HOME"
    if fetched_home() is None and shutil.which("mvn") is None:
        return False, "mvn not found and Keycloak not fetched yet (apt-get install maven)"
    return True, "ok"


def fetch() -> Path:
    proc = subprocess.run(["bash", str(FETCH_SCRIPT), "fetch"], capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise KeycloakError(f"scripts/keycloak.sh fetch failed: {proc.stderr[-2000:]}")
    return Path(proc.stdout.strip())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _preexec() -> None:  # pragma: no cover - runs in the child
    import ctypes

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    os.setsid()


class KeycloakNode:
    def __init__(self, *, resource: str = "http://mnemo.test", startup_timeout_s: float = 900.0) -> None:
        self.resource = resource
        self.startup_timeout_s = startup_timeout_s
        self.port = _free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.issuer = f"{self.url}/realms/{REALM}"
        self.dir: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def attach(cls, url: str, resource: str = "http://mnemo.test") -> KeycloakNode:
        """A node already running at ``url`` with this realm imported (``MNEMO_TEST_KEYCLOAK_URL``)."""
        node = cls(resource=resource)
        node.url = url.rstrip("/")
        node.issuer = f"{node.url}/realms/{REALM}"
        return node

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> KeycloakNode:
        home = fetched_home() or fetch()
        java = java_home()
        if java is None:
            raise KeycloakError(available()[1])
        self.dir = Path(tempfile.mkdtemp(prefix="mnemo-keycloak-"))
        node = self.dir / "kc"
        for part in ("bin", "conf"):
            shutil.copytree(home / part, node / part, symlinks=True)
        for linked in ("lib", "themes", "providers"):  # built once by the fetch: only read from here on
            if (home / linked).exists():
                (node / linked).symlink_to(home / linked)
        (node / "data" / "import").mkdir(parents=True)
        realm = REALM_FILE.read_text(encoding="utf-8").replace("${RESOURCE}", self.resource)
        (node / "data" / "import" / "realm.json").write_text(realm, encoding="utf-8")
        env = {
            **os.environ,
            "JAVA_HOME": str(java),
            "JAVA_OPTS_KC_HEAP": "-Xms64m -Xmx512m",
            # Java 24+: Quarkus' thread-local reset needs java.lang opened (else executor threads die)
            "JAVA_OPTS_APPEND": "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "KC_BOOTSTRAP_ADMIN_USERNAME": "admin",
            "KC_BOOTSTRAP_ADMIN_PASSWORD": "admin",
        }
        log = open(self.dir / "keycloak.log", "wb")  # noqa: SIM115 - kept open for the child's life
        self.proc = subprocess.Popen(
            [
                str(node / "bin" / "kc.sh"),
                "start",
                "--optimized",  # built by scripts/keycloak.sh fetch: no re-augmentation (minutes) per start
                "--import-realm",
                "--http-enabled=true",
                f"--http-port={self.port}",
                f"--http-host={HOST}",
                "--hostname-strict=false",
                "--cache=local",
            ],
            cwd=node,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=_preexec,
        )
        _LIVE.append(self)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise KeycloakError(f"Keycloak exited ({self.proc.returncode}): {self.log_tail()}")
            with contextlib.suppress(OSError, ValueError):
                if self.get_json(f"{self.issuer}/.well-known/openid-configuration").get("issuer") == self.issuer:
                    return self
            time.sleep(0.5)
        self.stop()
        raise KeycloakError(f"Keycloak did not answer within {self.startup_timeout_s} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def log_tail(self, chars: int = 3000) -> str:
        if self.dir is None or not (self.dir / "keycloak.log").exists():
            return ""
        return (self.dir / "keycloak.log").read_text(errors="replace")[-chars:]

    # -- HTTP -----------------------------------------------------------------------------------

    def get_json(self, url: str) -> Any:
        with _OPENER.open(url, timeout=10) as answer:
            return json.loads(answer.read())

    def post_form(self, url: str, fields: dict[str, str]) -> Any:
        data = urllib.parse.urlencode(fields).encode()
        try:
            with _OPENER.open(urllib.request.Request(url, data=data), timeout=30) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            raise KeycloakError(f"{url}: {exc.code} {exc.read()[:500]!r}") from None

    def client_token(self, client_id: str, secret: str, scope: str | None = None) -> str:
        """An access token by the client-credentials grant (what a gateway does)."""
        fields = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
        if scope:
            fields["scope"] = scope
        token: str = self.post_form(f"{self.issuer}/protocol/openid-connect/token", fields)["access_token"]
        return token


_LIVE: list[KeycloakNode] = []


@atexit.register
def _stop_all() -> None:
    for node in _LIVE:
        node.stop()
