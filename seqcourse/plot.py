"""Figures used across the book: unrolled-network diagrams, training curves, attention heatmaps."""
from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

# one palette for the whole book
COLORS = {"input": "#c7e9c0", "hidden": "#c6dbef", "output": "#fcbba1", "edge": "#444444"}

CONFIGURATIONS = {
    # name: (steps, which steps get an input, which steps emit an output, index where decoding starts)
    "one-to-one": (1, {0}, {0}, None),
    "one-to-many": (4, {0}, {0, 1, 2, 3}, None),
    "many-to-one": (4, {0, 1, 2, 3}, {3}, None),
    "many-to-many (synchronized)": (4, {0, 1, 2, 3}, {0, 1, 2, 3}, None),
    "many-to-many (asynchronous)": (6, {0, 1, 2}, {3, 4, 5}, 3),
}


def _box(ax, x, y, text, color, w=0.7, h=0.5):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.04",
                                facecolor=color, edgecolor=COLORS["edge"], linewidth=1.2))
    ax.text(x, y, text, ha="center", va="center", fontsize=11)


def _arrow(ax, start, end):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12,
                                 color=COLORS["edge"], linewidth=1.2))


def draw_configuration(name: str, ax=None):
    """Draw one sequence configuration as an unrolled network (inputs bottom, states middle, outputs top).

    ``name`` is one of :data:`CONFIGURATIONS`. Returns the matplotlib axes.
    """
    if name not in CONFIGURATIONS:
        raise ValueError(f"unknown configuration {name!r}; choose one of {sorted(CONFIGURATIONS)}")
    steps, inputs, outputs, dec_start = CONFIGURATIONS[name]
    if ax is None:
        _, ax = plt.subplots(figsize=(1.3 * steps + 0.6, 2.8))
    for t in range(steps):
        enc = dec_start is None or t < dec_start
        label = r"$\mathbf{h}_{%d}$" % (t + 1) if enc else r"$\mathbf{d}_{%d}$" % (t + 1 - dec_start)
        _box(ax, t, 1, label, COLORS["hidden"])
        if t in inputs:
            _box(ax, t, 0, r"$\mathbf{x}_{%d}$" % (t + 1), COLORS["input"])
            _arrow(ax, (t, 0.25), (t, 0.75))
        if t in outputs:
            k = t + 1 if dec_start is None else t + 1 - dec_start
            _box(ax, t, 2, r"$\hat{\mathbf{y}}_{%d}$" % k, COLORS["output"])
            _arrow(ax, (t, 1.25), (t, 1.75))
        if t > 0:
            _arrow(ax, (t - 0.65, 1), (t - 0.35, 1))
    ax.set_xlim(-0.6, steps - 0.4)
    ax.set_ylim(-0.4, 2.4)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(name, fontsize=11)
    return ax


def _finish(ax, title: str | None, legend: bool):
    """The common end of the line plots: title, legend (several lines only), light grid."""
    if title:
        ax.set_title(title)
    if legend:
        ax.legend()
    ax.grid(alpha=0.3)
    return ax


def plot_curves(curves: Mapping[str, Sequence[float]], ax=None, xlabel: str = "step", ylabel: str = "loss",
                title: str | None = None, logy: bool = False):
    """Plot one or more named curves (e.g. ``{"train": losses, "dev": dev_losses}``) on one axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.2))
    for label, values in curves.items():
        ax.plot(range(1, len(values) + 1), list(values), label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    return _finish(ax, title, legend=len(curves) > 1)


def attention_heatmap(weights, source_tokens: Sequence[str], target_tokens: Sequence[str], ax=None,
                      title: str | None = None):
    """Heatmap of attention weights: one row per output (target) token, one column per source token.

    ``weights`` is a ``(len(target_tokens), len(source_tokens))`` tensor or array whose rows sum to 1.
    """
    import seaborn as sns
    import torch

    w = weights.detach().cpu().float().numpy() if isinstance(weights, torch.Tensor) else weights
    if tuple(w.shape) != (len(target_tokens), len(source_tokens)):
        raise ValueError(f"weights have shape {tuple(w.shape)}, but there are {len(target_tokens)} target "
                         f"and {len(source_tokens)} source tokens")
    if ax is None:
        _, ax = plt.subplots(figsize=(0.5 * len(source_tokens) + 2, 0.45 * len(target_tokens) + 1.2))
    sns.heatmap(w, ax=ax, cmap="viridis", vmin=0.0, vmax=1.0, square=True, cbar_kws={"shrink": 0.8},
                xticklabels=list(source_tokens), yticklabels=list(target_tokens))
    ax.set_xlabel("source")
    ax.set_ylabel("output")
    ax.tick_params(axis="x", rotation=90)
    ax.tick_params(axis="y", rotation=0)
    if title:
        ax.set_title(title)
    return ax


def plot_accuracy_by_length(results: Mapping[str, Mapping[str, Sequence[float]]], ax=None,
                            xlabel: str = "source length (characters)", title: str | None = None,
                            min_count: int = 1):
    """Accuracy against source length, one line per model: ``results`` maps a label to what
    :func:`seqcourse.seq2seq.accuracy_by_length` returns (``center``, ``accuracy``, ``count``, ...).
    Bins with fewer than ``min_count`` examples are left out."""
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.4))
    for label, r in results.items():
        keep = [i for i, n in enumerate(r["count"]) if n >= min_count]
        ax.plot([r["center"][i] for i in keep], [r["accuracy"][i] for i in keep], marker="o", label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("exact-match accuracy")
    ax.set_ylim(-0.03, 1.03)
    return _finish(ax, title, legend=len(results) > 1)
