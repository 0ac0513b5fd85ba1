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
from pytest_egi.suite import SuiteProfile
from suites.benchforce import SUITE, BenchforceOptions
from suites.benchforce.agent import run_trial
from suites.benchforce.envs import environment
from suites.benchforce.envs.upstream_files import read_entries, user_block
from suites.benchforce.upstream import load_upstream

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
    assert [bool(t.data.get("unrunnable")) for t in tasks] == [False, True, False, True]
    assert SUITE.data_warnings(tasks, options)["hospital"].startswith(
        "2 of the upstream entries cannot run on these files and are skipped (first: hospital.entry_2: "
    )
    task = tasks[0]
    noise = Noise(0.0, f"1|benchforce|{task.id}|1")
    oracle = PolicyClient("egi/oracle", SUITE.reference_policy(task, None, noise), noise)
    traj = run_trial(task, oracle, BenchforceOptions(data_dir=tmp_path)).to_dict()
    score = SUITE.score(task, traj, None)
    assert score.success and score.values["finished"] == 1.0, score.got
    assert traj["info"]["benchforce"]["final_state"]["appointments"]["A1"]["status"] == "cancelled"


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
        (
            "entries = [{'id': 'x'}, {'id': 'x'}]",
            r"entries.py: entry 1: field 'id' repeats 'x'; fix: make entry",
        ),
        ("entries = [{'actions': []}]", r"entries.py: entry 0: field 'id' is missing or not a string; fix:"),
    ],
)
def test_malformed_entries_py_names_the_file_field_and_fix(tmp_path, text, message):
    folder = _env_dir(tmp_path, "hospital", HOSPITAL, text)
    with pytest.raises(ValueError, match=message):
        read_entries(folder)


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
            r"doctors.json: record 'D2': field 'department' is missing or null; fix: give every doctors",
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
    with pytest.raises(ValueError, match=r"referrals.json is not valid JSON \(.*\); fix: repair or restore"):
        environment("hospital").load_upstream(folder)
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
            r"customers.json: record 2: field 'customer_id' repeats 'C1'; fix: make ids unique",
        ),
        (
            lambda t: t["customers"][1].pop("email"),
            r"customers.json: record 'C2': field 'email' is missing or null",
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
