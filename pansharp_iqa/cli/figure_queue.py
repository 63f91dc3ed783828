"""``--figures`` drawn while the run goes on: each scene's figure as soon as its last pair is done.

A background thread draws the figures of the scenes already finished while the others are
evaluated, instead of all of them after the run. The figures are the same bytes as when drawn
after the run: a scene's figure is drawn from exactly the displays the end-of-run reports use
(the pairs evaluated, reused or failed), and :meth:`FigureQueue.finish` draws any scene the
queue did not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pansharp_iqa.reports.figures import write_scene_figure
from pansharp_iqa.reports.pair_display import SceneView, assemble_scene

__all__ = ["FigureQueue"]


class FigureQueue:
    """Draw scene figures in background threads as the scenes' pairs finish.

    Parameters
    ----------
    out_dir : Path
        Folder of the figures (``OUT/figures`` in the run's staging folder).
    methods : sequence of str
        Report order (the figure's columns).
    tasks : iterable of (str, str)
        ``(scene, method)`` of every task the run will execute; a scene is drawn once all of its
        tasks reported through :meth:`pair_done`.
    known : mapping
        ``known[(scene, method)]`` = the display of a pair that runs no task (reused by
        ``--resume`` without a display task, or failed before evaluation: ``None``).
    threads : int
        Drawing threads (at least 1).

    Examples
    --------
    >>> q = FigureQueue(Path("figs"), ["A"], tasks=[], known={})
    >>> q.finish({})
    []
    """

    def __init__(self, out_dir: Path, methods: Sequence[str], *, tasks: Iterable[tuple[str, str]],
                 known: Mapping[tuple[str, str], Any], threads: int = 1) -> None:
        self.out_dir = Path(out_dir)
        self.methods = list(methods)
        self._displays: dict[tuple[str, str], Any] = dict(known)
        self._waiting: Counter[str] = Counter(scene for scene, _ in tasks)
        self._pool = ThreadPoolExecutor(max_workers=max(1, int(threads)), thread_name_prefix="figures")
        self._drawn: dict[str, Future[list[Path]]] = {}

    def _view(self, scene: str) -> SceneView | None:
        return assemble_scene(scene, self.methods, {m: self._displays.get((scene, m)) for m in self.methods})

    def _submit(self, scene: str, view: SceneView) -> None:
        self._drawn[scene] = self._pool.submit(write_scene_figure, self.out_dir, view)

    def pair_done(self, scene: str, method: str, display: Any) -> None:
        """Record a finished task's display; draw its scene when it was the scene's last task."""
        self._displays[(scene, method)] = display
        self._waiting[scene] -= 1
        if self._waiting[scene] == 0 and scene not in self._drawn:
            view = self._view(scene)
            if view is not None:
                self._submit(scene, view)

    def finish(self, views: Mapping[str, SceneView | None]) -> list[Path]:
        """Wait for the figures drawn so far, draw those of the scenes of ``views`` not drawn yet,
        and return every file written (scene order of ``views``).

        Raises
        ------
        Exception
            Whatever a drawing raised (e.g. the disk is full).
        """
        try:
            for scene, view in views.items():
                if view is not None and scene not in self._drawn:
                    self._submit(scene, view)
            return [p for scene in views if scene in self._drawn for p in self._drawn[scene].result()]
        finally:
            self._pool.shutdown(wait=True)

    def abort(self) -> None:
        """Drop the figures not started and wait for those being drawn (before the staging
        folder they write into is removed)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
