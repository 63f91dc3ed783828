"""Operator self-check on CPU (values and gradients against numpy)."""

import pytest

pytest.importorskip("mindspore")

from pansharp_iqa.nlrnet.doctor import Check, format_table, run_doctor  # noqa: E402


def test_doctor_cpu_all_operators_agree():
    rows = run_doctor("CPU", modes=("graph", "pynative"))
    assert len(rows) == 28
    bad = [r for r in rows if not r.ok]
    assert not bad, format_table(rows)


def test_table_marks_mismatches():
    text = format_table([Check("ops.norm", "graph", float("nan"), float("nan"), False)])
    assert "MISMATCH" in text and "0/1" in text
