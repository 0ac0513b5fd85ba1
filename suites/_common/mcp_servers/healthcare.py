"""Healthcare: MCPEval's healthcare domain (upstream: a FastMCP server over FDA, PubMed,
health.gov, ClinicalTrials.gov and the NLM ICD-10 API).

Tools (upstream names and parameters): ``fda_drug_lookup(drug_name, search_type="general" |
"label" | "adverse_events")``, ``pubmed_search(query, max_results=5, date_range="")``,
``health_topics_search(topic, language="en" | "es")``, ``clinical_trials_search(condition,
status="recruiting" | "not_recruiting" | "completed" | "active" | "all", max_results=10)``,
``medical_terminology_lookup(code?, description?, max_results=10)``. Results keep upstream's
shapes (``{"status": "success", ..., "total_results": n, <results|articles|topics|trials|codes>:
[...]}``).

Differences, deliberate: an unknown drug, and a terminology lookup given neither ``code`` nor
``description``, are error results (upstream returned a ``status: "error"`` object);
``clinical_trials_search`` reports the requested status as ``requested_status`` (upstream's
dict had two ``status`` keys, so the request overwrote ``"success"``).

World: synthetic drug products (real generic names, invented brands and makers), 150 articles,
health topics in English and Spanish, 90 trials and an ICD-10-style code list; dates are on or
before today (2025-06-05).

Open world (``--open-world``, ``build_world(seed, open_world=True)``; upstream task files name
real drugs and conditions): a query that finds nothing in the world is answered from records
generated from (seed, the query's key) alone: a drug of any name (two letters or more), eight
articles whose titles hold the query's words (published over the last six years), a health
topic, six trials of a condition (every status filter finds one), an ICD-10 entry for a
well-formed code (``K21.9``) and two entries for a description (codes not used in the
world). A code found by a description search reads differently from a code lookup (the
lookup knows only the code). Without the flag the world and every result are exactly the
closed world above.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any, Literal

from suites._common.mcp_servers._base import TODAY, BadRequest, make_server, open_key, open_rng, rng

__all__ = [
    "build_server",
    "build_world",
    "clinical_trials",
    "drug_lookup",
    "health_topics",
    "pubmed",
    "terminology",
]

_DRUGS = [
    ("ibuprofen", "pain and fever", "NSAID", "Oral", "TABLET", "200 mg"),
    ("metformin", "type 2 diabetes", "biguanide", "Oral", "TABLET", "500 mg"),
    ("lisinopril", "high blood pressure", "ACE inhibitor", "Oral", "TABLET", "10 mg"),
    ("atorvastatin", "high cholesterol", "statin", "Oral", "TABLET", "20 mg"),
    ("amoxicillin", "bacterial infections", "penicillin antibiotic", "Oral", "CAPSULE", "500 mg"),
    ("sertraline", "depression", "SSRI", "Oral", "TABLET", "50 mg"),
    ("albuterol", "asthma", "bronchodilator", "Respiratory (Inhalation)", "AEROSOL", "90 mcg"),
    ("omeprazole", "acid reflux", "proton pump inhibitor", "Oral", "CAPSULE", "20 mg"),
    ("levothyroxine", "hypothyroidism", "thyroid hormone", "Oral", "TABLET", "50 mcg"),
    ("amlodipine", "high blood pressure", "calcium channel blocker", "Oral", "TABLET", "5 mg"),
    ("cetirizine", "allergies", "antihistamine", "Oral", "TABLET", "10 mg"),
    ("gabapentin", "nerve pain", "anticonvulsant", "Oral", "CAPSULE", "300 mg"),
    ("prednisone", "inflammation", "corticosteroid", "Oral", "TABLET", "10 mg"),
    ("warfarin", "blood clots", "anticoagulant", "Oral", "TABLET", "5 mg"),
    ("acetaminophen", "pain and fever", "analgesic", "Oral", "TABLET", "500 mg"),
    ("losartan", "high blood pressure", "angiotensin receptor blocker", "Oral", "TABLET", "50 mg"),
    ("montelukast", "asthma", "leukotriene antagonist", "Oral", "TABLET", "10 mg"),
    ("insulin glargine", "diabetes", "long-acting insulin", "Subcutaneous", "INJECTION", "100 units/mL"),
]
_MAKERS = [
    "Northwind Pharma",
    "Bluestem Laboratories",
    "Halcyon Therapeutics",
    "Meridian Generics",
    "Cobalt Health",
    "Larkspur Pharmaceuticals",
]
_REACTIONS = [
    "Nausea",
    "Headache",
    "Dizziness",
    "Rash",
    "Fatigue",
    "Diarrhoea",
    "Insomnia",
    "Dry mouth",
    "Abdominal pain",
    "Cough",
    "Oedema peripheral",
    "Pruritus",
]
_CONDITIONS = [
    ("type 2 diabetes", "E11.9", "Type 2 diabetes mellitus without complications"),
    ("hypertension", "I10", "Essential (primary) hypertension"),
    ("asthma", "J45.909", "Unspecified asthma, uncomplicated"),
    ("migraine", "G43.909", "Migraine, unspecified, not intractable, without status migrainosus"),
    ("depression", "F32.A", "Depression, unspecified"),
    ("breast cancer", "C50.919", "Malignant neoplasm of unspecified site of unspecified female breast"),
    ("alzheimer disease", "G30.9", "Alzheimer's disease, unspecified"),
    ("chronic kidney disease", "N18.9", "Chronic kidney disease, unspecified"),
    ("obesity", "E66.9", "Obesity, unspecified"),
    ("rheumatoid arthritis", "M06.9", "Rheumatoid arthritis, unspecified"),
    (
        "influenza",
        "J11.1",
        "Influenza due to unidentified influenza virus with other respiratory manifestations",
    ),
    ("heart failure", "I50.9", "Heart failure, unspecified"),
    ("anxiety", "F41.9", "Anxiety disorder, unspecified"),
    ("osteoporosis", "M81.0", "Age-related osteoporosis without current pathological fracture"),
    ("copd", "J44.9", "Chronic obstructive pulmonary disease, unspecified"),
]
_EXTRA_CODES = [
    ("E11.65", "Type 2 diabetes mellitus with hyperglycemia"),
    ("E11.22", "Type 2 diabetes mellitus with diabetic chronic kidney disease"),
    ("I11.9", "Hypertensive heart disease without heart failure"),
    ("J45.20", "Mild intermittent asthma, uncomplicated"),
    ("J45.40", "Moderate persistent asthma, uncomplicated"),
    ("G43.009", "Migraine without aura, not intractable, without status migrainosus"),
    ("F33.1", "Major depressive disorder, recurrent, moderate"),
    ("I50.22", "Chronic systolic (congestive) heart failure"),
    ("N18.3", "Chronic kidney disease, stage 3 (moderate)"),
    ("E66.01", "Morbid (severe) obesity due to excess calories"),
]
_JOURNALS = [
    "Journal of Clinical Practice",
    "Annals of Internal Research",
    "Translational Medicine Reports",
    "Global Health Review",
    "Pediatric Care Quarterly",
    "Cardiometabolic Letters",
]
_STUDY = [
    "A randomized trial of",
    "Long-term outcomes of",
    "Real-world effectiveness of",
    "Safety profile of",
    "A cohort study of",
    "Cost-effectiveness of",
]
_INTERVENTIONS = [
    "lifestyle coaching",
    "digital monitoring",
    "combination therapy",
    "early screening",
    "telehealth follow-up",
    "exercise programs",
    "dietary intervention",
]
_SURNAMES = [
    "Okafor A",
    "Lindqvist M",
    "Tanaka H",
    "Moreau C",
    "Patel R",
    "Kowalski J",
    "Ferreira L",
    "Nguyen T",
    "Schmidt K",
    "Alvarez P",
    "Osei B",
    "Hughes D",
]
_CITIES = [
    ("Boston", "MA"),
    ("Houston", "TX"),
    ("Seattle", "WA"),
    ("Denver", "CO"),
    ("Atlanta", "GA"),
    ("Chicago", "IL"),
    ("Phoenix", "AZ"),
    ("Baltimore", "MD"),
]
_STATUS = {
    "recruiting": "RECRUITING",
    "not_recruiting": "ACTIVE_NOT_RECRUITING",
    "completed": "COMPLETED",
    "active": "RECRUITING",
    "all": "",
}
_ES = {
    "type 2 diabetes": "diabetes tipo 2",
    "hypertension": "presión arterial alta",
    "asthma": "asma",
    "migraine": "migraña",
    "depression": "depresión",
    "obesity": "obesidad",
    "influenza": "gripe",
    "anxiety": "ansiedad",
    "osteoporosis": "osteoporosis",
    "heart failure": "insuficiencia cardíaca",
}


def _brand(r: Any) -> str:
    return r.choice(["Zy", "Vel", "Cor", "Nex", "Ala", "Pra", "Lu", "Ter", "Mo", "Qui"]) + r.choice(
        ["vara", "tex", "lim", "dora", "zine", "plex", "mira", "stat", "vix", "nol"]
    )


def _drug(r: Any, generic: str, use: str, cls: str, route: str, form: str, strength: str) -> dict[str, Any]:
    """One drug's products, adverse-event reports and label, drawn from ``r``."""
    products = []
    for _ in range(r.randint(1, 3)):
        products.append(
            {
                "product_ndc": f"{r.randint(10000, 99999)}-{r.randint(100, 999)}",
                "product_type": "HUMAN OTC DRUG"
                if generic in ("ibuprofen", "acetaminophen", "cetirizine", "omeprazole")
                else "HUMAN PRESCRIPTION DRUG",
                "generic_name": generic.upper(),
                "brand_name": _brand(r).upper(),
                "manufacturer": r.choice(_MAKERS),
                "dosage_form": form,
                "route": [route.upper()],
                "active_ingredients": [{"name": generic.upper(), "strength": strength}],
            }
        )
    events = []
    for _ in range(r.randint(4, 10)):
        received = TODAY - timedelta(days=r.randint(30, 1500))
        events.append(
            {
                "report_id": str(r.randint(10_000_000, 29_999_999)),
                "report_date": received.strftime("%Y%m%d"),
                "serious": r.choice(["1", "2", "2"]),
                "patient_age": str(r.randint(18, 89)),
                "patient_sex": r.choice(["1", "2"]),
                "reactions": sorted(r.sample(_REACTIONS, r.randint(1, 3))),
                "drug_info": {
                    "drug_name": generic.upper(),
                    "dosage": strength,
                    "indication": use.upper(),
                    "administration_route": route.upper(),
                },
            }
        )
    return {
        "generic": generic,
        "use": use,
        "class": cls,
        "products": products,
        "events": events,
        "label": {
            "indications_and_usage": f"{generic.title()} is a {cls} indicated for {use}.",
            "warnings": f"Do not exceed the recommended dose. Tell your doctor about other "
            f"medicines you take; {generic} may interact with them.",
            "contraindications": f"Known hypersensitivity to {generic} or any {cls}.",
        },
    }


def _trial(r: Any, condition: str, status: str) -> dict[str, Any]:
    """One trial of ``condition`` with ``status``, drawn from ``r``."""
    start = (
        TODAY - timedelta(days=r.randint(60, 2000))
        if status != "NOT_YET_RECRUITING"
        else TODAY + timedelta(days=40)
    )
    end = start + timedelta(days=r.randint(365, 1800))
    if status == "COMPLETED":
        end = min(end, TODAY - timedelta(days=r.randint(1, 50)))
    nct = f"NCT0{r.randint(4_000_000, 6_999_999)}"
    sites = r.sample(_CITIES, r.randint(1, 3))
    return {
        "nct_id": nct,
        "title": f"{r.choice(_STUDY)} {r.choice(_INTERVENTIONS)} for {condition}",
        "status": status,
        "start_date": start.strftime("%Y-%m"),
        "completion_date": end.strftime("%Y-%m"),
        "phase": r.choice(["PHASE1", "PHASE2", "PHASE3", "NA"]),
        "study_type": r.choice(["INTERVENTIONAL", "INTERVENTIONAL", "OBSERVATIONAL"]),
        "conditions": [condition.title()],
        "locations": [
            {
                "facility": f"{c} {r.choice(['Medical Center', 'University Hospital', 'Clinic'])}",
                "city": c,
                "state": s,
                "country": "United States",
            }
            for c, s in sites
        ],
        "sponsor": r.choice(_MAKERS),
        "url": f"https://clinicaltrials.gov/study/{nct}",
        "brief_summary": f"This study tests whether the intervention improves outcomes in "
        f"{condition}.",
        "eligibility": {
            "gender": r.choice(["ALL", "ALL", "FEMALE", "MALE"]),
            "minimum_age": f"{r.choice([18, 18, 21, 40, 50])} Years",
            "maximum_age": f"{r.choice([65, 75, 80, 90])} Years",
            "healthy_volunteers": r.choice([False, False, True]),
        },
    }


def build_world(seed: int, open_world: bool = False) -> dict[str, Any]:
    """``{"drugs", "articles", "topics", "trials", "codes"}``.

    With ``open_world`` the dict also holds ``"open_world": True`` and ``"seed"``: a query
    that finds nothing here (an unknown drug, a literature query, health topic or condition
    no record mentions, an unknown ICD-10 code or description) is answered from records
    generated from the query (module docstring); the records here are the same either way."""
    if open_world:
        return {**build_world(seed), "open_world": True, "seed": seed}
    r = rng(seed, "healthcare")
    drugs = [_drug(r, *row) for row in _DRUGS]
    articles = []
    for i in range(150):
        condition = r.choice(_CONDITIONS)[0]
        intervention = r.choice(_INTERVENTIONS)
        published = TODAY - timedelta(days=r.randint(10, 3650))
        pmid = str(38_000_000 - i * 7919 % 9_000_000 - r.randint(0, 5000))
        articles.append(
            {
                "pmid": pmid,
                "title": f"{r.choice(_STUDY)} {intervention} in adults with {condition}",
                "authors": r.sample(_SURNAMES, r.randint(2, 5)),
                "journal": r.choice(_JOURNALS),
                "publication_date": published.strftime("%Y %b %d"),
                "_date": published.isoformat(),
                "abstract": f"We studied {r.randint(80, 4000)} adults with {condition}. "
                f"{intervention.capitalize()} "
                f"was associated with a {r.randint(5, 40)}% change in the primary outcome "
                f"after {r.randint(6, 36)} months.",
                "doi": f"doi: 10.{r.randint(1000, 9999)}/egi.{published.year}.{r.randint(100, 999)}",
                "url": f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
            }
        )
    topics = []
    for n, (condition, _, _) in enumerate(_CONDITIONS):
        for lang in ("en", "es"):
            name = condition if lang == "en" else _ES.get(condition)
            if name is None:
                continue
            title = f"Living with {name}" if lang == "en" else f"Vivir con {name}"
            sections = (
                [
                    {
                        "title": "The basics",
                        "content": f"{condition.capitalize()} is a common condition. "
                        "Talk with your doctor about screening.",
                    },
                    {
                        "title": "Take action",
                        "content": "Stay active, eat healthy foods and take medicines as prescribed.",
                    },
                ]
                if lang == "en"
                else [
                    {
                        "title": "Información básica",
                        "content": f"La {name} es una afección común. Hable con su médico.",
                    },
                    {
                        "title": "Tome medidas",
                        "content": "Manténgase activo y tome sus medicinas según las indicaciones.",
                    },
                ]
            )
            topics.append(
                {
                    "id": str(30500 + n),
                    "title": title,
                    "language": lang,
                    "keywords": [condition, name],
                    "url": f"https://health.gov/myhealthfinder/topics/{30500 + n}?lang={lang}",
                    "last_updated": (TODAY - timedelta(days=r.randint(20, 700))).isoformat(),
                    "image_url": f"https://health.gov/sites/default/files/{30500 + n}.jpg",
                    "sections": sections,
                }
            )
    trials = []
    for _ in range(90):
        condition = r.choice(_CONDITIONS)[0]
        status = r.choice(
            ["RECRUITING", "RECRUITING", "ACTIVE_NOT_RECRUITING", "COMPLETED", "NOT_YET_RECRUITING"]
        )
        trials.append(_trial(r, condition, status))
    codes = [{"code": code, "description": desc} for _, code, desc in _CONDITIONS]
    codes += [{"code": code, "description": desc} for code, desc in _EXTRA_CODES]
    codes.sort(key=lambda c: c["code"])
    return {"drugs": drugs, "articles": articles, "topics": topics, "trials": trials, "codes": codes}


# -- open world: records generated from the query -------------------------------------------------

_OPEN_FORMS = [("Oral", "TABLET", "25 mg"), ("Oral", "CAPSULE", "100 mg"), ("Topical", "CREAM", "1%"),
               ("Subcutaneous", "INJECTION", "2 mg/mL"), ("Intravenous", "SOLUTION", "10 mg/mL")]  # fmt: skip
_OPEN_STATUSES = ["RECRUITING", "ACTIVE_NOT_RECRUITING", "COMPLETED", "NOT_YET_RECRUITING", "RECRUITING",
                  "COMPLETED"]  # fmt: skip
"""Statuses of the trials an open world generates for a condition, in order: every status
filter of ``clinical_trials_search`` finds at least one."""
_OPEN_SYSTEMS = ["the respiratory system", "the circulatory system", "the digestive system",
                 "the nervous system", "the musculoskeletal system", "the skin", "the eye and adnexa",
                 "the ear", "the urinary system"]  # fmt: skip
_ICD_CODE = re.compile(r"^[A-Z][0-9][0-9A-Z](?:\.[0-9A-Z]{1,4})?$")
"""An ICD-10-CM code (or a 3-character category) an open world answers a code lookup for."""


def _open_ok(text: str, limit: int = 100) -> bool:
    key = open_key(text)
    return sum(c.isalpha() for c in key) >= 2 and len(key) <= limit


def _open_drug(world: dict[str, Any], name: str) -> dict[str, Any]:
    """The drug an open world knows by ``name`` (a function of (seed, name) alone)."""
    key = open_key(name)
    cache = world.setdefault("open_drugs", {})
    if key not in cache:
        r = open_rng(world["seed"], "healthcare", "drug", key)
        _, use, cls, *_ = r.choice(_DRUGS)
        route, form, strength = r.choice(_OPEN_FORMS)
        cache[key] = _drug(r, str(name).strip().lower(), use, cls, route, form, strength)
    return cache[key]


def _open_articles(world: dict[str, Any], query: str) -> list[dict[str, Any]]:
    """Eight articles an open world holds for ``query`` (each title holds the query's words),
    published over the last six years."""
    key = open_key(query)
    r = open_rng(world["seed"], "healthcare", "pubmed", key)
    out = []
    for _ in range(8):
        published = TODAY - timedelta(days=r.randint(10, 6 * 365))
        pmid = str(r.randint(30_000_000, 39_999_999))
        out.append({
            "pmid": pmid,
            "title": f"{r.choice(_STUDY)} {r.choice(_INTERVENTIONS)} and {key}",
            "authors": r.sample(_SURNAMES, r.randint(2, 5)),
            "journal": r.choice(_JOURNALS),
            "publication_date": published.strftime("%Y %b %d"),
            "_date": published.isoformat(),
            "abstract": f"We studied {r.randint(80, 4000)} adults in research on {key}. The primary outcome "
                        f"changed by {r.randint(5, 40)}% after {r.randint(6, 36)} months.",
            "doi": f"doi: 10.{r.randint(1000, 9999)}/egi.{published.year}.{r.randint(100, 999)}",
            "url": f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
        })  # fmt: skip
    return out


def _open_topic(world: dict[str, Any], topic: str, lang: str) -> dict[str, Any]:
    """The health topic an open world holds for ``topic`` in ``lang``."""
    key = open_key(topic)
    r = open_rng(world["seed"], "healthcare", f"topic-{lang}", key)
    tid = str(r.randint(40_000, 49_999))
    english = lang == "en"
    return {
        "id": tid,
        "title": f"Living with {key}" if english else f"Vivir con {key}",
        "url": f"https://health.gov/myhealthfinder/topics/{tid}?lang={lang}",
        "last_updated": (TODAY - timedelta(days=r.randint(20, 700))).isoformat(),
        "image_url": f"https://health.gov/sites/default/files/{tid}.jpg",
        "sections": [
            {"title": "The basics" if english else "Información básica",
             "content": f"Learn about {key} and talk with your doctor." if english
             else f"Infórmese sobre {key} y hable con su médico."},
            {"title": "Take action" if english else "Tome medidas",
             "content": "Stay active and take medicines as prescribed." if english
             else "Manténgase activo y tome sus medicinas según las indicaciones."},
        ],
    }  # fmt: skip


def _open_trials(world: dict[str, Any], condition: str) -> list[dict[str, Any]]:
    """Six trials an open world holds for ``condition`` (one of each status at least)."""
    key = open_key(condition)
    r = open_rng(world["seed"], "healthcare", "trials", key)
    return [_trial(r, key, status) for status in _OPEN_STATUSES]


def _open_code(world: dict[str, Any], code: str) -> dict[str, str]:
    """The ICD-10 entry an open world holds for ``code`` (a description made from the code)."""
    r = open_rng(world["seed"], "healthcare", "icd-code", code)
    kind = r.choice(["Disorder", "Disease", "Other disorders", "Injury", "Benign neoplasm"])
    return {"code": code, "description": f"{kind} of {r.choice(_OPEN_SYSTEMS)}, unspecified"}


def _open_codes(world: dict[str, Any], description: str) -> list[dict[str, str]]:
    """Two ICD-10 entries an open world holds for ``description`` (codes not used here)."""
    key = open_key(description)
    r = open_rng(world["seed"], "healthcare", "icd-description", key)
    taken = {c["code"] for c in world["codes"]}
    out: list[dict[str, str]] = []
    for suffix in ("unspecified", "other specified"):
        code = f"{r.choice('ABCDEFGHIJKLMNOQRST')}{r.randint(0, 99):02d}.{r.randint(0, 9)}"
        while code in taken:
            code = code[:-1] + str((int(code[-1]) + 1) % 10)
        taken.add(code)
        out.append({"code": code, "description": f"{key.capitalize()}, {suffix}"})
    return out


def _clamp(n: int) -> int:
    return min(max(1, int(n)), 100)


def _words(text: str) -> list[str]:
    return [w for w in "".join(c if c.isalnum() else " " for c in text.lower()).split() if len(w) > 1]


def drug_lookup(world: dict[str, Any], drug_name: str, search_type: str = "general") -> dict[str, Any]:
    """Products, label or adverse events of a drug found by generic or brand name."""
    name = str(drug_name).strip().lower()
    drug = next(
        (
            d
            for d in world["drugs"]
            if name and (name == d["generic"] or any(name == p["brand_name"].lower() for p in d["products"]))
        ),
        None,
    )
    if drug is None and world.get("open_world") and _open_ok(drug_name, 60):
        drug = _open_drug(world, drug_name)
    if drug is None:
        raise BadRequest(f"No drug named {drug_name!r} was found in the FDA database")
    kind = str(search_type).lower()
    if kind == "general":
        results = drug["products"]
    elif kind == "label":
        results = [
            {
                "generic_name": p["generic_name"],
                "brand_name": p["brand_name"],
                "manufacturer": p["manufacturer"],
                "product_type": p["product_type"],
                "route": p["route"],
                "dosage_form": p["dosage_form"],
                **drug["label"],
            }
            for p in drug["products"]
        ]
    elif kind == "adverse_events":
        results = drug["events"]
    else:
        raise BadRequest(f"search_type must be general, label or adverse_events, got {search_type!r}")
    return {
        "status": "success",
        "drug_name": drug_name,
        "search_type": kind,
        "total_results": len(results),
        "results": results,
    }


def pubmed(world: dict[str, Any], query: str, max_results: int = 5, date_range: str = "") -> dict[str, Any]:
    """Articles whose title or abstract holds every query word, newest first."""
    words = _words(query)
    if not words:
        raise BadRequest("query must contain at least one word")
    since = None
    if str(date_range).strip():
        if not str(date_range).strip().isdigit():
            raise BadRequest(f"date_range must be a number of years such as '5', got {date_range!r}")
        since = date(TODAY.year - int(date_range), TODAY.month, TODAY.day).isoformat()
    here = [a for a in world["articles"] if all(w in _words(a["title"] + " " + a["abstract"]) for w in words)]
    if not here and world.get("open_world") and _open_ok(query):
        here = _open_articles(world, query)
    hits = [a for a in here if since is None or a["_date"] >= since]
    hits.sort(key=lambda a: (a["_date"], a["pmid"]), reverse=True)
    articles = [{k: v for k, v in a.items() if not k.startswith("_")} for a in hits[: _clamp(max_results)]]
    return {"status": "success", "query": query, "total_results": len(articles), "articles": articles}


def health_topics(world: dict[str, Any], topic: str, language: str = "en") -> dict[str, Any]:
    """Health topics of a language whose title or keywords hold every word of ``topic``."""
    lang = str(language).lower() if str(language).lower() in ("en", "es") else "en"
    words = _words(topic)
    hits = [
        t
        for t in world["topics"]
        if t["language"] == lang
        and words
        and all(w in _words(t["title"] + " " + " ".join(t["keywords"])) for w in words)
    ]
    if not hits and world.get("open_world") and _open_ok(topic):
        hits = [_open_topic(world, topic, lang)]
    topics = [{k: v for k, v in t.items() if k not in ("language", "keywords")} for t in hits]
    return {
        "status": "success",
        "topic": topic,
        "language": lang,
        "total_results": len(topics),
        "topics": topics,
    }


def clinical_trials(
    world: dict[str, Any], condition: str, status: str = "recruiting", max_results: int = 10
) -> dict[str, Any]:
    """Trials for a condition (substring of a listed condition), filtered by status."""
    if not str(condition).strip():
        raise BadRequest("condition is required")
    wanted = _STATUS.get(str(status).lower())
    if wanted is None:
        raise BadRequest(f"status must be one of {', '.join(_STATUS)}, got {status!r}")
    cond = str(condition).strip().lower()
    here = [t for t in world["trials"] if any(cond in c.lower() for c in t["conditions"])]
    if not here and world.get("open_world") and _open_ok(condition):
        here = _open_trials(world, condition)
    hits = [t for t in here if not wanted or t["status"] == wanted]
    trials = hits[: _clamp(max_results)]
    return {
        "status": "success",
        "condition": condition,
        "requested_status": status,
        "total_results": len(trials),
        "trials": trials,
    }


def terminology(
    world: dict[str, Any], code: str | None = None, description: str | None = None, max_results: int = 10
) -> dict[str, Any]:
    """ICD-10 codes by code prefix, or by every word of a description."""
    if not code and not description:
        raise BadRequest("At least one of 'code' or 'description' must be provided")
    if code:
        prefix = str(code).strip().upper()
        hits = [c for c in world["codes"] if c["code"].startswith(prefix)]
        if not hits and world.get("open_world") and _ICD_CODE.match(prefix):
            hits = [_open_code(world, prefix)]
    else:
        words = _words(str(description))
        hits = [c for c in world["codes"] if words and all(w in _words(c["description"]) for w in words)]
        if not hits and world.get("open_world") and _open_ok(str(description)):
            hits = _open_codes(world, str(description))
    codes = hits[: _clamp(max_results)]
    return {
        "status": "success",
        "search_term": code or description,
        "search_type": "code" if code else "description",
        "total_results": len(codes),
        "codes": codes,
    }


def build_server(seed: int, open_world: bool = False) -> Any:
    """Healthcare lookups MCP server over a seeded synthetic world."""
    world = build_world(seed, open_world=open_world)

    def fda_drug_lookup(
        drug_name: str, search_type: Literal["general", "label", "adverse_events"] = "general"
    ) -> dict[str, Any]:
        """Look up drug information from the FDA database.

        Args:
            drug_name: Name of the drug to search for (generic or brand name)
            search_type: Type of information to retrieve: "general" (basic drug information,
                default), "label" (drug labeling information) or "adverse_events" (reported adverse events)
        """
        return drug_lookup(world, drug_name, search_type)

    def pubmed_search(query: str, max_results: int = 5, date_range: str = "") -> dict[str, Any]:
        """Search for medical literature in PubMed database.

        Args:
            query: Search query for medical literature
            max_results: Maximum number of results to return (1-100)
            date_range: Limit to articles published within years (e.g. '5' for last 5 years)
        """
        return pubmed(world, query, max_results, date_range)

    def health_topics_search(topic: str, language: Literal["en", "es"] = "en") -> dict[str, Any]:
        """Get evidence-based health information on various topics.

        Args:
            topic: Health topic to search for information
            language: Language for content (en or es)
        """
        return health_topics(world, topic, language)

    def clinical_trials_search(
        condition: str,
        status: Literal["recruiting", "not_recruiting", "completed", "active", "all"] = "recruiting",
        max_results: int = 10,
    ) -> dict[str, Any]:
        """Search for clinical trials by condition, status, and other parameters.

        Args:
            condition: Medical condition or disease to search for
            status: Trial status (recruiting, not_recruiting, completed, active, all)
            max_results: Maximum number of results to return (1-100)
        """
        return clinical_trials(world, condition, status, max_results)

    def medical_terminology_lookup(
        code: str | None = None, description: str | None = None, max_results: int = 10
    ) -> dict[str, Any]:
        """Look up ICD-10 codes by code or description.

        Args:
            code: ICD-10 code to look up (optional if description is provided)
            description: Medical condition description to search for (optional if code is provided)
            max_results: Maximum number of results to return (1-100)
        """
        return terminology(world, code, description, max_results)

    tools = [
        fda_drug_lookup,
        pubmed_search,
        health_topics_search,
        clinical_trials_search,
        medical_terminology_lookup,
    ]
    return make_server(
        "healthcare",
        "Drug, literature, health topic, clinical trial and ICD-10 lookups.",
        [(fn, True) for fn in tools],
    )


if __name__ == "__main__":
    from suites._common.mcp_servers._base import OPEN_WORLD_FLAG, main

    main(build_server, flags=OPEN_WORLD_FLAG)
