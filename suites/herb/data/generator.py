"""Seeded generator of HERB-shaped enterprise worlds and their questions (reference §2, §4.3).

One product = one team, its customers, three Slack channels, five documents, five meetings
(with chats), competitor URLs and pull requests, written around planted facts:

* the PRD's author is in the document header, its reviewers only in the review meeting;
* PR links are only in Slack, their reviewers and root causes only behind ``pr_search``;
* bug reports and feature requests name customer *ids*; companies need the customer lookup;
* competitor names of shared links are only behind ``url_search``;
* a PRD target changed in the review meeting; design options in the design document, the
  decision and its reason in the design review.

Questions of the five answer types are built from these facts with gold by construction
(answer, key facts, citations). Unanswerable questions perturb answerable ones: a product
that does not exist, a person not in the directory, a day without that meeting, or a fact
never stated (a feature, bug, request, segment or component the product does not have).
Sizes default to the upstream totals: 815 answerable and 699 unanswerable questions over 30
products. Everything is drawn from one ``random.Random`` seeded with the run seed.
"""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import date, timedelta
from typing import Any

from suites.herb.data.templates import (
    CONTENT_FACTS,
    KIND_TYPE,
    PATTERNS,
    compose_content,
    question_text,
)
from suites.herb.data.vocab import (
    BUGS,
    CAUSES,
    CLAIMS,
    COMPANY_HEADS,
    COMPANY_TAILS,
    COMPETITORS,
    COMPONENTS,
    DOMAINS,
    FEATURES,
    FILLER,
    FIRST_NAMES,
    FIXES,
    LAST_NAMES,
    LOCATIONS,
    METRICS,
    PRODUCT_STEMS,
    REASONS,
    REQUESTS,
    SEGMENTS,
    SIZES,
)
from suites.herb.data.world import World

__all__ = [
    "ANSWERABLE_TOTAL", "MAX_PRODUCTS", "UNANSWERABLE_TOTAL", "generate_company_names", "generate_world",
    "question_counts",
]  # fmt: skip

ANSWERABLE_TOTAL = 815
UNANSWERABLE_TOTAL = 699
UPSTREAM_PRODUCTS = 30
"""Upstream sizes (reference §2.1); with another product count the totals scale."""
MAX_PRODUCTS = len(PRODUCT_STEMS) - 10
"""Ten stems are kept back as names of products that do not exist."""

FILLER_PER_PRODUCT = 1250
"""Background Slack messages per product (upstream: 39,190 artifacts over 30 products)."""
TYPE_WEIGHTS = {"content": 0.40, "person": 0.20, "company": 0.12, "url": 0.16, "pr": 0.12}
PERTURBATION_WEIGHTS = {"fact": 0.40, "product": 0.30, "person": 0.15, "period": 0.15}
TEAM_SHAPE = (
    ("Product Manager", 2), ("Engineering Lead", 1), ("Software Engineer", 4),
    ("QA Specialist", 1), ("UX Researcher", 1), ("Technical Architect", 1),
    ("Marketing Manager", 1), ("Marketing Research Analyst", 1),
)  # fmt: skip
ORG_OF = {
    "Product Manager": "product", "Chief Product Officer": "product",
    "UX Researcher": "product", "Marketing Manager": "marketing",
    "Marketing Research Analyst": "marketing",
}  # fmt: skip
DOC_HOST = "https://docs.egi-synth.example"
GIT_HOST = "https://git.egi-synth.example"


class _Ctx:
    """World-level registries shared by all products."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.employees: dict[str, dict[str, Any]] = {}
        self.customers: list[dict[str, Any]] = []
        self.names: set[str] = set()
        self.companies: set[str] = set()
        self.ids: set[str] = set()
        self.perturbed: set[str] = set()

    def _uid(self, make: Any) -> str:
        while True:
            value = make()
            if value not in self.ids:
                self.ids.add(value)
                return value

    def person_name(self) -> str:
        while True:
            name = f"{self.rng.choice(FIRST_NAMES)} {self.rng.choice(LAST_NAMES)}"
            if name not in self.names:
                self.names.add(name)
                return name

    def employee(self, role: str) -> str:
        eid = self._uid(lambda: f"eid_{self.rng.getrandbits(32):08x}")
        self.employees[eid] = {
            "employee_id": eid, "name": self.person_name(), "role": role,
            "location": self.rng.choice(LOCATIONS), "org": ORG_OF.get(role, "engineering"),
        }  # fmt: skip
        return eid

    def customer(self) -> str:
        cid = self._uid(lambda: f"CUST-{self.rng.randrange(10**6, 10**7):07d}")
        while True:
            company = f"{self.rng.choice(COMPANY_HEADS)} {self.rng.choice(COMPANY_TAILS)}"
            if company not in self.companies:
                self.companies.add(company)
                break
        role = self.rng.choice(["Operations Director", "IT Manager", "VP of Sales", "CFO"])
        self.customers.append({"id": cid, "name": self.person_name(), "role": role,
                               "company": company})  # fmt: skip
        return cid

    def company_of(self, cid: str) -> str:
        return next(c["company"] for c in self.customers if c["id"] == cid)


class _Product:
    """Builds one product's artifacts and question candidates."""

    def __init__(self, ctx: _Ctx, name: str, fakes: list[str], names_only: bool = False) -> None:
        self.ctx, self.rng, self.name, self.fakes = ctx, ctx.rng, name, fakes
        self.names_only = names_only  # the filler only draws (see generate_company_names)
        self.slug = name.lower()
        self.data: dict[str, Any] = {
            k: [] for k in ("slack", "documents", "meeting_transcripts", "meeting_chats", "urls", "prs")
        }
        self.answerable: list[dict[str, Any]] = []
        self.unanswerable: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.start = date(2025, 1, 6) + timedelta(days=self.rng.randrange(0, 150))
        self.channels = {k: f"C{self.rng.getrandbits(36):09X}" for k in ("planning", "develop", "support")}
        self._msg = 0
        self._pr = 100 + self.rng.randrange(0, 400)
        self._days: dict[int, str] = {}  # offset -> ISO date of slack()'s messages

    # -- artifact helpers ------------------------------------------------------------------
    def day(self, offset: int) -> date:
        return self.start + timedelta(days=offset)

    def slack(self, channel: str, user: str, offset: int, text: str) -> str:
        self._msg += 1
        uid = f"{self.slug}_msg_{self._msg:04d}"
        day = self._days.get(offset)
        if day is None:
            day = self._days[offset] = self.day(offset).isoformat()
        hour, minute = self._clock()
        ts = f"{day}T{hour:02d}:{minute:02d}:00"
        self.data["slack"].append({
            "Channel": {"name": f"{channel}-{self.name}", "channelID": self.channels[channel]},
            "Message": {"User": {"userId": user, "timestamp": ts, "text": text,
                                 "utterranceID": uid}},
        })  # fmt: skip
        return uid

    def _clock(self) -> tuple[int, int]:
        """A message's hour and minute: the draws :meth:`slack` makes."""
        below = self.rng._randbelow  # rng.randrange(a, b) is a + _randbelow(b - a): same draws
        return 8 + below(11), below(60)

    def document(self, kind: str, author: str, offset: int, lines: list[str]) -> dict[str, Any]:
        doc = {
            "id": f"{self.slug}_doc_{len(self.data['documents']) + 1}",
            "document_link": f"{DOC_HOST}/{self.slug}/{kind.lower().replace(' ', '-')}",
            "date": self.day(offset).isoformat(), "author": author, "type": kind,
            "content": "\n".join([f"{self.name} {kind}", *lines]),
        }  # fmt: skip
        self.data["documents"].append(doc)
        doc["announced_in"] = self.slack(
            "planning",
            author,
            offset,
            PATTERNS["doc_share"].format(title=f"{self.name} {kind}", link=doc["document_link"]),
        )
        return doc

    def meeting(self, title: str, offset: int, people: list[str], lines: list[str]) -> str:
        mid = f"{self.slug}_meeting_{len(self.data['meeting_transcripts']) + 1}"
        head = PATTERNS["title"].format(product=self.name, meeting=title)
        self.data["meeting_transcripts"].append({
            "id": mid, "date": self.day(offset).isoformat(), "participants": list(people),
            "transcript": "\n".join([head, *lines]),
        })  # fmt: skip
        return mid

    def chat(self, meeting_id: str, lines: list[str]) -> None:
        self.data["meeting_chats"].append({"id": f"{meeting_id}_chat", "text": "\n".join(lines)})

    def pull_request(self, author: str, reviewers: list[str], offset: int, title: str,
                     summary: str) -> dict[str, Any]:  # fmt: skip
        self._pr += self.rng.randrange(1, 9)
        created = f"{self.day(offset).isoformat()}T10:00:00Z"
        reviews = [{"state": self.rng.choice(["APPROVED", "APPROVED", "COMMENTED"]),
                    "user": {"login": r}, "submitted_at": f"{self.day(offset + 1)}T15:00:00Z",
                    "comment": self.rng.choice(["Looks good to me.", "Left two small nits.",
                                                "Tests cover the edge cases."])}
                   for r in reviewers]  # fmt: skip
        pr = {"id": f"{self.slug}_pr_{self._pr}", "title": title, "user": {"login": author},
              "created_at": created, "state": "closed", "mergeable": True, "merged": True,
              "link": f"{GIT_HOST}/{self.slug}/pull/{self._pr}", "summary": summary,
              "reviews": reviews}  # fmt: skip
        self.data["prs"].append(pr)
        return pr

    def name_of(self, eid: str) -> str:
        return self.ctx.employees[eid]["name"]

    def ask(self, kind: str, params: dict[str, Any], gold: Any, citations: list[str],
            facts: dict[str, str] | None = None) -> None:  # fmt: skip
        params = {"product": self.name, **params}
        rec = {"question": question_text(kind, params), "type": KIND_TYPE[kind],
               "answerable": True, "product": self.name, "citations": citations,
               "recipe": {"kind": kind, **params}}  # fmt: skip
        if facts is not None:
            rec["ground_truth"] = compose_content(kind, params, facts)
            rec["facts"] = [facts[k] for k in CONTENT_FACTS[kind]]
        else:
            rec["ground_truth"] = list(dict.fromkeys(gold))
        self.answerable.append(rec)
        if self.fakes:
            self.perturb("product", rec, "product", self.rng.choice(self.fakes))

    def perturb(self, kind: str, source: dict[str, Any], slot: str, value: str) -> None:
        params = {k: v for k, v in source["recipe"].items() if k != "kind"}
        original, params[slot] = params[slot], value
        recipe_kind = source["recipe"]["kind"]
        text = question_text(recipe_kind, params)
        if text in self.ctx.perturbed:
            return
        self.ctx.perturbed.add(text)
        self.unanswerable[kind].append({
            "question": text, "type": None, "answerable": False,
            "product": self.name, "ground_truth": None, "citations": list(source["citations"]),
            "recipe": {"kind": recipe_kind, **params}, "intent": source["type"],
            "perturbation": {"kind": kind, "slot": slot, "original": original,
                             "replacement": value, "source_question": source["question"]},
        })  # fmt: skip

    # -- storylines ------------------------------------------------------------------------
    def build(self) -> None:
        c, rng = self.ctx, self.rng
        self.team = {role: [c.employee(role) for _ in range(n)] for role, n in TEAM_SHAPE}
        self.members = [e for ids in self.team.values() for e in ids]
        self.customers = [c.customer() for _ in range(5)]
        self.features = rng.sample(FEATURES, 5)
        self.pm, self.pm2 = self.team["Product Manager"]
        self.lead = self.team["Engineering Lead"][0]
        self.ses = self.team["Software Engineer"]
        self.qa, self.uxr = self.team["QA Specialist"][0], self.team["UX Researcher"][0]
        self.arch = self.team["Technical Architect"][0]
        self.mm = self.team["Marketing Manager"][0]
        self.mra = self.team["Marketing Research Analyst"][0]
        self.docs_by: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._vision_and_market()
        self._prd_and_review()
        self._design()
        self._sprints()
        self._feature_prs()
        self._bugs()
        self._feedback()
        self._urls()
        self._filler()
        for author, docs in self.docs_by.items():
            self.ask(
                "author_docs",
                {"name": self.name_of(author)},
                [d["document_link"] for d in docs],
                [x for d in docs for x in (d["id"], d["announced_in"])],
            )
            self.perturb("person", self.answerable[-1], "name", self._fake_name())
        for doc in self.data["documents"]:
            del doc["announced_in"]
        self.data["slack"].sort(key=lambda m: m["Message"]["User"]["timestamp"])
        self.data["team"] = self.members
        self.data["customers"] = self.customers

    def _fake_name(self) -> str:
        """A name nobody has, reserved so that no later employee gets it either."""
        return self.ctx.person_name()

    def _vision_and_market(self) -> None:
        domain = self.rng.choice(DOMAINS)
        vision = self.document("Product Vision", self.pm, 1, [
            f"Vision: {self.name} {domain}.",
            f"We want {self.name} to be the default workspace for this job within two years.",
            "Launch is planned in phases, starting with a private beta."])  # fmt: skip
        self.docs_by[self.pm].append(vision)
        gtm = self.document("Go-To-Market Plan", self.mm, 90, [
            f"Positioning: {self.name} {domain}.",
            "Channels: partner webinars, a self-serve trial and field events.",
            "Pricing will be per seat with an annual plan discount."])  # fmt: skip
        self.docs_by[self.mm].append(gtm)
        self.segments = self.rng.sample(SEGMENTS, 3)
        lines, self.segment_facts = [f"Prepared for the {self.name} team."], {}
        for seg in self.segments:
            size, comp = self.rng.choice(SIZES), self.rng.choice(COMPETITORS)
            lines.append(PATTERNS["segment"].format(segment=seg, size=size, competitor=comp))
            lines.append("Buyers in this segment rank ease of rollout above price.")
            self.segment_facts[seg] = {"size": size, "competitor": comp}
        report = self.document("Market Research Report", self.mra, -10, lines)
        self.docs_by[self.mra].append(report)
        for seg, facts in self.segment_facts.items():
            self.ask("segment", {"segment": seg}, None, [report["id"]], facts)
        for seg in self.rng.sample([s for s in SEGMENTS if s not in self.segments], 2):
            self.perturb("fact", self.answerable[-1], "segment", seg)

    def _prd_and_review(self) -> None:
        rng = self.rng
        targeted = self.features[:3]
        self.targets = {f: rng.choice(sorted(METRICS)) for f in targeted}
        values = {f: rng.choice(METRICS[m]) for f, m in self.targets.items()}
        revised = targeted[: rng.choice([1, 2])]
        lines = [f"Overview: {self.name} {rng.choice(DOMAINS)}.", "Features:"]
        for f in self.features:
            line = f"- {f}: {rng.choice(['available to every workspace admin', 'shipped behind a feature flag first', 'designed for teams of any size'])}."  # noqa: E501
            if f in self.targets:
                line += " " + PATTERNS["target"].format(feature=f, metric=self.targets[f],
                                                        value=values[f])  # fmt: skip
            lines.append(line)
        lines.append("Risks: migration effort for existing customers.")
        prd = self.document("PRD", self.pm, 3, lines)
        self.docs_by[self.pm].append(prd)
        pool = [self.lead, self.arch, self.uxr, self.qa, self.mm, *self.ses[:2]]
        reviewers = rng.sample(pool, 3)
        talk = [
            f"{self.name_of(reviewers[0])}: Thanks all, today we review the {self.name} PRD.",
            f"{self.name_of(reviewers[1])}: The scope of {self.features[3]} looks right.",
        ]
        new_values = {}
        for f in revised:
            metric = self.targets[f]
            new = rng.choice([v for v in METRICS[metric] if v != values[f]])
            new_values[f] = new
            talk.append(f"{self.name_of(reviewers[2])}: After discussion "
                        + PATTERNS["revision"].format(metric=metric, feature=f, old=values[f],
                                                      new=new))  # fmt: skip
        talk.append(f"{self.name_of(reviewers[0])}: I will send the notes to the PRD author.")
        review = self.meeting("PRD review", 10, reviewers, talk)
        self.chat(review, [f"{reviewers[1]}: PRD link: {prd['document_link']}",
                           f"{reviewers[2]}: +1, thanks everyone"])  # fmt: skip
        self.ask("prd_team", {}, [self.pm, *reviewers], [prd["id"], review])
        self._ask_role(review, "PRD review", reviewers)
        for f in targeted:
            p = {"feature": f, "metric": self.targets[f]}
            if f in revised:
                self.ask(
                    "target_revision", p, None, [prd["id"], review], {"old": values[f], "new": new_values[f]}
                )
            else:
                self.ask("target", p, None, [prd["id"]], {"value": values[f]})
        source = next(
            q
            for q in reversed(self.answerable)
            if q["recipe"]["kind"] == "target" or q["recipe"]["kind"] == "target_revision"
        )
        for f in self.features[3:]:
            self.perturb("fact", source, "feature", f)

    def _ask_role(self, meeting_id: str, title: str, people: list[str]) -> None:
        roles = sorted({self.ctx.employees[p]["role"] for p in people})
        role = self.rng.choice(roles)
        gold = [p for p in people if self.ctx.employees[p]["role"] == role]
        self.ask("meeting_role", {"role": role, "meeting": title}, gold, [meeting_id])

    def _design(self) -> None:
        rng = self.rng
        comps = rng.sample(sorted(COMPONENTS), 2)
        lines, facts = ["Components:"], {}
        for comp in comps:
            a, b = rng.sample(COMPONENTS[comp], 2)
            lines.append(PATTERNS["options"].format(component=comp, a=a, b=b))
            facts[comp] = {"a": a, "b": b, "tech": rng.choice([a, b]),
                           "reason": rng.choice(REASONS)}  # fmt: skip
        lines.append("Every service exports metrics to the shared monitoring stack.")
        doc = self.document("System Design", self.arch, 20, lines)
        self.docs_by[self.arch].append(doc)
        people = [self.arch, self.lead, *self.ses[:2]]
        talk = [f"{self.name_of(self.arch)}: Let's close the open design questions."]
        for comp, f in facts.items():
            talk.append(f"{self.name_of(self.lead)}: "
                        + PATTERNS["decision"].format(tech=f["tech"], component=comp,
                                                      reason=f["reason"]))  # fmt: skip
        mid = self.meeting("design review", 25, people, talk)
        self.chat(mid, [f"{self.arch}: Design doc: {doc['document_link']}"])
        self._ask_role(mid, "design review", people)
        for comp, f in facts.items():
            self.ask("tech_choice", {"component": comp}, None, [doc["id"], mid], f)
        for comp in rng.sample([c for c in sorted(COMPONENTS) if c not in comps], 2):
            self.perturb("fact", self.answerable[-1], "component", comp)

    def _sprints(self) -> None:
        people = [self.lead, self.pm, *self.ses, self.qa]
        dates = []
        for k, offset in enumerate((35, 49)):
            feature = self.features[k]
            goal = self.rng.choice([f"ship {feature} to beta customers",
                                    f"finish QA for {feature}",
                                    f"harden {feature} for general availability"])  # fmt: skip
            mid = self.meeting("sprint planning", offset, people, [
                f"{self.name_of(self.lead)}: Quick planning today. "
                + PATTERNS["sprint"].format(goal=goal),
                f"{self.name_of(self.qa)}: I will prepare the test plan."])  # fmt: skip
            iso = self.day(offset).isoformat()
            dates.append(iso)
            self.ask("sprint_goal", {"date": iso}, None, [mid], {"goal": goal})
        for shift in (-14, 7, 21, 70):
            iso = self.day(35 + shift).isoformat()
            if iso not in dates:
                self.perturb("period", self.answerable[-1], "date", iso)

    def _feature_prs(self) -> None:
        rng = self.rng
        self.feature_prs = {}
        for k, f in enumerate(self.features):
            author = self.ses[k % 4]
            pool = [e for e in [*self.ses, self.lead, self.qa, self.arch] if e != author]
            reviewers = rng.sample(pool, rng.choice([1, 2, 2, 3]))
            pr = self.pull_request(
                author,
                reviewers,
                40 + 6 * k,
                f"Add {f}",
                f"Implements {f} for {self.name}, with tests and docs.",
            )
            msg = self.slack(
                "develop", author, 40 + 6 * k, PATTERNS["pr_ready"].format(feature=f, link=pr["link"])
            )
            self.feature_prs[f] = (pr, msg)
            self.ask("pr_reviewers", {"feature": f}, reviewers, [msg, pr["id"]])
        for f in rng.sample([x for x in FEATURES if x not in self.features], 2):
            self.perturb("fact", self.answerable[-1], "feature", f)
        if rng.random() < 0.5:
            f = rng.choice(self.features)
            orig, _ = self.feature_prs[f]
            revert = self.pull_request(
                self.lead, [], 75, f"Revert {orig['title']}", f"Reverts {orig['link']}."
            )
            reason = rng.choice(["it broke the nightly import", "it doubled API latency"])
            msg = self.slack(
                "develop",
                self.lead,
                75,
                "Heads up: "
                + PATTERNS["revert"].format(link=orig["link"], revert=revert["link"], reason=reason),
            )
            self.ask("reverted", {}, [orig["link"]], [msg, revert["id"]])

    def _bugs(self) -> None:
        rng = self.rng
        self.bugs = rng.sample(BUGS, 3)
        self.fix_prs = {}
        for k, bug in enumerate(self.bugs):
            reporters = rng.sample(self.customers, rng.choice([1, 2, 2, 3]))
            msgs = [
                self.slack(
                    "support",
                    self.pm2,
                    110 + 9 * k,
                    "Heads up, " + PATTERNS["bug_report"].format(cust=reporters[0], bug=bug) + ".",
                )
            ]
            for j, cust in enumerate(reporters[1:]):
                msgs.append(
                    self.slack(
                        "support",
                        self.qa,
                        111 + 9 * k + j,
                        PATTERNS["bug_also"].format(cust=cust, bug=bug) + ".",
                    )
                )
            cause, fix = rng.choice(CAUSES), rng.choice(FIXES)
            author = rng.choice(self.ses)
            reviewers = rng.sample([e for e in [*self.ses, self.lead] if e != author], 2)
            pr = self.pull_request(
                author,
                reviewers,
                114 + 9 * k,
                f"Fix {bug}",
                PATTERNS["fix_summary"].format(bug=bug, cause=cause, fix=fix),
            )
            ann = self.slack(
                "develop", author, 114 + 9 * k, PATTERNS["fix_ready"].format(bug=bug, link=pr["link"])
            )
            self.fix_prs[bug] = pr
            self.ask("bug_reporters", {"bug": bug}, [self.ctx.company_of(c) for c in reporters], msgs)
            self.ask("bug_fix_pr", {"bug": bug}, [pr["link"]], [ann, pr["id"]])
            self.ask("bug_cause", {"bug": bug}, None, [ann, pr["id"]], {"cause": cause, "fix": fix})
        others = rng.sample([b for b in BUGS if b not in self.bugs], 3)
        for kind, offset in (("bug_reporters", 3), ("bug_fix_pr", 2), ("bug_cause", 1)):
            src = next(q for q in reversed(self.answerable) if q["recipe"]["kind"] == kind)
            self.perturb("fact", src, "bug", others[offset - 1])
        prs = [*(p for p, _ in self.feature_prs.values()), *self.fix_prs.values()]
        reviewers = sorted({r["user"]["login"] for p in prs for r in p["reviews"]})
        for eid in rng.sample(reviewers, min(4, len(reviewers))):
            mine = [p for p in prs if any(r["user"]["login"] == eid for r in p["reviews"])]
            self.ask(
                "reviewed_by", {"name": self.name_of(eid)}, [p["link"] for p in mine], [p["id"] for p in mine]
            )
            self.perturb("person", self.answerable[-1], "name", self._fake_name())

    def _feedback(self) -> None:
        rng = self.rng
        people = [self.pm2, self.mm, self.uxr]
        asking = rng.sample(self.customers, 3)
        requests = rng.sample(REQUESTS, 3)
        talk = [f"{self.name_of(self.pm2)}: Thanks for joining the customer feedback review."]
        for cust, req in zip(asking, requests, strict=True):
            talk.append(
                f"{self.name_of(rng.choice(people))}: " + PATTERNS["request"].format(cust=cust, request=req)
            )
        talk.append(f"{self.name_of(self.uxr)}: I will fold these into the research backlog.")
        mid = self.meeting("customer feedback session", 100, people, talk)
        self.chat(mid, [f"{self.mm}: Summary slides to follow.", f"{self.uxr}: Thanks!"])
        self._ask_role(mid, "customer feedback session", people)
        for cust, req in zip(asking, requests, strict=True):
            company = self.ctx.company_of(cust)
            self.ask("request_customers", {"request": req}, [company], [mid])
            self.ask("customer_request", {"company": company}, None, [mid], {"request": req})
        silent = [c for c in self.customers if c not in asking]
        self.perturb("fact", self.answerable[-1], "company", self.ctx.company_of(silent[0]))
        src = next(q for q in self.answerable if q["recipe"]["kind"] == "request_customers")
        self.perturb("fact", src, "request", rng.choice([r for r in REQUESTS if r not in requests]))

    def _urls(self) -> None:
        rng = self.rng
        for k, f in enumerate(self.features[:3]):
            comps = rng.sample(COMPETITORS, 2)
            for j, comp in enumerate(comps):
                n = len(self.data["urls"]) + 1
                link = f"https://www.{comp.lower()}.example/insights/{f.replace(' ', '-')}-{n}"
                desc = PATTERNS["url_desc"].format(competitor=comp, feature=f,
                                                   claim=rng.choice(CLAIMS))  # fmt: skip
                url = {"id": f"{self.slug}_url_{n}", "link": link, "description": desc}
                self.data["urls"].append(url)
                msg = self.slack(
                    "planning",
                    rng.choice([self.mra, self.pm, self.uxr]),
                    5 + 3 * k + j,
                    PATTERNS["url_share"].format(feature=f, link=link),
                )
                self.ask("competitor_url", {"feature": f, "competitor": comp}, [link], [msg, url["id"]])
            other = rng.choice([c for c in COMPETITORS if c not in comps])
            self.perturb("fact", self.answerable[-1], "competitor", other)

    def _filler(self) -> None:
        # rng.choice(seq) and rng.randrange(a, b) written out as CPython makes them
        # (seq[_randbelow(len(seq))], a + _randbelow(b - a)): the same draws, 3x faster
        below = self.rng._randbelow
        features, members, channels = self.features, self.members, ["planning", "develop", "support"]
        if not (FILLER and features and members):
            raise IndexError("Cannot choose from an empty sequence")
        for _ in range(FILLER_PER_PRODUCT):
            # the draws in order, then the message (the names-only generation stops there,
            # making slack()'s draws: the stream goes on the same)
            template, feature, speaker = below(len(FILLER)), below(len(features)), below(len(members))
            n, channel, user, offset = below(75), below(3), below(len(members)), below(145)
            if self.names_only:
                self._clock()
                continue
            name = self.name_of(members[speaker])
            text = FILLER[template].format(feature=features[feature], name=name, n=20 + n)
            self.slack(channels[channel], members[user], -5 + offset, text)


def _allocate(total: int, weights: dict[str, float], caps: dict[str, int]) -> dict[str, int]:
    """Largest-remainder split of ``total`` by ``weights``, capped, overflow redistributed."""
    raw = {k: total * w for k, w in weights.items()}
    alloc = {k: min(int(v), caps.get(k, 0)) for k, v in raw.items()}
    order = sorted(weights, key=lambda k: (-(raw[k] - int(raw[k])), list(weights).index(k)))
    while sum(alloc.values()) < total:
        grew = False
        for k in order:
            if sum(alloc.values()) < total and alloc[k] < caps.get(k, 0):
                alloc[k] += 1
                grew = True
        if not grew:
            break
    return alloc


def _spread(rng: random.Random, items: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """Pick ``n`` items round-robin over recipe kinds (shuffled), for variety."""
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for it in items:
        by_kind[it["recipe"]["kind"]].append(it)
    kinds = sorted(by_kind)
    rng.shuffle(kinds)
    for k in kinds:
        rng.shuffle(by_kind[k])
    out: list[dict[str, Any]] = []
    while len(out) < n and any(by_kind.values()):
        for k in kinds:
            if by_kind[k] and len(out) < n:
                out.append(by_kind[k].pop())
    return out


def _wants(products: int) -> list[tuple[int, int]]:
    """``(answerable, unanswerable)`` questions each product of a world of ``products`` is
    asked for: the upstream totals scaled, spread evenly (the first products one more)."""
    n_ans = round(ANSWERABLE_TOTAL * products / UPSTREAM_PRODUCTS)
    n_unans = round(UNANSWERABLE_TOTAL * products / UPSTREAM_PRODUCTS)
    return [(n_ans // products + (i < n_ans % products), n_unans // products + (i < n_unans % products))
            for i in range(products)]  # fmt: skip


def question_counts(products: int = UPSTREAM_PRODUCTS) -> dict[str, int]:
    """Questions per category (answer type in ``TYPE_WEIGHTS`` order, then ``unanswerable``)
    of a generated world of ``products`` products, told without generating it: each
    product's share split by the weights (:func:`_allocate` uncapped). That is the world's
    count whenever every product has enough candidate questions of each type and kind and no
    question text repeats, which held on every seed tried (HERB's ``load_tasks`` refuses a
    world where it does not, so its ``task_index`` can count on it).

    Raises:
        ValueError: ``products`` out of range.
    """
    if not 1 <= products <= MAX_PRODUCTS:
        raise ValueError(f"products must be between 1 and {MAX_PRODUCTS}, got {products}")
    counts = dict.fromkeys(TYPE_WEIGHTS, 0)
    unanswerable = 0
    for want_a, want_u in _wants(products):
        for kind, n in _allocate(want_a, TYPE_WEIGHTS, dict.fromkeys(TYPE_WEIGHTS, want_a)).items():
            counts[kind] += n
        uncapped = dict.fromkeys(PERTURBATION_WEIGHTS, want_u)
        unanswerable += sum(_allocate(want_u, PERTURBATION_WEIGHTS, uncapped).values())
    return {**counts, "unanswerable": unanswerable}


def generate_company_names(seed: int = 42, products: int = UPSTREAM_PRODUCTS) -> list[str]:
    """``generate_world(seed, products).company_names`` without building the whole world:
    the same generation, whose background Slack messages (most of its time) are only drawn,
    not written, so every later draw, and so every customer, is the one of the world
    (about 0.1 s CPU instead of 0.3-0.5 s at 30 products).

    Returns:
        The customer company names, deduplicated, in first-seen order.

    Raises:
        ValueError: ``products`` out of range.
    """
    return _generate(seed, products, names_only=True).company_names


def generate_world(seed: int = 42, products: int = UPSTREAM_PRODUCTS) -> World:
    """Generate a HERB world and its questions, deterministically for ``seed``.

    Args:
        seed: the run seed (``routing.yaml`` modes use 42).
        products: number of products (1..``MAX_PRODUCTS``); question totals scale with it
            from the upstream 815 answerable / 699 unanswerable at 30 products.

    Returns:
        The world. ``questions`` are ``Task.data`` records without the world spec: the
        original keys (``question``, ``ground_truth``, ``citations``, ``type``) plus
        ``answerable``, ``product``, ``facts`` (content), ``recipe`` (the question's
        parameters, which the reference policy may read), and for unanswerable questions
        ``intent`` and ``perturbation`` (what was changed, from which question).

    Raises:
        ValueError: ``products`` out of range.
    """
    return _generate(seed, products, names_only=False)


def _generate(seed: int, products: int, names_only: bool) -> World:
    """The world for (``seed``, ``products``); with ``names_only`` its background Slack
    messages are drawn but left out (only its customers are the world's: never returned
    beyond :func:`generate_company_names`)."""
    if not 1 <= products <= MAX_PRODUCTS:
        raise ValueError(f"products must be between 1 and {MAX_PRODUCTS}, got {products}")
    rng = random.Random(f"herb-world|{seed}")
    stems = rng.sample(PRODUCT_STEMS, len(PRODUCT_STEMS))
    names = [f"{s}Force" for s in stems[:products]]
    fakes = [f"{s}Force" for s in stems[products:]]
    ctx = _Ctx(rng)
    for role in ("Chief Product Officer", "VP of Engineering", "VP of Engineering"):
        ctx.employee(role)
    world_products: dict[str, dict[str, Any]] = {}
    questions: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name, (want_a, want_u) in zip(names, _wants(products), strict=True):
        prod = _Product(ctx, name, fakes, names_only)
        prod.build()
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for q in prod.answerable:
            by_type[q["type"]].append(q)
        alloc = _allocate(want_a, TYPE_WEIGHTS, {k: len(v) for k, v in by_type.items()})
        chosen = [q for t in TYPE_WEIGHTS for q in _spread(rng, by_type[t], alloc[t])]
        ualloc = _allocate(want_u, PERTURBATION_WEIGHTS,
                           {k: len(v) for k, v in prod.unanswerable.items()})  # fmt: skip
        chosen_u = [q for k in PERTURBATION_WEIGHTS
                    for q in _spread(rng, prod.unanswerable[k], ualloc[k])]  # fmt: skip
        prod.data["answerable_questions"] = [
            {k: q[k] for k in ("question", "ground_truth", "citations", "type", "facts", "recipe")
             if k in q} for q in chosen]  # fmt: skip
        prod.data["unanswerable_questions"] = [q["question"] for q in chosen_u]
        world_products[name] = prod.data
        for q in [*chosen, *chosen_u]:
            if q["question"] not in seen:
                seen.add(q["question"])
                questions.append(q)
    return World(ctx.employees, ctx.customers, world_products, questions,
                 {"seed": seed, "products": products})  # fmt: skip
