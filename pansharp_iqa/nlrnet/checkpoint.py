"""NLRNet network checkpoints: weights plus the metadata needed to use them.

A network checkpoint is a MindSpore ``.ckpt`` holding the network's parameters and one extra
entry, ``nlrnet_meta`` (JSON): the constructor arguments (``bands``, ``blocks``, ``variant``,
``released_unused``, ``features``), the data the weights were trained on (``sensor``, ``ratio``,
``bits``), the training patch size ``train_patch`` (px, the default inference tile: NLRNet's
InstanceNorms and ENLA context use statistics of the whole input, see :mod:`.tiling`) and where
the weights came from (``source``). Training writes them (``best.ckpt``, ``last_net.ckpt``);
``pansharp-nlrnet convert --from-torch`` writes them from the authors' PyTorch weights.
Model: Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

__all__ = ["save_network", "load_network", "META_KEY", "ARCH_KEYS"]

META_KEY = "nlrnet_meta"
#: constructor arguments of :class:`~pansharp_iqa.nlrnet.model.NLRNet` stored in ``nlrnet_meta``
ARCH_KEYS = ("bands", "blocks", "variant", "released_unused", "features")


def save_network(net, path: str | Path, meta: dict[str, Any]) -> Path:  # noqa: ANN001 - NLRNet
    """Save ``net``'s weights and its metadata to a MindSpore checkpoint."""
    import mindspore as ms

    doc = {**meta, **(net.config() if hasattr(net, "config") else {})}
    ms.save_checkpoint(net, str(path), append_dict={META_KEY: json.dumps(doc)})
    return Path(path)


def _refuse_foreign(path: Path) -> None:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such checkpoint file")
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            if any(n.endswith("data.pkl") for n in z.namelist()):
                raise ValueError(f"{path} is a PyTorch state_dict: convert it first with "
                                 f"pansharp-nlrnet convert --from-torch {path} --out net.ckpt")
        raise ValueError(f"{path} is a zip archive, not a MindSpore checkpoint")
    with path.open("rb") as f:
        if f.read(2) == b"\x80\x02":
            raise ValueError(f"{path} is a pickle (legacy torch.save format?), not a MindSpore "
                             "checkpoint: convert PyTorch weights with pansharp-nlrnet convert")


def load_network(path: str | Path):  # noqa: ANN201 - NLRNet
    """Rebuild an NLRNet, ready for ``net(lms, pan)``, from a network checkpoint."""
    import mindspore as ms

    from .model import NLRNet

    path = Path(path)
    _refuse_foreign(path)
    try:
        params = ms.load_checkpoint(str(path))
    except (ValueError, RuntimeError) as exc:
        raise ValueError(f"{path}: not a readable MindSpore checkpoint ({str(exc).splitlines()[0]})") from None
    raw = params.pop(META_KEY, None)
    if raw is None:
        hint = (" (last.ckpt is the resumable training state: use best.ckpt or last_net.ckpt)"
                if path.name == "last.ckpt" else "")
        raise ValueError(f"{path}: not an NLRNet network checkpoint (no {META_KEY}){hint}")
    meta = json.loads(raw if isinstance(raw, str) else str(raw))
    arch = {k: meta[k] for k in ARCH_KEYS if k in meta}
    net = NLRNet(**{**arch, "bands": int(meta["bands"]), "blocks": int(meta.get("blocks", 8))})
    expected = {p.name: tuple(p.shape) for p in net.get_parameters()}
    got = {k: tuple(v.shape) for k, v in params.items() if k in expected}
    wrong = [k for k in expected if got.get(k) != expected[k]]
    if wrong:
        k = wrong[0]
        raise ValueError(f"{path}: {len(wrong)} parameters missing or of another shape than the "
                         f"stated network ({k}: {got.get(k)} vs {expected[k]})")
    ms.load_param_into_net(net, {k: params[k] for k in expected}, strict_load=True)
    net.set_train(False)
    net.meta = meta
    return net
