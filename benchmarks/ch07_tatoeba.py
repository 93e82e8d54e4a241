"""Chapter 7's translator on real sentences: a small Tatoeba English-French subset.

The book's build has no corpus (CI runs on a clean clone), so chapter 7 trains on the course's toy grammar
and shows this script's saved results for real sentences. The subset is the one of PyTorch's
"NLP from scratch: translation with a sequence to sequence network and attention" tutorial: pairs whose
English side starts with "i am", "he is", "she is", "you are", "we are", "they are" (or their contracted
forms) and has fewer than 10 words, lower-cased. Splits by English sentence (no test source is seen in
training). The model is ``seqcourse.translator.Translator`` with masks and batches (the chapter's improved
version), trained with Adam on batches of 64.

    python benchmarks/ch07_tatoeba.py --data path/to/fra.txt      # or $SEQCOURSE_DATA / ../shared/data

Writes ``chapters/figures/ch07/tatoeba_metrics.json`` and ``chapters/figures/ch07/tatoeba_heatmaps.png``.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import sacrebleu  # noqa: E402
import torch  # noqa: E402

from seqcourse import set_seed  # noqa: E402
from seqcourse.nmt.data import find_tatoeba, normalize, read_pairs, split_by_source  # noqa: E402
from seqcourse.seq2seq import encode_pairs, train_seq2seq  # noqa: E402
from seqcourse.text import Vocab, pair_loader, word_tokenize  # noqa: E402
from seqcourse.translator import Translator, show_attention  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "chapters" / "figures" / "ch07"
PREFIXES = ("i am ", "i'm ", "he is ", "he's ", "she is ", "she's ", "you are ", "you're ", "we are ",
            "we're ", "they are ", "they're ")


def tokenize(text: str) -> list[str]:
    return word_tokenize(normalize(text))


def subset(pairs):
    """The tutorial's filter: short sentences starting with a pronoun and 'to be', lower-cased."""
    out = []
    for en, fr in pairs:
        en_t, fr_t = tokenize(en), tokenize(fr)
        text = " ".join(en_t).replace("’", "'") + " "
        if len(en_t) < 10 and len(fr_t) < 10 and text.startswith(PREFIXES):
            out.append((" ".join(en_t), " ".join(fr_t)))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="fra.txt (default: $SEQCOURSE_DATA or ../shared/data)")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    path = Path(args.data) if args.data else find_tatoeba()
    if path is None or not path.is_file():
        print("error: no Tatoeba fra.txt found; pass --data path/to/fra.txt", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    pairs = subset(read_pairs(path))
    splits = split_by_source(pairs, dev_frac=0.05, test_frac=0.05)
    train, test = splits["train"], splits["test"]
    src_vocab = Vocab.build([s.split() for s, _ in train], min_freq=2)
    tgt_vocab = Vocab.build([t.split() for _, t in train], min_freq=2)
    print(f"{len(pairs)} pairs: {len(train)} train, {len(test)} test; vocabularies "
          f"{len(src_vocab)} English, {len(tgt_vocab)} French words")

    set_seed(args.seed)
    model = Translator(src_vocab, tgt_vocab, emb_size=128, hidden_size=128, attn_size=128)
    loader = pair_loader(*encode_pairs(train, src_vocab, tgt_vocab, tokenize=str.split), batch_size=64,
                         seed=args.seed)
    history = train_seq2seq(model, loader, steps=args.steps, lr=2e-3, desc="tatoeba")

    start = time.perf_counter()
    results = model.translate([s for s, _ in test], max_len=12)
    hyps = [" ".join(w) for w, _ in results]
    bleu = sacrebleu.corpus_bleu(hyps, [[t for _, t in test]], tokenize="none", force=True).score
    exact = sum(h == t for h, (_, t) in zip(hyps, test)) / len(test)
    samples = [{"source": s, "reference": t, "output": h} for (s, t), h in list(zip(test, hyps))[:12]]

    picks = [s for s, _ in test if 6 <= len(s.split()) <= 8][:2]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    for ax, sentence in zip(axes, picks):
        words, weights = model.translate(sentence, max_len=12)
        show_attention(sentence, words, weights, ax=ax)
    fig.tight_layout()
    OUT.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT / "tatoeba_heatmaps.png", dpi=110)

    metrics = {
        "command": "python benchmarks/ch07_tatoeba.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "corpus": f"{path.name}, {len(pairs)} pairs after the filter",
        "train_pairs": len(train), "test_pairs": len(test),
        "src_vocab": len(src_vocab), "tgt_vocab": len(tgt_vocab),
        "steps": args.steps, "batch_size": 64, "train_seconds": round(history["seconds"], 1),
        "final_loss_mean_last_100": round(sum(history["loss"][-100:]) / 100, 3),
        "test_bleu": round(bleu, 1), "test_exact_match": round(exact, 3),
        "decode_seconds": round(time.perf_counter() - start, 1),
        "machine": f"{platform.processor() or platform.machine()}, 1 thread, torch {torch.__version__}",
        "heatmap_sentences": picks, "samples": samples,
    }
    (OUT / "tatoeba_metrics.json").write_text(json.dumps(metrics, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in metrics.items() if k != "samples"}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
