"""api/origin.py: which Host and Origin a request may carry (DNS rebinding, MCP transport spec)."""

from __future__ import annotations

import pytest
from mnemo.api.origin import refusal

API = "abc123.execute-api.eu-west-1.amazonaws.com"


@pytest.mark.parametrize(
    "headers",
    [
        {},  # no Host (HTTP/1.0, a test client): nothing to validate
        {"host": "127.0.0.1:8787"},
        {"host": "localhost:8787", "origin": "http://localhost:8787"},
        {"host": "[::1]:8787", "origin": "http://[::1]:8787"},
        {"host": "127.0.0.1:8787", "origin": "http://localhost:6274"},  # a local MCP Inspector
        {"host": "192.168.1.20:8787", "origin": "http://192.168.1.20:8787"},  # --host 0.0.0.0, the console
        {"host": API, "origin": f"https://{API}"},  # the deployed console, same origin
        {"host": API, "origin": "https://inspector.example.com"},  # in CorsAllowOrigins
        {"host": API.upper()},
    ],
)
def test_local_names_the_apis_own_host_and_allowed_origins_are_served(headers):
    assert refusal(headers, API, ["https://inspector.example.com/"]) is None


@pytest.mark.parametrize(
    "headers",
    [
        {"host": "evil.example:8787"},  # a rebound name
        {"host": "evil.example", "origin": "http://evil.example"},
        {"host": "127.0.0.1:8787", "origin": "http://evil.example"},
        {"host": "127.0.0.1:8787", "origin": "null"},
        {"host": API, "origin": "https://other.example.com"},
        {"host": "localhost.evil.example"},
        {"host": "127.0.0.1:notaport"},
    ],
)
def test_other_hosts_and_origins_are_refused(headers):
    assert refusal(headers, API, ["https://inspector.example.com"])


def test_a_name_the_operator_allows_is_served_and_its_console_origin_with_it():
    allowed = ["mybox.lan", " Proxy.Example.org "]
    assert refusal({"host": "mybox.lan:8787"}, None, (), allowed) is None
    assert refusal({"host": "proxy.example.org", "origin": "https://proxy.example.org"}, None, (), allowed) is None
    # only the names given: a longer name that ends with one is still a rebound name
    assert refusal({"host": "evil.mybox.lan:8787"}, None, (), allowed)
    assert refusal({"host": "mybox.lan:8787"}, None, (), [])
    # an allowed host does not allow another origin
    assert refusal({"host": "mybox.lan:8787", "origin": "http://evil.example"}, None, (), allowed)
