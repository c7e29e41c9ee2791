"""The ``openai`` embedder against a local HTTP server speaking the documented ``/v1/embeddings`` shape
(request ``{model, input: [..], encoding_format}``, answer ``{object: "list", data: [{object:
"embedding", index, embedding}], model, usage}``): batching, the bearer key, answers read by index,
and every failure — HTTP error, timeout, refused connection, wrong shape — an ``EmbedderUnavailable``
whose message never holds the key."""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from mnemo.config import Settings
from mnemo.embedding import build_embedder
from mnemo.embedding.openai import OpenAIEmbedder
from mnemo.errors import EmbedderUnavailable

KEY = "sk-test-0123456789abcdef"


class _Endpoint:
    """What the server saw, and how it answers next."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], dict[str, object]]] = []
        self.status = 200
        self.delay_s = 0.0
        self.shuffle = False
        self.body: bytes | None = None


def _vector(text: str, dim: int = 8) -> list[float]:
    """A deterministic, unnormalised vector per text (so the embedder's normalisation shows)."""
    return [float((sum(map(ord, text)) * (i + 1)) % 17 + 1) for i in range(dim)]


@pytest.fixture
def endpoint() -> Iterator[tuple[str, _Endpoint]]:
    state = _Endpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
            time.sleep(state.delay_s)
            if self.path != "/v1/embeddings":
                self.send_error(404)
                return
            if state.status != 200:
                self.send_response(state.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"error": {"message": "no", "type": "invalid_request_error"}}')
                return
            data = [{"object": "embedding", "index": i, "embedding": _vector(t)} for i, t in enumerate(body["input"])]
            if state.shuffle:
                data.reverse()
            answer = {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
            raw = state.body if state.body is not None else json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_texts_go_in_batches_with_the_key_and_come_back_normalised_in_order(endpoint):
    url, state = endpoint
    state.shuffle = True  # the answer's data in another order than the input: read by index
    embedder = OpenAIEmbedder(url, "nomic-embed-text", api_key=KEY, batch=2)
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]

    vectors = embedder.embed(texts)

    assert [len(body["input"]) for _, body in state.requests] == [2, 2, 1]  # type: ignore[arg-type]
    assert all(headers["authorization"] == f"Bearer {KEY}" for headers, _ in state.requests)
    assert state.requests[0][1] == {"model": "nomic-embed-text", "input": ["alpha", "beta"], "encoding_format": "float"}
    for text, vector in zip(texts, vectors, strict=True):
        raw = _vector(text)
        norm = math.sqrt(sum(x * x for x in raw))
        assert vector == pytest.approx([x / norm for x in raw])
    assert embedder.model == "openai:nomic-embed-text" and embedder.dim == 8


def test_configured_dimensions_are_asked_for_and_name_the_model(endpoint):
    url, state = endpoint
    embedder = OpenAIEmbedder(url, "text-embedding-3-small", dimensions=8)

    embedder.embed(["x"])

    headers, body = state.requests[0]
    assert body["dimensions"] == 8 and "authorization" not in headers
    assert embedder.model == "openai:text-embedding-3-small:8"


def test_an_http_error_is_an_embedder_failure_without_the_key(endpoint, caplog):
    url, state = endpoint
    state.status = 429

    with caplog.at_level(logging.DEBUG), pytest.raises(EmbedderUnavailable, match="HTTP 429") as failure:
        OpenAIEmbedder(url, "m", api_key=KEY).embed(["x"])

    assert KEY not in str(failure.value) and KEY not in caplog.text


def test_a_slow_endpoint_times_out_as_an_embedder_failure(endpoint):
    url, state = endpoint
    state.delay_s = 1.0

    with pytest.raises(EmbedderUnavailable, match="failed"):
        OpenAIEmbedder(url, "m", timeout_s=0.2).embed(["x"])


def test_a_refused_connection_is_an_embedder_failure():
    with pytest.raises(EmbedderUnavailable, match="failed"):
        OpenAIEmbedder("http://127.0.0.1:9/v1", "m", timeout_s=1).embed(["x"])


@pytest.mark.parametrize(
    "body", [b"not json", b'{"data": [{"index": 0}]}', b'{"data": []}', b'{"object": "list"}'], ids=str
)
def test_an_answer_of_the_wrong_shape_is_an_embedder_failure(endpoint, body):
    url, state = endpoint
    state.body = body

    with pytest.raises(EmbedderUnavailable):
        OpenAIEmbedder(url, "m").embed(["x"])


def test_vectors_of_another_size_than_configured_are_refused(endpoint):
    url, _ = endpoint

    with pytest.raises(EmbedderUnavailable, match="dimensions"):
        OpenAIEmbedder(url, "m", dimensions=4).embed(["x"])


def test_settings_build_it_and_keep_the_key_out_of_their_repr(endpoint, monkeypatch):
    url, state = endpoint
    monkeypatch.setenv("MNEMO_OPENAI_API_KEY", KEY)
    cfg = Settings(embedder="openai", openai_base_url=url, openai_model="bge-small", embedder_batch=3)

    embedder = build_embedder(cfg.embedder, cfg)
    assert embedder is not None
    embedder.embed(["a", "b", "c", "d"])

    assert KEY not in repr(cfg) and KEY not in str(cfg.model_dump())
    assert [len(body["input"]) for _, body in state.requests] == [3, 1]  # type: ignore[arg-type]
    assert state.requests[0][0]["authorization"] == f"Bearer {KEY}"
