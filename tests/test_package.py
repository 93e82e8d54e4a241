"""Unit tests of the shared package `seqcourse`."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

from seqcourse import get_device, set_seed
from seqcourse.checks import assert_close, assert_shape, deterministic_weights_
from seqcourse.data import majority_task, random_bits, reverse_task, running_majority_task
from seqcourse.plot import CONFIGURATIONS, attention_heatmap, draw_configuration, plot_curves


def test_assert_close_names_the_first_difference():
    assert_close(torch.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-7])
    with pytest.raises(AssertionError, match=r"index \(1,\).*got 2.5.*expected 2"):
        assert_close(torch.tensor([1.0, 2.5]), torch.tensor([1.0, 2.0]), name="x")
    with pytest.raises(AssertionError, match="expected shape"):
        assert_close(torch.zeros(2, 3), torch.zeros(3, 2))
    with pytest.raises(AssertionError, match="NaN"):
        assert_close(torch.tensor([float("nan")]), torch.tensor([0.0]))
    with pytest.raises(AssertionError, match="torch.Tensor"):
        assert_shape([1, 2], (2,))


def test_deterministic_weights_are_fixed_and_seed_independent():
    a = deterministic_weights_(torch.nn.RNN(3, 4))
    torch.manual_seed(123)
    b = deterministic_weights_(torch.nn.RNN(3, 4))
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.equal(p, q)
    assert a.weight_ih_l0[0, 0].item() == 0.0  # sin(0) for the first parameter


def test_tasks_are_deterministic_and_correct():
    x, y = majority_task(50, length=7, seed=3)
    x2, y2 = majority_task(50, length=7, seed=3)
    assert torch.equal(x, x2) and torch.equal(y, y2)
    assert x.shape == (50, 7, 1) and y.shape == (50,) and y.dtype == torch.long
    assert torch.equal(y, (x.sum(dim=(1, 2)) >= 4).long())
    with pytest.raises(ValueError, match="odd"):
        majority_task(5, length=4)
    with pytest.raises(ValueError):
        random_bits(0, 3)
    xs, ys = running_majority_task(20, length=6, seed=1)
    ones = xs[..., 0].cumsum(1)
    assert torch.equal(ys, (ones > torch.arange(1, 7) - ones).long())
    src, tgt = reverse_task(4, length=5, n_symbols=3, seed=0)
    assert torch.equal(tgt, src.flip(1)) and src.max() < 3


def test_set_seed_and_device():
    set_seed(7)
    a = torch.rand(3)
    set_seed(7)
    assert torch.equal(a, torch.rand(3))
    assert get_device("cpu").type == "cpu"


def test_plots_draw(tmp_path):
    for name in CONFIGURATIONS:
        ax = draw_configuration(name)
        ax.figure.savefig(tmp_path / "c.png")
    with pytest.raises(ValueError, match="unknown configuration"):
        draw_configuration("two-to-three")
    plot_curves({"train": [3, 2, 1], "dev": [3, 2.5, 2]})
    w = torch.softmax(torch.randn(3, 4), dim=-1)
    attention_heatmap(w, list("abcd"), list("xyz"))
    with pytest.raises(ValueError, match="shape"):
        attention_heatmap(w, list("abc"), list("xyz"))
    import matplotlib.pyplot as plt

    plt.close("all")
