"""The hospital tools against upstream's: argument names, types, required lists, lookups by id
or name, and each refusal's message (upstream's ``"Error: ..."`` strings as EnvToolError)."""

from __future__ import annotations

import pytest

from suites.benchforce.env.base import EnvToolError, apply_call, copy_world
from suites.benchforce.env.hospital import ENV

WORLD = ENV.build_world(42)

UPSTREAM_ARGUMENTS = {
    "get_patient_info": (["patient_identifier"], []),
    "get_patient_medications": (["patient_identifier"], []),
    "get_lab_results": (["patient_identifier"], []),
    "get_appointment": (["patient_identifier"], []),
    "schedule_appointment": (
        ["patient_identifier", "doctor_identifier", "appointment_time", "appointment_date", "department"],
        [],
    ),
    "cancel_appointment": (
        ["patient_identifier", "doctor_identifier", "appointment_date", "appointment_time"],
        [],
    ),
    "get_doctor_info": (["doctor_identifier"], []),
    "create_referral": (
        [
            "patient_identifier",
            "referring_doctor_identifier",
            "referred_to_doctor_identifier",
            "referred_to_department",
        ],
        ["priority"],
    ),
    "get_patient_referrals": (["patient_identifier"], []),
    "get_doctor_referrals": (["doctor_identifier"], ["referral_type"]),
    "update_referral_status": (["patient_identifier", "referred_to_doctor_identifier", "new_status"], []),
    "update_emergency_contact": (["patient_identifier", "contact_name", "contact_phone"], []),
}
"""Upstream's get_metadata(): tool -> (required, optional); every argument is a string."""


def test_tools_have_upstreams_names_arguments_types_and_required_lists():
    assert list(ENV.tools) == list(UPSTREAM_ARGUMENTS)
    for name, (required, optional) in UPSTREAM_ARGUMENTS.items():
        params = ENV.tools[name].parameters
        assert params["required"] == required, name
        assert list(params["properties"]) == required + optional, name
        assert {p["type"] for p in params["properties"].values()} == {"string"}, name


def _state():
    return copy_world(WORLD)


def _run(state, name, **args):
    return apply_call(ENV, state, name, args)


def test_people_are_found_by_id_or_by_name_ignoring_case_and_the_dr_prefix():
    state = _state()
    patient, doctor = state["patients"]["P2001"], state["doctors"]["D1001"]
    bare = doctor["name"].removeprefix("Dr. ")
    assert doctor["name"].startswith("Dr. ")
    assert _run(state, "get_patient_info", patient_identifier="P2001") == patient
    assert _run(state, "get_patient_info", patient_identifier=patient["name"].upper()) == patient
    for given in ("D1001", doctor["name"], doctor["name"].lower(), bare, bare.upper()):
        assert _run(state, "get_doctor_info", doctor_identifier=given) == doctor, given
    with pytest.raises(EnvToolError, match="^Patient 'p2001' not found$"):  # an id is exact
        _run(state, "get_patient_info", patient_identifier="p2001")
    with pytest.raises(EnvToolError, match="^Doctor 'Dr.Nobody' not found$"):
        _run(state, "get_doctor_info", doctor_identifier="Dr.Nobody")


def _scheduled(state):
    return next(a for a in state["appointments"].values() if a["status"] == "scheduled")


def test_schedule_needs_the_doctors_department_and_refuses_a_duplicate():
    state = _state()
    p, d = state["patients"]["P2002"], state["doctors"]["D1003"]
    other = next(x["department"] for x in state["doctors"].values() if x["department"] != d["department"])
    args = dict(
        patient_identifier=p["name"],
        doctor_identifier=d["name"],
        appointment_time="10:00 AM",
        appointment_date="2024-07-01",
    )
    with pytest.raises(EnvToolError, match=f"^Doctor {d['name']} is not in {other} department$"):
        _run(state, "schedule_appointment", **args, department=other)
    out = _run(state, "schedule_appointment", **args, department=d["department"])
    assert out["message"] == "Appointment scheduled successfully"
    assert (
        out["appointment"]["appointment_id"] == "A3061"
        and state["appointments"]["A3061"]["status"] == "scheduled"
    )
    with pytest.raises(EnvToolError, match="^This appointment is already scheduled$") as info:
        _run(state, "schedule_appointment", **args, department=d["department"])
    assert info.value.code == "conflict"


def test_cancel_is_by_patient_doctor_date_and_time_with_upstreams_refusals():
    state = _state()
    a = _scheduled(state)
    p, d = state["patients"][a["patient_id"]], state["doctors"][a["doctor_id"]]
    args = dict(
        patient_identifier=p["name"],
        doctor_identifier=d["name"],
        appointment_date=a["appointment_date"],
        appointment_time=a["appointment_time"],
    )
    assert _run(state, "cancel_appointment", **args)["status"] == "cancelled"
    assert a["status"] == "cancelled"
    with pytest.raises(EnvToolError, match="^Appointment is already cancelled$"):
        _run(state, "cancel_appointment", **args)
    done = next(x for x in state["appointments"].values() if x["status"] == "completed")
    with pytest.raises(EnvToolError, match="^Cannot cancel a completed appointment$"):
        _run(
            state,
            "cancel_appointment",
            patient_identifier=done["patient_id"],
            doctor_identifier=done["doctor_id"],
            appointment_date=done["appointment_date"],
            appointment_time=done["appointment_time"],
        )
    with pytest.raises(
        EnvToolError,
        match=f"^Appointment not found for {p['name']} with {d['name']} on 2030-01-01 at 9:00 AM$",
    ):
        _run(
            state,
            "cancel_appointment",
            **{**args, "appointment_date": "2030-01-01", "appointment_time": "9:00 AM"},
        )


def test_referrals_check_department_priority_and_status_transitions():
    state = _state()
    taken = {r["referred_to_doctor_id"] for r in state["referrals"].values() if r["patient_id"] == "P2003"}
    d1 = state["doctors"]["D1001"]
    d2 = next(d for k, d in state["doctors"].items() if k not in taken and k != "D1001")
    args = dict(
        patient_identifier="P2003",
        referring_doctor_identifier=d1["name"],
        referred_to_doctor_identifier=d2["name"],
    )
    with pytest.raises(EnvToolError, match=f"^{d2['name']} is not in Nowhere department$"):
        _run(state, "create_referral", **args, referred_to_department="Nowhere")
    with pytest.raises(EnvToolError, match="^Priority must be one of: urgent, routine, stat$"):
        _run(state, "create_referral", **args, referred_to_department=d2["department"], priority="asap")
    with pytest.raises(EnvToolError, match="^Referring doctor 'Dr. Nobody' not found$"):
        _run(
            state,
            "create_referral",
            **{**args, "referring_doctor_identifier": "Dr. Nobody"},
            referred_to_department="x",
        )
    upd = dict(patient_identifier="P2003", referred_to_doctor_identifier=d2["doctor_id"])
    with pytest.raises(EnvToolError, match=f"^No referral found for patient '.+' to doctor '{d2['name']}'$"):
        _run(state, "update_referral_status", **upd, new_status="scheduled")
    out = _run(state, "create_referral", **args, referred_to_department=d2["department"])
    ref = out["referral"]
    assert (ref["referral_id"], ref["priority"], ref["status"], ref["referral_date"]) == (
        "R6025",
        "routine",
        "pending",
        "2024-05-15",
    )
    assert ref["referring_department"] == d1["department"]
    with pytest.raises(
        EnvToolError, match="^Status must be one of: pending, scheduled, completed, cancelled$"
    ):
        _run(state, "update_referral_status", **upd, new_status="approved")
    assert _run(state, "update_referral_status", **upd, new_status="scheduled")["old_status"] == "pending"
    assert _run(state, "update_referral_status", **upd, new_status="cancelled")["old_status"] == "scheduled"
    assert state["referrals"]["R6025"]["status"] == "cancelled"
    with pytest.raises(EnvToolError, match="^Referral is already cancelled$"):
        _run(state, "update_referral_status", **upd, new_status="cancelled")
    with pytest.raises(EnvToolError, match="^Cannot change status of a cancelled referral$"):
        _run(state, "update_referral_status", **upd, new_status="pending")
    with pytest.raises(EnvToolError, match="^Referral type must be one of: all, outgoing, incoming$"):
        _run(state, "get_doctor_referrals", doctor_identifier=d2["doctor_id"], referral_type="sideways")
    incoming = _run(
        state, "get_doctor_referrals", doctor_identifier=d2["doctor_id"], referral_type="incoming"
    )
    assert [r["referral_id"] for r in incoming["referrals"]][:1] == ["R6025"]  # most recent first
    assert all(r["referred_to_doctor_id"] == d2["doctor_id"] for r in incoming["referrals"])


def test_reads_refuse_an_empty_list_as_upstream_does():
    state = _state()
    pid = "P2001"
    state["medications"] = {k: m for k, m in state["medications"].items() if m["patient_id"] != pid}
    state["lab_results"] = {k: r for k, r in state["lab_results"].items() if r["patient_id"] != pid}
    for a in state["appointments"].values():
        if a["patient_id"] == pid:
            a["status"] = "completed"
    name = state["patients"][pid]["name"]
    with pytest.raises(EnvToolError, match=f"^No medications found for patient '{name}'$"):
        _run(state, "get_patient_medications", patient_identifier=pid)
    with pytest.raises(EnvToolError, match=f"^No lab results found for patient '{name}'$"):
        _run(state, "get_lab_results", patient_identifier=pid)
    with pytest.raises(EnvToolError, match="^No appointment found for patient 'P2001'$"):
        _run(state, "get_appointment", patient_identifier=pid)
