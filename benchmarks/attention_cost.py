"""What attention costs on a CPU: time and memory against length, and the two evaluation orders of
reduced-rank attention (chapter 8).

    OMP_NUM_THREADS=1 python benchmarks/attention_cost.py > benchmarks/results/attention_cost.txt

Table 1 times scaled dot-product attention (energies, masked softmax, contexts) for growing
T_x = T_y = T: the fastest of --repeats calls, the multiply-adds counted by PyTorch's FlopCounterMode, and
the peak memory of the tensors the call creates (seqcourse.cost.peak_memory). Table 2 computes the
energies of reduced-rank attention inside a decoding loop, with the keys V h_s projected once per sentence
or again at every target step, and checks the multiply-adds against the formulas of chapter 8.
"""
from __future__ import annotations

import argparse
import glob
import math
import os
import platform
import shlex
import sys
import time

import torch

from seqcourse.cost import count_macs, peak_memory, time_call


def attend(energies, values, mask):
    energies = energies.masked_fill(~mask[:, None, :], float("-inf"))   # (B, Ty, Tx)
    weights = torch.softmax(energies, dim=-1)                           # (B, Ty, Tx)
    return weights, weights @ values                                    # (B, Ty, Tx), (B, Ty, Dh)


def scaled_dot_attention(dec, enc, mask):
    energies = dec @ enc.transpose(1, 2) / math.sqrt(dec.shape[-1])     # (B, Ty, Tx)
    return attend(energies, enc, mask)


def energies_project_once(dec, enc, U, V):
    keys = enc @ V.T                                                    # (B, Tx, R): once per sentence
    out = []
    for t in range(dec.shape[1]):                                       # the decoding loop
        query = dec[:, t] @ U.T                                         # (B, R)
        out.append((keys @ query[:, :, None])[..., 0])                  # (B, Tx)
    return torch.stack(out, dim=1)                                      # (B, Ty, Tx)


def energies_project_per_step(dec, enc, U, V):
    out = []
    for t in range(dec.shape[1]):
        query = dec[:, t] @ U.T                                         # (B, R)
        keys = enc @ V.T                                                # (B, Tx, R): at every step
        out.append((keys @ query[:, :, None])[..., 0])                  # (B, Tx)
    return torch.stack(out, dim=1)                                      # (B, Ty, Tx)


def macs_formula(B, Tx, Ty, Dd, Dh, R):
    once = B * (Tx * R * Dh + Ty * R * Dd + Ty * Tx * R)
    per_step = B * Ty * (Tx * R * Dh + R * Dd + Tx * R)
    return once, per_step


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        if names:
            cpu = f"{names[0]} ({len(names)} logical CPUs)"
    except OSError:
        pass
    caches = []
    for index in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        try:
            level = open(f"{index}/level").read().strip()
            kind = open(f"{index}/type").read().strip()
            size = open(f"{index}/size").read().strip()
        except OSError:
            continue
        if kind != "Instruction":
            caches.append(f"L{level} {size}")
    if caches:
        cpu += ", caches " + " ".join(caches)
    load = ""
    if hasattr(os, "getloadavg"):
        load = ", load average {:.1f} {:.1f} {:.1f} at the start".format(*os.getloadavg())
    return f"{platform.system()} {platform.release()}, {cpu}{load}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch", type=int, default=8, help="batch size B of table 1")
    p.add_argument("--dim", type=int, default=64, help="state size D of table 1")
    p.add_argument("--lengths", default="64,128,256,512,1024,2048", help="T_x = T_y values of table 1")
    p.add_argument("--state", type=int, default=512, help="D_d = D_h of table 2")
    p.add_argument("--rank", type=int, default=64, help="R of table 2")
    p.add_argument("--decode-lengths", default="16,32,64,128", help="T_x = T_y values of table 2 (B = 1)")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    print(f"# command: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')} "
          f"python {shlex.join(['benchmarks/attention_cost.py', *sys.argv[1:]])}")
    print(f"# date:    {time.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"# machine: {machine()}")
    print(f"# torch {torch.__version__}, Python {platform.python_version()}, {torch.get_num_threads()} thread(s); "
          f"times are the fastest of {args.repeats} calls")
    print()

    B, D = args.batch, args.dim
    print(f"Table 1. Scaled dot-product attention, T_x = T_y = T, B = {B}, D = {D}, float32")
    header = (f"{'T':>6} {'multiply-adds':>15} {'time ms':>10} {'ns / (B T^2)':>13} {'x prev':>7} "
              f"{'peak MiB':>9} {'(B,T,T) MiB':>12}")
    print(header)
    print("-" * len(header))
    prev = None
    for T in [int(x) for x in args.lengths.split(",")]:
        dec, enc = torch.randn(B, T, D), torch.randn(B, T, D)             # (B, T, D), (B, T, D)
        mask = torch.ones(B, T, dtype=torch.bool)                         # (B, T)
        macs = count_macs(scaled_dot_attention, dec, enc, mask)
        seconds = time_call(scaled_dot_attention, dec, enc, mask, repeats=args.repeats)
        peak = peak_memory(scaled_dot_attention, dec, enc, mask)
        ratio = f"{seconds / prev:7.1f}" if prev else f"{'':>7}"
        print(f"{T:6d} {macs:15,d} {1e3 * seconds:10.3f} {1e9 * seconds / (B * T * T):13.2f} {ratio} "
              f"{peak / 2**20:9.1f} {4 * B * T * T / 2**20:12.1f}")
        prev = seconds
    print("multiply-adds = 2 B T^2 D (energies and contexts); peak = 3 (B, T, T) matrices (energies, masked")
    print("energies, weights) + the (B, T, D) contexts. Doubling T should multiply time and memory by 4")
    print("(ns / (B T^2) constant); the time jumps where the (B, T, T) matrices stop fitting in the caches.")
    print()

    Dd = Dh = args.state
    R = args.rank
    print(f"Table 2. Reduced-rank energies in a decoding loop, B = 1, D_d = D_h = {Dd}, R = {R}: "
          "keys V h_s projected once per sentence or at every target step")
    header = (f"{'T':>6} {'MACs once':>13} {'MACs per step':>15} {'ratio':>6} {'ms once':>9} "
              f"{'ms per step':>12} {'ratio':>6} {'formulas':>9}")
    print(header)
    print("-" * len(header))
    for T in [int(x) for x in args.decode_lengths.split(",")]:
        dec, enc = torch.randn(1, T, Dd), torch.randn(1, T, Dh)           # (1, Ty, Dd), (1, Tx, Dh)
        U, V = torch.randn(R, Dd) / Dd**0.5, torch.randn(R, Dh) / Dh**0.5  # (R, Dd), (R, Dh)
        a, b = energies_project_once(dec, enc, U, V), energies_project_per_step(dec, enc, U, V)
        assert torch.allclose(a, b, atol=1e-4), "the two orders must give the same energies"
        m_once = count_macs(energies_project_once, dec, enc, U, V)
        m_step = count_macs(energies_project_per_step, dec, enc, U, V)
        ok = (m_once, m_step) == macs_formula(1, T, T, Dd, Dh, R)
        t_once = time_call(energies_project_once, dec, enc, U, V, repeats=args.repeats)
        t_step = time_call(energies_project_per_step, dec, enc, U, V, repeats=args.repeats)
        print(f"{T:6d} {m_once:13,d} {m_step:15,d} {m_step / m_once:6.1f} {1e3 * t_once:9.3f} "
              f"{1e3 * t_step:12.3f} {t_step / t_once:6.1f} {'match' if ok else 'DIFFER':>9}")
    print("MACs once = T_x R D_h + T_y R D_d + T_y T_x R;  per step = T_y (T_x R D_h + R D_d + T_x R).")


if __name__ == "__main__":
    main()
