"""Train the translator: ``python -m seqcourse.nmt.train --config {gpu,laptop,smoke} [--data PATH] [--out DIR]``.

One file, top to bottom: data -> subword tokenizers (learned on the training split) -> bucketed batches ->
model -> the training loop (bf16 autocast on CUDA, gradient clipping, per-epoch learning-rate decay,
checkpoints every N steps, ``--resume``, Ctrl-C saves) -> dev BLEU per epoch -> curves (PNG) and the final
test BLEU (beam search) in ``OUT/metrics.json``.

Checkpoints are self-describing and safe to open: weights, optimiser and random states are tensors, the
configuration, the tokenizers and the training state plain data, so :func:`load_checkpoint` reads them with
``torch.load(weights_only=True)`` (no code in a checkpoint can run), and a checksum of the weights and
tokenizers says whether the file is intact.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import random
import re
import shlex
import signal
import sys
import time
import zipfile
from collections import defaultdict
from pathlib import Path

import torch

from seqcourse import get_device, set_seed
from seqcourse.progress import progress

from .configs import CONFIGS, Config, get_config
from .data import (PAD, SOS, UNK, WordTokenizer, bucket_batches, collate, encode_pairs, load_corpus, pad,
                   tokenizer_from_state, train_tokenizer)
from .decode import translate_ids
from .errors import NMTError
from .model import NMT, masked_loss

FORMAT = "seqcourse.nmt checkpoint"
VERSION = 2


# ---------------------------------------------------------------------------------------------- devices
def resolve_device(name=None) -> torch.device:
    """``torch.device(name)``, or the best available device when ``name`` is empty; a device this machine
    cannot use raises :class:`NMTError` with what to use instead."""
    if isinstance(name, torch.device):
        name = str(name)
    name = name or os.environ.get("SEQCOURSE_DEVICE")
    if not name:
        return get_device()
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise NMTError(f"unknown device {name!r}: use cpu, cuda, cuda:N or mps (or leave --device out)") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            build = "a CPU-only build of PyTorch" if torch.version.cuda is None else "no GPU is visible"
            raise NMTError(f"device {name!r}: CUDA is not available here ({build}); use --device cpu or leave "
                           "--device out")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise NMTError(f"device {name!r}: this machine has {torch.cuda.device_count()} GPU(s), numbered from 0")
    elif device.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise NMTError(f"device {name!r}: Apple's MPS is not available here; use --device cpu")
    elif device.type != "cpu":
        raise NMTError(f"device {name!r} is not supported: use cpu, cuda, cuda:N or mps")
    return device


def to_device(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    """Copy a batch tensor to ``device``; on CUDA from pinned memory without waiting (no host synchronisation)."""
    if device.type == "cuda":
        return t.pin_memory().to(device, non_blocking=True)
    return t.to(device)


# ---------------------------------------------------------------------------------------------- data
def prepare_data(cfg: Config, data_path=None, tokenizers=None, say=lambda *a, **k: None) -> dict:
    """Load the corpus, learn the tokenizers on the training split (or take ``tokenizers``, a pair, e.g.
    from a checkpoint), index the training pairs. Raises :class:`NMTError` when a split is empty."""
    kwargs = {"src_lang": cfg.src_lang, "tgt_lang": cfg.tgt_lang} if cfg.corpus == "multi30k" else {}
    splits = load_corpus(cfg.corpus, data_path, **kwargs)
    train_pairs = splits["train"][: cfg.train_max] if cfg.train_max else splits["train"]
    dev, test = splits["dev"][: cfg.dev_max], splits["test"][: cfg.test_max] if cfg.test_max else splits["test"]
    if not train_pairs or not dev or not test:
        total = sum(len(v) for v in splits.values())
        raise NMTError(f"the corpus has {total} usable pairs, which split into {len(train_pairs)} training, "
                       f"{len(dev)} dev and {len(test)} test pairs: training needs at least one of each "
                       "(Tatoeba's split puts 2% of the sentences in dev and 3% in test): use a larger corpus")
    if tokenizers is None:
        t0 = time.perf_counter()
        tokenizers = tuple(train_tokenizer(cfg.tokenizer, [p[side] for p in train_pairs], cfg.max_vocab,
                                           cfg.lowercase, lang, cfg.min_freq)
                           for side, lang in ((0, cfg.src_lang), (1, cfg.tgt_lang)))
        say(f"{cfg.tokenizer} tokenizers learned on the training split in {time.perf_counter() - t0:.1f} s: "
            f"{len(tokenizers[0])} / {len(tokenizers[1])} tokens")
    src_tok, tgt_tok = tokenizers
    examples = encode_pairs(train_pairs, src_tok, tgt_tok, cfg.max_len)
    if not examples:
        raise NMTError(f"none of the {len(train_pairs)} training pairs has both sides within max_len = "
                       f"{cfg.max_len} tokens: raise max_len or use shorter sentences")
    digest = hashlib.sha256("\n".join(f"{s}\t{t}" for s, t in train_pairs).encode("utf-8")).hexdigest()
    return {"src_tok": src_tok, "tgt_tok": tgt_tok, "train": examples, "train_pairs": len(train_pairs),
            "dev": dev, "test": test, "train_sha256": digest}


def build_model(cfg: Config, src_tok, tgt_tok) -> NMT:
    return NMT(len(src_tok), len(tgt_tok), cfg.embed_size, cfg.hidden_size, cfg.dropout, cfg.att_scale)


def banned_tokens(tgt_tok) -> tuple:
    """Tokens decoding never outputs: <pad> and <sos>, and <unk> unless the vocabulary is made of words
    (a word model's <unk> stands for a real word it does not know; a subword model never needs it)."""
    return (PAD, SOS) if isinstance(tgt_tok, WordTokenizer) else (PAD, SOS, UNK)


# ---------------------------------------------------------------------------------------------- evaluation
@torch.no_grad()
def translate_sentences(model, sentences, src_tok, tgt_tok, beam_size=1, alpha=1.0, batch_size=64,
                        device="cpu", precision="auto") -> list[str]:
    """Translate raw sentences (batched, sorted by length for little padding) into text. An empty
    sentence (nothing but spaces) translates to an empty string, without running the model."""
    model.eval()
    device = torch.device(device)
    ids = src_tok.encode_batch(list(sentences))
    order = sorted((i for i in range(len(ids)) if ids[i]), key=lambda i: len(ids[i]))
    out = [""] * len(ids)
    for k in range(0, len(order), batch_size):
        chunk = order[k:k + batch_size]
        src = pad([ids[i] for i in chunk]).to(device)                        # (B, Tx)
        src_len = torch.tensor([len(ids[i]) for i in chunk])                # (B,), stays on the CPU
        with autocast(device, precision):
            hyps = translate_ids(model, src, src_len, beam_size, alpha, banned=banned_tokens(tgt_tok))
        for i, hyp in zip(chunk, hyps):
            out[i] = tgt_tok.decode(hyp)
    return out


def bleu(model, pairs, src_tok, tgt_tok, cfg: Config, beam_size=1, device="cpu"):
    """sacreBLEU (13a tokenisation; cased unless the config lower-cases) on (source, reference) pairs.

    Each distinct source is translated once. Returns ``(bleu, bleu_multi_ref, hypotheses)``: ``bleu``
    scores every pair against its own reference (a source with 3 translations counts 3 times);
    ``bleu_multi_ref`` scores each distinct source once against all of its references.
    """
    import sacrebleu

    if not pairs:
        return float("nan"), float("nan"), {}
    refs_of = defaultdict(list)
    for s, t in pairs:
        refs_of[s].append(t.lower() if cfg.lowercase else t)
    sources = list(refs_of)
    hyps = dict(zip(sources, translate_sentences(model, sources, src_tok, tgt_tok, beam_size, cfg.alpha,
                                                 device=device, precision=cfg.precision)))
    refs = [t.lower() if cfg.lowercase else t for _, t in pairs]
    single = sacrebleu.corpus_bleu([hyps[s] for s, _ in pairs], [refs]).score
    n = max(len(r) for r in refs_of.values())
    streams = [[refs_of[s][j] if j < len(refs_of[s]) else None for s in sources] for j in range(n)]
    multi = sacrebleu.corpus_bleu([hyps[s] for s in sources], streams).score
    return single, multi, hyps


@torch.no_grad()
def dev_loss(model, examples, batch_size, device, precision="auto") -> float:
    model.eval()
    total, count = torch.zeros((), device=device), 0
    for idx in bucket_batches(examples, batch_size, shuffle=False):
        src, src_len, tgt = collate([examples[i] for i in idx])
        n = int((tgt[:, 1:] != PAD).sum())                                  # on the CPU: no synchronisation
        src, tgt = to_device(src, device), to_device(tgt, device)
        with autocast(device, precision):
            logits = model(src, src_len, tgt[:, :-1])
        total += masked_loss(logits, tgt[:, 1:]) * n
        count += n
    return total.item() / max(count, 1)


_BF16_WORKS: dict[str, bool] = {}


def bf16_works(device) -> bool:
    """Whether this model trains under bf16 autocast on ``device`` (probed once per device, CUDA only).

    One training step and one decoding of a tiny model find out before training starts; where it fails (an
    old GPU or software stack), training falls back to float32 with a warning instead of failing.
    """
    device = torch.device(device)
    if device.type != "cuda":
        return False
    key = str(device)
    if key not in _BF16_WORKS:
        try:
            _probe_bf16(device)
            _BF16_WORKS[key] = True
        except RuntimeError as exc:                                        # e.g. no bf16 kernels for this GPU
            import warnings

            warnings.warn(f"bf16 autocast does not work on {key} ({str(exc).splitlines()[0]}); "
                          "training in float32")
            _BF16_WORKS[key] = False
    return _BF16_WORKS[key]


def _probe_bf16(device) -> None:
    """Train a tiny model for one step and decode with it under bf16 autocast on ``device``; raises if it fails."""
    tiny = NMT(12, 12, 8, 8, 0.0).to(device)
    src = torch.tensor([[4, 5, 6], [7, 8, PAD]], device=device)                 # (2, 3)
    tgt = torch.tensor([[1, 4, 5, 2], [1, 6, 2, PAD]], device=device)           # (2, 4)
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
        logits = tiny(src, torch.tensor([3, 2]), tgt[:, :-1])                    # (2, 3, 12)
        translate_ids(tiny, src, torch.tensor([3, 2]), 2, 1.0)
    masked_loss(logits, tgt[:, 1:]).backward()
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def uses_bf16(device, precision: str = "auto") -> bool:
    """Whether the model runs under bf16 autocast: on CUDA only, with ``precision`` "bf16" always and "auto"
    where :func:`bf16_works`; "fp32" never."""
    if precision not in ("auto", "bf16", "fp32"):
        raise ValueError(f"precision must be auto, bf16 or fp32, not {precision!r}")
    device = torch.device(device)
    return device.type == "cuda" and (precision == "bf16" or (precision == "auto" and bf16_works(device)))


def autocast(device, precision: str = "auto"):
    """bf16 autocast where :func:`uses_bf16`, else a no-op (float32)."""
    device = torch.device(device)
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=uses_bf16(device, precision))


# ---------------------------------------------------------------------------------------------- checkpoints
def rng_state() -> dict:
    """Every random state a run uses, as tensors: PyTorch's CPU and CUDA generators, Python's, NumPy's."""
    import numpy as np

    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {"torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "python": torch.tensor(internal, dtype=torch.int64), "python_version": version,
            "python_gauss": gauss, "numpy": torch.from_numpy(keys.astype(np.int64)),
            "numpy_pos": int(pos), "numpy_gauss": (int(has_gauss), float(cached))}


def set_rng_state(state: dict) -> None:
    import numpy as np

    torch.set_rng_state(state["torch"].cpu())
    if state.get("cuda") and torch.cuda.is_available():
        cuda = [s.cpu() for s in state["cuda"]]
        if len(cuda) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(cuda)
    if "python" in state:
        random.setstate((state["python_version"], tuple(state["python"].tolist()), state["python_gauss"]))
    if "numpy" in state:
        np.random.set_state(("MT19937", state["numpy"].numpy().astype(np.uint32), state["numpy_pos"],
                             *state["numpy_gauss"]))


def _tensor_bytes(t: torch.Tensor) -> bytes:
    return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def checksum(ck: dict) -> str:
    """sha256 of what a translator needs: the configuration, the tokenizers and the weights."""
    h = hashlib.sha256(json.dumps(ck["config"], sort_keys=True).encode())
    for side in ("src_tokenizer", "tgt_tokenizer"):
        for key, value in sorted(ck[side].items()):
            h.update(key.encode())
            h.update(_tensor_bytes(value) if isinstance(value, torch.Tensor) else repr(value).encode())
    for name, t in ck["model"].items():
        h.update(f"{name} {t.dtype} {tuple(t.shape)}".encode())
        h.update(_tensor_bytes(t))
    return h.hexdigest()


def save_checkpoint(path, model, cfg: Config, src_tok, tgt_tok, optimizer=None, state: dict | None = None):
    """Write a checkpoint atomically (a temporary file, then a rename: an interruption never leaves half a
    file). ``model.pt`` files (for translating) have no optimiser; ``checkpoint.pt`` (for resuming) has it,
    the training state and the random states."""
    ck = {"format": FORMAT, "version": VERSION, "config": cfg.to_dict(),
          "src_tokenizer": src_tok.state_dict(), "tgt_tokenizer": tgt_tok.state_dict(),
          "model": {k: v.detach() for k, v in model.state_dict().items()}}
    ck["sha256"] = checksum(ck)
    if optimizer is not None:
        ck.update(optimizer=optimizer.state_dict(), state=state, rng=rng_state())
    tmp = Path(str(path) + ".tmp")
    torch.save(ck, tmp)
    tmp.replace(path)


def _first_sentence(exc: BaseException, default: str = "") -> str:
    """The first sentence of an exception's message (at most 160 characters, no final full stop): PyTorch's
    loading errors go on for a paragraph."""
    line = (str(exc).strip().splitlines() or [default])[0]
    return re.split(r"(?<=\.)\s", line)[0][:160].rstrip(".")


def load_checkpoint(path, device="cpu") -> dict:
    """Read and check a checkpoint with ``torch.load(weights_only=True)``. Any problem (no file, an empty,
    truncated or corrupt file, a file that is not a seqcourse.nmt checkpoint, one that would run code) raises
    :class:`NMTError` saying which."""
    path = Path(path)
    if path.is_dir():
        hint = " (model.pt for translating, checkpoint.pt for resuming)" if (path / "model.pt").exists() else ""
        raise NMTError(f"{path} is a folder: give the checkpoint file inside it{hint}")
    if not path.is_file():
        raise NMTError(f"no checkpoint at {path}: train one with python -m seqcourse.nmt.train, which writes "
                       "OUT/model.pt")
    if path.stat().st_size == 0:
        raise NMTError(f"{path} is empty (0 bytes): the run that wrote it was cut off; use another checkpoint "
                       "or train again")
    try:
        ck = torch.load(path, map_location=device, weights_only=True)
    except pickle.UnpicklingError as exc:
        if not zipfile.is_zipfile(path):     # torch.save writes a zip archive: this is some other file
            raise NMTError(f"{path} is not a readable PyTorch checkpoint (not the zip archive that torch.save "
                           "writes): give the model.pt or checkpoint.pt that seqcourse.nmt.train wrote") from None
        first = _first_sentence(exc, default=type(exc).__name__)
        raise NMTError(f"{path} holds Python objects other than tensors and plain data, so loading it could "
                       f"run code: refused ({first}). Use a checkpoint written by seqcourse.nmt.train") from None
    except Exception as exc:  # noqa: BLE001 - zip, EOF and storage errors all mean the same to the user
        first = _first_sentence(exc)
        raise NMTError(f"{path} is not a readable PyTorch checkpoint ({type(exc).__name__}: {first}); it may be "
                       "truncated or corrupt: use another copy or train again") from None
    if not isinstance(ck, dict) or "model" not in ck or "config" not in ck:
        raise NMTError(f"{path} is a PyTorch file but not a seqcourse.nmt checkpoint (no model and "
                       "configuration in it); give the model.pt or checkpoint.pt that seqcourse.nmt.train wrote")
    if "format" not in ck:            # version 1 (before subwords): word vocabularies, no checksum
        ck["config"] = {"att_scale": False, "tokenizer": "word", **ck["config"]}
        ck["src_tokenizer"], ck["tgt_tokenizer"] = ck.pop("src_vocab"), ck.pop("tgt_vocab")
        if "rng" in ck:
            ck["rng"] = {"torch": ck["rng"]}
    elif ck.get("format") != FORMAT or ck.get("version", 0) > VERSION:
        raise NMTError(f"{path} is a {ck.get('format')!r} file of version {ck.get('version')}; this seqcourse "
                       f"reads {FORMAT!r} up to version {VERSION}: update seqcourse")
    elif ck.get("sha256") != checksum(ck):
        raise NMTError(f"{path} is corrupt: its weights or tokenizers do not match the checksum stored with "
                       "them; use another copy or train again")
    return ck


def load_model(path, device="cpu"):
    """``(model, src_tokenizer, tgt_tokenizer, config)`` from a checkpoint written by :func:`train`."""
    ck = load_checkpoint(path, device)
    cfg = Config.from_dict(ck["config"])
    src_tok, tgt_tok = tokenizer_from_state(ck["src_tokenizer"]), tokenizer_from_state(ck["tgt_tokenizer"])
    model = build_model(cfg, src_tok, tgt_tok).to(device)
    try:
        model.load_state_dict(ck["model"])
    except RuntimeError as exc:
        raise NMTError(f"{path}: its weights do not fit its configuration ({str(exc).splitlines()[0][:160]}); "
                       "the file is damaged") from None
    return model.eval(), src_tok, tgt_tok, cfg


# Configuration fields that a resumed run may change freely (they do not change what has been learned),
# and fields that it can never change (the weights or the tokenizers depend on them).
FREE_ON_RESUME = {"epochs", "minutes", "log_every", "checkpoint_every", "evals_per_epoch", "test_max", "beam_size",
                  "alpha"}
FIXED_ON_RESUME = {"corpus", "src_lang", "tgt_lang", "lowercase", "tokenizer", "max_vocab", "min_freq",
                   "embed_size", "hidden_size", "att_scale"}


def check_resume(saved: Config, cfg: Config, force: bool, say) -> None:
    """Compare the configuration of the checkpoint with the one asked for; refuse changes unless ``force``."""
    old, new = saved.to_dict(), cfg.to_dict()
    changed = [k for k in new if old.get(k) != new[k]]
    describe = lambda keys: ", ".join(f"{k} {old.get(k)!r} -> {new[k]!r}" for k in keys)
    fixed = [k for k in changed if k in FIXED_ON_RESUME]
    risky = [k for k in changed if k not in FIXED_ON_RESUME and k not in FREE_ON_RESUME]
    if fixed:
        raise NMTError(f"cannot resume with another {', '.join(fixed)} ({describe(fixed)}): the weights and "
                       "tokenizers depend on it; start a new run in another --out folder")
    if risky and not force:
        raise NMTError(f"the configuration differs from the checkpoint's: {describe(risky)}; resume with the "
                       "same options, or add --force to continue with the new values")
    if risky:
        say(f"resuming with a changed configuration (--force): {describe(risky)}")
    free = [k for k in changed if k in FREE_ON_RESUME]
    if free:
        say(f"resuming with {describe(free)}")


class _StopRequest:
    """While active, the first Ctrl-C (SIGINT) or SIGTERM asks the training loop to stop after the current
    step (which then saves a checkpoint); a second Ctrl-C stops at once."""

    def __init__(self, say):
        self.requested, self.say, self.saved = False, say, {}

    def _handler(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        self.say(f"\n{signal.Signals(signum).name}: stopping after this step to save a checkpoint "
                 "(Ctrl-C again to stop at once, saving nothing)", file=sys.stderr)

    def __enter__(self):
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.saved[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc):
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)


class TrainingInterrupted(KeyboardInterrupt):
    """Raised by :func:`train` after Ctrl-C, once the checkpoint is saved; the message says how to resume."""


# ---------------------------------------------------------------------------------------------- training
def train(cfg: Config, data_path=None, out_dir="runs/nmt", resume: bool = False, device=None,
          max_steps: int | None = None, verbose: bool = True, force: bool = False,
          resume_command: str | None = None, test_curve: bool = False, log=None) -> dict:
    """Train with ``cfg``; write ``checkpoint.pt`` (resumable), ``model.pt`` (best dev BLEU), ``history.json``
    (the curves so far, at every evaluation), ``metrics.json`` and ``curves.png`` into ``out_dir``; return the
    metrics.

    ``resume`` continues from ``out_dir/checkpoint.pt``, refusing a changed configuration unless ``force``;
    without ``resume``, an existing run in ``out_dir`` is not overwritten unless ``force``. Ctrl-C saves a
    checkpoint and raises :class:`TrainingInterrupted` (a ``KeyboardInterrupt``) whose message says how to
    resume (``resume_command``). ``max_steps`` stops after that many optimisation steps in all, as an
    interruption would (tests use it). ``test_curve`` also scores the test set (beam search) at every
    evaluation, for the benchmark's BLEU-against-minutes table (the reported test BLEU is still the model
    chosen on the dev set). ``log`` replaces ``print`` for the messages (with ``verbose``).
    """
    out = Path(out_dir)
    device = resolve_device(device)
    say = (log or print) if verbose else (lambda *a, **k: None)
    ckpt = out / "checkpoint.pt"
    ck = None
    if resume and ckpt.exists():
        ck = load_checkpoint(ckpt, device)
        if "optimizer" not in ck:
            raise NMTError(f"{ckpt} has no optimiser state, so training cannot continue from it")
        check_resume(Config.from_dict(ck["config"]), cfg, force, say)
    elif resume:
        say(f"nothing to resume in {out}; starting afresh")
    elif ckpt.exists() and not force:
        raise NMTError(f"{out} already holds a training run: add --resume to continue it, --force to start "
                       "afresh over it, or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    set_seed(cfg.seed)
    toks = (tokenizer_from_state(ck["src_tokenizer"]), tokenizer_from_state(ck["tgt_tokenizer"])) if ck else None
    data = prepare_data(cfg, data_path, toks, say)
    src_tok, tgt_tok, examples = data["src_tok"], data["tgt_tok"], data["train"]
    if ck and ck["state"].get("train_sha256") not in (None, data["train_sha256"]) and not force:
        raise NMTError(f"the training data differ from those of {ckpt}: give the same --data, or add --force")
    bf16 = uses_bf16(device, cfg.precision)
    dropped = data["train_pairs"] - len(examples)
    say(f"{cfg.corpus}: {len(examples)} training pairs ({dropped} with a side longer than max_len = {cfg.max_len} "
        f"tokens left out), {len(data['dev'])} dev, {len(data['test'])} test; {cfg.tokenizer} vocabularies "
        f"{len(src_tok)} / {len(tgt_tok)}; device {device}{' (bf16 autocast)' if bf16 else ''}, "
        f"{torch.get_num_threads()} CPU thread(s)")
    dev_examples = encode_pairs(data["dev"], src_tok, tgt_tok)
    model = build_model(cfg, src_tok, tgt_tok).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    state = {"step": 0, "epoch": 0, "batch": 0, "elapsed": 0.0, "cpu_seconds": 0.0, "best_bleu": -1.0,
             "train": [], "dev": [], "train_sha256": data["train_sha256"]}
    if ck:
        model.load_state_dict(ck["model"])
        optimizer.load_state_dict(ck["optimizer"])
        state = {**state, **ck["state"], "train_sha256": data["train_sha256"]}
        set_rng_state(ck["rng"])
        say(f"resumed from {ckpt} at step {state['step']} (epoch {state['epoch'] + 1}, batch {state['batch']})")

    def save(path=ckpt):
        save_checkpoint(path, model, cfg, src_tok, tgt_tok, optimizer, state)

    def evaluate(epoch_float):
        """Dev loss and greedy dev BLEU; keeps the best model in model.pt."""
        wall, cpu = clock.wall(), clock.cpu()
        dev_bleu, _, _ = bleu(model, data["dev"], src_tok, tgt_tok, cfg, beam_size=1, device=device)
        d_loss = dev_loss(model, dev_examples, cfg.batch_size, device, cfg.precision)
        record = {"epoch": epoch_float, "step": state["step"], "seconds": wall, "cpu_seconds": cpu,
                  "bleu": dev_bleu, "loss": d_loss}
        if test_curve:
            record["test_bleu"], record["test_bleu_multi_ref"], _ = bleu(model, data["test"], src_tok, tgt_tok, cfg,
                                                                         cfg.beam_size, device)
        state["dev"].append(record)
        say(f"epoch {epoch_float:.2f}: dev loss {d_loss:.3f}, dev BLEU (greedy) {dev_bleu:.2f}, "
            f"{wall / 60:.1f} min" + (f", test BLEU {record['test_bleu']:.2f}" if test_curve else ""))
        progress_record = {k: state[k] for k in ("step", "epoch", "batch", "elapsed", "cpu_seconds", "train", "dev")}
        (out / "history.json").write_text(json.dumps(progress_record, indent=1))   # readable while training
        if dev_bleu > state["best_bleu"] or not (out / "model.pt").exists():
            state["best_bleu"] = max(dev_bleu, state["best_bleu"])
            save_checkpoint(out / "model.pt", model, cfg, src_tok, tgt_tok)
        model.train()

    hint = resume_command or f"train(..., out_dir={str(out)!r}, resume=True)"
    clock = _Clock(state["elapsed"], state["cpu_seconds"])   # training time only: evaluations are not counted
    out_of_time = lambda: cfg.minutes is not None and clock.wall() > 60 * cfg.minutes
    batches = []
    with _StopRequest(say) as stop:
        while state["epoch"] < cfg.epochs and not out_of_time():
            epoch = state["epoch"]
            for group in optimizer.param_groups:
                group["lr"] = cfg.lr * cfg.lr_decay ** epoch                   # learning-rate decay per epoch
            batches = bucket_batches(examples, cfg.batch_size, seed=cfg.seed + epoch)
            eval_at = {round(len(batches) * k / cfg.evals_per_epoch) for k in range(1, cfg.evals_per_epoch + 1)}
            model.train()
            bar = progress(total=len(batches), initial=state["batch"], desc=f"epoch {epoch + 1}/{cfg.epochs}")
            window_loss, window_tokens, window_start = torch.zeros((), device=device), 0, time.perf_counter()
            for b in range(state["batch"], len(batches)):
                src, src_len, tgt = collate([examples[i] for i in batches[b]])
                n_tokens = int((tgt[:, 1:] != PAD).sum())                      # counted on the CPU
                src, tgt = to_device(src, device), to_device(tgt, device)      # src_len stays on the CPU
                with autocast(device, cfg.precision):
                    logits = model(src, src_len, tgt[:, :-1])                   # (B, Ty, V): teacher forcing
                loss = masked_loss(logits, tgt[:, 1:], cfg.label_smoothing)     # targets y_1 .. <eos>
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
                optimizer.step()
                state["step"], state["batch"] = state["step"] + 1, b + 1
                window_loss += loss.detach() * n_tokens                         # no .item(): no synchronisation
                window_tokens += n_tokens
                if state["step"] % cfg.log_every == 0:
                    mean = window_loss.item() / window_tokens                   # one synchronisation per log line
                    tok_s = window_tokens / max(time.perf_counter() - window_start, 1e-9)
                    state["train"].append({"step": state["step"], "loss": mean, "seconds": clock.wall(),
                                           "tokens_per_s": tok_s, "load": _load()})
                    bar.set_postfix(loss=f"{mean:.3f}", tok_s=f"{tok_s:,.0f}")
                    window_loss.zero_()
                    window_tokens, window_start = 0, time.perf_counter()
                bar.update(1)
                state["elapsed"], state["cpu_seconds"] = clock.wall(), clock.cpu()
                if state["step"] % cfg.checkpoint_every == 0:
                    save()
                if max_steps is not None and state["step"] >= max_steps:
                    bar.close()
                    save()                                                      # as if interrupted here
                    return {"interrupted_at_step": state["step"]}
                if b + 1 in eval_at or out_of_time():
                    with clock.paused():
                        evaluate(epoch + (b + 1) / len(batches))
                    if out_of_time():
                        break
                if stop.requested:
                    bar.close()
                    save()
                    raise TrainingInterrupted(
                        f"interrupted at step {state['step']} (epoch {epoch + 1}, batch {b + 1} of {len(batches)}); "
                        f"checkpoint saved in {ckpt}; resume with: {hint}")
            bar.close()
            if state["batch"] >= len(batches):
                state["epoch"], state["batch"] = epoch + 1, 0
            state["elapsed"], state["cpu_seconds"] = clock.wall(), clock.cpu()
            save()

    # final test BLEU with the best model (beam search, and greedy for comparison)
    if not (out / "model.pt").exists():        # e.g. no evaluation ran before the time ran out
        save_checkpoint(out / "model.pt", model, cfg, src_tok, tgt_tok)
    model, *_ = load_model(out / "model.pt", device)
    t0 = time.perf_counter()
    test_bleu, test_multi, hyps = bleu(model, data["test"], src_tok, tgt_tok, cfg, cfg.beam_size, device)
    beam_seconds = time.perf_counter() - t0
    test_greedy, test_greedy_multi, _ = bleu(model, data["test"], src_tok, tgt_tok, cfg, 1, device)
    every = max(1, len(data["test"]) // 12)
    n_batches = len(batches) or len(bucket_batches(examples, cfg.batch_size, seed=cfg.seed))
    metrics = {
        "config": cfg.to_dict(), "device": str(device), "torch": torch.__version__,
        "threads": torch.get_num_threads(), "bf16": bf16,
        "train_pairs": len(examples), "train_pairs_before_max_len": data["train_pairs"],
        "dev_pairs": len(data["dev"]), "test_pairs": len(data["test"]),
        "test_sources": len(hyps), "src_vocab": len(src_tok), "tgt_vocab": len(tgt_tok),
        "parameters": sum(p.numel() for p in model.parameters()),
        "steps": state["step"], "epochs": state["epoch"] + state["batch"] / max(1, n_batches),
        "train_minutes": state["elapsed"] / 60, "train_cpu_minutes": state["cpu_seconds"] / 60,
        "tokens_per_s": _median([r["tokens_per_s"] for r in state["train"]]),
        "best_dev_bleu": state["best_bleu"], "test_bleu": test_bleu, "test_bleu_multi_ref": test_multi,
        "test_bleu_greedy": test_greedy, "test_bleu_greedy_multi_ref": test_greedy_multi,
        "test_beam_seconds": beam_seconds,
        "history": {"train": state["train"], "dev": state["dev"]},
        "samples": [{"source": s, "reference": t, "output": hyps[s]} for s, t in data["test"][::every][:12]],
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1, ensure_ascii=False))
    plot_history(metrics, out / "curves.png")
    say(f"test BLEU {test_bleu:.2f} (beam {cfg.beam_size}; greedy {test_greedy:.2f}; all references "
        f"{test_multi:.2f}) after {state['step']} steps, {state['elapsed'] / 60:.1f} min; written to {out}")
    return metrics


class _Clock:
    """Training time, wall-clock and CPU (this process), that can be paused for evaluations."""

    def __init__(self, wall: float = 0.0, cpu: float = 0.0):
        self._wall0, self._cpu0 = time.perf_counter() - wall, time.process_time() - cpu

    def wall(self) -> float:
        return time.perf_counter() - self._wall0

    def cpu(self) -> float:
        return time.process_time() - self._cpu0

    def paused(self):
        import contextlib

        @contextlib.contextmanager
        def pause():
            wall, cpu = time.perf_counter(), time.process_time()
            yield
            self._wall0 += time.perf_counter() - wall
            self._cpu0 += time.process_time() - cpu
        return pause()


def _load() -> float | None:
    """The machine's load average over the last minute (None where the OS does not say)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def plot_history(metrics: dict, path):
    """Training and dev loss against steps, dev BLEU against minutes: one PNG with two panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    tr, dv = metrics["history"]["train"], metrics["history"]["dev"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
    ax1.plot([r["step"] for r in tr], [r["loss"] for r in tr], label="train")
    ax1.plot([r["step"] for r in dv], [r["loss"] for r in dv], "o-", label="dev")
    ax1.set(xlabel="step", ylabel="cross-entropy per token")
    ax1.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x / 1000:g}k" if x >= 1000 else f"{x:g}"))
    ax1.legend()
    ax2.plot([r["seconds"] / 60 for r in dv], [r["bleu"] for r in dv], "o-")
    ax2.set(xlabel="minutes of training", ylabel="dev BLEU (greedy)")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.suptitle(f"{metrics['config']['corpus']}, {metrics['device']}: test BLEU {metrics['test_bleu']:.1f}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------- command line
class ArgumentParser(argparse.ArgumentParser):
    """argparse, with a bad option reported in one line: ``error: <what>; see --help``."""

    def error(self, message):
        self.exit(2, f"error: {message} (see --help)\n")


def positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive {kind.__name__}, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value
    parse.__name__ = f"positive {kind.__name__}"
    return parse


def run_cli(main, argv=None):
    """Run a command's ``main``: user errors as one line (exit 1), Ctrl-C with its message (exit 130)."""
    try:
        main(argv)
    except (NMTError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt as exc:
        print(str(exc) or "interrupted (nothing saved)", file=sys.stderr)
        sys.exit(130)


def main(argv=None):
    p = ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--config", default="laptop", choices=sorted(CONFIGS))
    p.add_argument("--data", help="fra.txt (Tatoeba) or the Multi30k folder; default: $SEQCOURSE_DATA or ../shared/data")
    p.add_argument("--out", default=None, help="output folder (default runs/nmt-CONFIG)")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pt")
    p.add_argument("--force", action="store_true",
                   help="with --resume: continue although the configuration or data changed;\n"
                        "without: start afresh over an existing run in OUT")
    p.add_argument("--minutes", type=positive(float), help="training time budget")
    p.add_argument("--epochs", type=positive(int))
    p.add_argument("--batch-size", type=positive(int))
    p.add_argument("--lr", type=positive(float))
    p.add_argument("--corpus", choices=["tatoeba", "multi30k"])
    p.add_argument("--src-lang")
    p.add_argument("--tgt-lang")
    p.add_argument("--train-max", type=positive(int))
    p.add_argument("--max-len", type=positive(int), help="leave out training pairs with a side longer than this (tokens)")
    p.add_argument("--tokenizer", choices=["sentencepiece", "word"],
                   help="sentencepiece subwords (default) or chapter 6's word vocabulary")
    p.add_argument("--device", help="cuda, mps or cpu (default: the best available)")
    p.add_argument("--precision", choices=["auto", "bf16", "fp32"],
                   help="auto (default): bf16 autocast on CUDA where it works, else float32")
    p.add_argument("--seed", type=int)
    p.add_argument("--no-att-scale", action="store_true",
                   help="CS224N's unscaled attention energies (default: divided by sqrt(H), see chapter 9)")
    a = p.parse_args(argv)
    cfg = get_config(a.config, minutes=a.minutes, epochs=a.epochs, batch_size=a.batch_size, lr=a.lr,
                     corpus=a.corpus, src_lang=a.src_lang, tgt_lang=a.tgt_lang, train_max=a.train_max, seed=a.seed,
                     max_len=a.max_len,
                     precision=a.precision, tokenizer=a.tokenizer, att_scale=False if a.no_att_scale else None)
    args = list(sys.argv[1:] if argv is None else argv)
    command = "python -m seqcourse.nmt.train " + " ".join(shlex.quote(x) for x in args if x != "--force")
    command += "" if "--resume" in args else " --resume"
    train(cfg, a.data, a.out or f"runs/nmt-{a.config}", resume=a.resume, device=a.device, force=a.force,
          resume_command=command)


if __name__ == "__main__":
    run_cli(main)
