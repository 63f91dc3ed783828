"""Issue 20, item 14, and issue 22, item 4: subcommands from the parser; a usage error is one line
on stderr and exit status 2, never the usage block; ``--help`` and ``--version`` still print."""

from __future__ import annotations

import pytest

from cli_helpers import one_error_line, run_cli
from pansharp_iqa.cli.main import main
from pansharp_iqa.cli.parser import COMMANDS, OPTIONS, build_parser


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("argv, message", [
    (["evaluate", "DS", "R", "--format", "foo"], "unknown format(s) ['foo']"),
    (["evaluate", "DS", "R", "--jobs", "0"], "--jobs: expected a positive integer, got '0'"),
    (["evaluate", "DS", "R", "--resume", "--force"], "--force: not allowed with argument --resume"),
    (["evaluate", "DS", "R", "--tiled", "sometimes"], "invalid choice: 'sometimes'"),
    (["evaluate", "DS"], "the following arguments are required: RESULTS"),
    (["evaluate", "DS", "R", "--unknown"], "unrecognized arguments: --unknown"),
    (["baselines", "DS"], "the following arguments are required: --out"),
    (["degrade", "DS", "--out", "o", "--layout", "zip"], "invalid choice: 'zip'"),
    (["demo", "--jobs", "x"], "--jobs: expected a positive integer, got 'x'"),
    ([], "the following arguments are required: COMMAND"),
    (["frobnicate"], "'frobnicate' is not a command"),
])
def test_usage_errors_are_one_line(capsys, argv, message):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    line = one_error_line(err, message)
    assert "usage:" not in err and "--help" in line


def test_a_ratio_that_is_no_integer_is_one_line_and_its_integer_neighbours_run(capsys, tmp_path, reduced_dataset,
                                                                               rr_methods):
    folder, _ = reduced_dataset
    code, _, err = _run(capsys, "evaluate", folder, rr_methods["good"], "--ratio", "4.5", "--out", tmp_path / "o")
    assert code == 2 and not (tmp_path / "o").exists()
    one_error_line(err, "ratio must be an integer", "'4.5'", "--ratio")
    for ratio in ("4", "4.0"):  # the package's one integer rule
        assert _run(capsys, "evaluate", folder, rr_methods["good"], "--ratio", ratio, "--out", tmp_path / ratio,
                    "--format", "csv")[0] == 0


def test_the_bare_form_says_how_to_evaluate(capsys, tmp_path):
    code, _, err = _run(capsys, tmp_path / "ds", tmp_path / "GSA")
    assert code == 2
    one_error_line(err, f"pansharp-eval evaluate {tmp_path / 'ds'} RESULTS")


def test_a_dataset_folder_named_like_a_command_needs_no_dot_slash(tmp_path, monkeypatch, capsys, reduced_dataset,
                                                                  rr_methods):
    folder, _ = reduced_dataset
    monkeypatch.chdir(folder.parent)
    folder.rename(folder.parent / "demo")
    assert _run(capsys, "evaluate", "demo", *rr_methods.values(), "--out", tmp_path / "o", "--format", "csv")[0] == 0
    assert (tmp_path / "o" / "results.csv").is_file()


def test_valid_neighbours_parse():
    parser = build_parser()
    ns = parser.parse_args(["evaluate", "DS", "A", "B", "--jobs", "1", "--ratio", "4", "--format", "all", "--resume"])
    # --ratio stays a string here: load_settings applies the package's one integer rule
    assert (ns.jobs, ns.ratio, len(ns.format), ns.resume, ns.force) == (1, "4", 6, True, False)
    assert "html" not in parser.parse_args(["evaluate", "DS", "A"]).format
    assert "html" in parser.parse_args(["demo"]).format  # the demo writes every format
    assert parser.parse_args(["baselines", "DS", "--out", "o"]).methods is None  # all of them


def test_every_option_is_defined_once_and_used():
    used = {e if isinstance(e, str) else e[0] for _, entries in COMMANDS.values() for e in entries}
    assert used == set(OPTIONS)
    shared = {"out", "sensor", "ratio", "bits", "resolution", "input_scale", "force"}
    assert all(sum(1 for _, entries in COMMANDS.values()
                   if name in {e if isinstance(e, str) else e[0] for e in entries}) >= 3 for name in shared)


def test_help_and_version_print_and_exit_0():
    for argv in (["--help"], ["evaluate", "--help"], ["baselines", "--help"], ["--version"]):
        proc = run_cli(*argv)
        assert proc.returncode == 0 and proc.stdout and proc.stderr == "", (argv, proc.stderr)
    assert "--out DIR" in run_cli("evaluate", "--help").stdout
