"""The ``hospital`` environment: a clinic's patients, doctors, appointments, referrals,
medications and lab results, with upstream's 12 tool names (reference A4).

Our own seeded data (never upstream's): names and tests from our own lists, ids in upstream's
style (``P2001``, ``D1001``, ``A3001``, ``L5001``, ``M4001``, ``R6001``, ``DEPT001``). People
are identified by *name*, dates are ``YYYY-MM-DD`` and times like ``10:00 AM`` (upstream's
policy); the schemas enforce both formats. "Today" is fixed at :data:`NOW`.

Projection judged (:func:`projection`): each appointment's patient, doctor, date, time and
status; each referral's patient, doctors, priority, status and date; each patient's emergency
contact name and phone. Every write tool changes one of them.
"""

from __future__ import annotations

import random
from typing import Any

from suites.benchforce.envs.base import Environment, EnvToolError, ToolSpec

__all__ = ["ENV", "NOW"]

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

DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$", "description": "Date as YYYY-MM-DD"}
TIME = {"type": "string", "pattern": r"^(1[0-2]|[1-9]):[0-5]\d (AM|PM)$", "description": "Time like 10:00 AM"}


def _s(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "description": description}


def _params(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
        "additionalProperties": False,
    }


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
            "status": rng.choice(("pending", "pending", "approved", "completed")),
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


# -- lookups -----------------------------------------------------------------------------------


def _fold(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def _patient(state: dict[str, Any], name: str) -> dict[str, Any]:
    for p in state["patients"].values():
        if _fold(p["name"]) == _fold(name):
            return p
    raise EnvToolError("not_found", f"Patient '{name}' not found")


def _doctor(state: dict[str, Any], name: str) -> dict[str, Any]:
    want = _fold(name).removeprefix("dr. ").removeprefix("dr ")
    for d in state["doctors"].values():
        if _fold(d["name"]).removeprefix("dr. ") == want:
            return d
    raise EnvToolError("not_found", f"Doctor '{name}' not found")


def _next_id(table: dict[str, Any], prefix: str) -> str:
    return f"{prefix}{max(int(k[len(prefix) :]) for k in table) + 1}"


def _doctor_name(state: dict[str, Any], did: str) -> str:
    return state["doctors"][did]["name"]


# -- tools (pure functions of the state) ------------------------------------------------------


def get_patient_info(state: dict[str, Any], patient_name: str) -> dict[str, Any]:
    return dict(_patient(state, patient_name))


def get_patient_medications(state: dict[str, Any], patient_name: str) -> list[dict[str, Any]]:
    pid = _patient(state, patient_name)["patient_id"]
    return [
        {**m, "prescribed_by": _doctor_name(state, m["doctor_id"])}
        for _, m in sorted(state["medications"].items())
        if m["patient_id"] == pid
    ]


def get_lab_results(
    state: dict[str, Any], patient_name: str, test_name: str | None = None
) -> list[dict[str, Any]]:
    pid = _patient(state, patient_name)["patient_id"]
    out = [dict(r) for _, r in sorted(state["lab_results"].items()) if r["patient_id"] == pid]
    if test_name is not None:
        out = [r for r in out if _fold(r["test_name"]) == _fold(test_name)]
    return out


def get_appointment(
    state: dict[str, Any], patient_name: str, appointment_date: str | None = None
) -> list[dict[str, Any]]:
    pid = _patient(state, patient_name)["patient_id"]
    out = [
        {**a, "doctor_name": _doctor_name(state, a["doctor_id"])}
        for _, a in sorted(state["appointments"].items())
        if a["patient_id"] == pid
    ]
    if appointment_date is not None:
        out = [a for a in out if a["appointment_date"] == appointment_date]
    return out


def schedule_appointment(
    state: dict[str, Any], patient_name: str, doctor_name: str, appointment_date: str, appointment_time: str
) -> dict[str, Any]:
    patient, doctor = _patient(state, patient_name), _doctor(state, doctor_name)
    if appointment_date < NOW:
        raise EnvToolError("invalid_value", f"Cannot schedule in the past (today is {NOW})")
    for a in state["appointments"].values():
        if (a["doctor_id"], a["appointment_date"], a["appointment_time"], a["status"]) == (
            doctor["doctor_id"],
            appointment_date,
            appointment_time,
            "scheduled",
        ):
            raise EnvToolError(
                "conflict", f"{doctor['name']} is not available on {appointment_date} at {appointment_time}"
            )
    aid = _next_id(state["appointments"], "A")
    state["appointments"][aid] = {
        "appointment_id": aid,
        "patient_id": patient["patient_id"],
        "doctor_id": doctor["doctor_id"],
        "appointment_date": appointment_date,
        "appointment_time": appointment_time,
        "department": doctor["department"],
        "status": "scheduled",
    }
    return {
        "status": "success",
        "appointment_id": aid,
        "doctor_name": doctor["name"],
        "appointment_date": appointment_date,
        "appointment_time": appointment_time,
    }


def cancel_appointment(state: dict[str, Any], appointment_id: str) -> dict[str, Any]:
    appt = state["appointments"].get(appointment_id)
    if appt is None:
        raise EnvToolError("not_found", f"Appointment '{appointment_id}' not found")
    if appt["status"] != "scheduled":
        raise EnvToolError("conflict", f"Appointment '{appointment_id}' is {appt['status']}, not scheduled")
    appt["status"] = "cancelled"
    return {"status": "success", "appointment_id": appointment_id, "new_status": "cancelled"}


def get_doctor_info(state: dict[str, Any], doctor_name: str) -> dict[str, Any]:
    return dict(_doctor(state, doctor_name))


def create_referral(
    state: dict[str, Any],
    patient_name: str,
    referring_doctor_name: str,
    referred_to_doctor_name: str,
    priority: str,
) -> dict[str, Any]:
    patient = _patient(state, patient_name)
    a, b = _doctor(state, referring_doctor_name), _doctor(state, referred_to_doctor_name)
    if a["doctor_id"] == b["doctor_id"]:
        raise EnvToolError("invalid_value", "A doctor cannot refer a patient to themselves")
    rid = _next_id(state["referrals"], "R")
    state["referrals"][rid] = {
        "referral_id": rid,
        "patient_id": patient["patient_id"],
        "referring_doctor_id": a["doctor_id"],
        "referred_to_doctor_id": b["doctor_id"],
        "referring_department": a["department"],
        "referred_to_department": b["department"],
        "referral_date": NOW,
        "status": "pending",
        "priority": priority,
    }
    return {"status": "success", "referral_id": rid}


def _referral_view(state: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    return {
        **r,
        "referring_doctor_name": _doctor_name(state, r["referring_doctor_id"]),
        "referred_to_doctor_name": _doctor_name(state, r["referred_to_doctor_id"]),
    }


def get_patient_referrals(state: dict[str, Any], patient_name: str) -> list[dict[str, Any]]:
    pid = _patient(state, patient_name)["patient_id"]
    return [_referral_view(state, r) for _, r in sorted(state["referrals"].items()) if r["patient_id"] == pid]


def get_doctor_referrals(state: dict[str, Any], doctor_name: str) -> list[dict[str, Any]]:
    did = _doctor(state, doctor_name)["doctor_id"]
    return [
        _referral_view(state, r)
        for _, r in sorted(state["referrals"].items())
        if did in (r["referring_doctor_id"], r["referred_to_doctor_id"])
    ]


def update_referral_status(state: dict[str, Any], referral_id: str, status: str) -> dict[str, Any]:
    ref = state["referrals"].get(referral_id)
    if ref is None:
        raise EnvToolError("not_found", f"Referral '{referral_id}' not found")
    if ref["status"] == status:
        raise EnvToolError("conflict", f"Referral '{referral_id}' is already {status}")
    ref["status"] = status
    return {"status": "success", "referral_id": referral_id, "new_status": status}


def update_emergency_contact(
    state: dict[str, Any], patient_name: str, contact_name: str, contact_phone: str
) -> dict[str, Any]:
    patient = _patient(state, patient_name)
    if (patient["emergency_contact"], patient["emergency_phone"]) == (contact_name, contact_phone):
        raise EnvToolError("conflict", "The emergency contact already has these details")
    patient["emergency_contact"], patient["emergency_phone"] = contact_name, contact_phone
    return {
        "status": "success",
        "patient_id": patient["patient_id"],
        "emergency_contact": contact_name,
        "emergency_phone": contact_phone,
    }


PATIENT = {"patient_name": _s("The patient's full name")}
TOOLS: dict[str, ToolSpec] = {
    t.name: t
    for t in (
        ToolSpec(
            "get_patient_info", "Look up a patient's record by full name.", _params(PATIENT), get_patient_info
        ),
        ToolSpec(
            "get_patient_medications",
            "List a patient's current medications.",
            _params(PATIENT),
            get_patient_medications,
        ),
        ToolSpec(
            "get_lab_results",
            "List a patient's lab results, optionally for one test.",
            _params(PATIENT, {"test_name": _s("Only this test")}),
            get_lab_results,
        ),
        ToolSpec(
            "get_appointment",
            "List a patient's appointments, optionally on one date.",
            _params(PATIENT, {"appointment_date": DATE}),
            get_appointment,
        ),
        ToolSpec(
            "schedule_appointment",
            "Book an appointment for a patient with a doctor.",
            _params(
                {
                    **PATIENT,
                    "doctor_name": _s("The doctor's full name"),
                    "appointment_date": DATE,
                    "appointment_time": TIME,
                }
            ),
            schedule_appointment,
            "write",
        ),
        ToolSpec(
            "cancel_appointment",
            "Cancel a scheduled appointment by its id.",
            _params({"appointment_id": {"type": "string", "pattern": r"^A\d+$"}}),
            cancel_appointment,
            "write",
        ),
        ToolSpec(
            "get_doctor_info",
            "Look up a doctor by full name.",
            _params({"doctor_name": _s("The doctor's full name")}),
            get_doctor_info,
        ),
        ToolSpec(
            "create_referral",
            "Refer a patient from one doctor to another.",
            _params(
                {
                    **PATIENT,
                    "referring_doctor_name": _s("The referring doctor's full name"),
                    "referred_to_doctor_name": _s("The doctor referred to"),
                    "priority": {"type": "string", "enum": ["routine", "urgent"]},
                }
            ),
            create_referral,
            "write",
        ),
        ToolSpec(
            "get_patient_referrals", "List a patient's referrals.", _params(PATIENT), get_patient_referrals
        ),
        ToolSpec(
            "get_doctor_referrals",
            "List the referrals made by or to a doctor.",
            _params({"doctor_name": _s("The doctor's full name")}),
            get_doctor_referrals,
        ),
        ToolSpec(
            "update_referral_status",
            "Set a referral's status.",
            _params(
                {
                    "referral_id": {"type": "string", "pattern": r"^R\d+$"},
                    "status": {"type": "string", "enum": ["pending", "approved", "completed", "cancelled"]},
                }
            ),
            update_referral_status,
            "write",
        ),
        ToolSpec(
            "update_emergency_contact",
            "Replace a patient's emergency contact.",
            _params(
                {
                    **PATIENT,
                    "contact_name": _s("The new contact's full name"),
                    "contact_phone": {"type": "string", "pattern": r"^[0-9+()\- ]{7,20}$"},
                }
            ),
            update_emergency_contact,
            "write",
        ),
    )
}

POLICY = f"""You are the front-desk and clinical-administration assistant of a hospital. Today is {NOW}.

- Identify patients and doctors by their full name, exactly as the caller gives it.
- Dates are written YYYY-MM-DD and times like 10:00 AM.
- Before any change (booking, cancelling, referrals, contact updates), state what you will do and
  ask the caller to confirm; act only after they agree.
- Use the tools to look things up; never invent a record, an id or a result. Tell the caller the
  outcome of every change and the information they asked for.
- Only act for the caller's own records and only on what they asked for.
"""
"""The agent's system prompt (our own wording of upstream's receptionist policy)."""


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
    "medication": (r"\bmedications?\b|\bmedicines?\b|\bdrugs?\b", "It's {}."),
    "test": (r"\btests?\b|\blab\b", "The test is {}."),
}
"""The facts a caller can be asked for: slot -> (question pattern, answer sentence)."""
SLOT_ASKS: dict[str, str] = {
    "name": "your full name",
    "doctor": "the doctor's name",
    "date": "the date",
    "time": "the time",
    "new_date": "the new date",
    "new_time": "the new time",
    "contact_name": "the new emergency contact's name",
    "contact_phone": "their phone number",
    "referred_doctor": "who the referral is to",
    "priority": "the priority",
    "referral_status": "the status you want",
    "medication": "which medication",
    "test": "which test",
}
"""How the reference policy asks for each fact (each phrase matches its slot's pattern)."""

# -- entry templates ---------------------------------------------------------------------------


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


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
    used = {a["name"] for a in actions}
    # identifiers the caller gives as names are compared case-insensitively (upstream's
    # per-action case_insensitive_args)
    for a in actions:
        ci = [k for k in a["arguments"] if k.endswith("_name")]
        if ci:
            a["case_insensitive_args"] = ci
    lines = [f"You are calling the hospital. You would like to {goal}"]
    lines += [f"Your {k.replace('_', ' ')} is {v}." for k, v in facts.items()]
    lines.append(
        "Give these details only when asked, confirm the assistant's proposals when they match your "
        "goal, and end the conversation once your goal is met."
    )
    return {
        "template": template,
        "instructions": " ".join(lines),
        "actions": actions,
        "outputs": list(outputs or []),
        "forbidden_actions": [{"name": w} for w in _WRITES if w not in used],
        "user": {"goal": goal, "facts": facts},
    }


def _t_schedule(s, rng):
    p, d = rng.choice(list(s["patients"].values())), rng.choice(list(s["doctors"].values()))
    date, time = _free_slot(s, rng, d["doctor_id"])
    return _entry(
        "schedule",
        f"book an appointment with {d['name']}.",
        {"name": p["name"], "doctor": d["name"], "date": date, "time": time},
        [
            _call(
                "schedule_appointment",
                patient_name=p["name"],
                doctor_name=d["name"],
                appointment_date=date,
                appointment_time=time,
            )
        ],
    )


def _upcoming(s, rng):
    ups = [a for _, a in sorted(s["appointments"].items()) if a["status"] == "scheduled"]
    return rng.choice(ups)


def _t_cancel(s, rng):
    a = _upcoming(s, rng)
    p = s["patients"][a["patient_id"]]
    return _entry(
        "cancel",
        f"cancel my appointment on {a['appointment_date']}.",
        {"name": p["name"], "date": a["appointment_date"]},
        [
            _call("get_appointment", patient_name=p["name"]),
            _call("cancel_appointment", appointment_id=a["appointment_id"]),
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
            "date": a["appointment_date"],
            "doctor": d["name"],
            "new_date": date,
            "new_time": time,
        },
        [
            _call("get_appointment", patient_name=p["name"]),
            _call("cancel_appointment", appointment_id=a["appointment_id"]),
            _call(
                "schedule_appointment",
                patient_name=p["name"],
                doctor_name=d["name"],
                appointment_date=date,
                appointment_time=time,
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
        [_call("update_emergency_contact", patient_name=p["name"], contact_name=name, contact_phone=phone)],
    )


def _t_referral(s, rng):
    p = rng.choice(list(s["patients"].values()))
    a, b = rng.sample(sorted(s["doctors"]), 2)
    da, db = s["doctors"][a], s["doctors"][b]
    prio = rng.choice(("routine", "urgent"))
    return _entry(
        "create_referral",
        f"get the referral to {db['name']} that {da['name']} asked for.",
        {"name": p["name"], "doctor": da["name"], "referred_doctor": db["name"], "priority": prio},
        [
            _call(
                "create_referral",
                patient_name=p["name"],
                referring_doctor_name=da["name"],
                referred_to_doctor_name=db["name"],
                priority=prio,
            )
        ],
    )


def _t_referral_status(s, rng):
    r = rng.choice([r for _, r in sorted(s["referrals"].items()) if r["status"] == "pending"])
    p, db = s["patients"][r["patient_id"]], s["doctors"][r["referred_to_doctor_id"]]
    return _entry(
        "cancel_referral",
        f"cancel my pending referral to {db['name']}.",
        {"name": p["name"], "referred_doctor": db["name"], "referral_status": "cancelled"},
        [
            _call("get_patient_referrals", patient_name=p["name"]),
            _call("update_referral_status", referral_id=r["referral_id"], status="cancelled"),
        ],
    )


def _t_medication(s, rng):
    m = rng.choice([m for _, m in sorted(s["medications"].items())])
    p = s["patients"][m["patient_id"]]
    return _entry(
        "medication_dosage",
        f"find out the dosage and schedule of my {m['medication_name']}.",
        {"name": p["name"], "medication": m["medication_name"]},
        [_call("get_patient_medications", patient_name=p["name"])],
        [m["dosage"], m["frequency"]],
    )


def _t_lab(s, rng):
    r = rng.choice([r for _, r in sorted(s["lab_results"].items()) if r["status"] == "completed"])
    p = s["patients"][r["patient_id"]]
    return _entry(
        "lab_result",
        f"learn the result of my {r['test_name']} test.",
        {"name": p["name"], "test": r["test_name"]},
        [_call("get_lab_results", patient_name=p["name"])],
        [r["result"]],
    )


def _t_doctor(s, rng):
    d = rng.choice(list(s["doctors"].values()))
    return _entry(
        "doctor_contact",
        f"get the phone number of {d['name']}.",
        {"doctor": d["name"]},
        [_call("get_doctor_info", doctor_name=d["name"])],
        [d["phone"]],
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
)
ENTRY_COUNT = 64
"""Entries generated (upstream's hospital count); the quick profile runs the first 40."""


def make_entries(state: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """``ENTRY_COUNT`` entries, the templates in turn, each over its own draw of the world."""
    rng = random.Random(f"benchforce-hospital-entries-{seed}")
    out = []
    for i in range(ENTRY_COUNT):
        entry = TEMPLATES[i % len(TEMPLATES)](state, rng)
        out.append({"id": f"entry_{i}", "entry_num": i + 1, **entry})
    return out


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
)
"""The hospital environment."""
