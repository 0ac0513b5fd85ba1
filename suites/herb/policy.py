"""The HERB reference policy behind ``egi/oracle`` and ``egi/noisy-<p>`` (DESIGN §6).

An honest agent: for each question it knows *which* searches and look-ups a reference
solution issues (the recipe, made of the question's own parameters), calls them through the
same tools a model gets, reads the answer out of the tool results in ``messages`` and submits
it. It never reads ``ground_truth``, ``facts`` or ``citations``. When its searches find no
support it submits ``answerable=false``, which is how it handles unanswerable questions.

Seeded mistakes (all drawn up front, so a higher rate only adds mistakes; each one lowers the
score of the question it hits):

* each tool step is faulty with probability p, and a faulty step makes one of:
  ``wrong_tool`` / ``wrong_argument`` (the call goes to the wrong tool, or with a garbled
  argument, and that step's evidence is lost, with the steps that need it) or
  ``extra_turn`` (the agent gets stuck repeating a garbled call until its last turn, then
  submits what it has);
* ``wrong_answer``: one answer entity is dropped or replaced, or one key fact is changed;
* ``no_abstention``: where it would abstain, it invents an answer instead.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pytest_egi.models.base import assistant_message, tool_call
from pytest_egi.models.offline import Noise
from suites.herb.data.templates import (
    CONTENT_FACTS,
    KIND_TYPE,
    compose_content,
    compose_entities,
    pattern_regex,
)
from suites.herb.env import RESULT_SEPARATOR

__all__ = ["HerbPolicy", "Call", "parse_results"]

MAX_DRAWN_STEPS = 8
"""Per-step mistakes are drawn for this many steps (recipes use at most three)."""
STEP_MISTAKES = ("wrong_tool", "wrong_argument", "extra_turn")
"""A faulty step makes one of these (chosen independently of the rate)."""
WRONG_TOOL = {
    "retrieve_all": "url_search", "pr_search": "url_search", "url_search": "pr_search",
    "name_to_id_search": "id_to_name_search", "company_to_id_search": "id_to_company_search",
    "id_to_company_search": "company_to_id_search", "id_to_role_search": "id_to_name_search",
}  # fmt: skip
NOT_FOUND = "I could not find this in the available sources."
INVENTED = "Budgets stayed frozen awaiting auditors."
"""What a ``no_abstention`` mistake claims on a content question: stated nowhere, and sharing
no word with any content answer, so inventing never scores above abstaining."""


class Call(NamedTuple):
    """One tool call a recipe wants made."""

    tool: str
    args: dict[str, Any]


@dataclass
class Block:
    """One artifact of a ``retrieve_all`` observation, parsed from its header."""

    kind: str
    id: str
    head: dict[str, str] = field(default_factory=dict)
    body: str = ""

    def title(self) -> str:
        """A meeting's title (its first transcript line without ``Meeting:``), lowercased."""
        first = self.body.split("\n", 1)[0]
        return first.removeprefix("Meeting: ").strip().lower()

    def participants(self) -> list[str]:
        """A meeting's participant ids (``a, b`` or a Python-list rendering)."""
        return [p.strip(" '\"[]") for p in self.head.get("Participants", "").split(",") if p.strip(" '\"[]")]


def parse_results(observation: str) -> list[Block]:
    """Split a ``retrieve_all`` observation into artifacts (slack/doc/meeting/chat)."""
    out: list[Block] = []
    for chunk in observation.split(RESULT_SEPARATOR):
        head, _, body = chunk.strip().partition("\n\n")
        lines = head.split("\n")
        first = lines[0]
        if first.startswith("Message ID: "):
            fields = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
            out.append(Block("slack", first[12:], fields, body))
        elif first.startswith("Doc ID: "):
            fields = {
                "Link": lines[1].removeprefix("Link: ") if len(lines) > 1 else "",
                "date": lines[2] if len(lines) > 2 else "",
                "Author": lines[3].removeprefix("Author: ") if len(lines) > 3 else "",
            }
            doc_type, _, content = body.partition("\n")
            fields["type"] = doc_type
            out.append(Block("doc", first[8:], fields, content))
        elif first.startswith("Meeting ID: ") and body.startswith("Chats:"):
            out.append(Block("chat", first[12:], {}, body.removeprefix("Chats:\n")))
        elif first.startswith("Meeting ID: "):
            fields = {"date": lines[1] if len(lines) > 1 else ""}
            fields.update(line.split(": ", 1) for line in lines[2:] if ": " in line)
            out.append(Block("meeting", first[12:], fields, body))
    return out


def _loads(observation: str, default: Any) -> Any:
    try:
        value = json.loads(observation)
    except (json.JSONDecodeError, TypeError):
        return default
    return value if isinstance(value, type(default)) else default


def _mentions(text: str, product: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(product)}(?!\w)", text, re.IGNORECASE) is not None


def _slack_of(obs: str, product: str, channel: str | None = None) -> list[Block]:
    suffix = f"-{product}".lower()
    return [
        b
        for b in parse_results(obs)
        if b.kind == "slack"
        and b.head.get("Channel Name", "").lower().endswith(suffix)
        and (channel is None or b.head["Channel Name"].lower().startswith(channel))
    ]


def _doc_of(obs: str, product: str, doc_type: str) -> list[Block]:
    return [b for b in parse_results(obs) if b.kind == "doc" and b.head["type"] == doc_type
            and _mentions(b.body, product)]  # fmt: skip


def _meeting(obs: str, product: str, title: str) -> list[Block]:
    want = f"{product} {title}".lower()
    return [b for b in parse_results(obs) if b.kind == "meeting" and b.title() == want]


@dataclass
class Evidence:
    """What the recipe has found so far (entities, or content slot values)."""

    entities: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)

    def add(self, *items: str) -> None:
        for it in items:
            if it and it not in self.entities:
                self.entities.append(it)


Recipe = Generator[Call, str, None]


def _search(query: str) -> Call:
    return Call("retrieve_all", {"input": query})


def _lookup(tool: str, content: str) -> Call:
    return Call(tool, {"content": content})


def r_prd_team(p: dict[str, Any], ev: Evidence) -> Recipe:
    """PRD author from the PRD header; reviewers = participants of the PRD review."""
    obs = yield _search(f"{p['product']} PRD overview features risks")
    for b in _doc_of(obs, p["product"], "PRD")[:1]:
        ev.add(b.head["Author"])
    obs = yield _search(f"{p['product']} PRD review meeting")
    for b in _meeting(obs, p["product"], "PRD review")[:1]:
        ev.add(*b.participants())


def _announced_link(obs: str, p: dict[str, Any], pattern: str, **known: str) -> str | None:
    rx = pattern_regex(pattern, **known)
    for b in _slack_of(obs, p["product"], "develop"):
        m = rx.search(b.body)
        if m:
            return m.group("link")
    return None


def r_pr_reviewers(p: dict[str, Any], ev: Evidence) -> Recipe:
    """PR link from the Slack announcement, reviewers from ``pr_search``."""
    obs = yield _search(f"{p['product']} PR for {p['feature']} is ready for review")
    link = _announced_link(obs, p, "pr_ready", feature=p["feature"])
    if link:
        obs = yield _lookup("pr_search", link)
        for pr in _loads(obs, []):
            if str(pr.get("link", "")).lower() == link.lower():
                ev.add(*(r["user"]["login"] for r in pr.get("reviews", [])))


def r_meeting_role(p: dict[str, Any], ev: Evidence) -> Recipe:
    """Participants of the meeting, filtered by role with ``id_to_role_search``."""
    obs = yield _search(f"{p['product']} {p['meeting']} meeting")
    found = _meeting(obs, p["product"], p["meeting"])
    if found:
        people = found[0].participants()
        roles = _loads((yield _lookup("id_to_role_search", ", ".join(people))), {})
        ev.add(*(e for e in people if str(roles.get(e, "")).lower() == p["role"].lower()))


def _companies_of(obs: str, ids: list[str]) -> list[str]:
    table = _loads(obs, {})
    return [table[i] for i in ids if i in table]


def r_bug_reporters(p: dict[str, Any], ev: Evidence) -> Recipe:
    """Customer ids in the support channel's reports, then their companies."""
    obs = yield _search(f"{p['product']} customer reported the {p['bug']} issue")
    ids: list[str] = []
    for b in _slack_of(obs, p["product"], "support"):
        for name in ("bug_report", "bug_also"):
            ids += [m.group("cust") for m in pattern_regex(name, bug=p["bug"]).finditer(b.body)]
    if ids:
        ids = list(dict.fromkeys(ids))
        ev.add(*_companies_of((yield _lookup("id_to_company_search", " ".join(ids))), ids))


def r_request_customers(p: dict[str, Any], ev: Evidence) -> Recipe:
    """Customer ids that asked for the request in the feedback session, then companies."""
    obs = yield _search(f"{p['product']} customer feedback session asked for {p['request']}")
    ids = [
        m.group("cust")
        for b in _meeting(obs, p["product"], "customer feedback session")
        for m in pattern_regex("request", request=p["request"]).finditer(b.body)
    ]
    if ids:
        ids = list(dict.fromkeys(ids))
        ev.add(*_companies_of((yield _lookup("id_to_company_search", " ".join(ids))), ids))


def r_competitor_url(p: dict[str, Any], ev: Evidence) -> Recipe:
    """Links shared for the feature, kept when ``url_search`` names the competitor."""
    obs = yield _search(f"{p['product']} useful read for the {p['feature']} work")
    rx = pattern_regex("url_share", feature=p["feature"])
    links = [m.group("link") for b in _slack_of(obs, p["product"], "planning") for m in rx.finditer(b.body)]
    if links:
        obs = yield _lookup("url_search", " ".join(links))
        desc = pattern_regex("url_desc", competitor=p["competitor"], feature=p["feature"])
        ev.add(*(u["link"] for u in _loads(obs, []) if desc.search(str(u.get("description")))))


def _employee_id(obs: str, name: str) -> str | None:
    ids = _loads(obs, {}).get(name.lower()) or []
    return ids[0] if ids else None


def r_author_docs(p: dict[str, Any], ev: Evidence) -> Recipe:
    """Name -> id, the author's document announcements, author checked by ``url_search``."""
    eid = _employee_id((yield _lookup("name_to_id_search", p["name"])), p["name"])
    if eid:
        obs = yield _search(f"{p['product']} {eid} published")
        links = [
            m.group("link")
            for b in _slack_of(obs, p["product"], "planning")
            if b.body.startswith(f"{eid}: ")
            for m in pattern_regex("doc_share").finditer(b.body)
        ]
        if links:
            obs = yield _lookup("url_search", " ".join(dict.fromkeys(links)))
            ev.add(
                *(
                    d["document_link"]
                    for d in _loads(obs, [])
                    if d.get("author") == eid and d.get("document_link")
                )
            )


def r_reviewed_by(p: dict[str, Any], ev: Evidence) -> Recipe:
    """Name -> id, all PR announcements of the product, reviews from ``pr_search``."""
    eid = _employee_id((yield _lookup("name_to_id_search", p["name"])), p["name"])
    if not eid:
        return
    obs = yield _search(f"{p['product']} PR is ready for review")
    links = [
        m.group("link")
        for b in _slack_of(obs, p["product"], "develop")
        for name in ("pr_ready", "fix_ready")
        for m in pattern_regex(name).finditer(b.body)
    ]
    if links:
        obs = yield _lookup("pr_search", " ".join(dict.fromkeys(links)))
        ev.add(
            *(
                pr["link"]
                for pr in _loads(obs, [])
                if any(r["user"]["login"] == eid for r in pr.get("reviews", []))
            )
        )


def r_reverted(p: dict[str, Any], ev: Evidence) -> Recipe:
    """Original links of the product's revert announcements."""
    obs = yield _search(f"{p['product']} pull request was reverted")
    ev.add(
        *(
            m.group("link")
            for b in _slack_of(obs, p["product"])
            for m in pattern_regex("revert").finditer(b.body)
        )
    )


def r_bug_fix_pr(p: dict[str, Any], ev: Evidence) -> Recipe:
    """The fix announcement's link, confirmed by ``pr_search``."""
    obs = yield _search(f"{p['product']} PR fixing the {p['bug']} bug is ready for review")
    link = _announced_link(obs, p, "fix_ready", bug=p["bug"])
    if link:
        obs = yield _lookup("pr_search", link)
        ev.add(*(pr["link"] for pr in _loads(obs, []) if pr.get("link", "").lower() == link.lower()))


def _prd_target(obs: str, p: dict[str, Any]) -> str | None:
    rx = pattern_regex("target", feature=p["feature"], metric=p["metric"])
    for b in _doc_of(obs, p["product"], "PRD"):
        m = rx.search(b.body)
        if m:
            return m.group("value")
    return None


def r_target_revision(p: dict[str, Any], ev: Evidence) -> Recipe:
    """First target from the PRD, new target from the PRD review."""
    old = _prd_target((yield _search(f"{p['product']} PRD target for {p['feature']}")), p)
    if old:
        ev.values["old"] = old
    obs = yield _search(f"{p['product']} PRD review {p['metric']} target for {p['feature']}")
    rx = pattern_regex("revision", metric=p["metric"], feature=p["feature"])
    for b in _meeting(obs, p["product"], "PRD review"):
        m = rx.search(b.body)
        if m:
            ev.values["new"] = m.group("new")


def r_target(p: dict[str, Any], ev: Evidence) -> Recipe:
    """The target line of the PRD."""
    value = _prd_target((yield _search(f"{p['product']} PRD target for {p['feature']}")), p)
    if value:
        ev.values["value"] = value


def r_segment(p: dict[str, Any], ev: Evidence) -> Recipe:
    """Size and leader of the segment in the market research report."""
    obs = yield _search(f"{p['product']} market research report {p['segment']} segment")
    rx = pattern_regex("segment", segment=p["segment"])
    for b in _doc_of(obs, p["product"], "Market Research Report"):
        m = rx.search(b.body)
        if m:
            ev.values.update(size=m.group("size"), competitor=m.group("competitor"))


def r_bug_cause(p: dict[str, Any], ev: Evidence) -> Recipe:
    """The fix PR's link from Slack, cause and fix from its ``pr_search`` summary."""
    obs = yield _search(f"{p['product']} PR fixing the {p['bug']} bug is ready for review")
    link = _announced_link(obs, p, "fix_ready", bug=p["bug"])
    if link:
        rx = pattern_regex("fix_summary", bug=p["bug"])
        for pr in _loads((yield _lookup("pr_search", link)), []):
            m = rx.search(str(pr.get("summary", "")))
            if m:
                ev.values.update(cause=m.group("cause"), fix=m.group("fix"))


def r_customer_request(p: dict[str, Any], ev: Evidence) -> Recipe:
    """Company -> customer ids, then the request in the feedback session."""
    ids = _loads((yield _lookup("company_to_id_search", p["company"])), {}).get(p["company"].lower()) or []
    if ids:
        obs = yield _search(f"{p['product']} customer feedback session {' '.join(ids)} asked for")
        for b in _meeting(obs, p["product"], "customer feedback session"):
            for cid in ids:
                m = pattern_regex("request", cust=cid).search(b.body)
                if m:
                    ev.values["request"] = m.group("request")


def r_tech_choice(p: dict[str, Any], ev: Evidence) -> Recipe:
    """Options from the system design, decision and reason from the design review."""
    obs = yield _search(f"{p['product']} system design {p['component']} evaluated")
    for b in _doc_of(obs, p["product"], "System Design"):
        m = pattern_regex("options", component=p["component"]).search(b.body)
        if m:
            ev.values.update(a=m.group("a"), b=m.group("b"))
    obs = yield _search(f"{p['product']} design review decision {p['component']}")
    for b in _meeting(obs, p["product"], "design review"):
        m = pattern_regex("decision", component=p["component"]).search(b.body)
        if m:
            ev.values.update(tech=m.group("tech"), reason=m.group("reason"))


def r_sprint_goal(p: dict[str, Any], ev: Evidence) -> Recipe:
    """The sprint goal of the product's sprint planning held on that day."""
    obs = yield _search(f"{p['product']} sprint planning meeting {p['date']} sprint goal")
    for b in _meeting(obs, p["product"], "sprint planning"):
        m = pattern_regex("sprint").search(b.body)
        if m and b.head["date"][:10] == p["date"]:
            ev.values["goal"] = m.group("goal")


RECIPES: dict[str, Callable[[dict[str, Any], Evidence], Recipe]] = {
    "prd_team": r_prd_team, "pr_reviewers": r_pr_reviewers, "meeting_role": r_meeting_role,
    "bug_reporters": r_bug_reporters, "request_customers": r_request_customers,
    "competitor_url": r_competitor_url, "author_docs": r_author_docs,
    "reviewed_by": r_reviewed_by, "reverted": r_reverted, "bug_fix_pr": r_bug_fix_pr,
    "target_revision": r_target_revision, "target": r_target, "segment": r_segment,
    "bug_cause": r_bug_cause, "customer_request": r_customer_request,
    "tech_choice": r_tech_choice, "sprint_goal": r_sprint_goal,
}  # fmt: skip
"""Recipe kind -> reference solution (one generator per question family)."""


def _generic(question: str) -> Callable[[dict[str, Any], Evidence], Recipe]:
    def recipe(p: dict[str, Any], ev: Evidence) -> Recipe:
        yield _search(question)

    return recipe


def _fake_entity(kind: str, seed: str) -> str:
    tag = hashlib.sha256(seed.encode()).hexdigest()[:8]
    if kind == "person":
        return f"eid_zz{tag[:6]}"
    if kind == "company":
        return f"Unlisted Partner {tag[:4].upper()}"
    if kind == "pr":
        return f"https://git.invalid/unknown/pull/{int(tag, 16) % 100000}"
    return f"https://www.invalid/page-{tag}"


def corrupt_value(value: str) -> str:
    """A wrong version of a fact value: its first number shifted by 7, else a stock phrase."""
    m = re.search(r"\d+", value)
    if m:
        return f"{value[: m.start()]}{int(m.group(0)) + 7}{value[m.end() :]}"
    return "something else entirely"


class HerbPolicy:
    """One trial of the reference policy (see the module docstring).

    Args:
        data: the task's ``Task.data``; only ``recipe`` (the question's parameters),
            ``question`` and ``type`` are read.
        max_steps: the agent's turn budget; the last turn always submits.
        noise: the trial's mistake source (p = 0: the oracle).
    """

    def __init__(self, data: dict[str, Any], max_steps: int, noise: Noise) -> None:
        spec = data.get("recipe") or {}
        self.kind = spec.get("kind")
        self.params = {k: v for k, v in spec.items() if k != "kind"}
        self.answer_type = KIND_TYPE.get(self.kind or "", data.get("type") or "content")
        self.question = data.get("question", "")
        self.max_steps = max_steps
        self.noise = noise
        p, u = noise.p, noise.uniform
        self.wrong_answer = u("wrong_answer") < p
        self.no_abstention = u("no_abstention") < p
        self.mode = noise.choice("wrong_answer_mode", ["drop", "replace"])
        self.pick = u("wrong_answer_pick")
        self.faults: list[str | None] = []
        for _ in range(MAX_DRAWN_STEPS):
            hit = u("step_mistake") < p
            kind = noise.choice("step_mistake_kind", list(STEP_MISTAKES))
            self.faults.append(kind if hit else None)
        self.ev = Evidence()
        make = RECIPES.get(self.kind or "") or _generic(self.question)
        self.recipe = make(self.params, self.ev)
        self.step = -1
        self.started = False
        self.use_last = False
        self.stuck: Call | None = None
        self.n_calls = 0

    def _emit(self, call: Call) -> dict[str, Any]:
        self.n_calls += 1
        args = json.dumps(call.args, sort_keys=True)
        return assistant_message(None, [tool_call(f"call_{self.n_calls}", call.tool, args)])

    def _garble(self, call: Call) -> Call:
        key, value = next(iter(call.args.items()))
        product = str(self.params.get("product", ""))
        text = str(value).replace(product, "").split()
        return Call(call.tool, {key: " ".join(text[: max(1, len(text) // 2)])})

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:  # noqa: E501
        """Next assistant message: the recipe's next tool call, or the submission."""
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        last = messages[-1].get("content") if messages and messages[-1].get("role") == "tool" else ""
        if turn >= self.max_steps - 1:
            if self.use_last and self.stuck is None:
                try:
                    self.recipe.send(str(last))
                except StopIteration:
                    pass
            return self._submit()
        if self.stuck is not None:
            return self._emit(self.stuck)
        try:
            if not self.started:
                self.started = True
                call = next(self.recipe)
            else:
                call = self.recipe.send(str(last) if self.use_last else "")
        except StopIteration:
            return self._submit()
        self.step += 1
        fault = self.faults[self.step] if self.step < MAX_DRAWN_STEPS else None
        self.use_last = False
        if fault is not None:
            self.noise.made.append(fault)
        if fault == "extra_turn":
            self.stuck = self._garble(call)
            return self._emit(self.stuck)
        if fault == "wrong_tool":
            wrong = WRONG_TOOL.get(call.tool, "retrieve_all")
            key = "input" if wrong == "retrieve_all" else "content"
            return self._emit(Call(wrong, {key: next(iter(call.args.values()))}))
        if fault == "wrong_argument":
            return self._emit(self._garble(call))
        self.use_last = True
        return self._emit(call)

    def _answer(self) -> tuple[str, list[str]]:
        """(text, entities) from the evidence, with the ``wrong_answer`` mistake applied."""
        if self.answer_type == "content" and self.kind in CONTENT_FACTS:
            values = dict(self.ev.values)
            slots = [s for s in CONTENT_FACTS[self.kind] if s in values]
            if self.wrong_answer and slots:
                self.noise.made.append("wrong_answer")
                slot = slots[int(self.pick * len(slots))]
                values[slot] = corrupt_value(values[slot])
            return compose_content(self.kind, self.params, values), []
        ents = list(self.ev.entities)
        if self.wrong_answer and ents and self.kind:
            self.noise.made.append("wrong_answer")
            i = int(self.pick * len(ents))
            if self.mode == "drop" and len(ents) > 1:
                ents.pop(i)
            else:
                ents[i] = _fake_entity(self.answer_type, f"{self.question}|{ents[i]}")
        text = compose_entities(self.kind, self.params, ents) if ents and self.kind else ""
        return text, ents

    def _submit(self) -> dict[str, Any]:
        text, ents = self._answer()
        if text:
            args = {"answer": text, "entities": ents, "answerable": True}
        elif self.no_abstention:
            self.noise.made.append("no_abstention")
            invented = _fake_entity(self.answer_type, self.question)
            if self.answer_type == "content":
                args = {"answer": INVENTED, "entities": [], "answerable": True}
            else:
                args = {"answer": f"The answer is {invented}.", "entities": [invented], "answerable": True}
        else:
            args = {"answer": NOT_FOUND, "entities": [], "answerable": False}
        return self._emit(Call("submit", args))
