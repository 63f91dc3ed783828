"""Display images as JPEG bytes and ``data:`` URIs (OpenCV's libjpeg-turbo), so ``report.html``
embeds its images and needs no other file; decoding with Pillow."""

from __future__ import annotations

import base64
import io

import numpy as np

__all__ = ["JPEG_QUALITY", "data_uri", "decode_image", "encode_jpeg"]

#: JPEG quality of the embedded display images (photographic content: a few tens of kB each).
JPEG_QUALITY = 80


def encode_jpeg(image: np.ndarray, *, quality: int = JPEG_QUALITY) -> bytes:
    """JPEG bytes (baseline, 4:2:0 chroma for RGB) of a uint8 ``(h, w)`` or ``(h, w, 3)`` image."""
    import cv2

    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise ValueError(f"display images are uint8, got {arr.dtype}")
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if not 1 <= int(quality) <= 100:
        raise ValueError(f"JPEG quality {quality} outside 1..100")
    ok, encoded = cv2.imencode(".jpg", np.ascontiguousarray(arr[:, :, ::-1] if arr.ndim == 3 else arr),  # BGR
                               [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("OpenCV could not encode the image as JPEG")
    return encoded.tobytes()


def decode_image(data: bytes) -> np.ndarray:
    """Decode JPEG/PNG bytes to a uint8 ``(h, w)`` or ``(h, w, 3)`` array."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        return np.asarray(img.convert("L" if img.mode in ("L", "1", "I;16") else "RGB"))


def data_uri(data: bytes) -> str:
    """``data:image/jpeg;base64,...`` (or ``image/png``) URI of encoded image bytes."""
    mime = "image/png" if data[:4] == b"\x89PNG" else "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
