"""Which subword library for the capstone, and what the word vocabulary costs: measured on Tatoeba's training split.

    OMP_NUM_THREADS=1 RAYON_NUM_THREADS=1 python benchmarks/subword_choice.py --data fra.txt > benchmarks/results/subword_choice.txt

1. The word vocabulary of ``laptop-word`` (8,000 words a language, chapter 6's Vocab): how many test tokens and
   test sentences have a word it does not know (each becomes ``<unk>``).
2. Two maintained libraries that learn subwords, each with two algorithms, 8,000 pieces a language:
   sentencepiece (unigram, BPE) and Hugging Face ``tokenizers`` (BPE, unigram; with a Metaspace pre-tokenizer so
   that spaces are kept the same way). For each: seconds to learn the pieces (one thread), seconds to encode the
   training split, pieces per sentence (the decoder's steps: cost), the share of test sentences that decode back to
   exactly their text, and ``<unk>`` in the test encodings. ``tokenizers`` is optional (not a course dependency):
   without it, its rows say so.
3. French typography in the references (the whole file, before normalisation): how often ``? ! : ;`` follow a
   space (an ASCII space, U+00A0, U+202F or U+2009) rather than a letter or digit.
"""
from __future__ import annotations

import argparse
import datetime
import io
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from seqcourse.nmt.data import SPECIALS, UNK, Vocab, find_tatoeba, load_tatoeba, tokenize  # noqa: E402

SIZE = 8000


def cpu(f):
    t = time.process_time()
    out = f()
    return out, time.process_time() - t


def sentencepiece_rows(train, test, kind):
    import sentencepiece as spm

    def learn():
        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(train), model_writer=buf, vocab_size=SIZE, model_type=kind,
            character_coverage=1.0, byte_fallback=True, pad_id=0, bos_id=1, eos_id=2, unk_id=3,
            hard_vocab_limit=False, normalization_rule_name="identity", num_threads=1, minloglevel=2)
        return spm.SentencePieceProcessor(model_proto=buf.getvalue())

    sp, learn_s = cpu(learn)
    enc, enc_s = cpu(lambda: sp.encode(train))
    tenc = sp.encode(test)
    exact = sum(sp.decode(e) == t for e, t in zip(tenc, test)) / len(test)
    return learn_s, enc_s, sum(map(len, enc)) / len(enc), exact, sum(e.count(UNK) for e in tenc)


def hf_rows(train, test, kind):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    def learn():
        if kind == "bpe":
            tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
            trainer = trainers.BpeTrainer(vocab_size=SIZE, special_tokens=SPECIALS, show_progress=False,
                                          initial_alphabet=[f"<0x{i:02X}>" for i in range(256)])
        else:
            tok = Tokenizer(models.Unigram())
            trainer = trainers.UnigramTrainer(vocab_size=SIZE, special_tokens=SPECIALS, unk_token="<unk>",
                                              show_progress=False)
        tok.pre_tokenizer, tok.decoder = pre_tokenizers.Metaspace(), decoders.Metaspace()
        tok.train_from_iterator(train, trainer)
        return tok

    tok, learn_s = cpu(learn)
    enc, enc_s = cpu(lambda: [e.ids for e in tok.encode_batch(train)])
    tenc = [e.ids for e in tok.encode_batch(test)]
    exact = sum(tok.decode(e) == t for e, t in zip(tenc, test)) / len(test)
    return learn_s, enc_s, sum(map(len, enc)) / len(enc), exact, sum(e.count(UNK) for e in tenc)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", help="fra.txt (default: $SEQCOURSE_DATA or ../shared/data)")
    a = p.parse_args(argv)
    print(f"# command: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '')} "
          f"RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS', '')} python "
          + " ".join([sys.argv[0]] + (argv if argv is not None else sys.argv[1:])))
    versions = []
    for name in ("sentencepiece", "tokenizers"):
        try:
            versions.append(f"{name} {__import__(name).__version__}")
        except ImportError:
            versions.append(f"{name} not installed")
    print(f"# date: {datetime.datetime.now().isoformat(timespec='minutes')}; {', '.join(versions)}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (times below are CPU seconds)")
    splits = load_tatoeba(a.data)
    train, test = splits["train"], splits["test"]
    print(f"# Tatoeba: {len(train)} training pairs, {len(test)} test pairs\n")

    print(f"## 1. the word vocabulary (at most {SIZE} words a language, seen at least twice in training)")
    for side, lang in ((0, "English"), (1, "French")):
        v = Vocab.build([tokenize(p[side]) for p in train], 2, SIZE)
        toks = [tokenize(p[side]) for p in test]
        unk = sum(t not in v.stoi for ts in toks for t in ts)
        n = sum(map(len, toks))
        sent = sum(any(t not in v.stoi for t in ts) for ts in toks)
        print(f"{lang:8s} {len(v):5d} words: {unk / n:6.2%} of the test tokens and {sent / len(toks):6.1%} of the "
              f"test sentences are (have) <unk>; {n / len(toks):.2f} words a sentence")

    print(f"\n## 2. subword libraries, {SIZE} pieces a language")
    print(f"{'':8s} {'library and algorithm':28s} {'learn s':>8s} {'encode s':>9s} {'pieces/sent':>11s} "
          f"{'exact decode':>12s} {'<unk>':>6s}")
    for side, lang in ((0, "English"), (1, "French")):
        tr, te = [p[side] for p in train], [p[side] for p in test]
        for name, fn, kind in [("sentencepiece unigram", sentencepiece_rows, "unigram"),
                               ("sentencepiece BPE", sentencepiece_rows, "bpe"),
                               ("HF tokenizers BPE", hf_rows, "bpe"),
                               ("HF tokenizers unigram", hf_rows, "unigram")]:
            try:
                learn_s, enc_s, per, exact, unk = fn(tr, te, kind)
            except ImportError as exc:
                print(f"{lang:8s} {name:28s} not measured ({exc.name} not installed)")
                continue
            print(f"{lang:8s} {name:28s} {learn_s:8.1f} {enc_s:9.2f} {per:11.2f} {exact:12.2%} {unk:6d}")
        sys.stdout.flush()

    print("\n## 3. French references: what comes before ? ! : ; (the whole file, as written)")
    path = a.data or find_tatoeba()
    before = {mark: Counter() for mark in "?!:;"}
    with open(path, encoding="utf-8") as f:
        for line in f:
            fr = line.rstrip("\n").split("\t")[1]
            for m in re.finditer(r"(.)([?!:;])", fr):
                prev = m.group(1)
                kind = "space" if prev in " \u00a0\u202f\u2009" else "letter or digit" if prev.isalnum() else "other"
                before[m.group(2)][kind] += 1
    for mark, c in before.items():
        n = sum(c.values())
        print(f"{mark}  {n:6d} times: after a space {c['space'] / n:6.1%}, right after a letter or digit "
              f"{c['letter or digit'] / n:5.1%}, after something else {c['other'] / n:5.1%}")


if __name__ == "__main__":
    main()
