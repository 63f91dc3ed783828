"""Worker processes (pansharp_iqa.parallel): single-threaded, spawned, the caller's environment
left as it was; results keyed and errors returned, whatever the number of workers."""

from __future__ import annotations

import os

import pytest

from pansharp_iqa.parallel import finished, process_pool

cv2 = pytest.importorskip("cv2")


def test_process_pool_workers_are_single_threaded_and_leave_the_environment(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.delenv("PANSHARP_THREADS", raising=False)
    calls = {("env", k): (os.getenv, k) for k in ("OMP_NUM_THREADS", "PANSHARP_THREADS", "MKL_NUM_THREADS")}
    calls[("cv2", "threads")] = (cv2.getNumThreads,)
    calls[("error", "int")] = (int, "x")
    with process_pool(2, _call, calls) as futures:
        assert os.environ["OMP_NUM_THREADS"] == "3" and "PANSHARP_THREADS" not in os.environ  # restored at once
        out = dict(finished(futures))
    assert out.pop(("error", "int")).args == ("invalid literal for int() with base 10: 'x'",)
    assert out == {("env", "OMP_NUM_THREADS"): "1", ("env", "PANSHARP_THREADS"): "1",
                   ("env", "MKL_NUM_THREADS"): "1", ("cv2", "threads"): 1}


def _call(fn, *args):
    return fn(*args)
