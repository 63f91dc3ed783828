"""Tile planning: a grid of tiles aligned to the index block grid.

Reduced resolution: the grid lives in the coordinates of the evaluated (border-cut) image, so it
starts after the 20 leading rows/columns and every tile boundary is a boundary of Q2n's 32x32
blocks. Full resolution: the grid starts at (0, 0) and tile sides are multiples of both the block
size and the ratio, so every tile holds whole 32x32 blocks at PAN scale and whole (32/ratio) blocks
at MS scale.
"""

from __future__ import annotations

import dataclasses
import math

from ..validation import InputError

__all__ = ["Tile", "plan_tiles", "effective_tile_size", "DEFAULT_TILE_SIZE"]

#: Default tile side (pixels at the fused image's scale): 512 keeps a worker well under 1 GB for
#: 8-band images while the halos (at most ~64 pixels a side) cost little.
DEFAULT_TILE_SIZE = 512


@dataclasses.dataclass(frozen=True)
class Tile:
    """One tile of the grid.

    Attributes
    ----------
    index : int
        Position in the plan (row-major); the reduction follows this order.
    rows, cols : (int, int)
        Half-open ranges in the grid's coordinates (pixels).
    """

    index: int
    rows: tuple[int, int]
    cols: tuple[int, int]

    @property
    def pixels(self) -> int:
        """Number of pixels of the tile."""
        return (self.rows[1] - self.rows[0]) * (self.cols[1] - self.cols[0])


def effective_tile_size(tile_size: object, multiple: int) -> int:
    """Round a requested tile side up to a multiple of ``multiple`` (the block grid).

    Parameters
    ----------
    tile_size : int
        Requested side in pixels (>= 1).
    multiple : int
        Block size, or lcm(block size, ratio) at full resolution.

    Returns
    -------
    int
    """
    if isinstance(tile_size, bool) or not isinstance(tile_size, (int,)) and not (
        isinstance(tile_size, float) and tile_size.is_integer()
    ):
        raise InputError(f"tile_size must be a positive integer number of pixels, got {tile_size!r}")
    t = int(tile_size)
    if t < 1:
        raise InputError(f"tile_size must be a positive integer number of pixels, got {tile_size!r}")
    return multiple * math.ceil(t / multiple)


def plan_tiles(height: int, width: int, tile_size: int) -> list[Tile]:
    """Row-major grid of ``tile_size`` tiles over ``height x width`` (the last ones may be smaller).

    Parameters
    ----------
    height, width : int
        Extent of the grid (pixels).
    tile_size : int
        Tile side (pixels), already a multiple of the block grid.

    Returns
    -------
    list of Tile
    """
    tiles: list[Tile] = []
    for r0 in range(0, height, tile_size):
        for c0 in range(0, width, tile_size):
            tiles.append(Tile(len(tiles), (r0, min(r0 + tile_size, height)), (c0, min(c0 + tile_size, width))))
    return tiles
