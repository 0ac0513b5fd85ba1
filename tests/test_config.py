"""routing.yaml validation and option parsing: every bad input is a usage error naming the
file or flag, the field, and what would be valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_egi.scoring.config import (
    apply_floors,
    apply_weights,
    load_routing,
    parse_bucket_values,
    parse_fraction,
    parse_suite_option,
)
from tests.toy_project import ROUTING

REPO_ROUTING = Path(__file__).resolve().parents[1] / "routing.yaml"


def test_repository_routing_is_complete():
    config, digest = load_routing(REPO_ROUTING)
    assert len(digest) == 64
    assert {b: config.buckets[b].weight for b in config.buckets} == {
        "M1": 0.28,
        "M2": 0.22,
        "M3": 0.16,
        "M4": 0.14,
        "M5": 0.14,
        "M6": 0.06,
    }
    assert apply_floors(config, {}) == {"M2": 70.0, "M5": 70.0}
    suites_routed = {r.suite for r in config.routes}
    # every benchmark feeds at least one bucket; every bucket gets at least two routes
    assert suites_routed == set(config.suites)
    # the opt-in suite's routes count only when it ran; every other route always counts
    assert {(r.sub_metric, r.bucket) for r in config.routes if r.optional} == {
        ("checker_pass_rate", "M1"), ("milestone_completion", "M3")}
    assert {r.suite for r in config.routes if r.optional} == {"eigent"}
    for bucket in ("M1", "M2", "M3", "M4", "M5", "M6"):
        assert sum(r.bucket == bucket for r in config.routes) >= 2, bucket
    crm = {r.sub_metric: r.bucket for r in config.routes_for("crmarena")}
    assert crm == {
        "NCR": "M1",
        "HTU": "M1",
        "TCU": "M1",
        "TII": "M1",
        "BRI": "M1",
        "MTA": "M1",
        "NED": "M4",
        "KQA": "M4",
        "PVI": "M5",
    }
    assert config.profile("quick", "crmarena").per_category == 6
    assert config.profile("deep", "crmarena").per_category == 130
    assert config.profile("quick", "crmarena").seed == 42


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "M6: {name: Engineering, weight: 0.06}",
            "M7: {name: Engineering, weight: 0.06}",
            "buckets.M7.[key]: Input should be 'M1', 'M2', 'M3', 'M4', 'M5' or 'M6'",
        ),
        ("weight: 0.06", "weight: 0.07", "buckets: weights sum to 1.0100, they must sum to 1"),
        (
            "weight: 0.14, floor: 70",
            "weight: 0.14, floor: 170",
            "buckets.M5.floor: Input should be less than or equal to 100",
        ),
        (
            "transform: fraction}\n  - {suite: toy, sub_metric: acc_beta",
            "transform: sqrt}\n  - {suite: toy, sub_metric: acc_beta",
            "route 1 (toy/acc_alpha).transform: Input should be 'fraction', 'percent', 'invert_fraction', "
            "'clip_invert' or 'gap' (got 'sqrt')",
        ),
        ("sub_metric: acc_beta", "sub_metric: acc_alpha",
         "route 2 (toy/acc_alpha): duplicate route toy/acc_alpha"),
        ("{suite: absent,", "{suite: absnet,",
         "route 4 (absnet/whatever).suite: unknown suite 'absnet'; valid: toy, absent"),
        (
            "bucket: M4",
            "bucket: M4, ceiling: 3",
            "route 3 (toy/acc): 'ceiling' only applies to clip_invert, not fraction",
        ),
        ("version: 1\n", "version: 1\nextra_key: 2\n", "extra_key: Extra inputs are not permitted"),
    ],
)
def test_bad_routing_names_the_field(tmp_path, old, new, message):
    assert old in ROUTING
    path = tmp_path / "routing.yaml"
    path.write_text(ROUTING.replace(old, new, 1))
    with pytest.raises(pytest.UsageError) as info:
        load_routing(path)
    text = str(info.value)
    assert text.startswith(f"invalid routing file {path}:")
    assert message in text


def test_malformed_yaml_names_line(tmp_path):
    path = tmp_path / "routing.yaml"
    path.write_text("version: 1\nbuckets: [unclosed\n")
    with pytest.raises(pytest.UsageError, match=r"malformed YAML at line 3, column 1"):
        load_routing(path)


def test_missing_routing_file(tmp_path):
    with pytest.raises(pytest.UsageError, match="cannot read routing file .*Pass --egi-routing"):
        load_routing(tmp_path / "nope.yaml")


def test_parse_bucket_values():
    assert parse_bucket_values("--egi-floor", "M5=75, m2=80", lo=0, hi=100) == {"M5": 75.0, "M2": 80.0}
    with pytest.raises(pytest.UsageError, match=r"--egi-floor: bad entry 'M9=1'; expected BUCKET=NUMBER"):
        parse_bucket_values("--egi-floor", "M9=1", lo=0, hi=100)
    with pytest.raises(pytest.UsageError, match=r"--egi-floor: 'M5=101' is outside \[0, 100\]"):
        parse_bucket_values("--egi-floor", "M5=101", lo=0, hi=100)
    with pytest.raises(pytest.UsageError, match=r"--egi-weights: bad number in 'M1=abc'"):
        parse_bucket_values("--egi-weights", "M1=abc", lo=0, hi=1)


def test_a_partial_weight_override_scales_the_other_buckets_by_hand():
    """The report's own example, M1=0.20,M5=0.30 (refused before: the sum was 1.08). The other
    four, 0.22 + 0.16 + 0.14 + 0.06 = 0.58, are scaled to fill 1 - 0.50 = 0.50."""
    config, _ = load_routing(REPO_ROUTING)
    w = apply_weights(config, {"M1": 0.20, "M5": 0.30})
    assert w == pytest.approx({"M1": 0.20, "M2": 0.22 * 0.5 / 0.58, "M3": 0.16 * 0.5 / 0.58,
                               "M4": 0.14 * 0.5 / 0.58, "M5": 0.30, "M6": 0.06 * 0.5 / 0.58}, abs=1e-12)
    assert [round(w[b], 6) for b in ("M2", "M3", "M4", "M6")] == [0.189655, 0.137931, 0.12069, 0.051724]
    assert list(w) == ["M1", "M2", "M3", "M4", "M5", "M6"] and sum(w.values()) == pytest.approx(1.0)
    assert apply_weights(config, {}) == {"M1": 0.28, "M2": 0.22, "M3": 0.16, "M4": 0.14, "M5": 0.14,
                                         "M6": 0.06}
    assert apply_weights(config, {"M1": 1.0})["M2"] == 0.0  # the named ones take it all
    six = {"M1": 0.3, "M2": 0.2, "M3": 0.2, "M4": 0.1, "M5": 0.1, "M6": 0.1}
    assert apply_weights(config, six) == six


@pytest.mark.parametrize(("given", "message"), [
    ({"M1": 0.9, "M5": 0.3}, "--egi-weights: the named bucket weights alone sum to 1.2000 (M1=0.9, M5=0.3), "
                             "above 1; the six weights must sum to 1"),
    ({"M1": 0.3, "M2": 0.2, "M3": 0.2, "M4": 0.1, "M5": 0.1, "M6": 0.2},
     "--egi-weights: all six bucket weights are given and they sum to 1.1000 (M1=0.3, M2=0.2, M3=0.2, "
     "M4=0.1, M5=0.1, M6=0.2); they must sum to 1 (or name only some buckets: the others are scaled to "
     "fill the rest)"),
    ({"M1": -0.1}, "--egi-weights: M1=-0.1: a bucket weight is a number in [0, 1]"),
    ({"M9": 0.1}, "--egi-weights: unknown bucket 'M9'; the buckets are M1, M2, M3, M4, M5, M6"),
])
def test_a_weight_override_is_refused_only_when_it_cannot_sum_to_one(given, message):
    config, _ = load_routing(REPO_ROUTING)
    with pytest.raises(pytest.UsageError) as info:
        apply_weights(config, given)
    assert str(info.value) == message


def test_weight_left_for_buckets_of_weight_zero_is_refused():
    config, _ = load_routing(REPO_ROUTING)
    base = {"M1": 0.5, "M2": 0.5, "M3": 0.0, "M4": 0.0, "M5": 0.0, "M6": 0.0}
    with pytest.raises(pytest.UsageError) as info:
        apply_weights(config, {"M1": 0.4, "M2": 0.4}, base=base)
    assert str(info.value) == (
        "--egi-weights: 0.2000 of the weight is left for M3 M4 M5 M6, whose weights are all 0 to scale "
        "from; name their weights too (M1=0.4, M2=0.4 leaves 0.2000)")


def test_a_session_with_a_partial_weight_override_stores_and_prints_the_weights_used(toy_project):
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0",
                                   "--egi-weights", "M1=0.20,M5=0.30")
    assert result.ret == 0
    run = next((toy_project.path / "reports").iterdir())
    egi = json.loads((run / "egi.json").read_text())
    assert egi["routing"]["weights"] == pytest.approx(
        {"M1": 0.2, "M2": 0.11 / 0.58, "M3": 0.08 / 0.58, "M4": 0.07 / 0.58, "M5": 0.3, "M6": 0.03 / 0.58},
        abs=1e-12)
    assert egi["routing"]["weights_given"] == {"M1": 0.2, "M5": 0.3}
    assert egi["buckets"]["M4"]["weight"] == egi["routing"]["weights"]["M4"]
    assert egi["egi"]["covered_weight"] == pytest.approx(0.2 + 0.07 / 0.58)
    result.stdout.fnmatch_lines([
        "bucket weights (--egi-weights M1=0.2,M5=0.3; the other buckets scaled to fill 0.5): M1 0.2, "
        "M2 0.189655, M3 0.137931, M4 0.12069, M5 0.3, M6 0.051724"])


def test_parse_fraction_and_suite_option():
    assert parse_fraction("--egi-max-error-rate", "0.1") == 0.1
    with pytest.raises(
        pytest.UsageError, match="--egi-max-error-rate: expected a number between 0 and 1, got '2'"
    ):
        parse_fraction("--egi-max-error-rate", "2")
    assert parse_suite_option("crmarena.strategy=tool_call") == ("crmarena", "strategy", "tool_call")
    with pytest.raises(pytest.UsageError, match="expected SUITE.KEY=VALUE"):
        parse_suite_option("strategy=tool_call")


def test_broken_routing_exits_4(toy_project):
    routing = toy_project.path / "routing.yaml"
    routing.write_text(routing.read_text().replace("weight: 0.06", "weight: 0.5"))
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["*invalid routing file *routing.yaml:*", "*buckets: weights sum to 1.4400, they must sum to 1*"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--egi-model", "egi/noisy-2"], "*--egi-model: unknown offline policy 'egi/noisy-2'*"),
        (
            ["--egi-model", "oracle"],
            "*--egi-model: 'oracle' is not a provider's model; the offline policy is named egi/oracle "
            "(did you mean --egi-model egi/oracle?)",
        ),
        (["--egi-model", "noisy-0.3"], "*did you mean --egi-model egi/noisy-0.3?)"),
        (
            ["--egi-model", "egi/oracle", "--egi-weights", "M1=0.9,M5=0.3"],
            "ERROR: --egi-weights: the named bucket weights alone sum to 1.2000 (M1=0.9, M5=0.3), above 1; "
            "the six weights must sum to 1",
        ),
        (
            ["--egi-model", "egi/oracle", "--egi-mode", "fast"],
            "*--egi-mode: expected quick or deep, got 'fast'*",
        ),
        (
            ["--egi-model", "egi/oracle", "--egi-trials", "0"],
            "*--egi-trials: expected a whole number >= 1, got '0'*",
        ),
        (
            ["--egi-model", "egi/oracle", "--egi-opt", "nosuch.x=1"],
            "*--egi-opt: unknown suite 'nosuch'; valid: toy, absent*",
        ),
        (
            ["--egi-model", "egi/oracle", "--egi-opt", "toy.max_turns=many"],
            "*--egi-opt toy.max_turns: Input should be a valid integer*",
        ),
        (  # the toy's options model ignores unknown keys; the core does not
            ["--egi-model", "egi/oracle", "--egi-opt", "toy.max_turn=3"],
            "ERROR: --egi-opt toy.max_turn: unknown option for toy; valid keys for toy: "
            "max_turns, fail_env, fail_every",
        ),
    ],
)
def test_bad_options_exit_4(toy_project, args, message):
    result = toy_project.runpytest("toysuites", *args)
    assert result.ret == 4
    result.stderr.fnmatch_lines([message])


def test_profile_key_typo_is_a_usage_error(toy_project):
    routing = toy_project.path / "routing.yaml"
    routing.write_text(routing.read_text().replace("toy: {per_category: 3}", "toy: {per_catgory: 3}"))
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["*modes.quick.suites.toy.per_catgory: unknown profile key for toy; valid: categories, "
         "limit, per_category, seed*"]
    )


def test_duplicate_bucket_in_override_is_an_error():
    with pytest.raises(pytest.UsageError, match="--egi-weights: M1 given twice"):
        parse_bucket_values("--egi-weights", "M1=0.28,M1=0.3", lo=0, hi=1)


def test_unreachable_api_base_fails_fast(toy_project):
    import socket

    with socket.socket() as sock:  # a port on which nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = toy_project.runpytest(
        "toysuites", "--egi-model", "openai/test-model", "--egi-api-base", f"http://127.0.0.1:{port}/v1"
    )
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [f"*--egi-api-base: cannot connect to 127.0.0.1:{port} (Connection refused); is the server running?*"]
    )


@pytest.mark.parametrize("form", ["space", "equals"])
@pytest.mark.parametrize("target", ["afile", "afile/sub"])
def test_unwritable_report_dir_is_refused_before_any_item_runs(toy_project, form, target):
    (toy_project.path / "afile").write_text("not a folder")
    option = ["--egi-report-dir", target] if form == "space" else [f"--egi-report-dir={target}"]
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", *option)
    assert result.ret == 4
    result.stdout.no_fnmatch_line("*passed*")  # nothing ran
    assert result.stderr.lines[0] == (
        f"ERROR: --egi-report-dir: cannot write run reports to {toy_project.path / target}: "
        f"{toy_project.path / 'afile'} is not a folder; pass --egi-report-dir DIR with a writable folder"
    )


def _option(form: str, flag: str, value: str) -> list[str]:
    return [flag, value] if form == "space" else [f"{flag}={value}"]


@pytest.mark.parametrize("form", ["space", "equals"])
def test_report_dir_outside_the_project_in_both_forms(toy_project, tmp_path_factory, form):
    """``--egi-report-dir DIR`` with no test path: pytest's first look at the command line
    took DIR for a test path and made the rootdir DIR's ancestor (routing.yaml not found)."""
    out = tmp_path_factory.mktemp("elsewhere")
    result = toy_project.runpytest("--egi-model", "egi/oracle", "--egi-bootstrap", "0",
                                   *_option(form, "--egi-report-dir", str(out)))
    assert result.ret == 0, result.stderr.str()
    result.assert_outcomes(passed=6)
    assert f"rootdir: {toy_project.path}" in result.stdout.lines
    assert [p.name.split("-")[-2] for p in out.iterdir()] == ["quick"]


OTHER_INI = """\
[pytest]
addopts = --collect-only
testpaths = nothing-here
"""


@pytest.mark.parametrize("form", ["space", "equals"])
def test_routing_from_another_project_does_not_bring_its_config(toy_project, tmp_path_factory, form):
    other = tmp_path_factory.mktemp("other-project")
    (other / "pytest.ini").write_text(OTHER_INI)
    (other / "routing.yaml").write_text((toy_project.path / "routing.yaml").read_text())
    result = toy_project.runpytest("--egi-model", "egi/oracle", "--egi-bootstrap", "0",
                                   *_option(form, "--egi-routing", str(other / "routing.yaml")))
    assert result.ret == 0, result.stderr.str()
    result.assert_outcomes(passed=6)  # not --collect-only, not testpaths from the other ini
    assert f"rootdir: {toy_project.path}" in result.stdout.lines
    assert not any(line.startswith("configfile:") for line in result.stdout.lines)
    egi = json.loads(next((toy_project.path / "reports").iterdir()).joinpath("egi.json").read_text())
    assert egi["routing"]["path"] == str(other / "routing.yaml")


@pytest.mark.parametrize(
    ("flag", "hi", "example"),
    [("--egi-weights", 1.0, "--egi-weights M1=0.3,M4=0.12"),
     ("--egi-floor", 100.0, "--egi-floor M2=75,M5=80")],
)
def test_bucket_value_errors_give_an_example_that_would_work(flag, hi, example):
    """The example in the message is valid for that flag (a weights example of 75 and 80
    would itself be refused as outside [0, 1])."""
    from pytest_egi.options import parse_bucket_values

    with pytest.raises(pytest.UsageError) as info:
        parse_bucket_values(flag, "M7=0.1", lo=0.0, hi=hi)
    assert str(info.value) == (
        f"{flag}: bad entry 'M7=0.1'; expected BUCKET=NUMBER with BUCKET in M1-M6, e.g. {example}"
    )
    example_values = example.split(" ", 1)[1]
    assert parse_bucket_values(flag, example_values, lo=0.0, hi=hi)
