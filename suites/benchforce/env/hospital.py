"""The ``hospital`` environment: a clinic's patients, doctors, appointments, referrals,
medications and lab results, with upstream's 12 tools (reference A4): their names, argument
names, types and required lists, lookups (a person by id, else by name ignoring case; a doctor
with or without the ``Dr.`` prefix) and refusals (an :class:`EnvToolError` with upstream's
message where upstream returned ``"Error: ..."``).

Our own seeded data (never upstream's): names and tests from our own lists, ids in upstream's
style (``P2001``, ``D1001``, ``A3001``, ``L5001``, ``M4001``, ``R6001``, ``DEPT001``). Dates are
``YYYY-MM-DD`` and times like ``10:00 AM`` (upstream's policy says so; as upstream, the schemas
only ask for strings). "Today" is fixed at :data:`NOW` (upstream's ``create_referral`` stamped
the wall-clock date).

Projection judged (:func:`projection`): each appointment's patient, doctor, date, time and
status; each referral's patient, doctors, priority, status and date; each patient's emergency
contact name and phone. Every write tool changes one of them when it sets a new value (as
upstream, re-saving the same emergency contact succeeds and changes nothing).

:func:`load_upstream` reads upstream's own files (``data/*.json``, ``entries.py``).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from suites.benchforce.env.base import (
    ENTRY_COUNTS,
    Environment,
    EnvToolError,
    Integrity,
    ToolSpec,
    UpstreamData,
    entry_id,
    gold_call,
    make_entry,
    object_params,
    string_param,
)
from suites.benchforce.env.upstream_files import (
    TableSpec,
    check_integrity,
    data_file,
    entries_file,
    read_entries,
    read_tables,
    upstream_data,
)

__all__ = ["ENV", "NOW", "complete_referral_departments"]

NOW = "2024-05-15"
"""The fixed clock: "today" for the policy and the tools."""

_FIRST = (
    "Avery",
    "Blake",
    "Camila",
    "Dmitri",
    "Elena",
    "Farah",
    "Gideon",
    "Hana",
    "Isaac",
    "Jonas",
    "Keiko",
    "Liam",
    "Marisol",
    "Nadia",
    "Omar",
    "Priya",
    "Quentin",
    "Rosa",
    "Soren",
    "Tamsin",
    "Umar",
    "Vera",
    "Wesley",
    "Ximena",
    "Yusuf",
    "Zara",
)
_LAST = (
    "Abernathy",
    "Brightwater",
    "Castellanos",
    "Dunmore",
    "Eriksen",
    "Fairbanks",
    "Galloway",
    "Haverford",
    "Ingram",
    "Jablonski",
    "Kowalczyk",
    "Lindqvist",
    "Montague",
    "Nakashima",
    "Okonkwo",
    "Pemberton",
    "Quiroga",
    "Rasmussen",
    "Sandoval",
    "Thorncastle",
)
_DEPARTMENTS = (
    ("Emergency", "Emergency Medicine"),
    ("Cardiology", "Cardiology"),
    ("Internal Medicine", "Internal Medicine"),
    ("Orthopedics", "Orthopedic Surgery"),
    ("Pediatrics", "Pediatrics"),
    ("Neurology", "Neurology"),
    ("Dermatology", "Dermatology"),
    ("Psychiatry", "Psychiatry"),
)
_TIMES = (
    "9:00 AM",
    "9:30 AM",
    "10:00 AM",
    "10:30 AM",
    "11:00 AM",
    "1:00 PM",
    "1:30 PM",
    "2:00 PM",
    "2:30 PM",
    "3:00 PM",
    "3:30 PM",
    "4:00 PM",
)
_MEDICATIONS = (
    ("Corvaline", "12.5mg", "Once daily"),
    ("Glucotrex", "750mg", "Twice daily"),
    ("Painfree XR", "200mg", "Every 8 hours"),
    ("Thyrobal", "88mcg", "Once daily"),
    ("Respira", "2 puffs", "Twice daily"),
    ("Statinol", "40mg", "At bedtime"),
    ("Calmodex", "5mg", "As needed"),
    ("Neurofen B", "300mg", "Three times daily"),
)
_TESTS = (
    ("Complete Blood Count", "WBC 6.8 x10^9/L"),
    ("Lipid Panel", "LDL 131 mg/dL"),
    ("HbA1c", "HbA1c 6.1 %"),
    ("Thyroid Panel", "TSH 2.35 mIU/L"),
    ("Vitamin D", "25-OH D 22 ng/mL"),
    ("Metabolic Panel", "Creatinine 0.94 mg/dL"),
)
_RELATIONS = ("spouse", "parent", "sibling", "friend", "child")

DATE = {"type": "string", "description": "Date as YYYY-MM-DD (like 2024-05-20)"}
TIME = {"type": "string", "description": "Clock time like 10:00 AM"}


# -- the world ---------------------------------------------------------------------------------


def _date(rng: random.Random, lo: int, hi: int) -> str:
    """A date ``lo``..``hi`` days after NOW (2024-05-15), as YYYY-MM-DD."""
    import datetime as dt

    return (dt.date(2024, 5, 15) + dt.timedelta(days=rng.randint(lo, hi))).isoformat()


def build_world(seed: int) -> dict[str, Any]:
    """The hospital's tables for ``seed`` (byte-identical per seed): 8 departments, 16
    doctors, 36 patients, 60 appointments, 40 medications, 36 lab results, 24 referrals."""
    rng = random.Random(f"benchforce-hospital-{seed}")
    names = [f"{f} {lname}" for f in _FIRST for lname in _LAST]
    rng.shuffle(names)
    departments = {}
    for i, (dept, _spec) in enumerate(_DEPARTMENTS, 1):
        did = f"DEPT{i:03d}"
        departments[did] = {
            "department_id": did,
            "name": dept,
            "location": f"Floor {1 + i // 3}, Wing {'ABC'[i % 3]}",
            "phone": f"555-3{i:03d}",
        }
    doctors = {}
    for i in range(16):
        dept, spec = _DEPARTMENTS[i % len(_DEPARTMENTS)]
        did = f"D{1001 + i}"
        doctors[did] = {
            "doctor_id": did,
            "name": f"Dr. {names.pop()}",
            "specialty": spec,
            "department": dept,
            "phone": f"555-{2001 + i * 7}",
        }
    patients = {}
    for i in range(36):
        pid = f"P{2001 + i}"
        name = names.pop()
        contact = f"{rng.choice(_FIRST)} {name.split()[1]}"
        patients[pid] = {
            "patient_id": pid,
            "name": name,
            "email": name.lower().replace(" ", ".") + "@mail.example",
            "phone": f"555-{1001 + 2 * i}",
            "date_of_birth": _date(rng, -30000, -7000),
            "emergency_contact": contact,
            "emergency_phone": f"555-{6001 + 3 * i}",
            "emergency_relationship": rng.choice(_RELATIONS),
        }
    pids, dids = sorted(patients), sorted(doctors)
    appointments: dict[str, Any] = {}
    taken: set[tuple[str, str, str]] = set()
    while len(appointments) < 60:
        pid, did = rng.choice(pids), rng.choice(dids)
        when = (_date(rng, -20, 45), rng.choice(_TIMES))
        if (did, *when) in taken:
            continue
        taken.add((did, *when))
        aid = f"A{3001 + len(appointments)}"
        status = (
            "completed" if when[0] < NOW else rng.choice(("scheduled", "scheduled", "scheduled", "cancelled"))
        )
        appointments[aid] = {
            "appointment_id": aid,
            "patient_id": pid,
            "doctor_id": did,
            "appointment_date": when[0],
            "appointment_time": when[1],
            "department": doctors[did]["department"],
            "status": status,
        }
    medications = {}
    for i in range(40):
        med, dose, freq = rng.choice(_MEDICATIONS)
        mid = f"M{4001 + i}"
        medications[mid] = {
            "medication_id": mid,
            "patient_id": pids[i % len(pids)],
            "medication_name": med,
            "dosage": dose,
            "frequency": freq,
            "doctor_id": rng.choice(dids),
        }
    lab_results = {}
    for i in range(36):
        test, value = _TESTS[rng.randrange(len(_TESTS))]
        lid = f"L{5001 + i}"
        done = rng.random() < 0.75
        lab_results[lid] = {
            "result_id": lid,
            "patient_id": pids[(i * 5) % len(pids)],
            "test_name": test,
            "test_date": _date(rng, -30, -1),
            "status": "completed" if done else "pending",
            "result": value if done else None,
            "doctor_id": rng.choice(dids),
        }
    referrals = {}
    for i in range(24):
        a, b = rng.sample(dids, 2)
        rid = f"R{6001 + i}"
        referrals[rid] = {
            "referral_id": rid,
            "patient_id": pids[(i * 7) % len(pids)],
            "referring_doctor_id": a,
            "referred_to_doctor_id": b,
            "referring_department": doctors[a]["department"],
            "referred_to_department": doctors[b]["department"],
            "referral_date": _date(rng, -40, -1),
            "status": rng.choice(("pending", "pending", "scheduled", "completed")),
            "priority": rng.choice(("routine", "urgent")),
        }
    return {
        "patients": patients,
        "doctors": doctors,
        "departments": departments,
        "appointments": appointments,
        "lab_results": lab_results,
        "medications": medications,
        "referrals": referrals,
    }


def projection(state: dict[str, Any]) -> dict[str, Any]:
    """The business fields judging compares (module docstring); plain JSON, keyed by id."""
    appt = ("patient_id", "doctor_id", "appointment_date", "appointment_time", "status")
    ref = (
        "patient_id",
        "referring_doctor_id",
        "referred_to_doctor_id",
        "priority",
        "status",
        "referral_date",
    )
    return {
        "appointments": {k: {f: v.get(f) for f in appt} for k, v in state["appointments"].items()},
        "referrals": {k: {f: v.get(f) for f in ref} for k, v in state["referrals"].items()},
        "patients": {
            k: {"emergency_contact": v.get("emergency_contact"), "emergency_phone": v.get("emergency_phone")}
            for k, v in state["patients"].items()
        },
    }


# -- lookups (upstream's: an id first, then the name, case-insensitively) ----------------------


def _find_patient(state: dict[str, Any], identifier: str) -> dict[str, Any] | None:
    patients = state["patients"]
    if identifier in patients:
        return patients[identifier]
    want = identifier.lower()
    return next((p for p in patients.values() if str(p.get("name", "")).lower() == want), None)


def _find_doctor(state: dict[str, Any], identifier: str) -> dict[str, Any] | None:
    """A doctor by id, else by name ignoring case, with or without the ``Dr. `` prefix on
    either side (upstream's three rules, first doctor in table order that fits one)."""
    doctors = state["doctors"]
    if identifier in doctors:
        return doctors[identifier]
    want = identifier.lower()
    for d in doctors.values():
        name = str(d.get("name", "")).lower()
        if (
            name == want
            or (name.startswith("dr. ") and name[4:] == want)
            or (want.startswith("dr. ") and name == want[4:])
        ):
            return d
    return None


def _patient(state: dict[str, Any], identifier: str) -> dict[str, Any]:
    found = _find_patient(state, identifier)
    if found is None:
        raise EnvToolError("not_found", f"Patient '{identifier}' not found")
    return found


def _doctor(state: dict[str, Any], identifier: str, role: str = "Doctor") -> dict[str, Any]:
    found = _find_doctor(state, identifier)
    if found is None:
        raise EnvToolError("not_found", f"{role} '{identifier}' not found")
    return found


def _next_id(table: dict[str, Any], prefix: str, first: int) -> str:
    numbers = [int(k[len(prefix) :]) for k in table if k.startswith(prefix) and k[len(prefix) :].isdigit()]
    return f"{prefix}{max(numbers) + 1 if numbers else first}"


def _doctor_name(state: dict[str, Any], did: str) -> str | None:
    doctor = state["doctors"].get(did)
    return doctor.get("name") if doctor else None


def _by_date_desc(rows: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: str(r.get(key) or ""), reverse=True)


# -- tools (pure functions of the state; upstream's arguments and refusals) ------------------


def get_patient_info(state: dict[str, Any], patient_identifier: str) -> dict[str, Any]:
    return dict(_patient(state, patient_identifier))


def get_patient_medications(state: dict[str, Any], patient_identifier: str) -> dict[str, Any]:
    patient = _patient(state, patient_identifier)
    meds = [
        {**m, "prescribed_by": _doctor_name(state, m.get("doctor_id", ""))}
        for m in state["medications"].values()
        if m.get("patient_id") == patient["patient_id"]
    ]
    if not meds:
        raise EnvToolError("not_found", f"No medications found for patient '{patient['name']}'")
    return {"patient_id": patient["patient_id"], "patient_name": patient["name"], "medications": meds}


def get_lab_results(state: dict[str, Any], patient_identifier: str) -> dict[str, Any]:
    patient = _patient(state, patient_identifier)
    results = [dict(r) for r in state["lab_results"].values() if r.get("patient_id") == patient["patient_id"]]
    if not results:
        raise EnvToolError("not_found", f"No lab results found for patient '{patient['name']}'")
    return {
        "patient_id": patient["patient_id"],
        "patient_name": patient["name"],
        "lab_results": _by_date_desc(results, "test_date"),
    }


def get_appointment(state: dict[str, Any], patient_identifier: str) -> dict[str, Any]:
    """The patient's first scheduled appointment in table order (upstream returns one)."""
    patient = _patient(state, patient_identifier)
    for aid, a in state["appointments"].items():
        if a.get("patient_id") == patient["patient_id"] and a.get("status") == "scheduled":
            return {
                "appointment_id": aid,
                "patient_id": patient["patient_id"],
                "patient_name": patient["name"],
                "doctor_id": a.get("doctor_id"),
                "doctor_name": _doctor_name(state, a.get("doctor_id", "")),
                "appointment_date": a.get("appointment_date"),
                "appointment_time": a.get("appointment_time"),
                "department": a.get("department"),
                "status": a.get("status"),
            }
    raise EnvToolError("not_found", f"No appointment found for patient '{patient_identifier}'")


def schedule_appointment(
    state: dict[str, Any],
    patient_identifier: str,
    doctor_identifier: str,
    appointment_time: str,
    appointment_date: str,
    department: str,
) -> dict[str, Any]:
    patient, doctor = _patient(state, patient_identifier), _doctor(state, doctor_identifier)
    if doctor.get("department") != department:
        raise EnvToolError("invalid_value", f"Doctor {doctor['name']} is not in {department} department")
    for a in state["appointments"].values():
        if (
            a.get("patient_id"),
            a.get("doctor_id"),
            a.get("appointment_date"),
            a.get("appointment_time"),
            a.get("department"),
            a.get("status"),
        ) == (
            patient["patient_id"],
            doctor["doctor_id"],
            appointment_date,
            appointment_time,
            department,
            "scheduled",
        ):
            raise EnvToolError("conflict", "This appointment is already scheduled")
    aid = _next_id(state["appointments"], "A", 3001)
    appointment = {
        "appointment_id": aid,
        "patient_id": patient["patient_id"],
        "doctor_id": doctor["doctor_id"],
        "appointment_time": appointment_time,
        "appointment_date": appointment_date,
        "department": department,
        "status": "scheduled",
    }
    state["appointments"][aid] = appointment
    return {"message": "Appointment scheduled successfully", "appointment": dict(appointment)}


def cancel_appointment(
    state: dict[str, Any],
    patient_identifier: str,
    doctor_identifier: str,
    appointment_date: str,
    appointment_time: str,
) -> dict[str, Any]:
    """Cancels the first appointment (table order) of this patient with this doctor at this
    date and time, as upstream does (a cancelled or completed one there is refused)."""
    patient, doctor = _patient(state, patient_identifier), _doctor(state, doctor_identifier)
    found = next(
        (
            (aid, a)
            for aid, a in state["appointments"].items()
            if (a.get("patient_id"), a.get("doctor_id"), a.get("appointment_date"), a.get("appointment_time"))
            == (patient["patient_id"], doctor["doctor_id"], appointment_date, appointment_time)
        ),
        None,
    )
    if found is None:
        raise EnvToolError(
            "not_found",
            f"Appointment not found for {patient['name']} with {doctor['name']} on {appointment_date} "
            f"at {appointment_time}",
        )
    aid, appt = found
    if appt.get("status") == "cancelled":
        raise EnvToolError("conflict", "Appointment is already cancelled")
    if appt.get("status") == "completed":
        raise EnvToolError("conflict", "Cannot cancel a completed appointment")
    appt["status"] = "cancelled"
    return {
        "message": "Appointment cancelled successfully",
        "appointment_id": aid,
        "patient_id": patient["patient_id"],
        "patient_name": patient["name"],
        "doctor_id": doctor["doctor_id"],
        "doctor_name": doctor["name"],
        "appointment_date": appointment_date,
        "appointment_time": appointment_time,
        "status": "cancelled",
    }


def get_doctor_info(state: dict[str, Any], doctor_identifier: str) -> dict[str, Any]:
    return dict(_doctor(state, doctor_identifier))


PRIORITIES = ("urgent", "routine", "stat")
REFERRAL_TYPES = ("all", "outgoing", "incoming")
REFERRAL_STATUSES = ("pending", "scheduled", "completed", "cancelled")


def create_referral(
    state: dict[str, Any],
    patient_identifier: str,
    referring_doctor_identifier: str,
    referred_to_doctor_identifier: str,
    referred_to_department: str,
    priority: str = "routine",
) -> dict[str, Any]:
    patient = _patient(state, patient_identifier)
    a = _doctor(state, referring_doctor_identifier, "Referring doctor")
    b = _doctor(state, referred_to_doctor_identifier, "Referred-to doctor")
    if b.get("department") != referred_to_department:
        raise EnvToolError("invalid_value", f"{b['name']} is not in {referred_to_department} department")
    if priority not in PRIORITIES:
        raise EnvToolError("invalid_value", f"Priority must be one of: {', '.join(PRIORITIES)}")
    rid = _next_id(state["referrals"], "R", 6001)
    referral = {
        "referral_id": rid,
        "patient_id": patient["patient_id"],
        "referring_doctor_id": a["doctor_id"],
        "referred_to_doctor_id": b["doctor_id"],
        "referring_department": a.get("department"),
        "referred_to_department": referred_to_department,
        "referral_date": NOW,
        "status": "pending",
        "priority": priority,
    }
    state["referrals"][rid] = referral
    return {"message": "Referral created successfully", "referral": dict(referral)}


def get_patient_referrals(state: dict[str, Any], patient_identifier: str) -> dict[str, Any]:
    patient = _patient(state, patient_identifier)
    rows = [dict(r) for r in state["referrals"].values() if r.get("patient_id") == patient["patient_id"]]
    head = {"patient_id": patient["patient_id"], "patient_name": patient["name"]}
    if not rows:
        return {"message": f"No referrals found for patient '{patient['name']}'", **head, "referrals": []}
    return {**head, "total_referrals": len(rows), "referrals": _by_date_desc(rows, "referral_date")}


def get_doctor_referrals(
    state: dict[str, Any], doctor_identifier: str, referral_type: str = "all"
) -> dict[str, Any]:
    doctor = _doctor(state, doctor_identifier)
    if referral_type not in REFERRAL_TYPES:
        raise EnvToolError("invalid_value", f"Referral type must be one of: {', '.join(REFERRAL_TYPES)}")
    did = doctor["doctor_id"]
    sides = {"all": ("referring_doctor_id", "referred_to_doctor_id"), "outgoing": ("referring_doctor_id",)}
    keys = sides.get(referral_type, ("referred_to_doctor_id",))
    rows = [dict(r) for r in state["referrals"].values() if any(r.get(k) == did for k in keys)]
    head = {"doctor_id": did, "doctor_name": doctor["name"], "referral_type": referral_type}
    if not rows:
        return {
            "message": f"No {referral_type} referrals found for {doctor['name']}",
            **head,
            "referrals": [],
        }
    summary: dict[str, int] = {}
    for r in rows:
        summary[str(r.get("status", "unknown"))] = summary.get(str(r.get("status", "unknown")), 0) + 1
    return {
        **head,
        "total_referrals": len(rows),
        "status_summary": summary,
        "referrals": _by_date_desc(rows, "referral_date"),
    }


def update_referral_status(
    state: dict[str, Any], patient_identifier: str, referred_to_doctor_identifier: str, new_status: str
) -> dict[str, Any]:
    """Sets the status of the patient's first referral (table order) to this doctor."""
    patient = _patient(state, patient_identifier)
    doctor = _doctor(state, referred_to_doctor_identifier)
    found = next(
        (
            (rid, r)
            for rid, r in state["referrals"].items()
            if r.get("patient_id") == patient["patient_id"]
            and r.get("referred_to_doctor_id") == doctor["doctor_id"]
        ),
        None,
    )
    if found is None:
        raise EnvToolError(
            "not_found", f"No referral found for patient '{patient['name']}' to doctor '{doctor['name']}'"
        )
    if new_status not in REFERRAL_STATUSES:
        raise EnvToolError("invalid_value", f"Status must be one of: {', '.join(REFERRAL_STATUSES)}")
    rid, ref = found
    old = ref.get("status")
    if old == new_status:
        raise EnvToolError("conflict", f"Referral is already {new_status}")
    if old in ("completed", "cancelled"):
        raise EnvToolError("conflict", f"Cannot change status of a {old} referral")
    ref["status"] = new_status
    return {
        "message": f"Referral status updated successfully from '{old}' to '{new_status}'",
        "referral_id": rid,
        "patient_name": patient["name"],
        "referred_to_doctor_name": doctor["name"],
        "old_status": old,
        "new_status": new_status,
        "referral": dict(ref),
    }


def update_emergency_contact(
    state: dict[str, Any], patient_identifier: str, contact_name: str, contact_phone: str
) -> dict[str, Any]:
    patient = _patient(state, patient_identifier)
    patient["emergency_contact"], patient["emergency_phone"] = contact_name, contact_phone
    return {
        "message": "Emergency contact updated successfully",
        "patient_id": patient["patient_id"],
        "patient_name": patient["name"],
        "emergency_contact": contact_name,
        "emergency_phone": contact_phone,
    }


PATIENT_ID = string_param("Patient ID (like P2001) or the patient's full name")


def _doctor_arg(whose: str = "The doctor") -> dict[str, Any]:
    return string_param(f"{whose}: a doctor ID (like D1001) or name, with or without 'Dr.'")


TOOLS: dict[str, ToolSpec] = {
    t.name: t
    for t in (
        ToolSpec(
            "get_patient_info",
            "Look up a patient's record.",
            object_params({"patient_identifier": PATIENT_ID}),
            get_patient_info,
        ),
        ToolSpec(
            "get_patient_medications",
            "List a patient's current medications.",
            object_params({"patient_identifier": PATIENT_ID}),
            get_patient_medications,
        ),
        ToolSpec(
            "get_lab_results",
            "List a patient's lab results, most recent first.",
            object_params({"patient_identifier": PATIENT_ID}),
            get_lab_results,
        ),
        ToolSpec(
            "get_appointment",
            "Get a patient's scheduled appointment.",
            object_params({"patient_identifier": PATIENT_ID}),
            get_appointment,
        ),
        ToolSpec(
            "schedule_appointment",
            "Book an appointment for a patient with a doctor in the doctor's department.",
            object_params(
                {
                    "patient_identifier": PATIENT_ID,
                    "doctor_identifier": _doctor_arg(),
                    "appointment_time": TIME,
                    "appointment_date": DATE,
                    "department": string_param("The doctor's department (like Cardiology)"),
                }
            ),
            schedule_appointment,
            "write",
        ),
        ToolSpec(
            "cancel_appointment",
            "Cancel a patient's appointment with a doctor at a date and time.",
            object_params(
                {
                    "patient_identifier": PATIENT_ID,
                    "doctor_identifier": _doctor_arg(),
                    "appointment_date": DATE,
                    "appointment_time": TIME,
                }
            ),
            cancel_appointment,
            "write",
        ),
        ToolSpec(
            "get_doctor_info",
            "Look up a doctor.",
            object_params({"doctor_identifier": _doctor_arg()}),
            get_doctor_info,
        ),
        ToolSpec(
            "create_referral",
            "Refer a patient from one doctor to a specialist in the specialist's department.",
            object_params(
                {
                    "patient_identifier": PATIENT_ID,
                    "referring_doctor_identifier": _doctor_arg("The referring doctor"),
                    "referred_to_doctor_identifier": _doctor_arg("The specialist referred to"),
                    "referred_to_department": string_param("The specialist's department (like Neurology)"),
                },
                {"priority": string_param("One of urgent, routine, stat; default routine")},
            ),
            create_referral,
            "write",
        ),
        ToolSpec(
            "get_patient_referrals",
            "List a patient's referrals, most recent first.",
            object_params({"patient_identifier": PATIENT_ID}),
            get_patient_referrals,
        ),
        ToolSpec(
            "get_doctor_referrals",
            "List a doctor's referrals: outgoing (made by them), incoming (to them) or all.",
            object_params(
                {"doctor_identifier": _doctor_arg()},
                {"referral_type": string_param("One of all, outgoing, incoming; default all")},
            ),
            get_doctor_referrals,
        ),
        ToolSpec(
            "update_referral_status",
            "Set the status of a patient's referral to a doctor.",
            object_params(
                {
                    "patient_identifier": PATIENT_ID,
                    "referred_to_doctor_identifier": _doctor_arg("The doctor the patient was referred to"),
                    "new_status": string_param("One of pending, scheduled, completed, cancelled"),
                }
            ),
            update_referral_status,
            "write",
        ),
        ToolSpec(
            "update_emergency_contact",
            "Replace a patient's emergency contact.",
            object_params(
                {
                    "patient_identifier": PATIENT_ID,
                    "contact_name": string_param("The contact's full name"),
                    "contact_phone": string_param("The contact's phone number"),
                }
            ),
            update_emergency_contact,
            "write",
        ),
    )
}

POLICY = f"""You are the front-desk and clinical-administration assistant of a hospital. Today is {NOW}.

- Refer to patients and doctors by their names in tool calls (the tools also take ids); when you
  only have an id, look the name up first.
- Dates are written YYYY-MM-DD and times like 10:00 AM; ask again until the caller gives a real
  date and clock time.
- A booking names the doctor's own department; a referral names the specialist's department and
  a priority (urgent, routine or stat). Referral statuses go pending, scheduled, then completed or
  cancelled; completed and cancelled referrals stay as they are.
- Before any change (booking, cancelling, referrals, contact updates), state what you will do and
  ask the caller to confirm; act only after they agree.
- Use the tools to look things up; never invent a record, an id or a result. Tell the caller the
  outcome of every change and the information they asked for; if a tool refuses, say why.
- Only act for the caller's own records and only on what they asked for.
"""
"""The agent's system prompt (our own wording of upstream's hospital policy)."""


# -- the caller's facts ----------------------------------------------------------------------

USER_SLOTS: dict[str, tuple[str, str]] = {
    "name": (
        r"\b(your|full|patient'?s?|caller'?s?) (full )?name\b|\bwho (am i|is) (speaking|calling)\b",
        "My name is {}.",
    ),
    "doctor": (
        r"\bdoctor'?s? (full )?name\b|\b(which|what) doctor\b|\bphysician\b|\breferring doctor\b",
        "The doctor is {}.",
    ),
    "department": (r"\bdepartments?\b", "The department is {}."),
    "date": (r"\b(date|day)\b", "The date is {}."),
    "time": (r"\btime\b", "The time is {}."),
    "new_date": (r"\bnew (appointment )?date\b|\breschedul\w*\b|\bmove\b", "The new date I'd like is {}."),
    "new_time": (r"\bnew (appointment )?time\b|\breschedul\w*\b|\bmove\b", "The new time I'd like is {}."),
    "contact_name": (
        r"\bcontact'?s? (full )?name\b|\bnew (emergency )?contact\b|\bemergency contact\b",
        "The new emergency contact is {}.",
    ),
    "contact_phone": (r"\bphone\b|\bnumber\b", "Their phone number is {}."),
    "referred_doctor": (
        r"\breferr(ed|al|ing) to\b|\bspecialist\b|\bwhich referral\b",
        "The referral is to {}.",
    ),
    "priority": (r"\bpriority\b|\burgent\b|\broutine\b", "The priority is {}."),
    "referral_status": (r"\bstatus\b", "It should be {}."),
    "referral_type": (r"\b(incoming|outgoing)\b|\bwhich referrals\b", "I mean the {} referrals."),
    "medication": (r"\bmedications?\b|\bmedicines?\b|\bdrugs?\b", "It's {}."),
    "test": (r"\btests?\b|\blab\b", "The test is {}."),
}
"""The facts a caller can be asked for: slot -> (question pattern, answer sentence)."""
SLOT_ASKS: dict[str, str] = {
    "name": "your full name",
    "doctor": "the doctor's name",
    "department": "the department",
    "date": "the date",
    "time": "the time",
    "new_date": "the new date",
    "new_time": "the new time",
    "contact_name": "the new emergency contact's name",
    "contact_phone": "their phone number",
    "referred_doctor": "the specialist the referral is to",
    "priority": "the priority",
    "referral_status": "the status you want",
    "referral_type": "whether you mean incoming or outgoing referrals",
    "medication": "which medication",
    "test": "which test",
}
"""How the reference policy asks for each fact (each phrase matches its slot's pattern)."""

# -- entry templates ---------------------------------------------------------------------------


_WRITES = tuple(n for n, t in TOOLS.items() if t.kind == "write")


def _free_slot(state: dict[str, Any], rng: random.Random, did: str) -> tuple[str, str]:
    busy = {
        (a["appointment_date"], a["appointment_time"])
        for a in state["appointments"].values()
        if a["doctor_id"] == did and a["status"] == "scheduled"
    }
    while True:
        slot = (_date(rng, 2, 40), rng.choice(_TIMES))
        if slot not in busy:
            return slot


def _entry(
    template: str,
    goal: str,
    facts: dict[str, str],
    actions: list[dict[str, Any]],
    outputs: list[str] | None = None,
) -> dict[str, Any]:
    # people are named by the caller, so their identifiers compare case-insensitively
    # (upstream's per-action case_insensitive_args)
    for a in actions:
        ci = [k for k in a["arguments"] if k.endswith("_identifier")]
        if ci:
            a["case_insensitive_args"] = ci
    return make_entry(
        "You are calling the hospital.", template, goal, facts, actions, outputs, writes=_WRITES
    )


def _t_schedule(s, rng):
    p, d = rng.choice(list(s["patients"].values())), rng.choice(list(s["doctors"].values()))
    date, time = _free_slot(s, rng, d["doctor_id"])
    return _entry(
        "schedule",
        f"book an appointment with {d['name']}.",
        {"name": p["name"], "doctor": d["name"], "department": d["department"], "date": date, "time": time},
        [
            gold_call(
                "schedule_appointment",
                patient_identifier=p["name"],
                doctor_identifier=d["name"],
                appointment_time=time,
                appointment_date=date,
                department=d["department"],
            )
        ],
    )


def _first_match(table: dict[str, Any], row: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """True when ``row`` is the first row of ``table`` with its values at ``keys`` (the one
    upstream's lookup by those values finds)."""
    return next(r for r in table.values() if all(r.get(k) == row.get(k) for k in keys)) is row


def _upcoming(s, rng):
    keys = ("patient_id", "doctor_id", "appointment_date", "appointment_time")
    ups = [
        a
        for a in s["appointments"].values()
        if a["status"] == "scheduled" and _first_match(s["appointments"], a, keys)
    ]
    return rng.choice(ups)


def _t_cancel(s, rng):
    a = _upcoming(s, rng)
    p, d = s["patients"][a["patient_id"]], s["doctors"][a["doctor_id"]]
    return _entry(
        "cancel",
        f"cancel my appointment on {a['appointment_date']}.",
        {
            "name": p["name"],
            "doctor": d["name"],
            "date": a["appointment_date"],
            "time": a["appointment_time"],
        },
        [
            gold_call(
                "cancel_appointment",
                patient_identifier=p["name"],
                doctor_identifier=d["name"],
                appointment_date=a["appointment_date"],
                appointment_time=a["appointment_time"],
            ),
        ],
    )


def _t_reschedule(s, rng):
    a = _upcoming(s, rng)
    p, d = s["patients"][a["patient_id"]], s["doctors"][a["doctor_id"]]
    date, time = _free_slot(s, rng, d["doctor_id"])
    return _entry(
        "reschedule",
        f"move my appointment of {a['appointment_date']} with {d['name']} to another day.",
        {
            "name": p["name"],
            "doctor": d["name"],
            "department": d["department"],
            "date": a["appointment_date"],
            "time": a["appointment_time"],
            "new_date": date,
            "new_time": time,
        },
        [
            gold_call(
                "cancel_appointment",
                patient_identifier=p["name"],
                doctor_identifier=d["name"],
                appointment_date=a["appointment_date"],
                appointment_time=a["appointment_time"],
            ),
            gold_call(
                "schedule_appointment",
                patient_identifier=p["name"],
                doctor_identifier=d["name"],
                appointment_time=time,
                appointment_date=date,
                department=d["department"],
            ),
        ],
    )


def _t_contact(s, rng):
    p = rng.choice(list(s["patients"].values()))
    name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
    phone = f"555-{rng.randint(7000, 9999)}"
    return _entry(
        "emergency_contact",
        "change my emergency contact.",
        {"name": p["name"], "contact_name": name, "contact_phone": phone},
        [
            gold_call(
                "update_emergency_contact",
                patient_identifier=p["name"],
                contact_name=name,
                contact_phone=phone,
            )
        ],
    )


def _t_referral(s, rng):
    p = rng.choice(list(s["patients"].values()))
    a, b = rng.sample(sorted(s["doctors"]), 2)
    da, db = s["doctors"][a], s["doctors"][b]
    prio = rng.choice(PRIORITIES)
    return _entry(
        "create_referral",
        f"get the referral to {db['name']} that {da['name']} asked for.",
        {
            "name": p["name"],
            "doctor": da["name"],
            "referred_doctor": db["name"],
            "department": db["department"],
            "priority": prio,
        },
        [
            gold_call(
                "create_referral",
                patient_identifier=p["name"],
                referring_doctor_identifier=da["name"],
                referred_to_doctor_identifier=db["name"],
                referred_to_department=db["department"],
                priority=prio,
            )
        ],
    )


def _t_referral_status(s, rng):
    keys = ("patient_id", "referred_to_doctor_id")
    r = rng.choice(
        [
            r
            for r in s["referrals"].values()
            if r["status"] == "pending" and _first_match(s["referrals"], r, keys)
        ]
    )
    p, db = s["patients"][r["patient_id"]], s["doctors"][r["referred_to_doctor_id"]]
    status = rng.choice(("scheduled", "cancelled"))
    goal = (
        f"cancel my pending referral to {db['name']}."
        if status == "cancelled"
        else f"mark my referral to {db['name']} as scheduled."
    )
    return _entry(
        "referral_status",
        goal,
        {"name": p["name"], "referred_doctor": db["name"], "referral_status": status},
        [
            gold_call("get_patient_referrals", patient_identifier=p["name"]),
            gold_call(
                "update_referral_status",
                patient_identifier=p["name"],
                referred_to_doctor_identifier=db["name"],
                new_status=status,
            ),
        ],
    )


def _t_medication(s, rng):
    m = rng.choice(list(s["medications"].values()))
    p = s["patients"][m["patient_id"]]
    return _entry(
        "medication_dosage",
        f"find out the dosage and schedule of my {m['medication_name']}.",
        {"name": p["name"], "medication": m["medication_name"]},
        [gold_call("get_patient_medications", patient_identifier=p["name"])],
        [m["dosage"], m["frequency"]],
    )


def _t_lab(s, rng):
    r = rng.choice([r for r in s["lab_results"].values() if r["status"] == "completed"])
    p = s["patients"][r["patient_id"]]
    return _entry(
        "lab_result",
        f"learn the result of my {r['test_name']} test.",
        {"name": p["name"], "test": r["test_name"]},
        [gold_call("get_lab_results", patient_identifier=p["name"])],
        [r["result"]],
    )


def _t_doctor(s, rng):
    d = rng.choice(list(s["doctors"].values()))
    return _entry(
        "doctor_contact",
        f"get the phone number of {d['name']}.",
        {"doctor": d["name"]},
        [gold_call("get_doctor_info", doctor_identifier=d["name"])],
        [d["phone"]],
    )


def _t_next_appointment(s, rng):
    pids = sorted({a["patient_id"] for a in s["appointments"].values() if a["status"] == "scheduled"})
    p = s["patients"][rng.choice(pids)]
    first = get_appointment(s, p["patient_id"])
    return _entry(
        "next_appointment",
        "find out when my scheduled appointment is.",
        {"name": p["name"]},
        [gold_call("get_appointment", patient_identifier=p["name"])],
        [first["appointment_date"], first["appointment_time"]],
    )


TEMPLATES = (
    _t_schedule,
    _t_cancel,
    _t_reschedule,
    _t_contact,
    _t_referral,
    _t_referral_status,
    _t_medication,
    _t_lab,
    _t_doctor,
    _t_next_appointment,
)
ENTRY_COUNT = ENTRY_COUNTS["hospital"]
"""Entries generated (upstream's hospital count); the quick profile runs the first 40."""


def make_entries(state: dict[str, Any], seed: int, count: int | None = None) -> list[dict[str, Any]]:
    """``count`` entries (default :data:`ENTRY_COUNT`), the templates in turn, each over its
    own draw of the world."""
    rng = random.Random(f"benchforce-hospital-entries-{seed}")
    out = []
    for i in range(ENTRY_COUNT if count is None else count):
        entry = TEMPLATES[i % len(TEMPLATES)](state, rng)
        out.append({"id": entry_id(i), "entry_num": i + 1, **entry})
    return out


# -- upstream's files ----------------------------------------------------------------------------

UPSTREAM_TABLES: dict[str, TableSpec] = {
    "patients": TableSpec(
        "patient_id",
        required=("name",),
        optional=(
            "email",
            "phone",
            "date_of_birth",
            "emergency_contact",
            "emergency_phone",
            "emergency_relationship",
        ),
    ),
    "doctors": TableSpec("doctor_id", required=("name", "department"), optional=("specialty", "phone")),
    "departments": TableSpec(
        "department_id", required=("name",), optional=("description", "location", "phone")
    ),
    "appointments": TableSpec(
        "appointment_id",
        required=("patient_id", "doctor_id", "appointment_date", "appointment_time", "status"),
        optional=("department",),
    ),
    "lab_results": TableSpec(
        "result_id",
        required=("patient_id", "test_name"),
        optional=("test_date", "status", "result", "doctor_id"),
    ),
    "medications": TableSpec(
        "medication_id",
        required=("patient_id", "medication_name"),
        optional=("dosage", "frequency", "doctor_id"),
    ),
    "referrals": TableSpec(
        "referral_id",
        required=("patient_id", "referring_doctor_id", "referred_to_doctor_id", "status"),
        optional=("referring_department", "referred_to_department", "referral_date", "priority"),
    ),
}
"""How each upstream table (``data/<table>.json``, an object keyed by id) maps to ours."""

UPSTREAM_SLOTS: dict[str, str] = {
    "patient_identifier": "name",
    "doctor_identifier": "doctor",
    "referring_doctor_identifier": "doctor",
    "referred_to_doctor_identifier": "referred_doctor",
    "appointment_date": "date",
    "appointment_time": "time",
    "department": "department",
    "referred_to_department": "department",
    "contact_name": "contact_name",
    "contact_phone": "contact_phone",
    "priority": "priority",
    "new_status": "referral_status",
    "referral_type": "referral_type",
}
"""Gold argument -> the caller's slot that gives it (for upstream entries' ``user`` block)."""


INTEGRITY = Integrity(
    keys={table: spec.key for table, spec in UPSTREAM_TABLES.items()},
    references={
        ("appointments", "patient_id"): "patients",
        ("appointments", "doctor_id"): "doctors",
        ("lab_results", "patient_id"): "patients",
        ("lab_results", "doctor_id"): "doctors",
        ("medications", "patient_id"): "patients",
        ("medications", "doctor_id"): "doctors",
        ("referrals", "patient_id"): "patients",
        ("referrals", "referring_doctor_id"): "doctors",
        ("referrals", "referred_to_doctor_id"): "doctors",
    },
)
"""Every record's id is its key, and every patient or doctor a record names exists."""


def complete_referral_departments(
    world: dict[str, Any], entries: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Upstream's entries, each gold ``create_referral`` that leaves out
    ``referred_to_department`` given the referred-to doctor's department in ``world``.

    Upstream's tool requires the argument (its signature and its schema's ``required`` list)
    and accepts only the specialist's own department, while its stateless matching skips a gold
    argument the entry does not give; so upstream's ``entries.py`` has referrals (entries 53,
    56 and 57) without it, which our dry run of the gold could not replay. The one value any
    successful call can carry is the doctor's department, so that is the gold's. A referred-to
    doctor not in ``world`` is left as it is: the dry run then reports the tool's refusal and
    the entry is skipped with it. Each completed entry lists what was filled in
    ``gold_completed`` (``"action 3 (create_referral): referred_to_department='Neurology', the
    department of 'Dr. David Brown'"``). Entries that are not dicts of the expected shape are
    passed through untouched (their faults are reported where they are prepared).
    """
    out = []
    for entry in entries:
        actions = entry.get("actions") if isinstance(entry, dict) else None
        notes: list[str] = []
        completed = []
        for i, action in enumerate(actions if isinstance(actions, list) else []):
            args = action.get("arguments") if isinstance(action, dict) else None
            if (
                not isinstance(args, dict)
                or action.get("name") != "create_referral"
                or "referred_to_department" in args
                or not isinstance(args.get("referred_to_doctor_identifier"), str)
            ):
                completed.append(action)
                continue
            doctor = _find_doctor(world, args["referred_to_doctor_identifier"])
            if doctor is None or not isinstance(doctor.get("department"), str):
                completed.append(action)
                continue
            department = doctor["department"]
            completed.append({**action, "arguments": {**args, "referred_to_department": department}})
            notes.append(
                f"action {i} (create_referral): referred_to_department={department!r}, the department "
                f"of {args['referred_to_doctor_identifier']!r}"
            )
        out.append({**entry, "actions": completed, "gold_completed": notes} if notes else entry)
    return out


def load_upstream(env_dir: Path) -> UpstreamData:
    """Upstream's hospital files under ``env_dir`` (``data/*.json`` and ``entries.py``); a
    gold referral without its department gets the specialist's
    (:func:`complete_referral_departments`). An entry that cannot be read or prepared is in
    ``errors`` (its item errors alone).

    Raises:
        FileNotFoundError: a table's file is absent.
        ValueError: a malformed file, or records that cannot be right (:data:`INTEGRITY`);
            the message names the file, the record, the field and the fix.
    """
    world = read_tables(env_dir, UPSTREAM_TABLES)
    check_integrity(world, INTEGRITY, lambda table, _key: data_file(env_dir, table))
    entries = complete_referral_departments(world, read_entries(env_dir))
    return upstream_data(ENV, world, entries, UPSTREAM_SLOTS, source=entries_file(env_dir))


ENV = Environment(
    name="hospital",
    policy=POLICY,
    now=NOW,
    tools=TOOLS,
    build_world=build_world,
    projection=projection,
    make_entries=make_entries,
    user_slots=USER_SLOTS,
    slot_asks=SLOT_ASKS,
    load_upstream=load_upstream,
    integrity=INTEGRITY,
)
"""The hospital environment."""
