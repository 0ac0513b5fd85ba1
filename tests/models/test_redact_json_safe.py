"""The fast redaction of records and trajectories (``redact_json_safe``) redacts exactly what
the walk over every string (``redact_obj``) does, and hands back the object itself when there
is nothing to redact."""

from __future__ import annotations

import random

import pytest

from pytest_egi.models.secrets import redact_json_safe, redact_obj

SECRET = 'q"uo\\te-secret-1234'
CASES = [
    {"a": "x\nsk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ123456"},  # a key shape after an escaped newline
    {"t": "Bearer\nabcdefghijklmnop"},  # bearer token after a newline
    {"q": f"see {SECRET} here"},  # an environment secret holding a quote and a backslash
    {"u": ["postgres://u:pw123@h"]},  # a URL password inside a list
    {"z": "a\x00sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA"},  # after a control character
    {"sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ123456": 1},  # in a key
]


@pytest.fixture(autouse=True)
def _secret_env(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_API_KEY", SECRET)


@pytest.mark.parametrize("obj", CASES)
def test_a_secret_anywhere_is_redacted_as_the_walk_does(obj):
    got = redact_json_safe(obj)
    assert got is not obj
    assert got == redact_obj(obj)
    assert "***" in repr(got)


def test_nothing_to_redact_returns_the_object_itself():
    obj = {"trajectory": [{"role": "user", "content": "what is the code of item 3?\n\"C017\""}],
           "score": 1.0, "path": "C:\\temp\\x"}
    assert redact_json_safe(obj) is obj


def test_random_strings_agree_with_the_walk():
    rng = random.Random(7)
    parts = ["a", " ", "\n", "\t", '"', "\\", "\x00", "\x0b", "é", "Bearer ", "api_key=", "sk-",
             "proj-", "ABCDEFGHIJKLMNOPQRSTUV", "://", "u:", "pw@", SECRET[:5], SECRET, "0123456789"]
    for _ in range(2000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(1, 12)))
        obj = {"k": [text, {"n": text[::-1]}]}
        assert redact_json_safe(obj) == redact_obj(obj), text


@pytest.mark.parametrize("text", [
    "ApI-kEy: 'abcdefghijkl'",  # any case
    "ap\u0131_key=abcdefghijkl",  # a dotless i, which the pattern's ignore-case matches
    "auth: BEARER abcdefghijkl",
    "dsn mysql://root:hunter22@db:3306",
    "key AKIAABCDEFGHIJKLMNOP in a sentence",
])
def test_the_quick_checks_before_the_patterns_miss_no_secret(text):
    """``holds_secret`` tests substrings before running each pattern; what a pattern matches
    is still found, and redacted by ``redact_json_safe`` as by the walk."""
    from pytest_egi.models.secrets import holds_secret

    assert holds_secret(text, values=[])
    obj = {"content": text}
    assert redact_json_safe(obj) == redact_obj(obj) != obj


def test_the_trajectory_text_is_serialized_once_and_redacted_when_needed():
    """``holds_secret_json`` on the sorted, compact text of a trajectory file decides as the
    check on an unsorted dump does."""
    import json

    from pytest_egi.models.secrets import holds_secret_json

    for obj in CASES:
        assert holds_secret_json(json.dumps(obj, sort_keys=True, ensure_ascii=False))
    clean = {"b": ["what is 2+2?", {"a": "4\n"}], "api_calls": 3}
    assert not holds_secret_json(json.dumps(clean, sort_keys=True, ensure_ascii=False))
