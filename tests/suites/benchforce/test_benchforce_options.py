"""``max_turns`` below 2 is refused, in the option and in a profile, with the reason."""

from __future__ import annotations

import pytest

from pytest_egi.scoring.config import validate_suite_options
from pytest_egi.suite import SuiteProfile
from suites.benchforce import SUITE, BenchforceOptions

WHY = (
    "it must be a whole number of at least 2: the caller answers every agent reply but the last, so "
    "it needs at least one reply after its opening to answer a question or end the call"
)


@pytest.mark.parametrize("value", ["1", "0", "-3"])
def test_an_option_max_turns_below_two_says_why(value):
    with pytest.raises(pytest.UsageError) as info:
        validate_suite_options(BenchforceOptions, "benchforce", {"max_turns": value})
    assert str(info.value) == (
        f"--egi-opt benchforce.max_turns: is {int(value)}; {WHY}\n"
        "(valid keys for benchforce: max_turns, timeout_s, server_timeout_s, data_dir)"
    )


def test_two_turns_is_the_least_accepted():
    assert validate_suite_options(BenchforceOptions, "benchforce", {"max_turns": "2"}).max_turns == 2


@pytest.mark.parametrize("value", [1, "15", True])
def test_a_profile_max_turns_below_two_or_not_a_number_says_why(value):
    profile = SuiteProfile(seed=42, categories=["hospital"], limit=1, max_turns=value)
    with pytest.raises(ValueError) as info:
        SUITE.load_tasks(profile, BenchforceOptions())
    assert str(info.value) == f"the profile's max_turns is {value!r}; {WHY}"


def test_the_option_overrides_the_profile():
    profile = SuiteProfile(seed=42, categories=["hospital"], limit=1, max_turns=1)
    (task,) = SUITE.load_tasks(profile, BenchforceOptions(max_turns=3))
    assert task.data["max_turns"] == 3
