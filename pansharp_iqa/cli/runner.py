"""Running scene tasks serially or in worker processes, with a progress bar.

Results do not depend on the number of processes: each task is computed independently by
:func:`~.scene_eval.evaluate_scene` and the outcomes are returned in task order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from typing import Any

from .errors import UsageError
from .scene_eval import SceneOutcome, SceneTask, evaluate_scene

__all__ = ["SCHEDULER_TIMEOUT", "connect_scheduler", "pool_context", "run_tasks"]

#: Seconds ``--scheduler`` waits for the Dask scheduler to answer.
SCHEDULER_TIMEOUT = 30.0


def _worker_init() -> None:
    # One OpenCV thread per worker: the processes already use the cores, and oversubscription
    # only slows them down (results do not depend on the thread count).
    try:
        import cv2

        cv2.setNumThreads(1)
    except Exception:  # noqa: BLE001 - optional tuning
        pass
    from pansharp_iqa.allocator import keep_freed_memory

    keep_freed_memory()


def pool_context() -> multiprocessing.context.BaseContext:
    """Start method of the CLI's worker processes: ``fork`` on POSIX where available (the workers
    inherit the loaded modules), else ``spawn``.

    Examples
    --------
    >>> pool_context().get_start_method() in ("fork", "spawn")
    True
    """
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods and os.name == "posix" else "spawn")


def connect_scheduler(address: str) -> Any:
    """Client of the Dask scheduler at ``address`` (``--scheduler``), before anything is written.

    Parameters
    ----------
    address : str
        e.g. ``tcp://10.0.0.5:8786``.

    Returns
    -------
    distributed.Client
        Pass it to :func:`run_tasks` as ``scheduler``; close it when done.

    Raises
    ------
    UsageError
        The ``scale`` extra is not installed, the address is malformed, or no scheduler answers
        there within :data:`SCHEDULER_TIMEOUT` seconds.

    Examples
    --------
    >>> connect_scheduler("tcp://scheduler")  # doctest: +SKIP
    Traceback (most recent call last):
    UsageError: --scheduler tcp://scheduler: missing port number in address 'tcp://scheduler'
    """
    try:
        from distributed.comm import get_address_host_port, parse_address

        from pansharp_iqa.tiled.distributed import connect
    except ImportError:
        raise UsageError("--scheduler needs the Dask distributed package: pip install 'pansharp_iqa[scale]'") from None
    try:
        if parse_address(address)[0] in ("tcp", "tls"):
            get_address_host_port(address)  # malformed: refused here, before a client exists
    except ValueError as exc:
        raise UsageError(f"--scheduler {address}: {exc}") from None
    try:
        return connect(address, timeout=SCHEDULER_TIMEOUT)
    except OSError as exc:  # its message names the address and what to check
        raise UsageError(str(exc)) from None
    except ValueError as exc:  # an address scheme distributed does not know
        raise UsageError(f"--scheduler {address}: {exc}") from None


def run_tasks(
    tasks: Sequence[SceneTask],
    *,
    jobs: int = 1,
    scheduler: Any = None,
    progress: bool | None = None,
    on_done: Callable[[int, SceneOutcome], None] | None = None,
    desc: str = "evaluating",
) -> list[SceneOutcome]:
    """Evaluate all tasks and return their outcomes in task order.

    Parameters
    ----------
    tasks : sequence of SceneTask
    jobs : int
        Number of worker processes (1: in this process).
    scheduler : distributed.Client or str, optional
        Dask scheduler (:func:`connect_scheduler`) or its address: the tasks run on that cluster
        instead (same results).
    progress : bool or None
        Show a tqdm bar on stderr; ``None``: only when stderr is a terminal.
    on_done : callable, optional
        Called as ``on_done(task_index, outcome)`` in this process as each task finishes
        (used to write the per-scene JSON as soon as it exists, so ``--resume`` loses little).
    desc : str
        Progress-bar label.

    Returns
    -------
    list of SceneOutcome
    """
    from tqdm import tqdm

    outcomes: list[SceneOutcome | None] = [None] * len(tasks)
    if not tasks:
        return []
    bar = tqdm(total=len(tasks), desc=desc, unit="eval", disable=(None if progress is None else not progress))
    try:
        if scheduler:
            from pansharp_iqa.tiled.distributed import map_scenes

            results = map_scenes(evaluate_scene, list(tasks), scheduler=scheduler)
            for i, (task, res) in enumerate(zip(tasks, results)):
                if not isinstance(res, SceneOutcome):
                    res = SceneOutcome(task.scene.name, task.method, "failed", {}, None,
                                       f"cluster task failed: {type(res).__name__}: {res}")
                outcomes[i] = res
                if on_done:
                    on_done(i, res)
                bar.update(1)
        elif jobs <= 1 or len(tasks) == 1:
            _run_here(tasks, outcomes, on_done, bar)
        else:
            with ProcessPoolExecutor(
                max_workers=min(jobs, len(tasks)), mp_context=pool_context(), initializer=_worker_init
            ) as pool:
                futures = {pool.submit(evaluate_scene, task): i for i, task in enumerate(tasks)}
                for future in as_completed(futures):
                    i = futures[future]
                    try:
                        outcome = future.result()
                    except Exception as exc:  # noqa: BLE001 - a worker died (e.g. out of memory)
                        outcome = SceneOutcome(
                            tasks[i].scene.name, tasks[i].method, "failed", {}, None,
                            f"worker process failed: {type(exc).__name__}: {exc}",
                        )
                    outcomes[i] = outcome
                    if on_done:
                        on_done(i, outcome)
                    bar.update(1)
    finally:
        bar.close()
    return [o for o in outcomes if o is not None]


#: Pairs whose display images may still be in the making while the next pair is evaluated.
_DISPLAY_BACKLOG = 2


def _run_here(tasks: Sequence[SceneTask], outcomes: list[SceneOutcome | None],
              on_done: Callable[[int, SceneOutcome], None] | None, bar: Any) -> None:
    """Evaluate the tasks one after the other in this process. Display images (``--format html``,
    ``--figures``) are made by a background thread while the next pairs are evaluated (at most
    :data:`_DISPLAY_BACKLOG` pairs behind, each at most
    :data:`~.scene_eval.DEFERRED_DISPLAY_BYTES` of arrays); each outcome is reported, in task
    order, once its display is made."""
    if not any(task.display for task in tasks):
        for i, task in enumerate(tasks):
            _settle(i, evaluate_scene(task), outcomes, on_done, bar)
        return
    pending: deque[tuple[int, SceneOutcome]] = deque()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="display") as displays:
        try:
            for i, task in enumerate(tasks):
                pending.append((i, evaluate_scene(task, defer_display=displays.submit)))
                while pending and (len(pending) > _DISPLAY_BACKLOG or not isinstance(pending[0][1].display, Future)
                                   or pending[0][1].display.done()):
                    _settle(*pending.popleft(), outcomes, on_done, bar)
            while pending:
                _settle(*pending.popleft(), outcomes, on_done, bar)
        except BaseException:
            for _, outcome in pending:
                if isinstance(outcome.display, Future):
                    outcome.display.cancel()
            raise


def _settle(i: int, outcome: SceneOutcome, outcomes: list[SceneOutcome | None],
            on_done: Callable[[int, SceneOutcome], None] | None, bar: Any) -> None:
    """Record a finished task (waiting for its display images if they are still being made)."""
    if isinstance(outcome.display, Future):
        try:
            outcome.display = outcome.display.result()
        except Exception as exc:  # noqa: BLE001 - a display problem never fails an evaluation
            outcome.display = f"no display: {type(exc).__name__}: {exc}"
    outcomes[i] = outcome
    if on_done:
        on_done(i, outcome)
    bar.update(1)
