"""Parallel corpora for the capstone: reading, normalising, splitting, tokenising, vocabularies, batches.

Two corpora are supported, both read from a path the user gives (no corpus is part of the repository):

- **Tatoeba English-French** (``fra.txt`` from https://www.manythings.org/anki, CC BY 2.0 FR; attribution
  "www.manythings.org/anki and tatoeba.org"): one pair a line, ``English<TAB>French`` and, in newer files,
  a third attribution column. :func:`download_tatoeba` fetches the public zip where a network exists.
- **Multi30k** (task 1 raw text): ``train``, ``val`` and ``test_2016_flickr`` files with one sentence a
  line, ``.en``/``.de``/``.fr``, line-aligned; the splits are given by the files.

Tokenisation: the translator uses **subwords** (:class:`SubwordTokenizer`, a sentencepiece model learned on
the training split, saved in every checkpoint): frequent words are one piece, rare ones several, and no
input is ever ``<unk>``. The word-level tokenizer (:func:`tokenize`, :class:`Vocab`, :class:`WordTokenizer`)
is the teaching version of chapter 6, kept for comparison (``Config(tokenizer="word")``) and for the toy
corpus; it is the course's text pipeline, :mod:`seqcourse.text`, with the capstone's own rule (``3.50``
kept whole, undone by :func:`detokenize`) and spellings (``encode(sos=, eos=)``, ``max_size`` counting the
specials). Both put ``<pad>=0, <sos>=1, <eos>=2, <unk>=3`` first and give French output its typography
(:func:`french_spacing`). :func:`bucket_batches` orders batches so that the reported runs reproduce.
"""
from __future__ import annotations

import hashlib
import os
import re
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import torch

from .. import text as _text
from .errors import NMTError

TATOEBA_URL = "https://www.manythings.org/anki/fra-eng.zip"
ATTRIBUTION = "www.manythings.org/anki and tatoeba.org"
# sha256 of the files the course's numbers were measured on (the 2017-09-29 fra.txt has two columns)
KNOWN_SHA256 = {
    "2546838ae46e0eac4c02ab7032ea0a02a006074a5340077a36a9444f41e02888": "tatoeba fra.txt, 2017-09-29",
}
MULTI30K_SPLITS = {"train": "train", "dev": "val", "test": "test_2016_flickr"}

PAD, SOS, EOS, UNK = _text.PAD_INDEX, _text.SOS_INDEX, _text.EOS_INDEX, _text.UNK_INDEX   # 0, 1, 2, 3
SPECIALS = list(_text.SPECIALS)   # ["<pad>", "<sos>", "<eos>", "<unk>"]


# ----------------------------------------------------------------------------------------------------
# finding and reading files

def data_root() -> Path | None:
    """Where the development corpora live: ``$SEQCOURSE_DATA`` if set, else ``../shared/data`` beside the
    repository. Returns ``None`` when that folder does not exist (tests then skip with a message).
    """
    env = os.environ.get("SEQCOURSE_DATA")
    repo = Path(__file__).resolve().parents[2]
    candidates = [Path(env)] if env else [repo.parent / "shared" / "data"]   # an explicit setting wins
    for c in candidates:
        if c.is_dir():
            return c.resolve()
    return None


def find_tatoeba() -> Path | None:
    """The Tatoeba ``fra.txt`` under :func:`data_root` (or ``$SEQCOURSE_DATA`` itself a file), or None."""
    env = os.environ.get("SEQCOURSE_DATA")
    if env and Path(env).is_file():
        return Path(env)
    root = data_root()
    if root is None:
        return None
    for rel in ("tatoeba-fra-eng-2017/fra.txt", "fra.txt", "fra-eng/fra.txt"):
        if (root / rel).is_file():
            return root / rel
    return None


def find_multi30k() -> Path | None:
    root = data_root()
    if root is not None and (root / "multi30k" / "train.en").is_file():
        return root / "multi30k"
    return None


_SPACES = re.compile(r"[\s\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u00ad\ufeff"))
_QUOTES = {ord("\u2019"): "'", ord("\u2018"): "'"}


def normalize(text: str) -> str:
    """Unicode NFC, curly apostrophes made straight, every kind of space (the French side's U+202F and
    U+00A0 before ``! ? ; :``) made one ASCII space, invisible characters dropped, ends stripped."""
    text = unicodedata.normalize("NFC", text).translate(_INVISIBLE).translate(_QUOTES)
    return _SPACES.sub(" ", text).strip()


def sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_pairs(path: str | Path) -> list[tuple[str, str]]:
    """Read a tab-separated parallel file (``source<TAB>target[<TAB>attribution]``), normalised.

    Lines with fewer than two columns or an empty side are skipped; a third (attribution) column is
    ignored. A missing file raises ``FileNotFoundError`` that says where to get the data; a file that is not
    UTF-8 text, or that has no usable pair at all, raises :class:`NMTError` that says what is wrong.
    """
    path = Path(path)
    if path.is_dir():
        raise NMTError(f"{path} is a folder: give the path of the tab-separated file itself (e.g. {path}/fra.txt)")
    if not path.is_file():
        raise FileNotFoundError(
            f"no parallel corpus at {path}. Download {TATOEBA_URL} (attribution: {ATTRIBUTION}), unzip it "
            "and pass the path of fra.txt (--data PATH), set SEQCOURSE_DATA, or call "
            "seqcourse.nmt.data.download_tatoeba(folder) where a network exists.")
    pairs, lines = [], 0
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                lines += 1
                if "\0" in line:
                    raise NMTError(f"{path} is not a text file (it holds NUL bytes, line {lines}): give a UTF-8 "
                                   "file with one 'source<TAB>target' pair a line")
                cols = line.rstrip("\r\n").split("\t")
                if len(cols) < 2:
                    continue
                src, tgt = normalize(cols[0]), normalize(cols[1])
                if src and tgt:
                    pairs.append((src, tgt))
    except UnicodeDecodeError as exc:
        raise NMTError(f"{path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}): "
                       "give a UTF-8 file with one 'source<TAB>target' pair a line") from None
    if not pairs:
        raise NMTError(f"no usable sentence pairs in {path}: none of its {lines} lines has the form "
                       "'source<TAB>target' with both sides non-empty")
    return pairs


def download_tatoeba(folder: str | Path, url: str = TATOEBA_URL, expected_sha256: str | None = None,
                     timeout: float = 60.0) -> Path:
    """Download the public Tatoeba English-French zip into ``folder`` and unzip ``fra.txt``; return its path.

    The zip is re-published now and then, so no fixed checksum can be promised. If ``expected_sha256`` (or
    ``$SEQCOURSE_TATOEBA_SHA256``) is given, the zip must match it; otherwise its checksum is written to
    ``fra-eng.zip.sha256`` on the first download and every later use is checked against that file.
    Any failure raises ``RuntimeError`` with what to do by hand.
    """
    import urllib.request

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    zpath, record, txt = folder / "fra-eng.zip", folder / "fra-eng.zip.sha256", folder / "fra.txt"
    manual = (f"Download {url} in a browser, unzip it and pass the path of fra.txt instead "
              f"(attribution: {ATTRIBUTION}).")
    if not zpath.exists():
        req = urllib.request.Request(url, headers={"User-Agent": "Mozilla/5.0 (seqcourse)"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r, open(str(zpath) + ".part", "wb") as f:
                while chunk := r.read(1 << 20):
                    f.write(chunk)
        except Exception as exc:  # noqa: BLE001 - any network failure gets the same advice
            raise RuntimeError(f"could not download {url}: {exc}. {manual}") from exc
        os.replace(str(zpath) + ".part", zpath)
    digest = sha256(zpath)
    expected = expected_sha256 or os.environ.get("SEQCOURSE_TATOEBA_SHA256")
    if expected is None and record.exists():
        expected = record.read_text().split()[0]
    if expected is not None and digest != expected.lower():
        raise RuntimeError(f"checksum mismatch for {zpath}: sha256 {digest}, expected {expected}. Delete the "
                           f"file to download it again. {manual}")
    record.write_text(f"{digest}  fra-eng.zip\n")
    try:
        with zipfile.ZipFile(zpath) as z:
            name = next(n for n in z.namelist() if n.endswith("fra.txt"))
            txt.write_bytes(z.read(name))
    except (zipfile.BadZipFile, StopIteration) as exc:
        raise RuntimeError(f"{zpath} is not the expected zip with fra.txt inside. {manual}") from exc
    return txt


# ----------------------------------------------------------------------------------------------------
# splits

def split_by_source(pairs: Sequence[tuple[str, str]], dev_frac: float = 0.02, test_frac: float = 0.03,
                    salt: str = "seqcourse") -> dict[str, list[tuple[str, str]]]:
    """Split pairs into train/dev/test **by source sentence**, deterministically.

    The bucket of a pair depends only on a hash of its source sentence (lower-cased, normalised), so the
    several translations of one English sentence always land in the same split and no source of the test
    set is seen in training. The split of a sentence does not change when the file grows.
    """
    out: dict[str, list[tuple[str, str]]] = {"train": [], "dev": [], "test": []}
    for src, tgt in pairs:
        key = (salt + "\t" + normalize(src).casefold()).encode("utf-8")
        u = int.from_bytes(hashlib.md5(key).digest()[:8], "big") / 2.0**64  # uniform in [0, 1)
        split = "test" if u < test_frac else "dev" if u < test_frac + dev_frac else "train"
        out[split].append((src, tgt))
    return out


def load_tatoeba(path: str | Path | None = None, dev_frac: float = 0.02, test_frac: float = 0.03,
                 download_to: str | Path | None = None) -> dict[str, list[tuple[str, str]]]:
    """Tatoeba English-French as ``{"train", "dev", "test"}`` lists of (English, French) pairs.

    ``path`` is ``fra.txt``; without it the development copy is looked up (``$SEQCOURSE_DATA``,
    ``../shared/data``), and failing that, with ``download_to``, the public zip is downloaded there.
    """
    if path is None:
        path = find_tatoeba()
    if path is None and download_to is not None:
        path = download_tatoeba(download_to)
    if path is None:
        raise FileNotFoundError(
            f"Tatoeba fra.txt not found: pass its path (--data PATH), set SEQCOURSE_DATA, or download "
            f"{TATOEBA_URL} (attribution: {ATTRIBUTION})")
    return split_by_source(read_pairs(path), dev_frac, test_frac)


def load_multi30k(folder: str | Path | None = None, src_lang: str = "de", tgt_lang: str = "en"
                  ) -> dict[str, list[tuple[str, str]]]:
    """Multi30k task 1 as ``{"train", "dev", "test"}`` pairs; dev is ``val``, test is ``test_2016_flickr``."""
    folder = Path(folder) if folder is not None else find_multi30k()
    if folder is None or not (folder / f"train.{src_lang}").is_file():
        raise FileNotFoundError(
            f"Multi30k not found at {folder}: pass the folder holding train/val/test_2016_flickr."
            f"{{en,de,fr}} (https://github.com/multi30k/dataset, data/task1/raw)")
    out = {}

    def lines(path):
        try:
            return path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise NMTError(f"{path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                           f"{exc.start}): Multi30k's files are UTF-8, one sentence a line") from None

    for split, stem in MULTI30K_SPLITS.items():
        src, tgt = lines(folder / f"{stem}.{src_lang}"), lines(folder / f"{stem}.{tgt_lang}")
        if len(src) != len(tgt):
            raise ValueError(f"{stem}.{src_lang} and {stem}.{tgt_lang} differ in length")
        out[split] = [(normalize(s), normalize(t)) for s, t in zip(src, tgt) if s.strip() and t.strip()]
    return out


def load_corpus(name: str, path: str | Path | None = None, **kwargs) -> dict[str, list[tuple[str, str]]]:
    """``"tatoeba"`` (English-French) or ``"multi30k"`` (German-English by default)."""
    if name == "tatoeba":
        return load_tatoeba(path, **kwargs)
    if name == "multi30k":
        return load_multi30k(path, **kwargs)
    raise ValueError(f"unknown corpus {name!r}: choose 'tatoeba' or 'multi30k'")


# ----------------------------------------------------------------------------------------------------
# tokenisation and vocabulary

# numbers (3.5, 1,000), words with inner apostrophes kept whole (don't, l'homme, aujourd'hui), any other
# non-space character alone (punctuation, hyphens, quotes)
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|\w+(?:'\w+)*|[^\w\s]")
_NO_SPACE_BEFORE = set(".,!?;:%)]}…")
_NO_SPACE_AFTER = set("([{¿¡")


def tokenize(text: str, lowercase: bool = False) -> list[str]:
    """Split normalised text into word and punctuation tokens: ``"Don't go!" -> ["Don't", "go", "!"]``."""
    return _text.word_tokenize(normalize(text), lower=lowercase, pattern=_TOKEN)


def detokenize(tokens: Sequence[str]) -> str:
    """Join tokens into text: no space before closing punctuation, none around hyphens or apostrophes."""
    out = ""
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        glue = (i == 0 or tok in _NO_SPACE_BEFORE or tok in "-'" or prev in _NO_SPACE_AFTER
                or prev in ("-", "'"))
        out += tok if glue else " " + tok
    return out


class Vocab(_text.Vocab):
    """The course's :class:`seqcourse.text.Vocab` (``<pad>=0, <sos>=1, <eos>=2, <unk>=3``) with the
    capstone's spellings: ``encode(tokens, sos=, eos=)``, ``max_size`` counting the specials, and
    ``state_dict()`` (the token list that checkpoints store; ``Vocab(itos)`` restores it)."""

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], min_freq: int = 1, max_size: int | None = None) -> "Vocab":
        """From tokenised sentences: tokens seen at least ``min_freq`` times, most frequent first (ties in
        alphabetical order, so the result is deterministic), at most ``max_size`` entries with specials."""
        if max_size is not None:
            max_size = max(0, max_size - len(SPECIALS))
        return super().build(sentences, min_freq=min_freq, max_size=max_size)

    def encode(self, tokens: Sequence[str], sos: bool = False, eos: bool = False) -> list[int]:
        return super().encode(tokens, add_sos=sos, add_eos=eos)

    def state_dict(self) -> list[str]:
        return list(self.itos)



# French typography: a space before ? ! ; : and a closing guillemet, after an opening one, as the Tatoeba
# references write them (after normalize(), an ASCII space); a colon between digits (8:40) stays glued
_FR_SPACE_BEFORE = re.compile(r"(?<=[^\s?!;:«])([?!;»]|:(?!\d))")
_FR_SPACE_AFTER = re.compile(r"«(?=[^\s])")


def french_spacing(text: str) -> str:
    """``"Où est la gare?"`` -> ``"Où est la gare ?"``: French spacing around ``? ! ; : « »``."""
    return _FR_SPACE_AFTER.sub("« ", _FR_SPACE_BEFORE.sub(r" \1", text))


class WordTokenizer:
    """Word tokens and a :class:`Vocab` (the teaching version of chapter 6): words seen fewer than ``min_freq``
    times in training, or beyond ``max_size``, become ``<unk>``. ``encode(text)`` gives ids without specials,
    ``decode(ids)`` text (reading stops at ``<eos>``)."""

    kind = "word"

    def __init__(self, vocab: Vocab, lowercase: bool = False, lang: str = ""):
        self.vocab, self.lowercase, self.lang = vocab, lowercase, lang

    @classmethod
    def train(cls, sentences: Sequence[str], size: int | None = None, lowercase: bool = False, lang: str = "",
              min_freq: int = 1) -> "WordTokenizer":
        return cls(Vocab.build([tokenize(s, lowercase) for s in sentences], min_freq, size), lowercase, lang)

    def __len__(self) -> int:
        return len(self.vocab)

    def tokens(self, text: str) -> list[str]:
        return tokenize(text, self.lowercase)

    def encode(self, text: str) -> list[int]:
        return self.vocab.encode(self.tokens(text))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [self.encode(t) for t in texts]

    def id_tokens(self, ids: Sequence[int]) -> list[str]:
        return self.vocab.decode(ids)

    def decode(self, ids: Sequence[int]) -> str:
        text = detokenize(self.vocab.decode(ids))
        return french_spacing(text) if self.lang == "fr" else text

    def state_dict(self) -> dict:
        return {"kind": self.kind, "itos": list(self.vocab.itos), "lowercase": self.lowercase, "lang": self.lang}


def _sentencepiece():
    """The sentencepiece module, or a one-line :class:`NMTError` saying how to install it."""
    try:
        import sentencepiece
    except ImportError:
        raise NMTError("subword vocabularies need the sentencepiece package, which is not installed here: "
                       "pip install sentencepiece (make setup installs it)") from None
    return sentencepiece


class SubwordTokenizer:
    """Subword tokens from a `sentencepiece <https://github.com/google/sentencepiece>`_ model (unigram language
    model by default), trained on the training split by :meth:`train`.

    Ids 0-3 are ``<pad> <sos> <eos> <unk>`` as everywhere in the book. Every character can be written: a piece
    that the model does not have falls back to its UTF-8 bytes (``byte_fallback``), so no input is ever
    ``<unk>``. A piece starting with ``▁`` (U+2581) begins a word: that is how :meth:`decode` puts the spaces
    back exactly where the training text had them (``gare ?`` in French, ``station?`` in English).
    """

    kind = "sentencepiece"

    def __init__(self, model: bytes, lowercase: bool = False, lang: str = ""):
        sentencepiece = _sentencepiece()

        self.model, self.lowercase, self.lang = bytes(model), lowercase, lang
        self.sp = sentencepiece.SentencePieceProcessor(model_proto=self.model)
        if [self.sp.id_to_piece(i) for i in range(4)] != SPECIALS:
            raise ValueError("this sentencepiece model does not have <pad> <sos> <eos> <unk> at ids 0-3")

    @classmethod
    def train(cls, sentences: Sequence[str], size: int = 8000, lowercase: bool = False, lang: str = "",
              model_type: str = "unigram") -> "SubwordTokenizer":
        """Learn at most ``size`` pieces (fewer if the text has fewer) from normalised ``sentences``."""
        import io

        sentencepiece = _sentencepiece()

        texts = [normalize(s) for s in sentences]
        texts = [t.lower() if lowercase else t for t in texts if t]
        if not texts:
            raise ValueError("no text to learn subwords from")
        size = max(size, len(SPECIALS) + 256 + len(set("".join(texts))))   # at least every character and byte
        buf = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(texts), model_writer=buf, vocab_size=size, model_type=model_type,
            hard_vocab_limit=False,                      # a small corpus gets fewer pieces, not an error
            character_coverage=1.0, byte_fallback=True,  # every character, and failing that its bytes
            pad_id=PAD, bos_id=SOS, eos_id=EOS, unk_id=UNK,
            pad_piece=SPECIALS[PAD], bos_piece=SPECIALS[SOS], eos_piece=SPECIALS[EOS], unk_piece=SPECIALS[UNK],
            normalization_rule_name="identity",          # normalize() has done it; keep text as it is
            num_threads=1, minloglevel=2)                # one thread: the same model every time
        return cls(buf.getvalue(), lowercase, lang)

    def __len__(self) -> int:
        return self.sp.get_piece_size()

    def _prepare(self, text: str) -> str:
        text = normalize(text)
        return text.lower() if self.lowercase else text

    def tokens(self, text: str) -> list[str]:
        return self.sp.encode(self._prepare(text), out_type=str)

    def encode(self, text: str) -> list[int]:
        return self.sp.encode(self._prepare(text))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return self.sp.encode([self._prepare(t) for t in texts])

    def _until_eos(self, ids: Sequence[int]) -> list[int]:
        ids = [int(i) for i in ids]
        ids = ids[: ids.index(EOS)] if EOS in ids else ids
        return [i for i in ids if i not in (PAD, SOS)]

    def id_tokens(self, ids: Sequence[int]) -> list[str]:
        return [self.sp.id_to_piece(i) for i in self._until_eos(ids)]

    def decode(self, ids: Sequence[int]) -> str:
        text = self.sp.decode(self._until_eos(ids))
        return french_spacing(text) if self.lang == "fr" else text

    def state_dict(self) -> dict:
        """Plain data: the serialised model as a uint8 tensor (``torch.load(weights_only=True)`` reads it)."""
        return {"kind": self.kind, "model": torch.frombuffer(bytearray(self.model), dtype=torch.uint8),
                "lowercase": self.lowercase, "lang": self.lang}


Tokenizer = WordTokenizer | SubwordTokenizer
TOKENIZERS = {"word": WordTokenizer, "sentencepiece": SubwordTokenizer}


def train_tokenizer(kind: str, sentences: Sequence[str], size: int, lowercase: bool = False, lang: str = "",
                    min_freq: int = 1) -> "Tokenizer":
    """A :class:`SubwordTokenizer` (``kind="sentencepiece"``) or :class:`WordTokenizer` (``"word"``)."""
    if kind == "sentencepiece":
        return SubwordTokenizer.train(sentences, size, lowercase, lang)
    if kind == "word":
        return WordTokenizer.train(sentences, size, lowercase, lang, min_freq)
    raise ValueError(f"unknown tokenizer {kind!r}: choose one of {sorted(TOKENIZERS)}")


def tokenizer_from_state(state) -> "Tokenizer":
    """The tokenizer saved by ``state_dict()``; a plain list is a word vocabulary (checkpoints before subwords)."""
    if isinstance(state, (list, tuple)):
        return WordTokenizer(Vocab(state))
    if state.get("kind") == "sentencepiece":
        return SubwordTokenizer(state["model"].numpy().tobytes(), state["lowercase"], state.get("lang", ""))
    if state.get("kind") == "word":
        return WordTokenizer(Vocab(state["itos"]), state["lowercase"], state.get("lang", ""))
    raise ValueError(f"unknown tokenizer in the checkpoint: {state.get('kind')!r}")


# ----------------------------------------------------------------------------------------------------
# tensors and batches

@dataclass
class Example:
    src: list[int]   # source ids, no specials
    tgt: list[int]   # target ids with <sos> ... <eos>


def encode_pairs(pairs: Sequence[tuple[str, str]], src_tok: "Tokenizer", tgt_tok: "Tokenizer",
                 max_len: int | None = None) -> list[Example]:
    """Index pairs with the two tokenizers; with ``max_len``, pairs with a side longer than that many
    tokens are dropped (and pairs with an empty side always)."""
    src_ids = src_tok.encode_batch([s for s, _ in pairs])
    tgt_ids = tgt_tok.encode_batch([t for _, t in pairs])
    return [Example(s, [SOS] + t + [EOS]) for s, t in zip(src_ids, tgt_ids)
            if s and t and (max_len is None or (len(s) <= max_len and len(t) <= max_len))]


def pad(seqs: Sequence[Sequence[int]]) -> torch.Tensor:
    """Right-pad lists of ids with ``<pad>`` (0) into a ``(B, T)`` int64 tensor
    (:func:`seqcourse.text.pad_batch` without the lengths)."""
    return _text.pad_batch(seqs, PAD)[0]


def collate(examples: Sequence[Example]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``src (B, Tx)``, ``src_len (B,)``, ``tgt (B, Ty + 1)`` (``<sos> y_1 .. y_Ty <eos>``, padded)."""
    src, src_len = _text.pad_batch([e.src for e in examples], PAD)      # (B, Tx), (B,)
    return src, src_len, pad([e.tgt for e in examples])


def bucket_batches(examples: Sequence[Example], batch_size: int, seed: int = 0, shuffle: bool = True,
                   pool: int = 50) -> list[list[int]]:
    """Indices of examples grouped into batches of similar source length (length bucketing).

    Shuffle (with ``seed``), cut into pools of ``pool * batch_size`` examples, sort each pool by length,
    cut it into batches, shuffle the batches. Similar lengths mean little padding, so little wasted work.
    """
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(examples), generator=g).tolist() if shuffle else list(range(len(examples)))
    batches = _text.pool_sort_batches(order, lambda i: (len(examples[i].src), len(examples[i].tgt)),
                                      batch_size, pool)
    if shuffle:
        batches = [batches[i] for i in torch.randperm(len(batches), generator=g).tolist()]
    return batches
