"""Value checks for exercise notebooks: compare with a reference and say clearly what differs.

The visible tests of the exercises use these so that a failing check tells the student *what* is wrong
(shape, dtype, which entry, by how much) rather than only ``AssertionError``.
"""
from __future__ import annotations

import torch


def assert_shape(actual: torch.Tensor, shape: tuple, name: str = "output") -> None:
    """Fail with a readable message unless ``actual`` is a tensor of exactly ``shape``."""
    if not isinstance(actual, torch.Tensor):
        raise AssertionError(f"{name}: expected a torch.Tensor, got {type(actual).__name__}")
    if tuple(actual.shape) != tuple(shape):
        raise AssertionError(f"{name}: expected shape {tuple(shape)}, got {tuple(actual.shape)}")


def assert_close(actual, expected, *, atol: float = 1e-5, rtol: float = 1e-5, name: str = "output") -> None:
    """Fail unless ``actual`` equals ``expected`` (tensors or numbers) within the tolerances.

    The message names the first differing entry and the largest absolute difference.
    """
    if not isinstance(expected, torch.Tensor):
        expected = torch.as_tensor(expected)
    if not isinstance(actual, torch.Tensor):
        try:
            actual = torch.as_tensor(actual)
        except Exception as exc:  # noqa: BLE001 - any conversion failure is the student's to see
            raise AssertionError(f"{name}: expected a tensor or number, got {type(actual).__name__}") from exc
    if tuple(actual.shape) != tuple(expected.shape):
        raise AssertionError(f"{name}: expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}")
    a = actual.detach().to("cpu", torch.float64)
    e = expected.detach().to("cpu", torch.float64)
    if torch.isnan(a).any() and not torch.isnan(e).any():
        raise AssertionError(f"{name}: contains NaN")
    diff = (a - e).abs()
    bad = diff > atol + rtol * e.abs()
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        raise AssertionError(
            f"{name}: {int(bad.sum())} of {bad.numel()} entries differ; first at index {idx}: "
            f"got {a[idx].item():.6g}, expected {e[idx].item():.6g} "
            f"(largest difference {diff.max().item():.3g}, tolerance atol={atol}, rtol={rtol})"
        )


def deterministic_weights_(module: torch.nn.Module, scale: float = 0.5) -> torch.nn.Module:
    """Overwrite every parameter of ``module`` in place with fixed, platform-independent values.

    Parameter ``k`` (in ``named_parameters`` order) with ``n`` entries gets
    ``scale * sin(1.7 * arange(n) + k)``. Tests use this to pin exact expected outputs without depending
    on PyTorch's random initialisation. Returns the module.
    """
    with torch.no_grad():
        for k, (_, p) in enumerate(module.named_parameters()):
            values = scale * torch.sin(1.7 * torch.arange(p.numel(), dtype=torch.float64) + k)
            p.copy_(values.reshape(p.shape).to(p.dtype))
    return module
