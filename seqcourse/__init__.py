"""Shared code for the course "Sequence models, from RNNs to attention, in PyTorch".

Chapters, exercise notebooks and the capstone import from here instead of copying code:

- :mod:`seqcourse.checks`   -- value checks with readable failure messages (used by visible tests)
- :mod:`seqcourse.data`     -- synthetic tasks that need no download
- :mod:`seqcourse.varlen`   -- variable-length token tasks (tagging, sentence labels) and padding
- :mod:`seqcourse.text`     -- tokenisation, vocabularies, padding, length bucketing (no torchtext)
- :mod:`seqcourse.dates`    -- the date-normalisation task (babel locale data, no download)
- :mod:`seqcourse.seq2seq`  -- encoder-decoder training, greedy decoding, accuracy by length
- :mod:`seqcourse.attention` -- additive attention with masks (chapter 7)
- :mod:`seqcourse.translator` -- chapter 7's LSTM attention translator (LSTMCell, EncoderRNN, Attention,
  AttnDecoderRNN, Translator, show_attention)
- :mod:`seqcourse.datelab`  -- deeplearning.ai's date-translation lab model, in PyTorch (chapter 7)
- :mod:`seqcourse.nmt`      -- the capstone translator: data, model, beam search, train and translate commands
- :mod:`seqcourse.cost`     -- timing, peak memory and multiply-add counts for benchmarks
- :mod:`seqcourse.plot`     -- figures: configuration diagrams, curves, heatmaps
- :mod:`seqcourse.progress` -- progress bars that stay quiet in non-interactive builds
"""
from __future__ import annotations

import os
import random

__version__ = "0.1.0"

__all__ = ["set_seed", "get_device", "__version__"]


def set_seed(seed: int = 0) -> None:
    """Seed Python, NumPy and PyTorch (CPU and CUDA) so that a run can be repeated."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device


def get_device(prefer: str | None = None):
    """The best available device: ``cuda``, then ``mps``, then ``cpu``.

    ``prefer`` (or the environment variable ``SEQCOURSE_DEVICE``) forces one, e.g. ``"cpu"``.
    """
    import torch

    choice = prefer or os.environ.get("SEQCOURSE_DEVICE")
    if choice:
        return torch.device(choice)
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
