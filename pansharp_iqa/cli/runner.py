"""Running scene tasks here, in worker processes or on a Dask cluster (:mod:`pansharp_iqa.parallel`),
with a progress bar.

Results do not depend on where they ran: each task is computed independently by
:func:`~.scene_eval.evaluate_scene` and the outcomes are returned in task order.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ..parallel import connect, dask_client, dask_finished, finished, in_worker, process_pool
from .errors import UsageError
from .scene_eval import SceneOutcome, SceneTask, evaluate_scene

__all__ = ["SCHEDULER_TIMEOUT", "connect_scheduler", "run_tasks"]

#: Seconds ``--scheduler`` waits for the Dask scheduler to answer.
SCHEDULER_TIMEOUT = 30.0


def connect_scheduler(address: str) -> Any:
    """Client of the Dask scheduler at ``address`` (``--scheduler``), before anything is written."""
    try:
        from distributed.comm import get_address_host_port, parse_address
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
    """Evaluate all tasks and return their outcomes in task order."""
    from tqdm import tqdm

    outcomes: list[SceneOutcome | None] = [None] * len(tasks)
    if not tasks:
        return []
    bar = tqdm(total=len(tasks), desc=desc, unit="eval", disable=(None if progress is None else not progress))
    try:
        if not scheduler and (jobs <= 1 or len(tasks) == 1):
            _run_here(tasks, outcomes, on_done, bar)
        else:
            _run_elsewhere(tasks, jobs, scheduler, outcomes, on_done, bar)
    finally:
        bar.close()
    return [o for o in outcomes if o is not None]


def _run_elsewhere(tasks: Sequence[SceneTask], jobs: int, scheduler: Any, outcomes: list[SceneOutcome | None],
                   on_done: Callable[[int, SceneOutcome], None] | None, bar: Any) -> None:
    """Evaluate the tasks on the Dask cluster ``scheduler`` or, without one, in ``jobs`` worker
    processes; each outcome is reported as it arrives."""
    where = "cluster task" if scheduler else "worker process"
    with contextlib.ExitStack() as stack:
        if scheduler:
            client = stack.enter_context(dask_client(scheduler))
            events = dask_finished(client, {client.submit(in_worker, evaluate_scene, task, pure=False): i
                                            for i, task in enumerate(tasks)})
        else:
            calls = {i: (task,) for i, task in enumerate(tasks)}
            events = finished(stack.enter_context(process_pool(min(jobs, len(tasks)), evaluate_scene, calls)))
        for i, outcome in events:
            if not isinstance(outcome, SceneOutcome):  # e.g. a worker died (out of memory)
                outcome = SceneOutcome(tasks[i].scene.name, tasks[i].method, "failed", {}, None,
                                       f"{where} failed: {type(outcome).__name__}: {outcome}")
            _settle(i, outcome, outcomes, on_done, bar)


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
