"""The deterministic user simulator and search judge (RuleUser), and the acceptance property that
every preference is reachable by a concrete question."""

from __future__ import annotations

import pytest

from suites.userbench.catalogue import KINDS, statement_index
from suites.userbench.data import ENVIRONMENTS, generate_task
from suites.userbench.simulator import Classification, RuleUser, SearchVerdict, concrete_question

USER = RuleUser()


@pytest.fixture
def task():
    return generate_task("travel22", 0, 42)  # Denver -> Atlanta, apartment + rental car, April 18-23


@pytest.mark.parametrize(
    "request_text,verdict",
    [
        ("apartment in Atlanta, check in April 18, check out April 23", SearchVerdict("True", "apartment")),
        ("Apartment, Atlanta, 2025-04-18 to April 23rd", SearchVerdict("True", "apartment")),
        ("rental car in Atlanta from April 18 to April 23", SearchVerdict("True", "rental_car")),
        ("apartment in Atlanta from April 18", SearchVerdict("False")),  # a date is missing
        ("apartment in Atlanta or Vienna, April 18 to April 23", SearchVerdict("False")),  # another city
        ("apartment and rental car in Atlanta, April 18 to April 23", SearchVerdict("False")),  # two at once
        ("hotel in Atlanta from April 18 to April 23", SearchVerdict("False")),  # not an aspect of this trip
        ("anything nice in Atlanta from April 18 to April 23", SearchVerdict("N/A")),
        ("apartment in Atlanta, April 18 to April 230", SearchVerdict("False")),  # whole words only
    ],
)
def test_search_judge(task, request_text, verdict):
    assert USER.judge_search(request_text, task) == verdict


def test_classifier_types(task):
    remaining = task["preferences"]  # P1 apartment layout, P2 apartment amenities, P3 seats, P4 company
    assert USER.classify("How many bedrooms does the apartment need?", task, remaining, []) == Classification(
        2, "P1"
    )
    assert USER.classify("Does the car need seven seats?", task, remaining, []) == Classification(2, "P3")
    # a concrete question about a kind the user holds no preference on
    assert USER.classify(
        "What insurance do you want on the rental car?", task, remaining, []
    ) == Classification(3)
    # the asked kind decides, not a shorter keyword of another kind ("seat" in "child seat")
    assert USER.classify("Should the car come with a child seat?", task, remaining, []) == Classification(3)
    # a preference already elicited is no longer matched
    assert USER.classify("Which apartment amenities matter?", task, remaining[2:], []) == Classification(3)
    assert USER.classify(
        "Do you have any preferences for the apartment?", task, remaining, []
    ) == Classification(4)
    assert USER.classify("What do you need?", task, remaining, []) == Classification(4)
    assert USER.classify("Great, thanks! Have a good day.", task, remaining, []) == Classification(1)


def test_replies(task):
    pref = task["preferences"][1]
    assert USER.reply("elicit", "q", task, pref, []) == pref["implicit_statement"]
    proactive = USER.reply("proactive", "q", task, pref, [])
    assert proactive.endswith(pref["implicit_statement"]) and proactive != pref["implicit_statement"]
    natural = USER.reply("natural", "hello", task, None, [])
    assert not any(s in natural for s in statement_index())
    with pytest.raises(AssertionError, match="reply mode 'elicit' needs a preference"):
        USER.reply("elicit", "q", task, None, [])


SAMPLE = [(env, i) for env in ENVIRONMENTS for i in range(10)]


@pytest.mark.parametrize("env,index", SAMPLE, ids=[f"{e}-{i}" for e, i in SAMPLE])
def test_every_preference_is_reachable_by_a_concrete_question(env, index):
    task = generate_task(env, index, 42)
    prefs = task["preferences"]
    for n, pref in enumerate(prefs):
        question = concrete_question(pref)
        # matched among all preferences, and among those left after the earlier ones were elicited
        assert USER.classify(question, task, prefs, []) == Classification(2, pref["id"])
        assert USER.classify(question, task, prefs[n:], []) == Classification(2, pref["id"])
        # once elicited, the same question is a concrete question with no preference behind it
        rest = [p for p in prefs if p["id"] != pref["id"]]
        assert USER.classify(question, task, rest, []) == Classification(3)


def test_every_catalogue_question_names_its_aspect_and_hits_its_own_kind():
    task = {"dimensions": list(KINDS)}
    for aspect, kinds in KINDS.items():
        for kind in kinds:
            pref = {"id": "P1", "aspect": aspect, "subcategory": kind.subcategory}
            assert USER.classify(kind.question, task, [pref], []) == Classification(2, "P1"), kind.question
