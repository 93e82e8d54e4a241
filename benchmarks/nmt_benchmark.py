"""Benchmark of the capstone translator (seqcourse.nmt): speed, test BLEU against training minutes, final quality.

    python benchmarks/nmt_benchmark.py --config laptop --threads 2 --data fra.txt          # CPU, 2 cores (issue 15)
    python benchmarks/nmt_benchmark.py --config gpu --minutes 10                  # the capstone target, one GPU
    python benchmarks/nmt_benchmark.py --config gpu-multi30k --minutes 10         # Multi30k de-en

It measures, in one run and on one device:

1. training throughput (target tokens per second) of the course's implementation: length-bucketed
   batches, packed encoder, batched decoder, bf16 autocast on CUDA;
2. the throughput of a straightforward implementation of the same model that, like the PyTorch
   "NLP from scratch: translation with a sequence to sequence network and attention" tutorial, trains on
   one sentence pair at a time (batch size 1, one optimiser step per pair) -- and the speed-up of 1. over 2.;
3. a training run with the configuration (its epochs, at most ``--minutes``): at every evaluation the dev
   BLEU (greedy) and the test sacreBLEU (beam search; cased, 13a; against one reference per pair and against
   all the references of a source), against training minutes; then the final test sacreBLEU of the model
   chosen on the dev set.

Timings depend on the machine and on what else runs on it: the script records the machine, the threads, the
process's CPU time next to the wall-clock time (on an idle machine with T threads, CPU time is close to T
times the wall-clock time; much less means other work took the cores) and the load average during training.

Targets: Tatoeba test sacreBLEU >= 34 (one reference per pair) within 30 training minutes on a 2-core CPU
(``--config laptop --threads 2``, issue 15); >= 35 within 10 minutes on one H100 (``--config gpu``); Multi30k
de-en above 28.3, the test BLEU that bentrevett/pytorch-seq2seq reports for its GRU + attention model
(``--config gpu-multi30k``).
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch

from seqcourse import set_seed
from seqcourse.nmt.configs import CONFIGS, get_config
from seqcourse.nmt.data import PAD, bucket_batches, collate
from seqcourse.nmt.model import masked_loss
from seqcourse.nmt.train import autocast, build_model, prepare_data, resolve_device, to_device, train, uses_bf16

# config: (what, BLEU goal, training minutes allowed, device type, at most this many CPU threads)
TARGETS = {"laptop": ("Tatoeba en-fr test sacreBLEU >= 34 (one reference per pair) within 30 minutes on a 2-core CPU",
                      34.0, 30.0, "cpu", 2),
           "gpu": ("Tatoeba en-fr test sacreBLEU >= 35 within 10 minutes on one H100", 35.0, 10.0, "cuda", None),
           "gpu-multi30k": ("Multi30k de-en test BLEU > 28.3 (bentrevett/pytorch-seq2seq, GRU + attention)", 28.3,
                            10.0, "cuda", None)}


class LoadSampler:
    """The machine's 1-minute load average, sampled every ``every`` seconds in a background thread."""

    def __init__(self, every: float = 15.0):
        self.every, self.samples, self._stop = every, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                self.samples.append(os.getloadavg()[0])
            except (AttributeError, OSError):
                return
            self._stop.wait(self.every)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def summary(self) -> str:
        if not self.samples:
            return "not available on this OS"
        xs = self.samples
        return (f"min {min(xs):.1f}, median {statistics.median(xs):.1f}, max {max(xs):.1f} "
                f"({len(xs)} samples, every {self.every:g} s; {os.cpu_count()} logical CPUs)")


def machine(device) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    text = (f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} logical CPUs, "
            f"torch {torch.__version__} with {torch.get_num_threads()} thread(s), device {device}")
    if device.type == "cuda":
        text += f" ({torch.cuda.get_device_name(device)})"
    return text


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def batched_throughput(model, examples, cfg, device, steps: int, warmup: int = 3) -> float:
    """Target tokens per second of the course's training step (bucketed batches)."""
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    batches = bucket_batches(examples, cfg.batch_size, seed=123)[: steps + warmup]
    model.train()
    tokens, start = 0, None
    for i, idx in enumerate(batches):
        if i == warmup:
            sync(device)
            start, tokens = time.perf_counter(), 0
        src, src_len, tgt = collate([examples[j] for j in idx])
        tokens += int((tgt[:, 1:] != PAD).sum())
        src, tgt = to_device(src, device), to_device(tgt, device)               # src_len stays on the CPU
        with autocast(device, cfg.precision):
            logits = model(src, src_len, tgt[:, :-1])
        loss = masked_loss(logits, tgt[:, 1:], cfg.label_smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        opt.step()
    sync(device)
    return tokens / (time.perf_counter() - start)


def naive_throughput(model, examples, cfg, device, pairs: int, warmup: int = 5) -> float:
    """Target tokens per second when training on one pair at a time, as the PyTorch tutorial does:
    encode the sentence, run the decoder step by step with batch size 1, sum the losses, step the optimiser."""
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    model.train()
    g = torch.Generator().manual_seed(0)
    order = torch.randperm(len(examples), generator=g)[: pairs + warmup].tolist()
    tokens, start = 0, None
    for i, k in enumerate(order):
        if i == warmup:
            sync(device)
            start, tokens = time.perf_counter(), 0
        ex = examples[k]
        src = torch.tensor([ex.src], device=device)                            # (1, Tx)
        tgt = torch.tensor(ex.tgt, device=device)                              # (Ty + 1,)
        opt.zero_grad(set_to_none=True)
        with autocast(device, cfg.precision):
            h, state = model.encode(src, torch.tensor([len(ex.src)]))          # (1, Tx, 2H)
            h_proj, mask = model.project_keys(h), torch.ones(1, len(ex.src), dtype=torch.bool, device=device)
            o = h.new_zeros(1, model.hidden_size)
            loss = 0.0
            for t in range(len(tgt) - 1):                                      # one target word at a time
                state, o, _ = model.step(model.tgt_embed(tgt[t:t + 1]), o, state, h, h_proj, mask)
                loss = loss + torch.nn.functional.cross_entropy(model.W_vocab(o).float(), tgt[t + 1:t + 2])
        (loss / (len(tgt) - 1)).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        opt.step()
        tokens += len(tgt) - 1
    sync(device)
    return tokens / (time.perf_counter() - start)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default="laptop", choices=sorted(CONFIGS))
    p.add_argument("--data", help="fra.txt or the Multi30k folder (default: $SEQCOURSE_DATA or ../shared/data)")
    p.add_argument("--minutes", type=float, default=None, help="training budget (default: the config's)")
    p.add_argument("--epochs", type=int, default=None, help="epochs (default: the config's)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads for PyTorch (default: all cores)")
    p.add_argument("--evals-per-epoch", type=int, default=None, help="dev (and test) evaluations per epoch")
    p.add_argument("--test-max", type=int, default=None, help="evaluate on the first N test pairs only")
    p.add_argument("--no-test-curve", action="store_true", help="test BLEU only at the end, not at every evaluation")
    p.add_argument("--throughput-steps", type=int, default=30, help="batched steps timed for throughput")
    p.add_argument("--naive-pairs", type=int, default=300, help="pairs timed for the one-at-a-time baseline")
    p.add_argument("--milestones", default="5,10,20,30,35", help="dev BLEU milestones")
    p.add_argument("--out", default=None, help="run folder (default: a temporary folder; an existing run is replaced)")
    p.add_argument("--device")
    p.add_argument("--verbose", action="store_true", help="print the training's log (each evaluation) to stderr")
    a = p.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    device = resolve_device(a.device)
    overrides = {"minutes": a.minutes, "epochs": a.epochs, "evals_per_epoch": a.evals_per_epoch,
                 "test_max": a.test_max}
    cfg = get_config(a.config, **overrides)
    if cfg.minutes is None:
        cfg.minutes = 10.0
    milestones = [float(m) for m in a.milestones.split(",") if m]

    print(f"# command: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '')} python "
          + " ".join(shlex.quote(x) for x in [sys.argv[0]] + (argv if argv is not None else sys.argv[1:])))
    print(f"# date: {datetime.datetime.now().isoformat(timespec='minutes')}")
    print(f"# machine: {machine(device)}")
    print(f"# load average at the start (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in _loadavg())}")
    print(f"# config {a.config}: {cfg.tokenizer} vocab={cfg.max_vocab} D={cfg.embed_size} H={cfg.hidden_size} "
          f"dropout={cfg.dropout} batch={cfg.batch_size} lr={cfg.lr} decay={cfg.lr_decay} "
          f"label_smoothing={cfg.label_smoothing} max_len={cfg.max_len} epochs={cfg.epochs} minutes={cfg.minutes} "
          f"beam={cfg.beam_size}{' lowercase' if cfg.lowercase else ''}")
    sys.stdout.flush()

    set_seed(cfg.seed)
    data = prepare_data(cfg, a.data)
    examples = data["train"]
    print(f"data: {cfg.corpus}, {len(examples)} training pairs ({data['train_pairs'] - len(examples)} longer than "
          f"max_len left out), vocabularies {len(data['src_tok'])} / {len(data['tgt_tok'])}")

    # 1-2. throughput, the course's batched training against one pair at a time
    set_seed(cfg.seed)
    fast = batched_throughput(build_model(cfg, data["src_tok"], data["tgt_tok"]).to(device), examples, cfg,
                              device, a.throughput_steps)
    set_seed(cfg.seed)
    slow = naive_throughput(build_model(cfg, data["src_tok"], data["tgt_tok"]).to(device), examples, cfg,
                            device, a.naive_pairs)
    print("\n## training throughput (target tokens per second)")
    label = f"batched (bucketing, packing, batch {cfg.batch_size}{', bf16' if uses_bf16(device, cfg.precision) else ''})"
    print(f"{label:58s}{fast:10,.0f}")
    print(f"{'one pair at a time (PyTorch-tutorial style)':58s}{slow:10,.0f}")
    print(f"{'speed-up':58s}{fast / slow:9.1f}x")
    sys.stdout.flush()

    # 3. test BLEU against training minutes, and the final quality
    out = Path(a.out) if a.out else Path(tempfile.mkdtemp(prefix="nmt-benchmark-"))
    log = (lambda *x, **k: print(*x, **{**k, "file": sys.stderr}, flush=True)) if a.verbose else None
    with LoadSampler() as load:
        m = train(cfg, a.data, out, device=device, verbose=a.verbose, force=True, test_curve=not a.no_test_curve,
                  log=log)
    busy = m["train_cpu_minutes"] / max(m["train_minutes"], 1e-9)
    print(f"\n## training run: {m['steps']} steps, {m['epochs']:.2f} epochs, {m['train_minutes']:.1f} training "
          f"minutes (evaluations not counted), median {m['tokens_per_s']:,.0f} target tokens/s")
    print(f"CPU time of the training: {m['train_cpu_minutes']:.1f} min, {busy:.2f} cores busy on average with "
          f"{m['threads']} thread(s) (on an idle machine close to the thread count)")
    print(f"machine load during training (1-minute load average): {load.summary()}")
    curve = any("test_bleu" in r for r in m["history"]["dev"])
    print(f"dev BLEU (greedy){' and test sacreBLEU (beam ' + str(cfg.beam_size) + ')' if curve else ''} "
          "during training, against training minutes:")
    print(f"  {'epoch':>5s}  {'minutes':>7s}  {'CPU min':>7s}  {'dev loss':>8s}  {'dev BLEU':>8s}"
          + (f"  {'test BLEU':>9s}  {'all refs':>8s}" if curve else ""))
    for r in m["history"]["dev"]:
        print(f"  {r['epoch']:5.2f}  {r['seconds'] / 60:7.2f}  {r.get('cpu_seconds', float('nan')) / 60:7.2f}  "
              f"{r['loss']:8.3f}  {r['bleu']:8.2f}"
              + (f"  {r['test_bleu']:9.2f}  {r['test_bleu_multi_ref']:8.2f}" if "test_bleu" in r else ""))
    print("minutes of training until the dev BLEU first reaches:")
    for ms in milestones:
        hit = next((r for r in m["history"]["dev"] if r["bleu"] >= ms), None)
        print(f"  BLEU {ms:4g}: " + (f"{hit['seconds'] / 60:6.2f} min" if hit else "not reached"))
    print(f"\n## test ({m['test_pairs']} pairs, {m['test_sources']} distinct sources), the model with the best dev BLEU")
    print(f"sacreBLEU (cased, 13a), beam {cfg.beam_size}: one reference per pair {m['test_bleu']:.2f}, all references "
          f"of a source {m['test_bleu_multi_ref']:.2f}; greedy: {m['test_bleu_greedy']:.2f} / "
          f"{m['test_bleu_greedy_multi_ref']:.2f}")
    print(f"beam-search decoding of the test set: {m['test_beam_seconds']:.0f} s")
    if a.config in TARGETS:
        text, goal, minutes, kind, max_threads = TARGETS[a.config]
        where = device.type == kind and (max_threads is None or torch.get_num_threads() <= max_threads)
        met = m["test_bleu"] >= goal and m["train_minutes"] <= minutes and where
        print(f"target: {text}: {'MET' if met else 'NOT MET'} (test BLEU {m['test_bleu']:.2f} after "
              f"{m['train_minutes']:.1f} training minutes on {device} with {torch.get_num_threads()} thread(s))")
    print(f"run folder: {out}")


def _loadavg():
    try:
        return os.getloadavg()
    except (AttributeError, OSError):
        return (float("nan"),) * 3


if __name__ == "__main__":
    main()
