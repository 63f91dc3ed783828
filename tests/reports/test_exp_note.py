"""The full-resolution reports' EXP footnote (cli.report_writer.EXP_NOTE): where it applies."""


def test_the_exp_note_is_for_the_qnr_familys_d_lambda_only():
    """The report's footnote that EXP has D_lambda = 0 by construction holds for the toolbox family's D_lambda,
    not for the hyperspectral/Sentinel-2 protocols' (a Q2n of the filtered, decimated image against the MS)."""
    from types import SimpleNamespace

    from pansharp_iqa.cli.report_writer import exp_note_applies

    def settings(protocol, indexes=None, resolution="full"):
        return SimpleNamespace(resolution=resolution, protocol=protocol, indexes=indexes)

    assert exp_note_applies(settings("toolbox2020")) and exp_note_applies(settings("toolbox2020", ["D_lambda"]))
    assert not exp_note_applies(settings("toolbox2020", ["HQNR"]))
    assert not exp_note_applies(settings("toolbox2020", resolution="reduced"))
    assert not exp_note_applies(settings("hyperspectral2024")) and not exp_note_applies(settings("sentinel2-2025"))
