"""An embedder behind any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM,
Hugging Face TEI, LiteLLM …), over the standard library's HTTP client.

The request is ``POST {base_url}/embeddings`` with ``{"model", "input": [texts], "encoding_format":
"float"}`` (and ``"dimensions"`` when configured), bearer-authenticated when a key is set; the answer
is ``{"data": [{"index", "embedding"}, …]}``, read by ``index``. Texts go in batches of
``batch`` per request. A timeout, a refused connection, an HTTP error or an answer of the wrong
shape is :class:`~mnemo.errors.EmbedderUnavailable`: a write then stands without its vector and is
marked for repair, a hybrid query answers by words (docs/retrieval.md). The key is never logged
(nor put in an error message).
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Sequence

from mnemo.errors import EmbedderUnavailable


class OpenAIEmbedder:
    """``Embedder`` over HTTP. ``dim`` is the configured one, or learnt from the first answer."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout_s: float = 10.0,
        batch: int = 64,
    ) -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.remote_model = model
        self.api_key = api_key
        self.dimensions = dimensions
        self.timeout_s = timeout_s
        self.batch = batch
        self._dim = dimensions

    @property
    def model(self) -> str:
        """The name stored with each vector: the endpoint's model (and its dimensions, when cut)."""
        return f"openai:{self.remote_model}" + (f":{self.dimensions}" if self.dimensions else "")

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = len(self.embed(["dimension probe"])[0])
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch):
            out.extend(self._request(list(texts[start : start + self.batch])))
        return out

    def _request(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, object] = {"model": self.remote_model, "input": texts, "encoding_format": "float"}
        if self.dimensions:
            body["dimensions"] = self.dimensions
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")  # noqa: S310 - the configured endpoint
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:  # noqa: S310
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise EmbedderUnavailable(f"the embeddings endpoint answered HTTP {exc.code}") from None
        except (OSError, ValueError) as exc:  # URLError, timeouts, resets, a body that is not JSON
            raise EmbedderUnavailable(f"the embeddings endpoint failed: {type(exc).__name__}") from None
        try:
            rows = sorted(answer["data"], key=lambda row: row["index"])
            vectors = [[float(x) for x in row["embedding"]] for row in rows]
        except (KeyError, TypeError, ValueError):
            raise EmbedderUnavailable("the embeddings endpoint's answer has no data[].embedding") from None
        if len(vectors) != len(texts) or len({len(v) for v in vectors}) > 1:
            raise EmbedderUnavailable(f"the embeddings endpoint answered {len(vectors)} vectors for {len(texts)} texts")
        if self._dim is not None and vectors and len(vectors[0]) != self._dim:
            raise EmbedderUnavailable(f"the endpoint's vectors have {len(vectors[0])} dimensions, not {self._dim}")
        return [_normalised(v) for v in vectors]


def _normalised(vector: list[float]) -> list[float]:
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector
