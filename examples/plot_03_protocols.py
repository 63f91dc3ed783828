"""
One image, several protocols: why published numbers disagree
============================================================

The same fused image gets different full-resolution numbers under different, equally published
conventions. Each protocol is one name (:func:`pansharp_iqa.list_protocols`); the provenance card
records which one produced a number.
"""

import pansharp_iqa as pi
from pansharp_iqa.baselines import gsa
from pansharp_iqa.demo_data import load_demo

ms, pan = load_demo()
fused = gsa(ms, pan, sensor="none", ratio=4)

for name in ("toolbox2020", "toolbox2015", "qnr-paper"):
    r = pi.evaluate_full(fused, ms, pan, sensor="none", ratio=4, bits=11, protocol=name)
    values = ", ".join(f"{k} {r[k]:.4f}" for k in pi.get_protocol(name).full_indexes)
    print(f"{name:<12} {values}")

# %%
# What each protocol changes is in its description and settings (also in every card):

for name in pi.list_protocols():
    p = pi.get_protocol(name)
    print(f"{name}: d_s_low_pass={p.d_s_low_pass}, low_res_terms={p.low_res_terms}, sigma_form={p.sigma_form}")
