"""CRMArena answer extraction by rules (``egi/rules``): replies worded as a model answers, each
with the exact list the reader takes and the reward (upstream ``Evaluator.evaluate``: exact match,
else sorted(extracted) == sorted(gold), a null gold read as "None"), computed by hand.

Upstream has gpt-4o pull the final-answer entities out of the reply, "None" when there is none
(reference §1.6). A non-answer ("I don't know.") is never credited as "None".
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_egi.judges import JudgeError, LLMJudge
from pytest_egi.models.base import ModelResponse, Usage, assistant_message
from suites.crmarena.scorer import fuzzy_scores, score_answer
from suites.crmarena.scorer.extract import extraction_messages, parse_extraction, rule_extract, says_none

# ids shaped as the generated org's (18 characters, the object's key prefix)
A, B, C = "005Ws0000lQoeU9IAJ", "005Ws0000lQoeURIAZ", "005Ws0000lQoeUDIAZ"  # User
P1, P2 = "01tWs00001HpYVJIA3", "01tWs00001HpYVbIAN"  # Product2
K1, K2 = "ka0Ws00006hROhNIAW", "ka0Ws00006hROhIIAW"  # Knowledge__kav
I1, I2 = "a1MWs00000AbCdEIAV", "a1MWs00000FgHiJIAV"  # Issue__c

NCR, HTU, TCU = "case_routing", "handle_time", "transfer_count"
NED, PVI, TII = "named_entity_disambiguation", "policy_violation_identification", "top_issue_identification"
MTA, BRI = "monthly_trend_analysis", "best_region_identification"


def rec(task: str, gold: list) -> dict:
    return {"task": task, "answer": gold, "reward_metric": "exact_match"}


# (task, gold, reply, extracted, reward)
CASES = [
    # -- NCR: one User Id ------------------------------------------------------------------------
    (NCR, [A], f"Agent {A}; although {B} also handled cases, the best is {A}.", [A], 1.0),
    (NCR, [A], f"**{A}**", [A], 1.0),
    (NCR, [A], f"Final answer: {A}\n\n{A} closed 7 cases for this issue, more than {B} (5).", [A], 1.0),
    (NCR, [A], f"Based on the closed-case counts for this issue, the case should be routed to {A} "
               f"(7 closed cases), ahead of {B} (5).", [A], 1.0),
    (NCR, [A], f"{B} and {A} both closed 6 cases for this issue, but {A} has fewer open cases, so "
               f"route it to {A}.", [A], 1.0),
    (NCR, [A], f"The most suitable agent is {A}. {B} has the most open cases, so it is not a good "
               "choice.", [A], 1.0),
    (NCR, [A], f"{A} is the best fit: they closed 9 cases for this issue. Other candidates: {B} (6), "
               f"{C} (4).", [A], 1.0),
    (NCR, [A], f"Route it to {B}, who closed the most cases for this issue.", [B], 0.0),
    # "answer:" inside the reasoning is no answer label
    (NCR, [A], f"To find the answer: I queried the closed cases.\nThe best agent is {A}.", [A], 1.0),
    (NCR, [A], f"The answer is {A}, since it has the most closed cases; {B} has fewer.", [A], 1.0),
    (NCR, [A], f"Final answer: {A} (Jane Doe), who closed 7 cases, ahead of {B}.", [A], 1.0),
    # the tie-break explained: the decision's own clause names the answer
    (NCR, [B], f"I looked at the agents with the most closed cases: {A} (7), {B} (7). Since both "
               f"tied, the one with fewer open cases is {B}.", [B], 1.0),
    (NCR, [A], f"{B} has more open cases, so {A} gets it.", [A], 1.0),
    # -- HTU: User Id(s) or None ---------------------------------------------------------------------
    (HTU, [A], f"Among the qualifying agents, {A} had the lowest average handle time at 41.2 minutes "
               f"({B}: 55.0 min, {C}: 63.5 min).", [A], 1.0),
    (HTU, [A, B], f"The agents with the lowest average handle time are:\n- **{A}** (Jane Doe)\n"
                  f"- **{B}** (Bob Lee)\n\nBoth averaged 20 minutes.", [A, B], 1.0),
    (HTU, [None], "No agent handled more than 2 cases in that period, so the answer is None.",
     ["None"], 1.0),
    (HTU, [A], f"I found 3 agents:\n- {A}: 10 min\n- {B}: 12 min\n- {C}: 15 min\nThe lowest is {A}.",
     [A], 1.0),
    (HTU, [A], f"| Agent | Avg handle time |\n|---|---|\n| {A} | 20.5 min |\n| {B} | 31.0 min |\n\n"
               f"**Answer:** {A}", [A], 1.0),
    (HTU, [A], f"Agent {A} (Jane Smith) had the lowest average handle time, 35 minutes.", [A], 1.0),
    (HTU, [None], "I don't know.", [], 0.0),  # a non-answer is no abstention
    (HTU, [A, B], f"Answer:\n- {A}\n- {B}", [A, B], 1.0),
    # -- TCU: User Id(s) or None ---------------------------------------------------------------------
    (TCU, [A], f"{A} transferred the fewest cases (0), compared to {B} (3) and {C} (4).", [A], 1.0),
    (TCU, [A], f"The agent with the most transfers is {A}, followed by {B}.", [A], 1.0),
    (TCU, [None], "None of the agents had more than 3 cases in Q2 2023.", ["None"], 1.0),
    (TCU, [A, B], f"Final answer: {A}, {B}", [A, B], 1.0),
    (TCU, [A, B], f"Both {A} and {B} have the lowest transfer count (1 each); {C} had 4.", [A, B], 1.0),
    (TCU, [A], f"{B} had the most transfers (5).", [B], 0.0),
    # -- NED: Product2 Id or None -----------------------------------------------------------------
    (NED, [P2], f"I found several matching products: {P1} (Hoop X), {P2} (Hoop Y). Based on your "
                f"order on 2023-05-01, it is {P2}.", [P2], 1.0),
    (NED, [P1], f"The portable basketball hoop you bought last month is {P1}.", [P1], 1.0),
    (NED, [None], "I couldn't find any purchase of padded cycling gloves 10 days ago, so None.",
     ["None"], 1.0),
    (NED, [None], "I could not find a matching order.", ["None"], 1.0),
    (NED, [P1, P2], f"You purchased two basketballs on that date: {P1} and {P2}.", [P1, P2], 1.0),
    (NED, [P1], f"Here is the product you ordered: `{P1}` (Portable Basketball Hoop, ordered on "
                "2024-02-14).", [P1], 1.0),
    # -- PVI: Knowledge article Id or None --------------------------------------------------------
    (PVI, [None], "No policy was violated in this case.", ["None"], 1.0),
    (PVI, [None], "None of the policies were breached", ["None"], 1.0),
    (PVI, [None], "I found no violation", ["None"], 1.0),
    (PVI, [None], "The agent did not violate any company policy.", ["None"], 1.0),
    (PVI, [None], f"After reviewing the transcript against article {K2}, I found no violation.",
     ["None"], 1.0),
    (PVI, [None], f"**Final Answer:** None\n\nI checked {K1} and {K2}; the agent followed both.",
     ["None"], 1.0),
    (PVI, [None], "The agent's conduct was consistent with all policies; no knowledge article was "
                  "violated.", ["None"], 1.0),
    (PVI, [K1], f"The agent violated the policy in knowledge article {K1} (Refund Policy).", [K1], 1.0),
    (PVI, [K1], f"Yes. The agent offered a refund after 60 days, which breaches {K1}. {K2} (Shipping "
                "Policy) was followed correctly.", [K1], 1.0),
    (PVI, [K2], f"The agent broke the return policy: {K2}.", [K2], 1.0),
    (PVI, [K1], f"No policy related to shipping was violated. However, the agent breached {K1}.", [K1], 1.0),
    (PVI, [None], "I'm not sure whether a policy was violated.", [], 0.0),  # no answer
    (PVI, [None], "I don't know.", [], 0.0),  # no answer, not an abstention
    (PVI, [K1], "No policy was violated in this case.", ["None"], 0.0),
    # -- TII: Issue__c Id(s) or None -----------------------------------------------------------------
    (TII, [I1], f"The top issue is {I1} ('Battery drains quickly') with 14 cases. The next most "
                f"common was {I2} (9 cases).", [I1], 1.0),
    (TII, [I1], f"**Top issue:** {I1}", [I1], 1.0),
    (TII, [I1, I2], f"{I1} and {I2} are tied as the most reported issues (6 cases each).", [I1, I2], 1.0),
    (TII, [None], "There are no cases for this product in the period, so None.", ["None"], 1.0),
    (TII, [I2], f"Final answer: {I2}. It accounts for 8 of the 15 cases; {I1} follows with 5.", [I2], 1.0),
    (TII, [I1], f"The most common issue for this product over the past quarter is {I1}.", [I1], 1.0),
    # -- MTA: month name(s) ---------------------------------------------------------------------------
    (MTA, ["March"], "Between January and June 2023, the month with the most cases was March.",
     ["March"], 1.0),
    (MTA, ["May"], "Cases peaked in **May** (42 cases), well above April (18) and June (20).", ["May"], 1.0),
    (MTA, ["July"], "Final answer: July", ["July"], 1.0),
    (MTA, ["July"], "Over the past 10 months (as of March 15, 2024), July stands out with 31 cases.",
     ["July"], 1.0),
    (MTA, ["April", "June", "March", "May"], "March, April, May and June are tied with 12 cases each.",
     ["March", "April", "May", "June"], 1.0),
    (MTA, ["July"], "Looking at the counts, it may be July.", ["July"], 1.0),  # "may", the verb
    (MTA, ["July"], "I couldn't tell which month stands out.", [], 0.0),
    # -- BRI: two-letter state code(s) ----------------------------------------------------------------
    (BRI, ["CA"], "The state with the quickest average closure time is CA (2.1 days), compared with NY "
                  "(3.4 days) and TX (4.0 days).", ["CA"], 1.0),
    (BRI, ["TX"], "Texas closed cases fastest on average.", ["TX"], 1.0),
    (BRI, ["OR"], "OK, based on the data, Oregon (OR) had the quickest average case closure time.",
     ["OR"], 1.0),
    (BRI, ["FL"], "Final answer: **FL**", ["FL"], 1.0),
    (BRI, ["MA", "NY"], "MA and NY are tied for the shortest average closure time (1.5 days each).",
     ["MA", "NY"], 1.0),
    (BRI, ["GA"], "Georgia (GA) closed cases fastest in Fall 2023, ahead of Florida.", ["GA"], 1.0),
]  # fmt: skip


@pytest.mark.parametrize(("task", "gold", "reply", "extracted", "reward"), CASES)
def test_reply_reads_as_a_grader_would(task, gold, reply, extracted, reward):
    result = score_answer(rec(task, gold), reply)
    assert result["extracted"] == extracted
    assert result["reward"] == reward and result["success"] is (reward == 1.0)
    assert result["extractor"] == "egi/rules"


def test_every_task_type_has_at_least_five_phrasings():
    counts: dict[str, int] = {}
    for task, *_ in CASES:
        counts[task] = counts.get(task, 0) + 1
    assert set(counts) == {NCR, HTU, TCU, NED, PVI, TII, MTA, BRI}
    assert min(counts.values()) >= 5, counts


@pytest.mark.parametrize(
    ("reply", "rule"),
    [
        (f"Final answer: {A}", "answer label"),
        (f"Therefore, the case should go to {A}, not {B}.", "concluding sentence"),
        (f"The best agent is {A}.", "decision sentence"),
        (f"{A}, {B}", "every entity named"),
        ("No agent qualifies.", "says none"),
        ("I don't know.", "no answer"),
    ],
)
def test_the_step_that_decided_is_recorded(reply, rule):
    assert rule_extract(NCR, reply).rule == rule


def test_an_answer_label_with_no_answer_after_it_is_no_answer():
    # the ids in the reasoning above the label are not the answer
    reply = f"I compared {A} and {B}.\n\nFinal answer: I could not determine which agent fits best."
    reading = rule_extract(NCR, reply)
    assert (reading.answers, reading.rule) == ([], "no answer")
    assert score_answer(rec(NCR, [None]), reply)["reward"] == 0.0


def test_an_exact_reply_is_not_extracted():
    assert score_answer(rec(NCR, [A]), f' "{A}" ') == {
        "reward": 1.0, "success": True, "extracted": [A], "extractor": "exact",
        "extraction_rule": "exact match",
    }  # fmt: skip
    # a blank reply is no answer: no extractor ran
    blank = score_answer(rec(PVI, [None]), "  ")
    assert (blank["reward"], blank["extractor"], blank["no_answer"]) == (0.0, None, "empty reply (blank)")


@pytest.mark.parametrize(
    "text",
    [
        "None",
        "No policy was violated in this case.",
        "None of the policies were breached",
        "I found no violation",
        "There are no matching records.",
        "The agent did not violate any policy.",
        "I couldn't find any records matching your criteria.",  # upstream's own "None" example
        "The agent fully complied with all company policies.",
    ],
)
def test_plain_language_negatives_say_none(text):
    assert says_none(text)


@pytest.mark.parametrize(
    "text",
    [
        "I don't know.",
        "I'm not sure whether a policy was violated.",
        "I could not determine the answer.",
        "I have no information about that.",
        "I couldn't find any information to answer this.",
        "Could you tell me which case you mean?",
        "It is not clear if it was violated.",
    ],
)
def test_non_answers_do_not_say_none(text):
    assert not says_none(text)
    assert score_answer(rec(PVI, [None]), text)["reward"] == 0.0


# -- KQA: fuzzy_match on the whole reply (no extraction, as upstream) -------------------------------

KQA_GOLD = "Hand wash it in cold water with mild soap and lay it flat to dry."
# normalised gold: hand wash it in cold water with mild soap and lay it flat to dry (15 tokens)


@pytest.mark.parametrize(
    ("reply", "f1", "passed"),
    [
        (KQA_GOLD, 1.0, True),
        # 17 tokens (final, answer, then are extra; "and" is missing): common 14 -> 2*14/(17+15)
        (
            "**Final answer:** Hand wash it in cold water with mild soap, then lay it flat to dry.",
            28 / 32,
            True,
        ),
        # you should hand wash shoes in cold water using mild soap: 11 tokens, common 7 -> 14/26
        ("You should hand wash the shoes in cold water using a mild soap.", 14 / 26, True),
        # machine wash on gentle cycle: 5 tokens, common 1 (wash) -> 2/20
        ("Machine wash on a gentle cycle.", 2 / 20, False),
        # i m sorry i couldn t find cleaning instructions for that product: no common token
        ("I'm sorry, I couldn't find cleaning instructions for that product.", 0.0, False),
    ],
)
def test_kqa_token_f1_by_hand(reply, f1, passed):
    result = score_answer(
        {"task": "knowledge_qa", "answer": [KQA_GOLD], "reward_metric": "fuzzy_match"}, reply
    )
    assert result["reward"] == pytest.approx(f1) and result["success"] is passed
    assert result["reward"] == pytest.approx(fuzzy_scores(reply, KQA_GOLD)["f1"])
    assert result["extracted"] is None and "extractor" not in result


# -- the judge model's extraction (--egi-judge-model), with a scripted judge client -------------


class _ScriptedJudge:
    """A judge client that replies with fixed texts, keeps what it was sent, and forgets an
    unusable reply when asked to (as the caching client does)."""

    name = "judge/scripted"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.sent: list[list[dict[str, Any]]] = []
        self.invalidated = 0

    def generate(self, messages: list[dict[str, Any]], tools: Any = None, **params: Any) -> ModelResponse:
        self.sent.append(messages)
        return ModelResponse(message=assistant_message(self.replies.pop(0)), usage=Usage(calls=1))

    def invalidate_last(self) -> None:
        self.invalidated += 1


@pytest.mark.parametrize(
    ("reply", "parsed"),
    [
        ('{"extracted_answers": ["005Ws0000lQoeU9IAJ"]}', [A]),
        ('```json\n{"extracted_answers": ["NY", "CA"]}\n```', ["NY", "CA"]),
        ('["None"]', ["None"]),  # a bare list (upstream accepts it too)
        ('{"extracted_answers": [null]}', ["None"]),
        ('{"extracted_answers": ["none"]}', ["None"]),
        ('{"extracted_answers": [" \'May\' ", "May"]}', ["May"]),  # quotes stripped, repeats once
        ('{"extracted_answers": []}', []),
        ("The answer is None.", None),
        ('{"answers": ["x"]}', None),
        ('{"extracted_answers": "005Ws0000lQoeU9IAJ"}', None),
        ('{"extracted_answers": [', None),
    ],
)
def test_parse_extraction(reply, parsed):
    assert parse_extraction(reply) == parsed


def test_llm_extract_sends_the_reply_with_the_task_entity_and_records_the_judge():
    client = _ScriptedJudge('{"extracted_answers": ["None"]}')
    result = score_answer(rec(PVI, [None]), "No policy was violated in this case.", judge=LLMJudge(client))
    assert (result["reward"], result["extracted"], result["extractor"]) == (1.0, ["None"], "judge/scripted")
    (messages,) = client.sent
    assert messages == extraction_messages(PVI, "No policy was violated in this case.")
    assert (
        "knowledge article Ids" in messages[0]["content"] and "beginning with ka0" in messages[0]["content"]
    )
    assert "two-letter state codes" in extraction_messages(BRI, "x")[0]["content"]
    assert "full English month names" in extraction_messages(MTA, "x")[0]["content"]


def test_llm_extract_an_empty_list_is_no_answer_and_an_exact_reply_asks_no_judge():
    client = _ScriptedJudge('{"extracted_answers": []}')
    result = score_answer(rec(PVI, [None]), "I don't know.", judge=LLMJudge(client))
    assert (result["reward"], result["extracted"]) == (0.0, [])
    idle = _ScriptedJudge()
    assert score_answer(rec(NCR, [A]), A, judge=LLMJudge(idle))["extractor"] == "exact"
    kqa = {"task": "knowledge_qa", "answer": [KQA_GOLD], "reward_metric": "fuzzy_match"}
    assert score_answer(kqa, KQA_GOLD, judge=LLMJudge(idle))["reward"] == 1.0
    assert idle.sent == []


def test_llm_extract_with_no_usable_reply_is_a_judge_error():
    client = _ScriptedJudge("None", "It is None.", "I would say None")
    with pytest.raises(JudgeError) as info:
        score_answer(rec(PVI, [None]), "No policy was violated.", judge=LLMJudge(client))
    assert str(info.value) == (
        'judge judge/scripted gave no usable {"extracted_answers": [...]} in 3 attempt(s) for a '
        "policy_violation_identification answer"
    )
    assert len(client.sent) == 3 and client.invalidated == 3  # none of them kept in the cache
