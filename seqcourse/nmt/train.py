"""Train the translator: ``python -m seqcourse.nmt.train --config {gpu,laptop,smoke} [--data PATH] [--out DIR]``.

One file, top to bottom: data -> vocabularies -> bucketed batches -> model -> the training loop (bf16 autocast
on CUDA, gradient clipping, per-epoch learning-rate decay, checkpoints every N steps, ``--resume``) ->
dev BLEU per epoch -> curves (PNG) and the final test BLEU (beam search) in ``OUT/metrics.json``.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from collections import defaultdict
from pathlib import Path

import torch

from seqcourse import get_device, set_seed
from seqcourse.progress import progress

from .configs import CONFIGS, Config, get_config
from .data import PAD, UNK, Vocab, bucket_batches, collate, detokenize, encode_pairs, load_corpus, pad, tokenize
from .decode import translate_ids
from .model import NMT, masked_loss


# ---------------------------------------------------------------------------------------------- data
def prepare_data(cfg: Config, data_path=None) -> dict:
    """Load the corpus, build the vocabularies on the training split, index the training pairs."""
    kwargs = {"src_lang": cfg.src_lang, "tgt_lang": cfg.tgt_lang} if cfg.corpus == "multi30k" else {}
    splits = load_corpus(cfg.corpus, data_path, **kwargs)
    train_pairs = splits["train"][: cfg.train_max] if cfg.train_max else splits["train"]
    src_tok = [tokenize(s, cfg.lowercase) for s, _ in train_pairs]
    tgt_tok = [tokenize(t, cfg.lowercase) for _, t in train_pairs]
    src_vocab = Vocab.build(src_tok, cfg.min_freq, cfg.max_vocab)
    tgt_vocab = Vocab.build(tgt_tok, cfg.min_freq, cfg.max_vocab)
    return {"src_vocab": src_vocab, "tgt_vocab": tgt_vocab,
            "train": encode_pairs(train_pairs, src_vocab, tgt_vocab, cfg.lowercase, cfg.max_len),
            "dev": splits["dev"][: cfg.dev_max],
            "test": splits["test"][: cfg.test_max] if cfg.test_max else splits["test"]}


def build_model(cfg: Config, src_vocab: Vocab, tgt_vocab: Vocab) -> NMT:
    return NMT(len(src_vocab), len(tgt_vocab), cfg.embed_size, cfg.hidden_size, cfg.dropout, cfg.att_scale)


# ---------------------------------------------------------------------------------------------- evaluation
@torch.no_grad()
def translate_sentences(model, sentences, src_vocab, tgt_vocab, lowercase=False, beam_size=1, alpha=1.0,
                        batch_size=64, device="cpu", precision="auto") -> list[str]:
    """Translate raw sentences (batched, sorted by length for little padding) into detokenised text."""
    model.eval()
    ids = [src_vocab.encode(tokenize(s, lowercase)) or [UNK] for s in sentences]   # an empty line is <unk>
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out = [""] * len(ids)
    for k in range(0, len(order), batch_size):
        chunk = order[k:k + batch_size]
        src = pad([ids[i] for i in chunk]).to(device)                        # (B, Tx)
        src_len = torch.tensor([len(ids[i]) for i in chunk])                # (B,)
        with autocast(device, precision):
            hyps = translate_ids(model, src, src_len, beam_size, alpha)
        for i, hyp in zip(chunk, hyps):
            out[i] = detokenize(tgt_vocab.decode(hyp))
    return out


def bleu(model, pairs, src_vocab, tgt_vocab, cfg: Config, beam_size=1, device="cpu"):
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
    hyps = dict(zip(sources, translate_sentences(model, sources, src_vocab, tgt_vocab, cfg.lowercase, beam_size,
                                                 cfg.alpha, device=device, precision=cfg.precision)))
    refs = [t.lower() if cfg.lowercase else t for _, t in pairs]
    single = sacrebleu.corpus_bleu([hyps[s] for s, _ in pairs], [refs]).score
    n = max(len(r) for r in refs_of.values())
    streams = [[refs_of[s][j] if j < len(refs_of[s]) else None for s in sources] for j in range(n)]
    multi = sacrebleu.corpus_bleu([hyps[s] for s in sources], streams).score
    return single, multi, hyps


@torch.no_grad()
def dev_loss(model, examples, batch_size, device, precision="auto") -> float:
    model.eval()
    total, count = 0.0, 0
    for idx in bucket_batches(examples, batch_size, shuffle=False):
        src, src_len, tgt = (x.to(device) for x in collate([examples[i] for i in idx]))
        with autocast(device, precision):
            logits = model(src, src_len, tgt[:, :-1])
        n = int((tgt[:, 1:] != PAD).sum())
        total += masked_loss(logits, tgt[:, 1:]).item() * n
        count += n
    return total / max(count, 1)


_BF16_WORKS: dict[str, bool] = {}


def bf16_works(device) -> bool:
    """Whether this model trains under bf16 autocast on ``device`` (probed once per device, CUDA only).

    The encoder's LSTM runs in cuDNN, whose RNNs take bf16 only from cuDNN 9.13 on (pytorch/pytorch#164411); an
    older stack may raise at the first batch. One training step and one decoding of a tiny model find out before
    training starts, and training then falls back to float32 with a warning instead of failing.
    """
    device = torch.device(device)
    if device.type != "cuda":
        return False
    key = str(device)
    if key not in _BF16_WORKS:
        try:
            _probe_bf16(device)
            _BF16_WORKS[key] = True
        except RuntimeError as exc:                                        # e.g. a cuDNN without bf16 RNNs
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
def save_checkpoint(path, model, optimizer, state: dict, cfg: Config, src_vocab: Vocab, tgt_vocab: Vocab):
    tmp = Path(str(path) + ".tmp")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict() if optimizer else None,
                "state": state, "config": cfg.to_dict(), "src_vocab": src_vocab.state_dict(),
                "tgt_vocab": tgt_vocab.state_dict(), "rng": torch.get_rng_state()}, tmp)
    tmp.replace(path)  # never leave a half-written checkpoint behind an interruption


def load_model(path, device="cpu"):
    """``(model, src_vocab, tgt_vocab, config)`` from a checkpoint written by :func:`train`."""
    ck = torch.load(path, map_location=device, weights_only=False)
    cfg = Config.from_dict({"att_scale": False, **ck["config"]})   # checkpoints from before att_scale: unscaled
    src_vocab, tgt_vocab = Vocab(ck["src_vocab"]), Vocab(ck["tgt_vocab"])
    model = build_model(cfg, src_vocab, tgt_vocab).to(device)
    model.load_state_dict(ck["model"])
    return model.eval(), src_vocab, tgt_vocab, cfg


# ---------------------------------------------------------------------------------------------- training
def train(cfg: Config, data_path=None, out_dir="runs/nmt", resume: bool = False, device=None,
          max_steps: int | None = None, verbose: bool = True) -> dict:
    """Train with ``cfg``; write ``checkpoint.pt`` (resumable), ``model.pt`` (best dev BLEU),
    ``metrics.json`` and ``curves.png`` into ``out_dir``; return the metrics.

    ``max_steps`` stops after that many optimisation steps in all, as an interruption would (tests use it).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    device = torch.device(device) if device else get_device()
    say = print if verbose else (lambda *a, **k: None)
    set_seed(cfg.seed)
    data = prepare_data(cfg, data_path)
    src_vocab, tgt_vocab, examples = data["src_vocab"], data["tgt_vocab"], data["train"]
    bf16 = uses_bf16(device, cfg.precision)
    say(f"{cfg.corpus}: {len(examples)} training pairs, {len(data['dev'])} dev, {len(data['test'])} test; "
        f"vocabularies {len(src_vocab)} / {len(tgt_vocab)}; device {device}{' (bf16 autocast)' if bf16 else ''}")
    dev_examples = encode_pairs(data["dev"], src_vocab, tgt_vocab, cfg.lowercase)
    model = build_model(cfg, src_vocab, tgt_vocab).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    state = {"step": 0, "epoch": 0, "batch": 0, "elapsed": 0.0, "best_bleu": -1.0, "train": [], "dev": []}
    ckpt = out / "checkpoint.pt"
    if resume and ckpt.exists():
        ck = torch.load(ckpt, map_location=device, weights_only=False)
        if ck["src_vocab"] != src_vocab.state_dict() or ck["tgt_vocab"] != tgt_vocab.state_dict():
            raise ValueError(f"{ckpt} was trained on other data or with another configuration")
        model.load_state_dict(ck["model"])
        optimizer.load_state_dict(ck["optimizer"])
        state = ck["state"]
        torch.set_rng_state(ck["rng"])
        say(f"resumed from {ckpt} at step {state['step']} (epoch {state['epoch'] + 1}, batch {state['batch']})")
    elif resume:
        say(f"nothing to resume in {out}; starting afresh")

    def save(path=ckpt):
        save_checkpoint(path, model, optimizer, state, cfg, src_vocab, tgt_vocab)

    def evaluate(epoch_float):
        """Dev loss and greedy dev BLEU; keeps the best model in model.pt."""
        dev_bleu, _, _ = bleu(model, data["dev"], src_vocab, tgt_vocab, cfg, beam_size=1, device=device)
        d_loss = dev_loss(model, dev_examples, cfg.batch_size, device, cfg.precision)
        state["dev"].append({"epoch": epoch_float, "step": state["step"], "seconds": elapsed(), "bleu": dev_bleu,
                             "loss": d_loss})
        say(f"epoch {epoch_float:.2f}: dev loss {d_loss:.3f}, dev BLEU (greedy) {dev_bleu:.2f}, "
            f"{elapsed() / 60:.1f} min")
        if dev_bleu > state["best_bleu"]:
            state["best_bleu"] = dev_bleu
            save(out / "model.pt")
        model.train()

    start = time.perf_counter() - state["elapsed"]       # training time only: evaluations are not counted
    elapsed = lambda: time.perf_counter() - start
    out_of_time = lambda: cfg.minutes is not None and elapsed() > 60 * cfg.minutes
    while state["epoch"] < cfg.epochs and not out_of_time():
        epoch = state["epoch"]
        for group in optimizer.param_groups:
            group["lr"] = cfg.lr * cfg.lr_decay ** epoch                   # learning-rate decay per epoch
        batches = bucket_batches(examples, cfg.batch_size, seed=cfg.seed + epoch)
        eval_at = {round(len(batches) * k / cfg.evals_per_epoch) for k in range(1, cfg.evals_per_epoch + 1)}
        model.train()
        bar = progress(total=len(batches), initial=state["batch"], desc=f"epoch {epoch + 1}/{cfg.epochs}")
        window_loss, window_tokens, window_start = 0.0, 0, time.perf_counter()
        for b in range(state["batch"], len(batches)):
            src, src_len, tgt = (x.to(device) for x in collate([examples[i] for i in batches[b]]))
            with autocast(device, cfg.precision):
                logits = model(src, src_len, tgt[:, :-1])                   # (B, Ty, V): teacher forcing
            loss = masked_loss(logits, tgt[:, 1:], cfg.label_smoothing)     # targets y_1 .. <eos>
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            optimizer.step()
            state["step"], state["batch"] = state["step"] + 1, b + 1
            n_tokens = int((tgt[:, 1:] != PAD).sum())
            window_loss, window_tokens = window_loss + loss.item() * n_tokens, window_tokens + n_tokens
            if state["step"] % cfg.log_every == 0:
                tok_s = window_tokens / max(time.perf_counter() - window_start, 1e-9)
                state["train"].append({"step": state["step"], "loss": window_loss / window_tokens,
                                       "seconds": elapsed(), "tokens_per_s": tok_s})
                bar.set_postfix(loss=f"{window_loss / window_tokens:.3f}", tok_s=f"{tok_s:,.0f}")
                window_loss, window_tokens, window_start = 0.0, 0, time.perf_counter()
            bar.update(1)
            state["elapsed"] = elapsed()
            if state["step"] % cfg.checkpoint_every == 0:
                save()
            if max_steps is not None and state["step"] >= max_steps:
                bar.close()
                save()                                                      # as if interrupted here
                return {"interrupted_at_step": state["step"]}
            if b + 1 in eval_at or out_of_time():
                paused = time.perf_counter()
                evaluate(epoch + (b + 1) / len(batches))
                start += time.perf_counter() - paused
                if out_of_time():
                    break
        bar.close()
        if state["batch"] >= len(batches):
            state["epoch"], state["batch"] = epoch + 1, 0
        state["elapsed"] = elapsed()
        save()

    # final test BLEU with the best model (beam search, and greedy for comparison)
    model, *_ = load_model(out / "model.pt", device)
    t0 = time.perf_counter()
    test_bleu, test_multi, hyps = bleu(model, data["test"], src_vocab, tgt_vocab, cfg, cfg.beam_size, device)
    beam_seconds = time.perf_counter() - t0
    test_greedy, _, _ = bleu(model, data["test"], src_vocab, tgt_vocab, cfg, 1, device)
    every = max(1, len(data["test"]) // 12)
    metrics = {
        "config": cfg.to_dict(), "device": str(device), "torch": torch.__version__,
        "bf16": bf16,
        "train_pairs": len(examples), "dev_pairs": len(data["dev"]), "test_pairs": len(data["test"]),
        "test_sources": len(hyps), "src_vocab": len(src_vocab), "tgt_vocab": len(tgt_vocab),
        "parameters": sum(p.numel() for p in model.parameters()),
        "steps": state["step"], "epochs": state["epoch"] + state["batch"] / max(1, len(batches)),
        "train_minutes": state["elapsed"] / 60,
        "tokens_per_s": _median([r["tokens_per_s"] for r in state["train"]]),
        "best_dev_bleu": state["best_bleu"], "test_bleu": test_bleu, "test_bleu_multi_ref": test_multi,
        "test_bleu_greedy": test_greedy, "test_beam_seconds": beam_seconds,
        "history": {"train": state["train"], "dev": state["dev"]},
        "samples": [{"source": s, "reference": t, "output": hyps[s]} for s, t in data["test"][::every][:12]],
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1, ensure_ascii=False))
    plot_history(metrics, out / "curves.png")
    say(f"test BLEU {test_bleu:.2f} (beam {cfg.beam_size}; greedy {test_greedy:.2f}; all references "
        f"{test_multi:.2f}) after {state['step']} steps, {state['elapsed'] / 60:.1f} min; written to {out}")
    return metrics


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
def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--config", default="laptop", choices=sorted(CONFIGS))
    p.add_argument("--data", help="fra.txt (Tatoeba) or the Multi30k folder; default: $SEQCOURSE_DATA or ../shared/data")
    p.add_argument("--out", default=None, help="output folder (default runs/nmt-CONFIG)")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pt")
    p.add_argument("--minutes", type=float, help="training time budget")
    p.add_argument("--epochs", type=int)
    p.add_argument("--batch-size", type=int)
    p.add_argument("--lr", type=float)
    p.add_argument("--corpus", choices=["tatoeba", "multi30k"])
    p.add_argument("--src-lang")
    p.add_argument("--tgt-lang")
    p.add_argument("--train-max", type=int)
    p.add_argument("--device", help="cuda, mps or cpu (default: the best available)")
    p.add_argument("--precision", choices=["auto", "bf16", "fp32"],
                   help="auto (default): bf16 autocast on CUDA where it works, else float32")
    p.add_argument("--seed", type=int)
    p.add_argument("--no-att-scale", action="store_true",
                   help="CS224N's unscaled attention energies (default: divided by sqrt(H), see chapter 9)")
    a = p.parse_args(argv)
    cfg = get_config(a.config, minutes=a.minutes, epochs=a.epochs, batch_size=a.batch_size, lr=a.lr,
                     corpus=a.corpus, src_lang=a.src_lang, tgt_lang=a.tgt_lang, train_max=a.train_max, seed=a.seed,
                     precision=a.precision, att_scale=False if a.no_att_scale else None)
    train(cfg, a.data, a.out or f"runs/nmt-{a.config}", resume=a.resume, device=a.device)


if __name__ == "__main__":
    try:
        main()
    except FileNotFoundError as exc:  # a missing corpus or checkpoint: say what to do, no traceback
        raise SystemExit(f"error: {exc}") from None
