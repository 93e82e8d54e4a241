"""Does dividing the capstone's attention energies by sqrt(H) matter? Train the same model with CS224N's
unscaled energies e = d^T W h and with e = d^T W h / sqrt(H), for the same few minutes, and compare.

    OMP_NUM_THREADS=1 python benchmarks/attention_scale.py --minutes 3 --seeds 0,1 > benchmarks/results/attention_scale.txt

For each seed and each form it reports the dev BLEU (greedy) during training, the test sacreBLEU (beam) on the
first --test-max test pairs, and two measures of where the attention goes on 200 dev sentences (teacher
forcing): the share of decoder steps whose largest weight falls on the LAST source token (the final
punctuation mark, in Tatoeba), and the mean largest weight (1.0: all the attention on one token).
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from seqcourse.nmt.configs import get_config  # noqa: E402
from seqcourse.nmt.data import SOS, UNK, load_corpus  # noqa: E402
from seqcourse.nmt.train import load_model, train  # noqa: E402


@torch.no_grad()
def attention_stats(model, src_tok, tgt_tok, pairs):
    """(share of steps attending most to the last source token, mean largest weight) under teacher forcing."""
    last, top, steps = 0, 0.0, 0
    for s, t in pairs:
        ids = src_tok.encode(s) or [UNK]
        tgt_in = [SOS] + tgt_tok.encode(t)
        _, alpha = model(torch.tensor([ids]), torch.tensor([len(ids)]), torch.tensor([tgt_in]),
                         return_attention=True)                                   # (1, Ty, Tx)
        a = alpha[0]
        last += int((a.argmax(-1) == len(ids) - 1).sum())
        top += float(a.max(-1).values.sum())
        steps += a.shape[0]
    return last / steps, top / steps


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default="laptop-word", help="laptop-word: the word-vocabulary model of the results")
    p.add_argument("--data", help="fra.txt (default: $SEQCOURSE_DATA or ../shared/data)")
    p.add_argument("--minutes", type=float, default=3.0)
    p.add_argument("--seeds", default="0,1")
    p.add_argument("--test-max", type=int, default=1000)
    a = p.parse_args(argv)
    print(f"# command: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '')} python "
          + " ".join([sys.argv[0]] + (argv if argv is not None else sys.argv[1:])))
    print(f"# date: {datetime.datetime.now().isoformat(timespec='minutes')}; torch {torch.__version__}, "
          f"{torch.get_num_threads()} thread(s), cpu")
    print(f"# config {a.config}, {a.minutes} training minutes per run (evaluations not counted)\n")
    print(f"{'seed':>4s}  {'energies':18s} {'dev BLEU during training (greedy)':48s} {'test BLEU':>9s} "
          f"{'argmax on last':>14s} {'mean max weight':>15s}")
    dev = None
    for seed in [int(x) for x in a.seeds.split(",")]:
        for scale in (False, True):
            cfg = get_config(a.config, minutes=a.minutes, evals_per_epoch=8, test_max=a.test_max, seed=seed,
                             att_scale=scale)
            out = tempfile.mkdtemp(prefix="attention-scale-")
            m = train(cfg, a.data, out, verbose=False, force=True)
            model, sv, tv, _ = load_model(Path(out) / "model.pt")
            if dev is None:
                dev = load_corpus("tatoeba", a.data)["dev"][:200]
            on_last, top = attention_stats(model, sv, tv, dev)
            curve = " ".join(f"{r['bleu']:.1f}" for r in m["history"]["dev"])
            name = "d^T W h / sqrt(H)" if scale else "d^T W h (CS224N)"
            print(f"{seed:4d}  {name:18s} {curve:48s} {m['test_bleu']:9.2f} {on_last:14.1%} {top:15.3f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
