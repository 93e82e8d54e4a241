"""What a computation costs: wall-clock time, peak memory of the tensors it creates, multiply-adds.

Used by chapter 8 (the cost of attention) and ``benchmarks/attention_cost.py``. Everything here works on
the CPU and prints nothing (PyTorch's own profiler writes to stderr, which would spoil a book build).

- :func:`time_call`   -- wall-clock seconds of ``fn(*args)``, the fastest (or median) of a few repeats
- :func:`peak_memory` -- the most bytes held at once by tensors that ``fn(*args)`` creates
- :func:`count_macs`  -- multiply-adds of the matrix products in ``fn(*args)``
"""
from __future__ import annotations

import statistics
import time
import weakref
from typing import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

__all__ = ["time_call", "peak_memory", "count_macs", "TensorMemory"]


def time_call(fn: Callable, *args, repeats: int = 5, number: int = 1, warmup: int = 1, stat: str = "min",
              **kwargs) -> float:
    """Wall-clock seconds of one call ``fn(*args, **kwargs)``.

    Runs ``warmup`` calls first (allocator and thread-pool start-up), then ``repeats`` timings of ``number``
    calls each, with :func:`time.perf_counter`, and returns their minimum (``stat="min"``, the default) or
    median (``stat="median"``). The minimum is the best estimate of what the computation itself costs on a
    busy machine: a slower repeat is one that something else interrupted.
    """
    if repeats < 1 or number < 1:
        raise ValueError(f"repeats and number must be positive, got {repeats} and {number}")
    if stat not in ("min", "median"):
        raise ValueError(f"stat must be 'min' or 'median', got {stat!r}")
    for _ in range(warmup):
        fn(*args, **kwargs)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args, **kwargs)
        times.append((time.perf_counter() - start) / number)
    return min(times) if stat == "min" else statistics.median(times)


class TensorMemory(TorchDispatchMode):
    """Count the bytes of the tensors that PyTorch operations create inside a ``with`` block.

    ``live`` is the number of bytes held now by storages created inside the block, ``peak`` the largest
    value ``live`` reached. Tensors that existed before the block (inputs, weights) and views of them count
    zero; a storage counts until it is freed. Memory that a single kernel uses internally and releases
    before it returns (a workspace) is not seen: this measures the tensors a computation materialises,
    which is what grows with the sequence lengths.
    """

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self._known: dict[int, int] = {}

    def _track(self, tensor: torch.Tensor, count: bool) -> None:
        storage = tensor.untyped_storage()
        key = storage.data_ptr()
        if key in self._known or storage.nbytes() == 0:
            return
        nbytes = storage.nbytes() if count else 0
        self._known[key] = nbytes
        self.live += nbytes
        self.peak = max(self.peak, self.live)
        weakref.finalize(storage, self._free, key, nbytes)

    def _free(self, key: int, nbytes: int) -> None:
        if self._known.get(key) == nbytes:
            del self._known[key]
            self.live -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for t in tree_leaves((args, kwargs)):
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                self._track(t, count=False)  # existed before: never counted
        out = func(*args, **kwargs)
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                self._track(t, count=True)
        return out


def peak_memory(fn: Callable, *args, **kwargs) -> int:
    """The most bytes held at the same time by tensors that ``fn(*args, **kwargs)`` creates (see
    :class:`TensorMemory`), including its result while ``fn`` runs."""
    with TensorMemory() as mem:
        fn(*args, **kwargs)
    return mem.peak


def count_macs(fn: Callable, *args, **kwargs) -> int:
    """Multiply-adds of the matrix products (``mm``, ``bmm``, ``matmul``, ``einsum``...) in
    ``fn(*args, **kwargs)``, counted by :class:`torch.utils.flop_counter.FlopCounterMode` (which reports
    two flops per multiply-add). Element-wise work such as a softmax is not counted."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn(*args, **kwargs)
    return counter.get_total_flops() // 2
