"""An embedder on Amazon Bedrock, through bedrock-runtime ``InvokeModel`` (boto3).

Two models, by their documented request and response bodies:

* ``amazon.titan-embed-text-v2:0`` (Amazon Titan Text Embeddings V2): one text a call,
  ``{"inputText", "dimensions": 256 | 512 | 1024, "normalize": true}`` →
  ``{"embedding": [...], "inputTextTokenCount"}``; multilingual, 8,192 tokens.
* ``cohere.embed-multilingual-v3`` (Cohere Embed Multilingual v3): up to 96 texts a call,
  ``{"texts", "input_type": "search_document" | "search_query", "truncate": "END"}`` →
  ``{"embeddings": [[...]], "id", "response_type", "texts"}``; 1,024 dimensions. Queries and
  documents are embedded differently (``input_type``), as the model expects.

No AWS account is reachable where this was written: the tests drive it with botocore's
``Stubber`` against those documented bodies, not against the service. Any client error, throttling
or timeout is :class:`~mnemo.errors.EmbedderUnavailable` (a write stands and is repaired later).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from mnemo.errors import EmbedderUnavailable

TITAN_V2 = "amazon.titan-embed-text-v2:0"
COHERE_MULTILINGUAL_V3 = "cohere.embed-multilingual-v3"
MODELS = (TITAN_V2, COHERE_MULTILINGUAL_V3)
#: Cohere's most texts in one request; its longest text is 2,048 characters (cut at the end)
COHERE_BATCH = 96
COHERE_MAX_CHARS = 2048
#: Titan V2 takes at most 50,000 characters
TITAN_MAX_CHARS = 50_000


class BedrockEmbedder:
    """``Embedder`` over bedrock-runtime. ``client``: a boto3 ``bedrock-runtime`` client, made once per
    process (:func:`bedrock_client`) or the test's stubbed one."""

    def __init__(self, client: Any, model_id: str = TITAN_V2, dimensions: int | None = None) -> None:
        if model_id not in MODELS:
            raise ValueError(f"bedrock model must be one of {', '.join(MODELS)}, not {model_id!r}")
        if model_id == TITAN_V2:
            dimensions = dimensions or 1024
            if dimensions not in (256, 512, 1024):
                raise ValueError("Titan Text Embeddings V2 has 256, 512 or 1024 dimensions")
        elif dimensions not in (None, 1024):
            raise ValueError("Cohere Embed Multilingual v3 has 1024 dimensions")
        self.client = client
        self.model_id = model_id
        self.dim = dimensions or 1024
        self.model = f"bedrock:{model_id}:{self.dim}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, "search_document")

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, "search_query")

    def _embed(self, texts: Sequence[str], input_type: str) -> list[list[float]]:
        if self.model_id == TITAN_V2:
            return [self._titan(text) for text in texts]
        out: list[list[float]] = []
        for start in range(0, len(texts), COHERE_BATCH):
            chunk = [t[:COHERE_MAX_CHARS] or " " for t in texts[start : start + COHERE_BATCH]]
            answer = self._invoke({"texts": chunk, "input_type": input_type, "truncate": "END"})
            vectors = answer.get("embeddings")
            if isinstance(vectors, dict):  # asked with embedding_types, the floats are under "float"
                vectors = vectors.get("float")
            if not isinstance(vectors, list) or len(vectors) != len(chunk):
                raise EmbedderUnavailable("Bedrock's Cohere answer has no embeddings for every text")
            out.extend(self._checked(v) for v in vectors)
        return out

    def _titan(self, text: str) -> list[float]:
        answer = self._invoke({"inputText": text[:TITAN_MAX_CHARS] or " ", "dimensions": self.dim, "normalize": True})
        return self._checked(answer.get("embedding"))

    def _invoke(self, body: dict[str, object]) -> dict[str, Any]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self.client.invoke_model(
                modelId=self.model_id, body=json.dumps(body), contentType="application/json", accept="application/json"
            )
            answer = json.loads(response["body"].read())
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "ClientError")
            raise EmbedderUnavailable(f"Bedrock InvokeModel failed: {code}") from None
        except (BotoCoreError, OSError, ValueError, KeyError) as exc:
            raise EmbedderUnavailable(f"Bedrock InvokeModel failed: {type(exc).__name__}") from None
        if not isinstance(answer, dict):
            raise EmbedderUnavailable("Bedrock's answer is not a JSON object")
        return answer

    def _checked(self, vector: object) -> list[float]:
        if not isinstance(vector, list) or len(vector) != self.dim:
            raise EmbedderUnavailable(f"Bedrock's vector does not have {self.dim} numbers")
        values = [float(x) for x in vector]
        norm = math.sqrt(math.fsum(x * x for x in values))
        return [x / norm for x in values] if norm else values


def bedrock_client(region: str | None, timeout_s: float) -> Any:
    """The process's bedrock-runtime client: short timeouts, botocore's standard retries (3 tries)."""
    import boto3
    from botocore.config import Config

    config = Config(connect_timeout=timeout_s, read_timeout=timeout_s, retries={"mode": "standard", "max_attempts": 3})
    return boto3.client("bedrock-runtime", region_name=region, config=config)
