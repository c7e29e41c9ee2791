"""The hook's client of the Mnemo server: JSON over HTTP(S) within the hook's deadline, on the
standard library only; every failure is a :class:`HookFailed`, which the hook reports and injects
nothing for."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlsplit

from mnemo.clientconfig import ClientSettings

DEFAULT_URL = ClientSettings.url


class HookFailed(Exception):
    """Mnemo could not answer: the hook injects nothing and says why in one line on stderr."""


class Client:
    """POST JSON to the server within a deadline; every failure is a :class:`HookFailed`."""

    def __init__(self, base_url: str, key: str, deadline: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise HookFailed(f"MNEMO_URL is not an http(s) URL: {base_url!r}")
        self.parts = parts
        self.key = key
        self.deadline = deadline

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        import http.client

        left = self.deadline - time.monotonic()
        if left <= 0.05:
            raise HookFailed("no time left for the server")
        p = self.parts
        conn: http.client.HTTPConnection
        if p.scheme == "https":
            conn = http.client.HTTPSConnection(p.hostname or "", p.port, timeout=left)
        else:
            conn = http.client.HTTPConnection(p.hostname or "", p.port, timeout=left)
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        try:
            conn.request("POST", p.path.rstrip("/") + path, json.dumps(body).encode(), headers)
            resp = conn.getresponse()
            raw = resp.read(1 << 20)
            status = resp.status
        except TimeoutError:
            raise HookFailed(f"{self.origin} did not answer within {left:.1f} s") from None
        except OSError as exc:
            raise HookFailed(f"cannot reach {self.origin} ({type(exc).__name__}: {exc})") from None
        except http.client.HTTPException as exc:
            raise HookFailed(f"{self.origin} answered badly ({type(exc).__name__})") from None
        finally:
            conn.close()
        try:
            data = json.loads(raw)
        except ValueError:
            raise HookFailed(f"{self.origin} answered {status} with no JSON") from None
        if not isinstance(data, dict):
            raise HookFailed(f"{self.origin} answered {status} with unexpected JSON")
        return status, data

    @property
    def origin(self) -> str:
        return f"{self.parts.scheme}://{self.parts.netloc}"

    def tool(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        status, data = self.post(f"/v1/tools/{name}", args)
        if status != 200:
            raise Refused(status, data)
        return data


class Refused(HookFailed):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.code = str(body.get("code", ""))
        super().__init__(f"Mnemo refused ({status} {self.code}): {str(body.get('message', ''))[:200]}")
