"""Reading upstream's files for hospital and order_management: data tables converted into our
world, ``entries.py`` read as a literal (never run), malformed files named, entries that cannot
run set aside with the reason; on files made here, and on upstream's own when present
(``$EGI_BENCHFORCE_UPSTREAM``, else ``<repo>/../shared/upstream/benchforce``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_egi.models.offline import Noise, PolicyClient
from pytest_egi.run.recorder import shorten
from pytest_egi.suite import SuiteProfile
from suites.benchforce import SUITE, BenchforceOptions
from suites.benchforce.agent import run_trial
from suites.benchforce.data import load_upstream
from suites.benchforce.env import environment
from suites.benchforce.env.upstream_files import read_entries, user_block

ROOT = Path(__file__).resolve().parents[3]
CHECKOUT = Path(os.environ.get("EGI_BENCHFORCE_UPSTREAM", ROOT.parent / "shared" / "upstream" / "benchforce"))
"""Upstream's repository checkout (its environments under ``src/environments/``)."""


def _needs_upstream(env: str) -> pytest.MarkDecorator:
    folder = CHECKOUT / "src" / "environments" / env / "data"
    return pytest.mark.skipif(
        not folder.is_dir(),
        reason=f"upstream {env} data not found at {folder} "
        "(set EGI_BENCHFORCE_UPSTREAM to upstream's checkout)",
    )


# -- files made here ----------------------------------------------------------------------------

HOSPITAL = {
    "patients": {
        "P1": {
            "patient_id": "P1",
            "name": "Wren Adeyemi",
            "emergency_contact": "Ola",
            "emergency_phone": "1",
        },
        "P2": {"patient_id": "P2", "name": "Tove Lindahl", "email": "t@x.example"},
    },
    "doctors": {
        "D1": {
            "doctor_id": "D1",
            "name": "Dr. Ines Barros",
            "department": "Neurology",
            "specialty": "Neurology",
        },
        "D2": {"doctor_id": "D2", "name": "Dr. Omar Haddad", "department": "Cardiology"},
    },
    "departments": {"DEPT1": {"department_id": "DEPT1", "name": "Neurology", "floor": 3}},
    "appointments": {
        "A1": {
            "appointment_id": "A1",
            "patient_id": "P1",
            "doctor_id": "D1",
            "appointment_date": "2024-02-01",
            "appointment_time": "9:00 AM",
            "department": "Neurology",
            "status": "scheduled",
        }
    },
    "lab_results": {"L1": {"result_id": "L1", "patient_id": "P1", "test_name": "CBC", "status": "pending"}},
    "medications": {
        "M1": {"medication_id": "M1", "patient_id": "P2", "medication_name": "Zolvex", "dosage": "5mg"}
    },
    "referrals": {},
}

HOSPITAL_ENTRIES = """\
import os  # never run: the loader only reads the literal below
open(os.environ["EGI_TEST_MARKER"], "w").write("executed")

entries = [
    {
        "id": "entry_1",
        "instructions": "Your name is Wren Adeyemi. Cancel my 9 AM appointment with Dr. Barros.",
        "actions": [
            {"name": "get_patient_info", "arguments": {"patient_identifier": "Wren Adeyemi"}},
            {
                "name": "cancel_appointment",
                "arguments": {
                    "patient_identifier": "Wren Adeyemi",
                    "doctor_identifier": "Dr. Ines Barros",
                    "appointment_date": "2024-02-01",
                    "appointment_time": "9:00 AM",
                },
            },
        ],
    },
    {
        "id": "entry_2",
        "instructions": "Book Tove with Dr. Haddad.",
        "actions": [
            {
                "name": "schedule_appointment",
                "arguments": {
                    "patient_identifier": "Tove Lindahl",
                    "doctor_identifier": "Dr. Omar Haddad",
                    "appointment_time": "10:00 AM",
                    "appointment_date": "2024-02-03",
                    "department": "Neurology",
                },
            },
        ],
    },
    {
        "id": "entry_3",
        "instructions": "Anything.",
        "actions": [{"name": "get_patient_info", "arguments": {"patient_identifier": "*"}}],
    },
    {"id": "entry_4", "instructions": "No tool.", "actions": [{"name": "teleport_patient", "arguments": {}}]},
]
"""


def _env_dir(root: Path, env: str, tables: dict, entries_py: str | None = None) -> Path:
    folder = root / "src" / "environments" / env
    (folder / "data").mkdir(parents=True)
    for table, rows in tables.items():
        (folder / "data" / f"{table}.json").write_text(json.dumps(rows))
    if entries_py is not None:
        (folder / "entries.py").write_text(entries_py)
    return folder


def test_hospital_files_load_as_our_world_and_entries_py_is_never_run(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    monkeypatch.setenv("EGI_TEST_MARKER", str(marker))
    folder = _env_dir(tmp_path, "hospital", HOSPITAL, HOSPITAL_ENTRIES)
    data = environment("hospital").load_upstream(folder)
    assert not marker.exists()
    assert {t: len(rows) for t, rows in data.world.items()} == {
        "patients": 2,
        "doctors": 2,
        "departments": 1,
        "appointments": 1,
        "lab_results": 1,
        "medications": 1,
        "referrals": 0,
    }
    # converted explicitly: our fields, absent ones null, unknown ones ("floor") dropped
    assert data.world["patients"]["P2"] == {
        "patient_id": "P2",
        "name": "Tove Lindahl",
        "email": "t@x.example",
        "phone": None,
        "date_of_birth": None,
        "emergency_contact": None,
        "emergency_phone": None,
        "emergency_relationship": None,
    }
    assert "floor" not in data.world["departments"]["DEPT1"]
    assert [(e["id"], e["entry_num"]) for e in data.entries] == [
        ("entry_1", 1),
        ("entry_2", 2),
        ("entry_3", 3),
        ("entry_4", 4),
    ]
    assert data.entries[0]["user"] == {
        "goal": "get patient info and cancel appointment.",
        "facts": {
            "name": "Wren Adeyemi",
            "doctor": "Dr. Ines Barros",
            "date": "2024-02-01",
            "time": "9:00 AM",
        },
    }
    assert data.unrunnable == {
        "entry_2": "its gold actions cannot run on these files: action 0 (schedule_appointment "
        "{'patient_identifier': 'Tove Lindahl', 'doctor_identifier': 'Dr. Omar Haddad', 'appointment_time': "
        "'10:00 AM', 'appointment_date': '2024-02-03', 'department': 'Neurology'}) is refused by the tool: "
        "Doctor Dr. Omar Haddad is not in Neurology department",
        "entry_4": "its gold actions cannot run on these files: action 0 names no hospital tool: "
        "'teleport_patient'",
    }


def test_upstream_entries_run_through_the_suite_and_the_oracle_passes(tmp_path, monkeypatch):
    monkeypatch.setenv("EGI_TEST_MARKER", str(tmp_path / "marker"))
    _env_dir(tmp_path, "hospital", HOSPITAL, HOSPITAL_ENTRIES)
    options = {"data_dir": str(tmp_path)}
    tasks = SUITE.load_tasks(SuiteProfile(seed=1, categories=["hospital"]), options)
    assert [t.id for t in tasks] == [f"hospital.entry_{i}" for i in range(1, 5)]
    # entry_3's only gold action is a read with a '*' wildcard: nothing to dry-run, judged on
    # its gold call (upstream's stateless rule skips the wildcard)
    # Task.cannot_run since issue 22 (the core skips them and its data warning counts them)
    assert [bool(t.cannot_run) for t in tasks] == [False, True, False, True]
    assert tasks[1].cannot_run.startswith("its gold actions cannot run on these files: action 0 ")
    task = tasks[0]
    noise = Noise(0.0, f"1|benchforce|{task.id}|1")
    oracle = PolicyClient("egi/oracle", SUITE.reference_policy(task, None, noise), noise)
    traj = run_trial(task, oracle, BenchforceOptions(data_dir=tmp_path)).to_dict()
    score = SUITE.score(task, traj, None)
    assert score.success and score.values["finished"] == 1.0, score.got
    assert traj["info"]["benchforce"]["final_state"]["appointments"]["A1"]["status"] == "cancelled"


REFERRALS = """\
entries = [
    {
        "id": "entry_1",
        "instructions": "Dr. Omar Haddad wants Wren Adeyemi seen by Dr. Ines Barros in neurology.",
        "actions": [
            {"name": "get_patient_info", "arguments": {"patient_identifier": "Wren Adeyemi"}},
            {
                "name": "create_referral",
                "arguments": {
                    "patient_identifier": "Wren Adeyemi",
                    "referring_doctor_identifier": "Dr. Omar Haddad",
                    "referred_to_doctor_identifier": "Dr. Ines Barros",
                    "priority": "routine",
                },
            },
        ],
    },
    {
        "id": "entry_2",
        "instructions": "Refer Tove to Dr. Kwame Mensah in endocrinology.",
        "actions": [
            {
                "name": "create_referral",
                "arguments": {
                    "patient_identifier": "Tove Lindahl",
                    "referring_doctor_identifier": "Dr. Omar Haddad",
                    "referred_to_doctor_identifier": "Dr. Kwame Mensah",
                    "priority": "urgent",
                },
            },
        ],
    },
]
"""
"""Upstream's hospital entries 53, 56 and 57 in shape: a gold ``create_referral`` without
``referred_to_department``, which upstream's tool requires; entry_2's specialist is in no file
(as in upstream's 53 and 57)."""


def test_a_referral_without_its_department_loads_and_runs(tmp_path):
    # it crashed collection: the dry run called the tool without a required argument (TypeError)
    folder = _env_dir(tmp_path, "hospital", HOSPITAL, REFERRALS)
    data = environment("hospital").load_upstream(folder)
    first, second = data.entries
    assert first["actions"][1]["arguments"]["referred_to_department"] == "Neurology"
    assert first["gold_completed"] == [
        "action 1 (create_referral): referred_to_department='Neurology', the department of "
        "'Dr. Ines Barros'"
    ]
    assert first["user"]["facts"]["department"] == "Neurology"
    assert data.unrunnable == {
        "entry_2": "its gold actions cannot run on these files: action 0 (create_referral) has arguments "
        "the tool's schema refuses: 'referred_to_department' is a required property"
    }
    assert "gold_completed" not in second and data.errors == {}
    options = {"data_dir": str(tmp_path)}
    task = SUITE.load_tasks(SuiteProfile(seed=1, categories=["hospital"]), options)[0]
    noise = Noise(0.0, f"1|benchforce|{task.id}|1")
    oracle = PolicyClient("egi/oracle", SUITE.reference_policy(task, None, noise), noise)
    traj = run_trial(task, oracle, BenchforceOptions(data_dir=tmp_path)).to_dict()
    assert SUITE.score(task, traj, None).success
    (referral,) = traj["info"]["benchforce"]["final_state"]["referrals"].values()
    assert [referral[k] for k in ("patient_id", "referred_to_doctor_id", "status")] == ["P1", "D1", "pending"]


def test_the_department_is_taken_from_the_specialist_upstream_names(tmp_path):
    from suites.benchforce.env.hospital import complete_referral_departments

    world = environment("hospital").load_upstream(_env_dir(tmp_path, "hospital", HOSPITAL)).world
    by_id = {"referred_to_doctor_identifier": "D2"}
    entries = [
        {"id": "a", "actions": [{"name": "create_referral", "arguments": by_id}]},
        {"id": "b", "actions": [{"name": "create_referral", "arguments": {
            "referred_to_doctor_identifier": "Dr. Ines Barros", "referred_to_department": "Cardiology"}}]},
        {"id": "c", "actions": [{"name": "get_doctor_info", "arguments": {"doctor_identifier": "D1"}}]},
        {"id": "d", "actions": ["not an action", {"name": "create_referral", "arguments": None}]},
    ]  # fmt: skip
    out = complete_referral_departments(world, entries)
    assert out[0]["actions"][0]["arguments"]["referred_to_department"] == "Cardiology"  # by id too
    assert out[1:] == entries[1:]  # given (even wrong: the tool refuses it), not a referral, malformed


BROKEN_AMONG_GOOD = """\
entries = [
    {
        "id": "entry_1",
        "instructions": "Your name is Wren Adeyemi. Cancel my 9 AM appointment with Dr. Barros.",
        "actions": [
            {
                "name": "cancel_appointment",
                "arguments": {
                    "patient_identifier": "Wren Adeyemi",
                    "doctor_identifier": "Dr. Ines Barros",
                    "appointment_date": "2024-02-01",
                    "appointment_time": "9:00 AM",
                },
            },
        ],
    },
    "a stray string where an entry belongs",
    {
        "id": "entry_3",
        "instructions": "Look me up.",
        "actions": [{"name": ["get_patient_info"], "arguments": {"patient_identifier": "Tove Lindahl"}}],
    },
    {
        "id": "entry_4",
        "instructions": "Tove Lindahl wants her medication list.",
        "actions": [{"name": "get_patient_medications", "arguments": {"patient_identifier": "Tove Lindahl"}}],
    },
]
"""
"""Two good entries around two broken ones: a string (not an entry), and an entry whose tool
name is a list (preparing it raises ``TypeError``: unhashable)."""


def test_a_broken_entry_among_good_ones_errors_alone_naming_its_file_and_entry(pytester, tmp_path):
    from tests.helpers.suite_run import run_suite

    folder = _env_dir(tmp_path, "hospital", HOSPITAL, BROKEN_AMONG_GOOD)
    path = folder / "entries.py"
    result, egi = run_suite(
        pytester, "benchforce", "egi/oracle", "--egi-opt", f"benchforce.data_dir={tmp_path}", "-k", "hospital"
    )
    result.assert_outcomes(passed=2, errors=2)
    # the core's TaskLoadError since issue 22 (it was the suite's UpstreamEntryError, "benchforce: ...")
    result.stdout.fnmatch_lines([
        f"*hospital.entry_number_2*TaskLoadError: {path}: entry 2 is str; fix: make each "
        "entry a dict*",
        f"*hospital.entry_3*TaskLoadError: {path}: entry 'entry_3' (entry_num 3) could "
        "not be prepared: TypeError: unhashable type: 'list'; fix: correct this entry or restore "
        "upstream's copy*",
    ], consecutive=False)  # fmt: skip
    lines = next(pytester.path.glob("reports-*/*/records.jsonl")).read_text().splitlines()
    records = {r["task_id"]: r for r in map(json.loads, lines)}
    assert {k: r["status"] for k, r in records.items()} == {
        "hospital.entry_1": "passed",
        "hospital.entry_number_2": "error",
        "hospital.entry_3": "error",
        "hospital.entry_4": "passed",
    }
    # the core's task-load errors (issue 22): never counted toward stopping a session whose
    # provider is down, the message exact
    assert {k: (r["error_kind"], r["error"]) for k, r in records.items() if r["status"] == "error"} == {
        "hospital.entry_number_2": ("task_load", f"TaskLoadError: {path}: entry 2 is str; fix: make each "
                                                "entry a dict"),
        "hospital.entry_3": ("task_load", shorten(
            f"TaskLoadError: {path}: entry 'entry_3' (entry_num 3) could not be prepared: TypeError: "
            "unhashable type: 'list'; fix: correct this entry or restore upstream's copy")),
    }  # fmt: skip
    assert egi["suites"]["benchforce"]["sub_metrics"]["hospital.accuracy_all"] == 1.0  # errors unscored


def test_no_entries_file_gives_a_world_with_no_entries(tmp_path):
    folder = _env_dir(tmp_path, "hospital", HOSPITAL)
    data = environment("hospital").load_upstream(folder)
    assert data.entries == [] and data.unrunnable == {} and len(data.world["patients"]) == 2


def test_entries_dump_json_is_read_when_there_is_no_entries_py(tmp_path):
    folder = _env_dir(tmp_path, "hospital", HOSPITAL)
    (folder / "entries_dump.json").write_text(
        json.dumps([{"id": "a", "actions": []}, {"id": "b", "entry_num": 9}])
    )
    assert [(e["id"], e["entry_num"]) for e in read_entries(folder)] == [("a", 1), ("b", 9)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "entries = [x for x in range(3)]",
            r"entries.py: field 'entries' is not a plain literal .*fix: write",
        ),
        ("items = []", r"entries.py has no 'entries = \[...\]' assignment; fix: define"),
        ("entries = [", r"entries.py is not valid Python \(.*line 1\); fix: repair it"),
        ("entries = {'id': 'x'}", r"entries.py: field 'entries' is dict, not a list; fix: a list of entries"),
    ],
)
def test_malformed_entries_py_names_the_file_field_and_fix(tmp_path, text, message):
    folder = _env_dir(tmp_path, "hospital", HOSPITAL, text)
    with pytest.raises(ValueError, match=message):
        read_entries(folder)


def test_a_malformed_entry_stands_alone_with_its_file_entry_and_fix(tmp_path):
    # one bad entry used to fail the whole file (and the suite's collection)
    text = "entries = [{'id': 'x'}, {'id': 'x'}, {'actions': []}, 'oops', {'id': 'a b'}, {'id': 'y'}]"
    folder = _env_dir(tmp_path, "hospital", HOSPITAL, text)
    path = folder / "entries.py"
    entries = read_entries(folder)
    assert [(e["id"], e["entry_num"], e.get("load_error")) for e in entries] == [
        ("x", 1, None),
        ("entry_number_2", 2, f"{path}: entry 2: field 'id' repeats 'x'; fix: make entry ids unique"),
        ("entry_number_3", 3, f"{path}: entry 3: field 'id' is missing or not a string; fix: give it an id"),
        ("entry_number_4", 4, f"{path}: entry 4 is str; fix: make each entry a dict"),
        ("entry_number_5", 5, f"{path}: entry 5: field 'id' is 'a b'; fix: use only letters, digits and "
                             "_ . : - in an entry id"),
        ("y", 6, None),
    ]  # fmt: skip


def _broken(tables: dict, table: str, key: str, **fields) -> dict:
    out = json.loads(json.dumps(tables))
    out[table][key].update(fields)
    for name, value in fields.items():
        if value is None:
            del out[table][key][name]
    return out


@pytest.mark.parametrize(
    ("tables", "message"),
    [
        (
            _broken(HOSPITAL, "doctors", "D2", department=None),
            r"doctors.json: record 'D2': field 'department' is missing; fix: give every doctors record its "
            r"'department'$",
        ),
        (
            _broken(HOSPITAL, "patients", "P1", name=17),
            r"patients.json: record 'P1': field 'name' is 17, not a string; fix: write it as a string",
        ),
        (
            _broken(HOSPITAL, "patients", "P1", patient_id="P9"),
            r"patients.json: record 'P1': field 'patient_id' is 'P9' but the record is stored under 'P1'",
        ),
    ],
)
def test_malformed_data_names_the_file_record_field_and_fix(tmp_path, tables, message):
    folder = _env_dir(tmp_path, "hospital", tables)
    with pytest.raises(ValueError, match=message):
        environment("hospital").load_upstream(folder)


def test_a_missing_or_unreadable_table_is_named(tmp_path):
    folder = _env_dir(tmp_path, "hospital", {k: v for k, v in HOSPITAL.items() if k != "referrals"})
    with pytest.raises(
        FileNotFoundError, match=r"data/referrals.json is missing; upstream keeps the referrals"
    ):
        environment("hospital").load_upstream(folder)
    (folder / "data" / "referrals.json").write_text("{not json")
    with pytest.raises(ValueError) as info:
        environment("hospital").load_upstream(folder)
    assert str(info.value) == (
        f"{folder}/data/referrals.json is not valid JSON (line 1, column 2: Expecting property name "
        "enclosed in double quotes); fix: repair the file or restore upstream's copy"
    )
    (folder / "data" / "referrals.json").write_bytes(b"\xff\xfe garbage")
    with pytest.raises(ValueError) as info:
        environment("hospital").load_upstream(folder)
    assert str(info.value) == (
        f"{folder}/data/referrals.json is not UTF-8 text (byte 0xff at offset 0); fix: save it as UTF-8 "
        "or restore upstream's copy"
    )
    (folder / "data" / "referrals.json").write_text('"text"')
    with pytest.raises(
        ValueError, match=r"referrals.json holds str; fix: an object keyed by referral_id or a list"
    ):
        environment("hospital").load_upstream(folder)


ORDERS = {
    "customers": [
        {"customer_id": "C1", "name": "Lior Mendel", "email": "lior@x.example", "phone": "1"},
        {"customer_id": "C2", "name": "Aino Virtanen", "email": "aino@x.example", "phone": "2"},
    ],
    "orders": {
        "O1": {
            "order_id": "O1",
            "customer_id": "C1",
            "shipping_address": "1 Elm St",
            "billing_address": "1 Elm St",
            "items": "SKU1",
            "order_status": "processing",
            "total_amount": 10,
            "coupon_code": "",
            "tracking_number": "T1",
            "return_requested": False,
            "refund_requested": False,
            "created_date": "2025-04-01",
        }
    },
}

ORDER_ENTRIES = """entries = [
    {
        "id": "entry_1",
        "instructions": "Your name is Lior Mendel. Your customer ID is C1. Move order O1 to 9 Oak Ave.",
        "actions": [
            {
                "name": "confirm_customer_identity",
                "arguments": {"customer_id": "C1", "verified_email": "lior@x.example"},
            },
            {
                "name": "update_shipping_address",
                "arguments": {"order_id": "O1", "new_shipping_address": "9 Oak Ave"},
            },
        ],
    },
    {
        "id": "entry_2",
        "instructions": "Your name is Aino Virtanen.",
        "actions": [
            {"name": "confirm_customer_identity", "arguments": {"customer_id": "C2"}},
            {"name": "cancel_order", "arguments": {"order_id": "O1"}},
        ],
    },
]
"""


def test_order_files_load_with_customers_from_a_list_and_the_identity_rule_applies(tmp_path):
    folder = _env_dir(tmp_path, "order_management", ORDERS, ORDER_ENTRIES)
    data = environment("order_management").load_upstream(folder)
    assert sorted(data.world["customers"]) == ["C1", "C2"] and list(data.world["orders"]) == ["O1"]
    assert data.world["session"] == {"verified_customer_id": None}
    assert data.world["orders"]["O1"]["total_amount"] == 10
    assert data.entries[0]["user"] == {
        "goal": "confirm customer identity and update shipping address.",
        "facts": {
            "name": "Lior Mendel",
            "customer_id": "C1",
            "email": "lior@x.example",
            "order_id": "O1",
            "shipping_address": "9 Oak Ave",
        },
    }
    assert data.unrunnable == {
        "entry_2": "its gold actions cannot run on these files: action 1 (cancel_order {'order_id': 'O1'}) "
        "is refused by the tool: this order belongs to another customer than the confirmed one (C2)"
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda t: t["orders"]["O1"].update(total_amount="10.00"),
            r"orders.json: record 'O1': field 'total_amount' is \"10.00\", not a number; fix: write it as",
        ),
        (
            lambda t: t["orders"]["O1"].update(return_requested="no"),
            r"field 'return_requested' is \"no\", not true or false",
        ),
        (
            lambda t: t["customers"].append(dict(t["customers"][0])),
            r"customers.json: record 3: field 'customer_id' repeats 'C1'; fix: make ids unique",
        ),
        (
            lambda t: t["customers"][1].pop("email"),
            r"customers.json: record 'C2': field 'email' is missing; fix: give every customers record its "
            r"'email'$",
        ),
        (
            lambda t: t["customers"][1].update(email=None),
            r"customers.json: record 'C2': field 'email' is null; fix: give every customers record its "
            r"'email'$",
        ),
    ],
)
def test_malformed_order_files_name_the_file_record_field_and_fix(tmp_path, change, message):
    tables = json.loads(json.dumps(ORDERS))
    change(tables)
    folder = _env_dir(tmp_path, "order_management", tables)
    with pytest.raises(ValueError, match=message):
        environment("order_management").load_upstream(folder)


def test_user_block_joins_two_values_of_one_slot_and_skips_wildcards():
    entry = {
        "actions": [
            {
                "name": "cancel_appointment",
                "arguments": {"appointment_date": "2024-01-16", "doctor_identifier": "*"},
            },
            {"name": "schedule_appointment", "arguments": {"appointment_date": "2024-01-20"}},
            {"name": "schedule_appointment", "arguments": {"appointment_date": "2024-01-20"}},
        ]
    }
    slots = {"appointment_date": "date", "doctor_identifier": "doctor"}
    assert user_block(entry, slots) == {
        "goal": "cancel appointment and schedule appointment.",
        "facts": {"date": "2024-01-16 and 2024-01-20"},
    }


# -- upstream's own files (when present) ---------------------------------------------------------


def _counts(env: str) -> dict[str, int]:
    folder = CHECKOUT / "src" / "environments" / env / "data"
    return {p.stem: len(json.loads(p.read_text())) for p in sorted(folder.glob("*.json"))}


@_needs_upstream("hospital")
def test_upstreams_hospital_data_loads_with_every_record():
    data = load_upstream(environment("hospital"), CHECKOUT)
    assert {t: len(rows) for t, rows in data.world.items()} == _counts("hospital")
    has_entries = (CHECKOUT / "src" / "environments" / "hospital" / "entries.py").is_file()
    assert bool(data.entries) == has_entries
    some = next(iter(data.world["doctors"].values()))
    assert set(some) == {"doctor_id", "name", "department", "specialty", "phone"}


@_needs_upstream("order_management")
def test_upstreams_order_data_loads_with_every_record():
    data = load_upstream(environment("order_management"), CHECKOUT)
    counts = _counts("order_management")
    assert {t: len(rows) for t, rows in data.world.items() if t != "session"} == counts
    assert all(isinstance(o["total_amount"], (int, float)) for o in data.world["orders"].values())


# -- records that cannot be right ----------------------------------------------------------------

_INTEGRITY = "the upstream files fail the integrity check ({n}):\n  "


def test_an_appointment_naming_an_unknown_patient_is_refused(tmp_path):
    tables = _broken(HOSPITAL, "appointments", "A1", patient_id="P9999", doctor_id="D7")
    folder = _env_dir(tmp_path, "hospital", tables)
    with pytest.raises(ValueError) as info:
        environment("hospital").load_upstream(folder)
    path = folder / "data" / "appointments.json"
    assert str(info.value) == _INTEGRITY.format(n="2 problems") + (
        f"{path}: record 'A1': field 'patient_id' is 'P9999', not the id of any patients record; fix: "
        "correct it, or add the patients record 'P9999'\n  "
        f"{path}: record 'A1': field 'doctor_id' is 'D7', not the id of any doctors record; fix: "
        "correct it, or add the doctors record 'D7'"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda t: t["orders"]["O1"].update(customer_id="C404"),
            "record 'O1': field 'customer_id' is 'C404', not the id of any customers record; fix: correct "
            "it, or add the customers record 'C404'",
        ),
        (
            lambda t: t["orders"]["O1"].update(total_amount=-10.5),
            "record 'O1': field 'total_amount' is -10.5, below 0; fix: write a number of 0 or more",
        ),
    ],
)
def test_an_order_that_cannot_be_right_is_refused(tmp_path, change, message):
    tables = json.loads(json.dumps(ORDERS))
    change(tables)
    folder = _env_dir(tmp_path, "order_management", tables)
    with pytest.raises(ValueError) as info:
        environment("order_management").load_upstream(folder)
    path = folder / "data" / "orders.json"
    assert str(info.value) == _INTEGRITY.format(n="1 problem") + f"{path}: {message}"


def test_more_than_five_problems_are_counted_after_the_first_five(tmp_path):
    tables = json.loads(json.dumps(ORDERS))
    for i in range(7):
        tables["orders"][f"O{i + 2}"] = {
            **tables["orders"]["O1"],
            "order_id": f"O{i + 2}",
            "customer_id": "C9",
        }
    folder = _env_dir(tmp_path, "order_management", tables)
    with pytest.raises(ValueError) as info:
        environment("order_management").load_upstream(folder)
    lines = str(info.value).split("\n")
    assert lines[0] == "the upstream files fail the integrity check (7 problems):"
    assert len(lines) == 7 and lines[-1] == "  ... and 2 more"


def test_a_non_utf8_entries_py_is_named(tmp_path):
    folder = _env_dir(tmp_path, "hospital", HOSPITAL)
    (folder / "entries.py").write_bytes(b"entries = ['\xe9']")
    with pytest.raises(ValueError) as info:
        read_entries(folder)
    assert str(info.value) == (
        f"{folder}/entries.py is not UTF-8 text (byte 0xe9 at offset 12); fix: save it as UTF-8 or "
        "restore upstream's copy"
    )


@pytest.mark.parametrize("env", ["hospital", "hr_software", "order_management"])
@pytest.mark.parametrize("seed", [0, 1, 42, 2024])
def test_our_generated_worlds_pass_the_integrity_check_upstream_files_must_pass(env, seed):
    from suites.benchforce.env.base import integrity_problems

    environ = environment(env)
    assert environ.integrity.references  # every environment declares what its records must satisfy
    assert integrity_problems(environ.build_world(seed), environ.integrity) == []
