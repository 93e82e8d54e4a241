"""Turn a capstone training run into the figures and numbers that chapter 9 shows.

    python benchmarks/capstone_figures.py RUN_DIR NAME --command "the command that trained it" \
        --machine "one NVIDIA H100 80GB" [--sentence "I don't like this book."]

RUN_DIR is the output folder of ``python -m seqcourse.nmt.train`` (or of ``benchmarks/nmt_benchmark.py --out``):
it holds ``metrics.json``, ``curves.png`` and ``model.pt``. This writes, into ``chapters/figures/ch09/``:

- ``NAME_metrics.json``: the run's metrics, plus the command, the machine and the heatmap's sentence;
- ``NAME_curves.png``: the training curves (copied);
- ``NAME_heatmap.png``: the attention of the model on one sentence (``seqcourse.nmt.translate``);
- ``NAME_LANG.model``: the run's sentencepiece models, one a language (about 70 KB each for 4,000 pieces), for the chapter's
  subword examples.

The chapter reads these files (it does not train anything when the book is built).
"""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

FIGURES = Path(__file__).resolve().parent.parent / "chapters" / "figures" / "ch09"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("name", help="file prefix, e.g. tatoeba_gpu or tatoeba_laptop")
    p.add_argument("--command", required=True, help="the command that produced the run, as the chapter prints it")
    p.add_argument("--machine", required=True, help="the machine, in words")
    p.add_argument("--sentence", default="I don't like this book.", help="the sentence of the heatmap")
    p.add_argument("--out", type=Path, default=FIGURES, help="destination folder (default: %(default)s)")
    p.add_argument("--device", default="cpu")
    a = p.parse_args(argv)

    from seqcourse.nmt.data import SubwordTokenizer
    from seqcourse.nmt.train import load_model
    from seqcourse.nmt.translate import save_heatmap

    missing = [f for f in ("metrics.json", "curves.png", "model.pt") if not (a.run_dir / f).exists()]
    if missing:
        raise SystemExit(f"error: {a.run_dir} lacks {', '.join(missing)}: is it a finished training run?")
    a.out.mkdir(parents=True, exist_ok=True)
    m = json.loads((a.run_dir / "metrics.json").read_text())
    m.update(command=a.command, machine=a.machine, heatmap_sentence=a.sentence)
    (a.out / f"{a.name}_metrics.json").write_text(json.dumps(m, indent=1, ensure_ascii=False) + "\n")
    shutil.copyfile(a.run_dir / "curves.png", a.out / f"{a.name}_curves.png")
    save_heatmap(a.sentence, a.run_dir / "model.pt", a.out / f"{a.name}_heatmap.png", device=a.device)
    written = [f"{a.name}_metrics.json", f"{a.name}_curves.png", f"{a.name}_heatmap.png"]
    _, src_tok, tgt_tok, cfg = load_model(a.run_dir / "model.pt")
    for tok, lang in ((src_tok, cfg.src_lang), (tgt_tok, cfg.tgt_lang)):
        if isinstance(tok, SubwordTokenizer):
            (a.out / f"{a.name}_{lang}.model").write_bytes(tok.model)
            written.append(f"{a.name}_{lang}.model")
    print(f"wrote {', '.join(written)} into {a.out}")


if __name__ == "__main__":
    main()
