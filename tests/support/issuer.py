"""A stand-in authorization server's public side for tests (stdlib + PyJWT): OIDC discovery and a
JWKS served on 127.0.0.1, and tokens signed with its own RSA key — so tests can sign tokens that
are right in every way but one (expired, another audience …). It can be made slow or down.

Real tokens come from Keycloak (``tests/support/keycloak.py``); this one exists because no real
authorization server will sign a deliberately wrong token.

    with FakeIssuer() as issuer:
        issuer.url                      # http://127.0.0.1:<port>/realms/test: the ``iss``
        issuer.token(sub="alice", aud="http://mnemo.test", scope="memory:read")
        issuer.mode = "slow"            # key fetches wait ``delay_s``; "down": 503s; "ok"
        issuer.fetches                  # how many times the key set was fetched
        issuer.delays["/certs"] = 1.5   # seconds a path (after the issuer's) waits before answering
        issuer.requests                 # the paths asked for, in order
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

ISSUER_PATH = "/realms/test"


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class FakeIssuer:
    def __init__(self, *, kid: str = "test-key-1", delay_s: float = 10.0) -> None:
        self.key = new_key()
        self.kid = kid
        self.delay_s = delay_s
        self.mode = "ok"
        self.fetches = 0
        self.delays: dict[str, float] = {}
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                outer.requests.append(self.path)
                for suffix, delay in outer.delays.items():
                    if self.path.endswith(suffix):
                        time.sleep(delay)
                if self.path == ISSUER_PATH + "/.well-known/openid-configuration":
                    body = {"issuer": outer.url, "jwks_uri": outer.url + "/certs"}
                elif self.path == ISSUER_PATH + "/certs":
                    outer.fetches += 1
                    if outer.mode == "slow":
                        time.sleep(outer.delay_s)
                    if outer.mode == "down":
                        self.send_error(503)
                        return
                    body = outer.jwks()
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            def handle_error(self, *_: Any) -> None:
                pass  # a client that gave up on a slow answer: expected here

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{ISSUER_PATH}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> FakeIssuer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeIssuer:
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.stop()

    def jwks(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def token(
        self,
        *,
        lifetime_s: int = 300,
        key: Any = None,
        headers: dict[str, Any] | None = None,
        algorithm: str = "RS256",
        **claims: Any,
    ) -> str:
        """A token of this issuer (``iss``, ``iat``, ``exp`` unless given) signed with its key (or ``key``)."""
        now = int(time.time())
        body = {"iss": self.url, "iat": now, "exp": now + lifetime_s, **claims}
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, key or self.key, algorithm=algorithm, headers={"kid": self.kid, **(headers or {})})
