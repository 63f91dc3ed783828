"""The visual reports of each scene made while the run goes on, as soon as its last pair is done.

A background thread draws a finished scene's figure (``--figures``) and renders its image grid
for ``report.html`` (``--format html``) while the other scenes are evaluated, instead of all of
them after the run. The output is the same as when made after the run: a scene's work is done
from exactly the displays the end-of-run reports use (the pairs evaluated, reused or failed), and
:meth:`SceneQueue.finish` does the scenes the queue did not.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pansharp_iqa.reports.figures import write_scene_figure
from pansharp_iqa.reports.html import render_scene_grid
from pansharp_iqa.reports.pair_display import SceneView, assemble_scene

__all__ = ["SceneQueue", "SceneWork"]


@dataclasses.dataclass(frozen=True)
class SceneWork:
    """What was made for one scene: its figure files and its ``report.html`` image grid."""

    figures: list[Path]
    grid: str | None


class SceneQueue:
    """Make each scene's figure and page grid in background threads as the scenes' pairs finish.

    Parameters
    ----------
    methods : sequence of str
        Report order (the columns).
    tasks : iterable of (str, str)
        ``(scene, method)`` of every task the run will execute; a scene is done once all of its
        tasks reported through :meth:`pair_done`.
    known : mapping
        ``known[(scene, method)]`` = the display of a pair that runs no task (reused by
        ``--resume`` without a display task, or failed before evaluation: ``None``).
    figures_dir : Path, optional
        Folder of the figures (``OUT/figures`` in the run's staging folder); ``None``: no figures.
    html_scenes : collection of str
        Scenes whose image grid ``report.html`` shows.
    threads : int
        Background threads (at least 1).

    Examples
    --------
    >>> q = SceneQueue(["A"], tasks=[], known={})
    >>> q.finish({})
    ([], {})
    """

    def __init__(self, methods: Sequence[str], *, tasks: Iterable[tuple[str, str]], known: Mapping[tuple[str, str], Any],
                 figures_dir: Path | None = None, html_scenes: Collection[str] = (), threads: int = 1) -> None:
        self.methods = list(methods)
        self.figures_dir = None if figures_dir is None else Path(figures_dir)
        self.html_scenes = frozenset(html_scenes)
        self._displays: dict[tuple[str, str], Any] = dict(known)
        self._waiting: Counter[str] = Counter(scene for scene, _ in tasks)
        self._pool = ThreadPoolExecutor(max_workers=max(1, int(threads)), thread_name_prefix="scene-reports")
        self._done: dict[str, Future[SceneWork]] = {}

    def _work(self, scene: str, view: SceneView) -> SceneWork:
        figures = [] if self.figures_dir is None else write_scene_figure(self.figures_dir, view)
        return SceneWork(figures, render_scene_grid(view) if scene in self.html_scenes else None)

    def _submit(self, scene: str, view: SceneView) -> None:
        if self.figures_dir is not None or scene in self.html_scenes:
            self._done[scene] = self._pool.submit(self._work, scene, view)

    def pair_done(self, scene: str, method: str, display: Any) -> None:
        """Record a finished task's display; start its scene's work when it was the last task."""
        self._displays[(scene, method)] = display
        self._waiting[scene] -= 1
        if self._waiting[scene] == 0 and scene not in self._done:
            view = assemble_scene(scene, self.methods, {m: self._displays.get((scene, m)) for m in self.methods})
            if view is not None:
                self._submit(scene, view)

    def finish(self, views: Mapping[str, SceneView | None]) -> tuple[list[Path], dict[str, str]]:
        """Wait for the work started, do that of the scenes of ``views`` not done yet.

        Returns
        -------
        (list of Path, dict of str to str)
            Every figure file written, and the page grid of every scene in ``html_scenes`` (scene
            order of ``views``).

        Raises
        ------
        Exception
            Whatever the work raised (e.g. the disk is full).
        """
        try:
            for scene, view in views.items():
                if view is not None and scene not in self._done:
                    self._submit(scene, view)
            work = {scene: self._done[scene].result() for scene in views if scene in self._done}
            figures = [p for w in work.values() for p in w.figures]
            return figures, {scene: w.grid for scene, w in work.items() if w.grid is not None}
        finally:
            self._pool.shutdown(wait=True)

    def abort(self) -> None:
        """Drop the work not started and wait for the work under way (before the staging folder
        it writes into is removed)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
