"""Upstream Benchforce's hr_software files read as they are (``benchforce.data_dir``).

Upstream's checkout is ``$EGI_BENCHFORCE_UPSTREAM``, else ``<repo>/../shared/upstream/benchforce``
(its hr_software files are under ``src/environments/hr_software/``); the tests that need it are
skipped when it is absent. The loader is also tested on small files made here, so it is tested
without the checkout too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import suites.benchforce as benchforce
from pytest_egi.models.offline import Noise, NullClient, PolicyClient
from pytest_egi.suite import SuiteProfile
from suites.benchforce import BenchforceOptions
from suites.benchforce.agent import run_trial
from suites.benchforce.data import load_upstream
from suites.benchforce.env.hr_software import ENV
from tests.helpers.suite_run import run_suite

ROOT = Path(__file__).resolve().parents[3]
CHECKOUT = Path(os.environ.get("EGI_BENCHFORCE_UPSTREAM", ROOT.parent / "shared" / "upstream" / "benchforce"))
"""Upstream's repository checkout (the folder holding ``src/environments/``)."""
HR_DIR = CHECKOUT / "src" / "environments" / "hr_software"
needs_upstream = pytest.mark.skipif(
    not (HR_DIR / "entries_dump.json").is_file(),
    reason=f"upstream hr_software files not found at {HR_DIR} (set EGI_BENCHFORCE_UPSTREAM to the "
    "upstream Benchforce checkout)",
)
RUNNABLE = ["entry_0", "entry_1", "entry_11", "entry_14", "entry_15", "entry_17", "entry_20"]
"""The upstream entries whose gold needs only the published files (no users files)."""


def _tasks(data_dir: Path):
    profile = SuiteProfile(seed=42, categories=["hr_software"], max_turns=15)
    return benchforce.SUITE.load_tasks(profile, BenchforceOptions(data_dir=data_dir))


def _oracle(task, options):
    noise = Noise(0.0, f"42|benchforce|{task.id}|1")
    return PolicyClient("egi/oracle", benchforce.SUITE.reference_policy(task, options, noise), noise)


# -- files we make -----------------------------------------------------------------------------

ORGS = {
    "ORG-000001": {
        "id": "ORG-000001",
        "name": "Quillmark Paper",
        "primary_email": "office@quillmark.example",
        "subscription_id": "SUB-000001",
        "offices": [{"region": "us-east", "city": "Dover", "is_headquarters": True}],
        "status": "active",
    }
}
SUBS = {
    "SUB-000001": {
        "id": "SUB-000001",
        "org_id": "ORG-000001",
        "tier": "professional",
        "seats": 40,
        "price_per_seat": 20,
        "volume_discount_percentage": 0,
        "total_price": 800.0,
        "renewal_date": "2025-01-01T00:00:00Z",
    }
}
LOGS = [
    {
        "id": "DT-000001",
        "org_id": "ORG-000001",
        "start_time": "2024-05-14T09:00:00Z",
        "end_time": "2024-05-14T10:00:00Z",
        "duration_minutes": 60,
        "exclusions": [],
    }
]
USERS_1 = {
    "USR-000001": {
        "id": "USR-000001",
        "org_id": "ORG-000001",
        "name": {"first_name": "Wren", "last_name": "Oakes"},
        "email": "wren.oakes@quillmark.example",
        "roles": ["admin"],
        "department": "IT",
        "status": "active",
        "permissions": ["admin"],
    }
}
USERS_3 = {
    "USR-000002": {
        "id": "USR-000002",
        "org_id": "ORG-000001",
        "name": {"first_name": "Tarek", "last_name": "Vale"},
        "email": "tarek.vale@quillmark.example",
        "roles": ["employee"],
        "department": "Sales",
        "status": "active",
        "permissions": ["view_own_profile"],
    }
}
ADMIN = (
    "Your name is {'first_name': 'Wren', 'last_name': 'Oakes'} and your email is "
    "wren.oakes@quillmark.example."
)
ENTRIES = [
    {"id": "entry_0", "instructions": "You just want to know what 6 * 7 is.", "actions": [
        {"name": "calculate", "arguments": {"expression": "6 * 7"}}], "outputs": ["42"]},
    {"id": "entry_1", "instructions": f"You are an admin at Quillmark Paper. {ADMIN} You want to suspend "
        "Tarek Vale. You don't know your org id.", "actions": [
        {"name": "find_user_by_email", "arguments": {"email": "wren.oakes@quillmark.example"}},
        {"name": "modify_user_status", "arguments": {
            "user_id": "USR-000002", "new_status": "suspended", "org_id": "ORG-000001"}}], "outputs": []},
    {"id": "entry_2", "instructions": f"{ADMIN} Cut our seats to 30.", "actions": [
        {"name": "modify_subscription_seats", "arguments": {
            "subscription_id": "SUB-000001", "new_seat_count": 30}}], "outputs": []},
    {"id": "entry_3", "instructions": f"{ADMIN} Fix Tarek's permissions.", "actions": [
        {"name": "modify_user_permissions", "arguments": {
            "user_id": "USR-000002", "new_permissions": "*", "org_id": "ORG-000001"}}], "outputs": []},
    {"id": "entry_4", "instructions": f"{ADMIN} Claim a credit for the outage of May 14th.", "actions": [
        {"name": "verify_downtime", "arguments": {
            "subscription_id": "SUB-000001", "incident_timestamp": "2024-05-14T09:30:00Z"}},
        {"name": "calculate_service_credits", "arguments": {
            "subscription_id": "SUB-000001", "downtime_minutes": 60}}], "outputs": ["35.56"]},
    {"id": "entry_5", "instructions": "Reset my password.", "actions": [
        {"name": "reset_password", "arguments": {}}], "outputs": []},
    {"id": "entry_6", "instructions": f"{ADMIN} Check our subscription.", "actions": [
        {"name": "get_subscription_details", "arguments": {"subscription_id": "SUB-000001"}}],
        "outputs": []},
    {"id": "entry_7", "instructions": f"{ADMIN} How many seats short of a volume discount are we?",
        "actions": [{"name": "get_subscription_details", "arguments": {"subscription_id": "SUB-000001"}}],
        "outputs": ["60"]},
    {"id": "entry_8", "instructions": f"{ADMIN} We want 45 seats.", "actions": [
        {"name": "modify_subscription_seats", "arguments": {
            "subscription_id": "SUB-000001", "new_seat_count": "45"}}], "outputs": []},
]  # fmt: skip
"""Our own upstream-shaped entries: runnable ones (0, 1, 4, a look-up without outputs 6, a
figure no tool output holds 7: 100 - 40 seats), a refused gold call (2), a wildcard in a write
(3), an unknown tool (5) and an argument of the wrong type (8). Entry 4's credit by hand: 60 min of 43200 is
99.861111% uptime, 0.088889 points below 99.95, so 800 * 5% * 0.88889 = 35.56."""


def _write(root: Path, *, users: bool = True, downtime: bool = True, **override: object) -> Path:
    """Our files in upstream's layout under ``root``; ``override`` replaces a file's content
    (file name with ``.`` as ``_``: ``data_subscriptions_json``)."""
    folder = root / "src" / "environments" / "hr_software"
    folder.mkdir(parents=True)
    files: dict[str, object] = {
        "data_organizations.json": ORGS,
        "data_subscriptions.json": SUBS,
        "entries_dump.json": ENTRIES,
    }
    if downtime:
        files["data_downtime_logs.json"] = LOGS
    if users:
        files["data_users_part_1.json"] = USERS_1
        files["data_users_part_3.json"] = USERS_3
    for name, content in files.items():
        content = override.get(name.replace(".", "_"), content)
        if isinstance(content, bytes):
            (folder / name).write_bytes(content)
        else:
            (folder / name).write_text(content if isinstance(content, str) else json.dumps(content))
    return folder


def test_loader_converts_our_files_and_says_why_entries_cannot_run(tmp_path):
    folder = _write(tmp_path)
    data = load_upstream(ENV, tmp_path)
    world = data.world
    assert sorted(world) == ["downtime_logs", "handoff", "organizations", "subscriptions", "users"]
    assert world["downtime_logs"]["DT-000001"]["duration_minutes"] == 60  # a list upstream, keyed here
    assert sorted(world["users"]) == ["USR-000001", "USR-000002"]  # parts 1 and 3 merged
    assert "offices" not in world["organizations"]["ORG-000001"]  # our fields only
    assert world["organizations"]["ORG-000001"]["name"] == "Quillmark Paper"
    assert [(e["id"], e["entry_num"]) for e in data.entries] == [(f"entry_{i}", i + 1) for i in range(9)]
    assert data.unrunnable == {
        "entry_2": "gold action 0 (modify_subscription_seats) is refused by the tool: Seats can only be "
        "reduced at renewal",
        "entry_3": "gold action 0 (modify_user_permissions) has a '*' wildcard for 'new_permissions', so "
        "its final state is unknown",
        "entry_5": "gold action 0 names no hr_software tool: 'reset_password'",
        "entry_8": "gold action 0 (modify_subscription_seats) has arguments the tool's schema refuses: "
        "'45' is not of type 'integer' (at 'new_seat_count')",
    }
    suspend = data.entries[1]["user"]
    assert suspend["facts"] == {
        "email": "wren.oakes@quillmark.example",
        "name": "Wren Oakes",
        "org_name": "Quillmark Paper",
        "new_status": "suspended",
    }
    assert suspend["goal"] == "get help with this: I want to suspend Tarek Vale."
    assert data.entries[4]["user"]["facts"]["incident_time"] == "2024-05-14T09:30:00Z"
    # without the users files and the downtime log, the entries needing them cannot run
    bare = tmp_path / "bare"
    _write(bare, users=False, downtime=False)
    absent = load_upstream(ENV, bare).unrunnable
    where = str((bare / "src" / "environments" / "hr_software").resolve())
    assert absent["entry_1"] == (
        "gold action 0 (find_user_by_email) reads users, and no users file (data_users_part_1.json ... "
        f"data_users_part_6.json) is in {where!r}"
    )
    assert absent["entry_4"] == (
        "gold action 0 (verify_downtime) reads downtime_logs, and data_downtime_logs.json is not in "
        f"{where!r}"
    )
    assert "entry_0" not in absent and folder.is_dir()


def test_runnable_entries_of_our_files_replay_under_the_oracle(tmp_path):
    _write(tmp_path)
    options = BenchforceOptions(data_dir=tmp_path)
    tasks = _tasks(tmp_path)
    assert [t.id for t in tasks if not t.cannot_run] == [
        "hr_software.entry_0",
        "hr_software.entry_1",
        "hr_software.entry_4",
        "hr_software.entry_6",
        "hr_software.entry_7",
    ]
    finals, nulls = {}, {}
    for task in tasks:
        if task.cannot_run:
            continue
        traj = run_trial(task, _oracle(task, options), options).to_dict()
        score = benchforce.SUITE.score(task, traj, options)
        assert score.success and score.values["finished"] == 1.0, (task.id, score.got)
        finals[task.id] = traj["info"]["benchforce"]["final_state"]
        null = benchforce.SUITE.score(task, run_trial(task, NullClient(), options).to_dict(), options)
        # the caller gave up and hung up: finished (upstream's terminate), not passed
        assert not null.success and null.values["finished"] == null.values["gave_up"] == 1.0, task.id
        nulls[task.id] = null
    # the server ran the suspension on upstream-shaped data, as the dry run expects
    assert finals["hr_software.entry_1"]["users"]["USR-000002"] == {
        "status": "suspended",
        "permissions": ["view_own_profile"],
    }
    assert finals["hr_software.entry_4"]["users"]["USR-000002"]["status"] == "active"
    # a look-up without outputs leaves the state criterion vacuous: its gold calls decide
    lookup = nulls["hr_software.entry_6"]
    assert lookup.values["state_match"] == 1.0 and lookup.details["criteria"]["gold_calls"] is False
    assert lookup.got.startswith("a look-up entry's gold calls were not all made")


def test_a_figure_no_tool_output_holds_is_said_only_after_a_faultless_run(tmp_path):
    _write(tmp_path)
    options = BenchforceOptions(data_dir=tmp_path)
    task = next(t for t in _tasks(tmp_path) if t.id == "hr_software.entry_7")
    said = {}
    for key in ("1", "2", "3", "4", "5", "6", "7", "8"):
        noise = Noise(0.5, f"figure|{key}")
        policy = benchforce.SUITE.reference_policy(task, options, noise)
        if not policy.silent and noise.made:  # a faulty step, details still reported
            traj = run_trial(task, PolicyClient("egi/noisy-0.5", policy, noise), options).to_dict()
            said["faulty"] = traj["final_answer"]
            break
    traj = run_trial(task, _oracle(task, options), options).to_dict()
    assert traj["final_answer"].endswith("From these records: 60.")
    assert "From these records" not in said["faulty"]


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        _tasks(tmp_path)
    assert str(info.value) == (
        f"data_dir {str(tmp_path)!r} has no hr_software folder at "
        f"{str(tmp_path / 'src' / 'environments' / 'hr_software')!r}; set --egi-opt "
        "benchforce.data_dir=PATH to a checkout of upstream's repository (the folder holding "
        "src/environments/)"
    )


_NO_TIER = {k: v for k, v in SUBS["SUB-000001"].items() if k != "tier"}


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"data_subscriptions_json": {"SUB-000001": {**SUBS["SUB-000001"], "tier": "gold"}}},
            "{dir}/data_subscriptions.json: record 'SUB-000001': field 'tier' is 'gold'; fix: use one of "
            "['basic', 'professional', 'enterprise']",
        ),
        (
            {"data_subscriptions_json": {"SUB-000001": _NO_TIER}},
            "{dir}/data_subscriptions.json: record 'SUB-000001': field 'tier' is missing; fix: give it a "
            "str value",
        ),
        (
            {"data_subscriptions_json": {"SUB-000001": {**SUBS["SUB-000001"], "seats": "forty"}}},
            "{dir}/data_subscriptions.json: record 'SUB-000001': field 'seats' is \"forty\", expected int; "
            "fix: repair the file or restore upstream's copy",
        ),
        (
            {"data_organizations_json": [ORGS["ORG-000001"]]},
            "{dir}/data_organizations.json: the top level is a list; fix: make it an object of "
            "organization records keyed by id",
        ),
        (
            {"data_downtime_logs_json": [{**LOGS[0], "end_time": "soon"}]},
            "{dir}/data_downtime_logs.json: record 1: field 'end_time' is 'soon'; fix: use ISO 8601 like "
            "2024-05-15T15:00:00Z",
        ),
        (
            {"data_users_part_1_json": "{not json"},
            "{dir}/data_users_part_1.json is not valid JSON (line 1, column 2: Expecting property name "
            "enclosed in double quotes); fix: repair the file or restore upstream's copy",
        ),
        (
            {"data_subscriptions_json": b"\xff\xfe garbage"},
            "{dir}/data_subscriptions.json is not UTF-8 text (byte 0xff at offset 0); fix: save it as "
            "UTF-8 or restore upstream's copy",
        ),
    ],
)
def test_malformed_file_names_the_file_the_field_and_the_fix(tmp_path, override, message):
    folder = _write(tmp_path, **override)
    with pytest.raises(ValueError) as info:
        _tasks(tmp_path)
    assert str(info.value) == message.format(dir=folder.resolve())


def test_a_malformed_entry_errors_alone_naming_its_file_entry_and_fix(tmp_path):
    # it failed the whole file, so the suite's collection
    good = {"id": "entry_1", "instructions": "Add up 2 and 3 for me.",
            "actions": [{"name": "calculate", "arguments": {"expression": "2 + 3"}}], "outputs": ["5"]}
    folder = _write(tmp_path, entries_dump_json=[
        {"id": "entry_0", "instructions": "x"}, good, {**good, "id": "entry_2", "outputs": "5"},
        {**good, "id": "entry_3", "actions": [{"name": "calculate", "arguments": {"expression": 5}}]},
    ])  # fmt: skip
    path = folder.resolve() / "entries_dump.json"
    tasks = {t.id: t for t in _tasks(tmp_path)}
    assert {k: t.load_error or t.cannot_run for k, t in tasks.items()} == {
        "hr_software.entry_0": f"{path}: entry 1: field 'actions' is missing; fix: give it a list value",
        "hr_software.entry_1": None,
        "hr_software.entry_2": f"{path}: entry 3 (entry_2): field 'outputs' is \"5\"; fix: make it a "
        "list of strings",
        "hr_software.entry_3": "gold action 0 (calculate) has arguments the tool's schema refuses: 5 is "
        "not of type 'string' (at 'expression')",
    }
    broken = [k for k, t in tasks.items() if t.load_error]
    assert broken == ["hr_software.entry_0", "hr_software.entry_2"]  # their items error, entry_3 skips


_INTEGRITY = "the upstream files fail the integrity check ({n}):\n  "


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"data_subscriptions_json": {"SUB-000001": {**SUBS["SUB-000001"], "org_id": "ORG-999999"}}},
            _INTEGRITY.format(n="1 problem")
            + "{dir}/data_subscriptions.json: record 'SUB-000001': field 'org_id' is 'ORG-999999', not the "
            "id of any organizations record; fix: correct it, or add the organizations record 'ORG-999999'",
        ),
        (
            {"data_subscriptions_json": {"SUB-000001": {**SUBS["SUB-000001"], "seats": -5}}},
            _INTEGRITY.format(n="1 problem")
            + "{dir}/data_subscriptions.json: record 'SUB-000001': field 'seats' is -5, below 0; fix: write "
            "a number of 0 or more",
        ),
        (
            {"data_users_part_3_json": {"USR-000002": {**USERS_3["USR-000002"], "manager_id": "USR-000404"}},
             "data_downtime_logs_json": [{**LOGS[0], "org_id": "ORG-000002", "duration_minutes": -60}]},
            _INTEGRITY.format(n="3 problems")
            + "{dir}/data_users_part_3.json: record 'USR-000002': field 'manager_id' is 'USR-000404', not "
            "the id of any users record; fix: correct it, or add the users record 'USR-000404'\n  "
            "{dir}/data_downtime_logs.json: record 'DT-000001': field 'org_id' is 'ORG-000002', not the id "
            "of any organizations record; fix: correct it, or add the organizations record 'ORG-000002'\n  "
            "{dir}/data_downtime_logs.json: record 'DT-000001': field 'duration_minutes' is -60, below 0; "
            "fix: write a number of 0 or more",
        ),
    ],
)  # fmt: skip
def test_records_that_cannot_be_right_are_refused_with_file_record_field_and_fix(tmp_path, override, message):
    folder = _write(tmp_path, **override)
    with pytest.raises(ValueError) as info:
        _tasks(tmp_path)
    assert str(info.value) == message.format(dir=folder.resolve())


def test_references_into_an_absent_table_are_not_checked(tmp_path):
    """Upstream publishes no users files: a table whose file is absent is loaded empty, and
    references into it are not dangling (entries reading it are unrunnable instead); a file
    present but empty is checked."""
    folder = _write(tmp_path, users=False, data_subscriptions_json={})
    with pytest.raises(ValueError, match=r"field 'subscription_id' is 'SUB-000001', not the id of any"):
        load_upstream(ENV, tmp_path)
    (folder / "data_subscriptions.json").unlink()
    data = load_upstream(ENV, tmp_path)
    assert data.world["organizations"]["ORG-000001"]["subscription_id"] == "SUB-000001"
    assert data.world["subscriptions"] == {} and data.world["users"] == {}


# -- upstream's files --------------------------------------------------------------------------


@needs_upstream
def test_every_upstream_entry_loads_and_the_unrunnable_say_why():
    tasks = _tasks(CHECKOUT)
    raw = json.loads((HR_DIR / "entries_dump.json").read_text())
    assert [t.id for t in tasks] == [f"hr_software.{e['id']}" for e in raw] and len(tasks) == 28
    assert [t.data["entry_num"] for t in tasks] == list(range(1, 29))  # A10.3: numbered here
    assert [t.id.split(".")[1] for t in tasks if not t.cannot_run] == RUNNABLE
    reasons = {t.id: t.cannot_run for t in tasks if t.cannot_run}
    assert len(reasons) == 21
    assert reasons["hr_software.entry_19"] == (
        "gold action 0 (modify_user_status) reads users, and no users file (data_users_part_1.json ... "
        f"data_users_part_6.json) is in {str(HR_DIR.resolve())!r}"
    )
    assert all("reads users, and no users file" in r for r in reasons.values())
    world = load_upstream(ENV, CHECKOUT).world
    assert len(world["organizations"]) == len(world["subscriptions"]) == 500
    assert len(world["downtime_logs"]) == 1000 and world["users"] == {}
    calc = next(t for t in tasks if t.id == "hr_software.entry_14").data["user"]
    assert calc["facts"]["email"] == "ethan.khan@nextgenadvancedpremier.net"


@needs_upstream
def test_upstream_runnable_entries_pass_under_the_oracle_through_the_suite(pytester, monkeypatch):
    result, egi = run_suite(
        pytester,
        "benchforce",
        "egi/oracle",
        "--egi-opt",
        f"benchforce.data_dir={CHECKOUT}",
        "-k",
        "hr_software",
        "-rs",
        mode="deep",
    )
    result.assert_outcomes(passed=7, skipped=21)
    result.stdout.fnmatch_lines(
        [
            "*cannot run: gold action 0 (modify_user_status) reads users, "
            "and no users*"
        ]
    )
    subs = egi["suites"]["benchforce"]["sub_metrics"]
    assert subs["hr_software.accuracy_all"] == subs["hr_software.finished_rate"] == 1.0
    assert subs["hr_software.entries"] == 7.0
