"""The Tatoeba corpus as chapter 9 describes it: pairs in the file, the splits by source sentence, sentence
lengths. Seconds on a laptop; chapter 9 reads the result file (the book's build has no corpus).

    python benchmarks/tatoeba_splits.py --data ../shared/data/tatoeba-fra-eng-2017/fra.txt \\
        > benchmarks/results/tatoeba_splits.txt

Every line after the comments is ``name: value``; chapter 9 reads them by name.
"""
from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from seqcourse.nmt.data import read_pairs, split_by_source  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="fra.txt (English<TAB>French per line)")
    a = p.parse_args(argv)
    pairs = read_pairs(a.data)
    splits = split_by_source(pairs)  # the defaults that load_tatoeba and the training script use
    english_words = [len(en.split()) for en, _ in pairs]
    print(f"# command: python benchmarks/tatoeba_splits.py --data {Path(a.data).name}")
    print(f"# date: {datetime.datetime.now().isoformat(timespec='minutes')}")
    print("# split_by_source with its defaults (dev_frac 0.02, test_frac 0.03, by a hash of the lower-cased"
          " English sentence); words: whitespace-separated, punctuation attached")
    print(f"pairs: {len(pairs)}")
    for name in ("train", "dev", "test"):
        print(f"{name}_pairs: {len(splits[name])}")
        print(f"{name}_sources: {len({en.lower() for en, _ in splits[name]})}")
    print(f"sources: {len({en.lower() for en, _ in pairs})}")
    print(f"english_words_mean: {sum(english_words) / len(english_words):.2f}")
    print(f"english_words_max: {max(english_words)}")


if __name__ == "__main__":
    main()
