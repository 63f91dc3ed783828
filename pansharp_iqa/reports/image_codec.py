"""Encoding display images as JPEG/PNG bytes and ``data:`` URIs (Pillow, matplotlib's image
library), so a report embeds its images and needs no other file or network access."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import numpy as np

__all__ = ["JPEG_QUALITY", "data_uri", "decode_image", "encode_jpeg", "encode_png", "jpeg_shape"]

#: JPEG quality of the embedded display images (photographic content: a few tens of kB each).
JPEG_QUALITY = 80


def _display_array(image: np.ndarray) -> np.ndarray:
    """The uint8 ``(h, w)`` or ``(h, w, 3)`` array of a display image (one band squeezed)."""
    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise ValueError(f"display images are uint8, got {arr.dtype}")
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    return np.ascontiguousarray(arr)


def _pil_image(image: np.ndarray):  # noqa: ANN202 - PIL.Image.Image
    from PIL import Image

    arr = _display_array(image)
    return Image.fromarray(arr, mode="L" if arr.ndim == 2 else "RGB")


def encode_jpeg(image: np.ndarray, *, quality: int = JPEG_QUALITY) -> bytes:
    """JPEG bytes of a uint8 ``(h, w)`` or ``(h, w, 3)`` image.

    Parameters
    ----------
    image : numpy.ndarray
        uint8 grey-level or RGB image.
    quality : int
        JPEG quality, 1..95.

    Returns
    -------
    bytes

    Examples
    --------
    >>> encode_jpeg(np.zeros((4, 4, 3), np.uint8))[:2]
    b'\\xff\\xd8'
    """
    buf = io.BytesIO()
    _pil_image(image).save(buf, format="JPEG", quality=int(quality))
    return buf.getvalue()


def encode_png(image: np.ndarray, *, dpi: int | None = None, fast: bool = False) -> bytes:
    """PNG bytes (lossless) of a uint8 ``(h, w)`` or ``(h, w, 3)`` image.

    Parameters
    ----------
    image : numpy.ndarray
        uint8 grey-level or RGB image.
    dpi : int, optional
        Resolution recorded in the file (``pHYs`` chunk, dots per inch).
    fast : bool
        Favour speed over size (OpenCV, zlib level 1 with run-length matching: about half the
        time of Pillow's fastest level on photographic figures, and about as small). Default:
        Pillow's default level (smaller files; the HTML report's maps).

    Returns
    -------
    bytes

    Examples
    --------
    >>> encode_png(np.zeros((4, 4), np.uint8))[:4]
    b'\\x89PNG'
    >>> from PIL import Image
    >>> [round(v) for v in Image.open(io.BytesIO(encode_png(np.zeros((2, 2, 3), np.uint8), dpi=300, fast=True))).info["dpi"]]
    [300, 300]
    """
    if not fast:
        buf = io.BytesIO()
        _pil_image(image).save(buf, format="PNG", **({"dpi": (dpi, dpi)} if dpi else {}))
        return buf.getvalue()
    import cv2

    arr = _display_array(image)
    ok, encoded = cv2.imencode(".png", arr[:, :, ::-1] if arr.ndim == 3 else arr,
                               [cv2.IMWRITE_PNG_COMPRESSION, 1, cv2.IMWRITE_PNG_STRATEGY, cv2.IMWRITE_PNG_STRATEGY_RLE])
    if not ok:
        raise ValueError("OpenCV could not encode the image as PNG")
    data = encoded.tobytes()
    if dpi is None:
        return data
    # a pHYs chunk (pixels per metre, unit 1 = metre) right after the 8-byte signature and IHDR
    body = b"pHYs" + struct.pack(">IIB", round(dpi / 0.0254), round(dpi / 0.0254), 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body))
    return data[:33] + chunk + data[33:]


def decode_image(data: bytes) -> np.ndarray:
    """Decode JPEG/PNG bytes to a uint8 ``(h, w)`` or ``(h, w, 3)`` array.

    Examples
    --------
    >>> decode_image(encode_png(np.full((2, 3), 7, np.uint8))).tolist()
    [[7, 7, 7], [7, 7, 7]]
    """
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        return np.asarray(img.convert("L" if img.mode in ("L", "1", "I;16") else "RGB"))


def jpeg_shape(data: bytes) -> tuple[int, int, int]:
    """``(rows, cols, channels)`` of JPEG bytes, read from the frame header (nothing decoded).

    Raises
    ------
    ValueError
        The bytes are not a JPEG with a frame header.

    Examples
    --------
    >>> jpeg_shape(encode_jpeg(np.zeros((4, 6), np.uint8)))
    (4, 6, 1)
    """
    if data[:2] != b"\xff\xd8":
        raise ValueError("not JPEG data (no start-of-image marker)")
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise ValueError(f"corrupt JPEG data (no marker at byte {pos})")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        length = int.from_bytes(data[pos + 2 : pos + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a start-of-frame segment
            rows = int.from_bytes(data[pos + 5 : pos + 7], "big")
            cols = int.from_bytes(data[pos + 7 : pos + 9], "big")
            return rows, cols, data[pos + 9]
        pos += 2 + length
    raise ValueError("corrupt JPEG data (no frame header)")


def data_uri(data: bytes) -> str:
    """``data:image/jpeg;base64,...`` (or ``image/png``) URI of encoded image bytes.

    Examples
    --------
    >>> data_uri(encode_png(np.zeros((1, 1), np.uint8)))[:22]
    'data:image/png;base64,'
    """
    mime = "image/png" if data[:4] == b"\x89PNG" else "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
