"""Benchmark of the capstone translator (seqcourse.nmt): speed, time to quality, final quality.

    python benchmarks/nmt_benchmark.py --config gpu --minutes 10                  # the capstone target, one GPU
    python benchmarks/nmt_benchmark.py --config gpu-multi30k --minutes 10         # Multi30k de-en
    OMP_NUM_THREADS=1 python benchmarks/nmt_benchmark.py --config laptop --minutes 3 --test-max 1000   # CPU

It measures, in one run and on one device:

1. training throughput (target tokens per second) of the course's implementation: length-bucketed
   batches, packed encoder, batched decoder, bf16 autocast on CUDA;
2. the throughput of a straightforward implementation of the same model that, like the PyTorch
   "NLP from scratch: translation with a sequence to sequence network and attention" tutorial, trains on
   one sentence pair at a time (batch size 1, one optimiser step per pair) -- and the speed-up of 1. over 2.;
3. a training run of ``--minutes`` with the configuration: training minutes until the dev BLEU (greedy,
   sacreBLEU) first reaches each milestone, and the final test sacreBLEU (beam search).

Targets (issue "Capstone: a GPU-trained English-to-French translator"): test sacreBLEU >= 35 on Tatoeba within
10 minutes on one H100 (``--config gpu``); Multi30k de-en above 28.3, the test BLEU that
bentrevett/pytorch-seq2seq reports for its GRU + attention model (``--config gpu-multi30k``).
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import torch

from seqcourse import get_device, set_seed
from seqcourse.nmt.configs import CONFIGS, get_config
from seqcourse.nmt.data import PAD, bucket_batches, collate
from seqcourse.nmt.model import masked_loss
from seqcourse.nmt.train import autocast, build_model, prepare_data, train, uses_bf16

TARGETS = {"gpu": ("Tatoeba en-fr test sacreBLEU >= 35 within 10 minutes on one H100", 35.0),
           "gpu-multi30k": ("Multi30k de-en test BLEU > 28.3 (bentrevett/pytorch-seq2seq, GRU + attention)", 28.3)}


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
        src, src_len, tgt = (x.to(device) for x in collate([examples[j] for j in idx]))
        with autocast(device, cfg.precision):
            logits = model(src, src_len, tgt[:, :-1])
        loss = masked_loss(logits, tgt[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        opt.step()
        tokens += int((tgt[:, 1:] != PAD).sum())
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
            h, state = model.encode(src, torch.tensor([len(ex.src)]))         # (1, Tx, 2H)
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
    p.add_argument("--evals-per-epoch", type=int, default=None, help="dev BLEU evaluations per epoch")
    p.add_argument("--test-max", type=int, default=None, help="evaluate on the first N test pairs only")
    p.add_argument("--throughput-steps", type=int, default=30, help="batched steps timed for throughput")
    p.add_argument("--naive-pairs", type=int, default=300, help="pairs timed for the one-at-a-time baseline")
    p.add_argument("--milestones", default="5,10,20,30,35", help="dev BLEU milestones")
    p.add_argument("--out", default=None, help="run folder (default: a temporary folder)")
    p.add_argument("--device")
    a = p.parse_args(argv)
    device = torch.device(a.device) if a.device else get_device()
    overrides = {"minutes": a.minutes, "evals_per_epoch": a.evals_per_epoch, "test_max": a.test_max}
    cfg = get_config(a.config, **overrides)
    if cfg.minutes is None:
        cfg.minutes = 10.0
    milestones = [float(m) for m in a.milestones.split(",") if m]

    print(f"# command: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '')} python "
          + " ".join(shlex.quote(x) for x in [sys.argv[0]] + (argv if argv is not None else sys.argv[1:])))
    print(f"# date: {datetime.datetime.now().isoformat(timespec='minutes')}")
    print(f"# machine: {machine(device)}")
    print(f"# config {a.config}: D={cfg.embed_size} H={cfg.hidden_size} batch={cfg.batch_size} "
          f"max_vocab={cfg.max_vocab} max_len={cfg.max_len} minutes={cfg.minutes} beam={cfg.beam_size}"
          f"{' lowercase' if cfg.lowercase else ''}")
    sys.stdout.flush()

    set_seed(cfg.seed)
    data = prepare_data(cfg, a.data)
    examples = data["train"]
    print(f"data: {cfg.corpus}, {len(examples)} training pairs, vocabularies {len(data['src_vocab'])} / "
          f"{len(data['tgt_vocab'])}")

    # 1-2. throughput, the course's batched training against one pair at a time
    set_seed(cfg.seed)
    fast = batched_throughput(build_model(cfg, data["src_vocab"], data["tgt_vocab"]).to(device), examples, cfg,
                              device, a.throughput_steps)
    set_seed(cfg.seed)
    slow = naive_throughput(build_model(cfg, data["src_vocab"], data["tgt_vocab"]).to(device), examples, cfg,
                            device, a.naive_pairs)
    print("\n## training throughput (target tokens per second)")
    label = f"batched (bucketing, packing, batch {cfg.batch_size}{', bf16' if uses_bf16(device, cfg.precision) else ''})"
    print(f"{label:58s}{fast:10,.0f}")
    print(f"{'one pair at a time (PyTorch-tutorial style)':58s}{slow:10,.0f}")
    print(f"{'speed-up':58s}{fast / slow:9.1f}x")
    sys.stdout.flush()

    # 3. time to quality and final quality
    out = Path(a.out) if a.out else Path(tempfile.mkdtemp(prefix="nmt-benchmark-"))
    m = train(cfg, a.data, out, device=device, verbose=False)
    print(f"\n## training run: {m['steps']} steps, {m['epochs']:.2f} epochs, {m['train_minutes']:.1f} training "
          f"minutes (evaluations not counted), median {m['tokens_per_s']:,.0f} target tokens/s")
    print("dev BLEU (greedy, sacreBLEU) during training:")
    for r in m["history"]["dev"]:
        print(f"  epoch {r['epoch']:5.2f}  {r['seconds'] / 60:6.2f} min  dev loss {r['loss']:.3f}  "
              f"dev BLEU {r['bleu']:5.2f}")
    print("minutes of training until the dev BLEU first reaches:")
    for ms in milestones:
        hit = next((r for r in m["history"]["dev"] if r["bleu"] >= ms), None)
        print(f"  BLEU {ms:4g}: " + (f"{hit['seconds'] / 60:6.2f} min" if hit else "not reached"))
    print(f"\n## test ({m['test_pairs']} pairs, {m['test_sources']} distinct sources)")
    print(f"sacreBLEU, beam {cfg.beam_size}: {m['test_bleu']:.2f}   greedy: {m['test_bleu_greedy']:.2f}   "
          f"beam, all references of a source together: {m['test_bleu_multi_ref']:.2f}")
    print(f"beam-search decoding of the test set: {m['test_beam_seconds']:.0f} s")
    if a.config in TARGETS:
        text, goal = TARGETS[a.config]
        met = m["test_bleu"] >= goal and (device.type == "cuda")
        print(f"target: {text}: {'MET' if met else 'NOT MET'} (test BLEU {m['test_bleu']:.2f}, "
              f"{m['train_minutes']:.1f} training minutes on {device})")
    else:
        print("targets: the GPU targets (Tatoeba test sacreBLEU >= 35 within 10 minutes on one H100; Multi30k "
              "de-en above 28.3) apply to --config gpu and --config gpu-multi30k on a GPU")
    print(f"run folder: {out}")


if __name__ == "__main__":
    main()
