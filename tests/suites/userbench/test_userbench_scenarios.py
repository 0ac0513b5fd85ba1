"""UserBench: upstream's parquet rows made runnable with the scenario files upstream keeps beside
them (``--egi-opt userbench.scenarios=DIR``, ``travelgym_data_<digits>.json``).

The rows are upstream's own (the first three of ``travel22_multiturn/train.parquet``, copied
unchanged into a temporary data folder; the published copy has no test split); the scenario
file is ours, in upstream's shape, with our own synthetic text, for two of the three ids. Upstream's
files are read from ``$EGI_USERBENCH_UPSTREAM``, else ``<repo>/../shared/upstream/userbench/data``;
the tests that need them skip when the folder is absent."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pytest_egi.models.offline import Noise, NullClient, PolicyClient
from pytest_egi.suite import SuiteProfile
from suites.userbench import SUITE, UserbenchOptions
from suites.userbench.agent import run_trial
from suites.userbench.scorer import reference_micro_avg, reference_rewards
from suites.userbench.upstream import NOT_RUNNABLE, SCENARIO_FIX, load_upstream_tasks

ROOT = Path(__file__).resolve().parents[3]
UPSTREAM = Path(
    os.environ.get("EGI_USERBENCH_UPSTREAM", ROOT.parent / "shared" / "upstream" / "userbench" / "data")
)
needs_upstream = pytest.mark.skipif(
    not (UPSTREAM / "travel22_multiturn" / "train.parquet").is_file(),
    reason=f"upstream UserBench data not found at {UPSTREAM}",
)

ROW0, ROW1, ROW2 = "flight:2-37|hotel:2-9", "apartment:2-39|rental_car:2-24", "hotel:2-11|restaurant:2-8"
"""The ids of upstream's first three travel22 train rows (best ids H11/F3, C14/A17, H17/R9)."""


def _option(oid, pool, cost, **fields):
    return {"id": oid, **fields, "cost": cost, "type": pool, "reason": f"synthetic {pool} option"}


def _aspect(label, prefs, arguments, correct, wrong, noise, best=None):
    block = {
        "preferences": [[label, sub, plain, said, "extra upstream field"] for sub, plain, said in prefs],
        "arguments": arguments,
        "options": {
            "correct": [_option(i, "correct", c) for i, c in correct],
            "wrong": [_option(i, "wrong", c) for i, c in wrong],
            "noise": [_option(i, "noise", c) for i, c in noise],
        },
        "correct_ids": [i for i, _ in correct],
    }
    if best:
        block["best_id"] = best
    return block


SCENARIOS = {
    ROW0: {
        "scenario": "A commuter flies from Corvale to Port Emery for a three-night workshop.",
        "dimensions": ["flight", "hotel"],
        "wanted_num": "22",
        "initial_description": "I fly from Corvale to Port Emery on June 4 and need a hotel until June 7.",
        "flight": _aspect(
            "flight",
            [("arrival time", "Lands before 6 pm.", "My workshop dinner starts at seven and I hate rushing."),
             ("aircraft model", "Not a turboprop.", "Propeller planes make my ears ring for days.")],
            {"departure": "Corvale", "destination": "Port Emery", "date": "2025-06-04"},
            correct=[("F3", 180), ("F8", 240)], wrong=[("F1", 120), ("F6", 150)], noise=[("F2", 90)],
            best="F3",
        ),
        "hotel": _aspect(
            "hotel",
            [("floor level", "A room on a high floor.", "Street noise keeps me awake unless I'm high up."),
             ("view", "A view of the water.", "Waking up to the harbour is half the point of the trip.")],
            {"city": "Port Emery", "check_in_date": "2025-06-04", "check_out_date": "2025-06-07"},
            correct=[("H11", 95), ("H4", 130)], wrong=[("H2", 70), ("H9", 80)], noise=[("H7", 60)],
        ),
    },
    ROW1: {
        "scenario": "A family spends five nights in Lindqvist with a flat and a car.",
        "dimensions": ["apartment", "rental_car"],
        "wanted_num": 22,
        "initial_description": "We need a flat in Lindqvist from August 2 to August 7, and a car.",
        "apartment": _aspect(
            "apartment",
            [("pet policy", "Dogs allowed.", "Our beagle comes everywhere with us."),
             ("noise level", "A quiet street.", "The baby naps at noon and wakes at every sound.")],
            {"city": "Lindqvist", "check_in": "2025-08-02", "check_out": "2025-08-07"},
            correct=[("A17", 110), ("A5", 150)], wrong=[("A2", 80), ("A9", 95)], noise=[("A12", 70)],
        ),
        "rental_car": _aspect(
            "rental_car",
            [("fuel type", "Electric.", "I promised my daughter we'd stop burning petrol on holidays."),
             ("transmission", "Automatic.", "I never learned to drive a stick shift.")],
            {"city": "Lindqvist", "pickup": "2025-08-02", "return": "2025-08-07"},
            correct=[("C14", 40), ("C3", 55)], wrong=[("C8", 30), ("C10", 35)], noise=[("C1", 25)],
            best="C14",
        ),
    },
}


@pytest.fixture
def data_dir(tmp_path):
    """``<tmp>/data/travel22_multiturn/train.parquet``: upstream's first three rows, unchanged."""
    if not (UPSTREAM / "travel22_multiturn" / "train.parquet").is_file():
        pytest.skip(f"upstream UserBench data not found at {UPSTREAM}")
    table = pq.read_table(UPSTREAM / "travel22_multiturn" / "train.parquet").slice(0, 3)
    folder = tmp_path / "data" / "travel22_multiturn"
    folder.mkdir(parents=True)
    pq.write_table(table, folder / "train.parquet")
    return tmp_path / "data"


def _scenarios(tmp_path, scenarios=None, digits="22"):
    folder = tmp_path / "travelgym_data"
    folder.mkdir(exist_ok=True)
    (folder / f"travelgym_data_{digits}.json").write_text(json.dumps(scenarios or SCENARIOS))
    return folder


def _load(data_dir, scenarios, **opts):
    profile = SuiteProfile(seed=42, categories=["travel22"], max_turns=20, pass_k=1)
    options = UserbenchOptions(data_dir=data_dir, data_split="train", scenarios=scenarios, **opts)
    return SUITE.load_tasks(profile, options), options


def _run(task, p, options):
    noise = Noise(p, f"42|userbench|{task.id}|1")
    policy = SUITE.reference_policy(task, options, noise)
    client = PolicyClient(f"egi/noisy-{p}" if p else "egi/oracle", policy, noise)
    traj = run_trial(task, client, options)
    return traj, SUITE.score(task, traj.to_dict(), options)


@needs_upstream
def test_real_rows_with_scenarios_run_end_to_end_under_the_oracle(data_dir, tmp_path):
    tasks, options = _load(data_dir, _scenarios(tmp_path))
    assert [t.id for t in tasks] == [t.replace("|", ".") for t in (ROW0, ROW1, ROW2)]
    first, second, missing = tasks
    assert first.runnable and second.runnable
    # the row's own first message and system prompt; the scenario's preferences, arguments, options
    row = pq.read_table(data_dir / "travel22_multiturn" / "train.parquet").to_pylist()[0]
    assert first.data["initial_description"] == row["prompt"][1]["content"]
    assert first.data["system_prompt"] == row["prompt"][0]["content"]
    assert first.data["best_id"] == {"flight": "F3", "hotel": "H11"}
    assert first.data["correct_ids"] == {"flight": ["F3", "F8"], "hotel": ["H11", "H4"]}
    assert [(p["id"], p["aspect"], p["subcategory"]) for p in first.data["preferences"]] == [
        ("P1", "flight", "arrival time"), ("P2", "flight", "aircraft model"),
        ("P3", "hotel", "floor level"), ("P4", "hotel", "view"),
    ]  # fmt: skip
    shown = first.data["options"]["flight"]
    assert sorted(o["id"] for o in shown) == ["F1", "F2", "F3", "F6", "F8"]
    assert all(set(o) == {"id", "cost"} for o in shown)  # upstream's type and reason are not shown
    again, _ = _load(data_dir, tmp_path / "travelgym_data")
    assert again[0].data["options"] == first.data["options"]  # the seeded order, whatever loads first
    assert first.data["option_kinds"]["hotel"]["H9"] == {"pool": "wrong"}
    # the third row's scenario is not in the file: that row alone is skipped, with its reason
    # (Task.cannot_run since issue 22: the core's skip line is "cannot run: <this>")
    path = tmp_path / "travelgym_data" / "travelgym_data_22.json"
    parquet = data_dir / "travel22_multiturn" / "train.parquet"
    assert missing.cannot_run == f"{parquet}, row 2: {path} has no scenario '{ROW2}'; {SCENARIO_FIX}"
    for task in (first, second):
        traj, score = _run(task, 0.0, options)
        info = traj.info["userbench"]
        assert score.success, score.got
        assert traj.messages[0]["content"] == task.data["system_prompt"]
        assert info["rewards"] == reference_rewards(task.data) == [0.2, 0.2, 0.2, 1.0] * 2
        ceiling = reference_micro_avg(task.data)
        assert score.values["micro_avg"] == score.values["micro_avg_ceiling"] == ceiling
        assert (score.values["active_rate"], score.values["passive_rate"]) == (1.0, 0.0)
        # the oracle spoke as upstream's harness: a search of the scenario's own arguments first
        first_call = json.loads(traj.messages[2]["tool_calls"][0]["function"]["arguments"])
        assert first_call["choice"] == "search"
    # the null policy is the floor; a noisy one falls below the oracle
    null = SUITE.score(first, run_trial(first, NullClient(), options).to_dict(), options)
    assert (null.success, null.values["micro_avg"]) == (False, 0.0)
    noisy = [_run(t, 1.0, options)[1] for t in (first, second)]
    assert not any(s.success for s in noisy) and all(s.values["micro_avg"] < 0.4 for s in noisy)


@needs_upstream
def test_rows_without_scenarios_keep_the_old_behaviour(data_dir):
    tasks, _ = _load(data_dir, None)
    parquet = data_dir / "travel22_multiturn" / "train.parquet"
    assert [t.cannot_run for t in tasks] == [f"{parquet}, row {i}: {NOT_RUNNABLE}" for i in range(3)]
    assert tasks[0].data["preferences"] == [] and tasks[0].data["options"] == {}


def _broken(change):
    scenarios = copy.deepcopy(SCENARIOS)
    change(scenarios[ROW0])
    return scenarios


@needs_upstream
@pytest.mark.parametrize(
    "change, field, problem",
    [
        (lambda s: s.pop("scenario"), "scenario", "missing or not a non-empty string (None)"),
        (lambda s: s.update(dimensions=["flight", "restaurant"]), "dimensions",
         f"['flight', 'restaurant'] does not list the aspects of the row's id '{ROW0}'"),
        (lambda s: s.update(wanted_num="33"), "wanted_num", "'33' is not the environment's '22'"),
        (lambda s: s["hotel"]["preferences"].pop(), "hotel.preferences",
         "expected a list of 2 preference(s), the row id's count, got [['hotel', 'floor level', "
         "'A room on a high floor.', \"Street noise keeps me awake unless I'm high up.\", "
         "'extra upstream field']]"),
        (lambda s: s["flight"]["preferences"][1].__setitem__(3, " "), "flight.preferences[1]",
         "expected [aspect, subcategory, preference, implicit statement, ...] (four non-empty strings "
         "first), got ['flight', 'aircraft model', 'Not a turboprop.', ' ', 'extra upstream field']"),
        (lambda s: s["flight"]["options"]["wrong"][0].__setitem__("id", "H1"), "flight.options.wrong[0].id",
         "expected an option id F<n> of the flight, got 'H1'"),
        (lambda s: s["flight"]["options"]["noise"][0].__setitem__("id", "F8"), "flight.options.noise[0].id",
         "F8 appears twice"),
        (lambda s: s["flight"]["options"].pop("noise"), "flight.options.noise",
         "expected a list of options, got None"),
        (lambda s: s["flight"]["options"]["correct"].pop(0), "flight.options",
         "no option F3, the row's best id (reward_model.ground_truth)"),
        (lambda s: s["flight"].update(best_id="F8"), "flight.best_id",
         "'F8', but the row's ground truth names 'F3'"),
        (lambda s: s["hotel"].update(arguments={}), "hotel.arguments",
         "expected a non-empty object of search arguments, got {}"),
    ],
    ids=["no-scenario-text", "dimensions", "wanted_num", "preference-count", "preference-shape", "id-letter",
         "id-twice", "pool-missing", "best-not-an-option", "best-id-mismatch", "no-arguments"],
)  # fmt: skip
def test_a_malformed_scenario_errors_alone_naming_file_scenario_field_and_fix(
    data_dir, tmp_path, change, field, problem
):
    """Since issue 22 a malformed scenario is an error of its task alone (it was a skip)."""
    folder = _scenarios(tmp_path, _broken(change))
    tasks, _ = _load(data_dir, folder)
    path = folder / "travelgym_data_22.json"
    parquet = data_dir / "travel22_multiturn" / "train.parquet"
    reason = f"{path}: scenario '{ROW0}': field {field}: {problem}; {SCENARIO_FIX}"
    assert tasks[0].load_error == (
        f"{parquet}: task '{tasks[0].id}' could not be loaded: RowError: row 0: {reason} (this task errors "
        "alone; fix the entry or leave it out)"
    )
    assert tasks[1].runnable  # the other scenario still runs


@needs_upstream
def test_scenario_file_faults(data_dir, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    # no file for the environment: each row skipped with that reason
    tasks, _ = _load(data_dir, empty)
    reason = f"no scenario file {empty / 'travelgym_data_22.json'} for travel22; {SCENARIO_FIX}"
    parquet = data_dir / "travel22_multiturn" / "train.parquet"
    assert [t.cannot_run for t in tasks] == [f"{parquet}, row {i}: {reason}" for i in range(3)]
    # a file that is not one JSON object, or no such folder: a usage error naming the file and fix
    bad = _scenarios(tmp_path)
    (bad / "travelgym_data_22.json").write_text("[1, 2]")
    with pytest.raises(ValueError) as exc:
        _load(data_dir, bad)
    assert str(exc.value) == (f"userbench: {bad / 'travelgym_data_22.json'}: expected one JSON object "
                              f"mapping scenario ids to scenarios, got a list; {SCENARIO_FIX}")  # fmt: skip
    (bad / "travelgym_data_22.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"_22\.json: not valid JSON \(Expecting property name"):
        _load(data_dir, bad)
    with pytest.raises(ValueError) as exc:
        load_upstream_tasks(data_dir, "travel22", split="train", scenarios=tmp_path / "nowhere")
    nowhere = tmp_path / "nowhere"
    assert str(exc.value) == f"userbench: scenarios folder {nowhere} does not exist; {SCENARIO_FIX}"
