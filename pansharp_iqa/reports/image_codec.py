"""Encoding display images as JPEG/PNG bytes and ``data:`` URIs (Pillow, matplotlib's image
library), so a report embeds its images and needs no other file or network access."""

from __future__ import annotations

import base64
import io

import numpy as np

__all__ = ["JPEG_QUALITY", "data_uri", "decode_image", "encode_jpeg", "encode_png"]

#: JPEG quality of the embedded display images (photographic content: a few tens of kB each).
JPEG_QUALITY = 80


def _pil_image(image: np.ndarray):  # noqa: ANN202 - PIL.Image.Image
    from PIL import Image

    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise ValueError(f"display images are uint8, got {arr.dtype}")
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    return Image.fromarray(np.ascontiguousarray(arr), mode="L" if arr.ndim == 2 else "RGB")


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


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes (lossless) of a uint8 ``(h, w)`` or ``(h, w, 3)`` image.

    Examples
    --------
    >>> encode_png(np.zeros((4, 4), np.uint8))[:4]
    b'\\x89PNG'
    """
    buf = io.BytesIO()
    _pil_image(image).save(buf, format="PNG")
    return buf.getvalue()


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


def data_uri(data: bytes) -> str:
    """``data:image/jpeg;base64,...`` (or ``image/png``) URI of encoded image bytes.

    Examples
    --------
    >>> data_uri(encode_png(np.zeros((1, 1), np.uint8)))[:22]
    'data:image/png;base64,'
    """
    mime = "image/png" if data[:4] == b"\x89PNG" else "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
