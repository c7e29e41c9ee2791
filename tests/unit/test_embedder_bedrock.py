"""The ``bedrock`` embedder against botocore's ``Stubber``: no AWS account is reachable here, so these
check the calls and bodies the Bedrock documentation gives for InvokeModel — Titan Text Embeddings
V2 (``{inputText, dimensions, normalize}`` → ``{embedding, inputTextTokenCount}``) and Cohere Embed
Multilingual v3 (``{texts, input_type, truncate}`` → ``{embeddings, id, response_type, texts}``) —
not the service itself. Errors and throttling become ``EmbedderUnavailable``."""

from __future__ import annotations

import io
import json
import math

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber
from mnemo.embedding.bedrock import COHERE_MULTILINGUAL_V3, TITAN_V2, BedrockEmbedder
from mnemo.errors import EmbedderUnavailable
from mnemo.service.vectors import embed_query


def _client():
    return boto3.client("bedrock-runtime", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")


def _answer(body: dict[str, object]) -> dict[str, object]:
    raw = json.dumps(body).encode()
    return {"body": StreamingBody(io.BytesIO(raw), len(raw)), "contentType": "application/json"}


def _expect(stub: Stubber, model: str, request: dict[str, object], answer: dict[str, object]) -> None:
    stub.add_response(
        "invoke_model",
        _answer(answer),
        {
            "modelId": model,
            "body": json.dumps(request),
            "contentType": "application/json",
            "accept": "application/json",
        },
    )


def test_titan_v2_embeds_one_text_a_call_at_the_configured_dimensions():
    client = _client()
    embedder = BedrockEmbedder(client, TITAN_V2, dimensions=256)
    first = [0.0] * 256
    first[0] = 1.0
    second = [0.5] * 256
    with Stubber(client) as stub:
        _expect(stub, TITAN_V2, {"inputText": "deploys freeze", "dimensions": 256, "normalize": True},
                {"embedding": first, "inputTextTokenCount": 3})  # fmt: skip
        _expect(stub, TITAN_V2, {"inputText": "数据库备份", "dimensions": 256, "normalize": True},
                {"embedding": second, "inputTextTokenCount": 4})  # fmt: skip

        vectors = embedder.embed(["deploys freeze", "数据库备份"])

        stub.assert_no_pending_responses()
    assert vectors[0] == first
    assert vectors[1] == pytest.approx([1 / math.sqrt(256)] * 256)
    assert (embedder.model, embedder.dim) == ("bedrock:amazon.titan-embed-text-v2:0:256", 256)


def test_cohere_v3_embeds_documents_and_queries_with_their_input_types():
    client = _client()
    embedder = BedrockEmbedder(client, COHERE_MULTILINGUAL_V3)
    vector = [0.0] * 1024
    vector[3] = 2.0
    with Stubber(client) as stub:
        documents_request = {"texts": ["a", "b"], "input_type": "search_document", "truncate": "END"}
        documents_answer = {"embeddings": [vector, vector], "id": "1", "response_type": "embeddings_floats",
                            "texts": ["a", "b"]}  # fmt: skip
        _expect(stub, COHERE_MULTILINGUAL_V3, documents_request, documents_answer)
        query_request = {"texts": ["q"], "input_type": "search_query", "truncate": "END"}
        query_answer = {"embeddings": [vector], "id": "2", "response_type": "embeddings_floats", "texts": ["q"]}
        _expect(stub, COHERE_MULTILINGUAL_V3, query_request, query_answer)

        documents = embedder.embed(["a", "b"])
        query = embed_query(embedder, "q")

        stub.assert_no_pending_responses()
    assert documents[0][3] == 1.0 and query[3] == 1.0  # normalised
    assert embedder.dim == 1024


def test_cohere_v3_sends_at_most_96_texts_a_call():
    client = _client()
    embedder = BedrockEmbedder(client, COHERE_MULTILINGUAL_V3)
    texts = [f"t{i}" for i in range(100)]
    one = [1.0] + [0.0] * 1023
    with Stubber(client) as stub:
        for chunk in (texts[:96], texts[96:]):
            answer = {"embeddings": [one] * len(chunk), "id": "x", "response_type": "embeddings_floats", "texts": chunk}
            expected = {"modelId": COHERE_MULTILINGUAL_V3, "body": ANY, "contentType": ANY, "accept": ANY}
            stub.add_response("invoke_model", _answer(answer), expected)

        assert len(embedder.embed(texts)) == 100

        stub.assert_no_pending_responses()


@pytest.mark.parametrize("code", ["ThrottlingException", "AccessDeniedException", "ModelTimeoutException"])
def test_a_service_error_is_an_embedder_failure(code):
    client = _client()
    with Stubber(client) as stub:
        stub.add_client_error("invoke_model", service_error_code=code, http_status_code=400)

        with pytest.raises(EmbedderUnavailable, match=code):
            BedrockEmbedder(client, TITAN_V2).embed(["x"])


def test_an_answer_without_a_vector_of_the_right_size_is_an_embedder_failure():
    client = _client()
    with Stubber(client) as stub:
        _expect(stub, TITAN_V2, {"inputText": "x", "dimensions": 1024, "normalize": True},
                {"embedding": [1.0, 2.0], "inputTextTokenCount": 1})  # fmt: skip

        with pytest.raises(EmbedderUnavailable, match="1024"):
            BedrockEmbedder(client, TITAN_V2).embed(["x"])


def test_unknown_models_and_sizes_are_refused():
    with pytest.raises(ValueError, match="bedrock model"):
        BedrockEmbedder(_client(), "amazon.titan-embed-text-v1")
    with pytest.raises(ValueError, match="256, 512 or 1024"):
        BedrockEmbedder(_client(), TITAN_V2, dimensions=384)
