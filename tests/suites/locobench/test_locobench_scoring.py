"""LoCoBench scoring of model replies: hand-computed values, reply formats, containment."""

from __future__ import annotations

import json
import re

import pytest

from pytest_egi.models.base import ModelResponse, Usage, assistant_message
from pytest_egi.sandbox import SandboxError
from pytest_egi.suite import Task
from suites.locobench import SUITE, LocoOptions
from suites.locobench.agent import ReplyError, parse_prompt_files, parse_reply, run_trial
from suites.locobench.data import build_scenario, upstream_fields

FAST = LocoOptions(tests_timeout_s=20, cpu_s=6)


class Scripted:
    """A model that sends fixed replies, one per call, and keeps the prompts it got."""

    name = "scripted"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.prompts: list[list[dict]] = []

    def generate(self, messages, tools=None, **params):
        self.prompts.append(messages)
        return ModelResponse(
            message=assistant_message(self.replies.pop(0)), usage=Usage(calls=1), finish_reason="stop"
        )


def task(category: str, index: int = 0) -> Task:
    spec = {"seed": 42, "category": category, "difficulty": "easy", "index": index}
    sc = build_scenario({"spec": spec})
    return Task(id=sc.id, category=category, data={"spec": spec, **upstream_fields(sc)})


def play(t: Task, *replies: str, options: LocoOptions = FAST):
    client = Scripted(*replies)
    traj = run_trial(t, client, options)
    return SUITE.score(t, traj.to_dict(), options), client


def files_reply(files: dict) -> str:
    return "Here is my change.\n\n```json\n" + json.dumps({"approach": "edit", "files": files}) + "\n```\n"


def test_a_model_reply_scored_by_hand():
    """feature_implementation: the model reads the policy's surcharge but hard-codes it, forgets
    the free-from threshold and leaves an unused import (its own wording, whole files)."""
    t = task("feature_implementation")
    sc = build_scenario(t.data)
    p, e = sc.package, sc.plan.e
    policy = sc.files[f"{p}/policies/delivery.py"]
    surcharge = int(re.search(r"EXPRESS_SURCHARGE_CENTS = (\d+)", policy).group(1))
    service_path, api_path = f"{p}/services/{e}_service.py", f"{p}/api/{e}_api.py"
    service = sc.files[service_path].replace('"""\n\nfrom ', '"""\n\nimport math\nfrom ', 1)
    service = service.replace(
        "def quote_total(self, item_id: int) -> int:",
        "def quote_total(self, item_id: int, express: bool = False) -> int:",
    )
    service = service.replace(
        "        return total\n",
        f"        if express:\n            total += {surcharge}  # express delivery\n        return total\n",
    )
    call = 'service.quote_total(int(payload["id"]))'
    api = sc.files[api_path].replace(call, call[:-1] + ', express=payload.get("express", False))')
    score, _ = play(t, files_reply({service_path: service, api_path: api}))
    # 8 hidden tests: 3 plain (all pass) + 5 needle; the free-from-threshold needle test fails
    failures = score.details["tests"]["failures"]
    assert failures.keys() >= {"test_needle_express_is_free_from_the_policy_threshold"}
    assert score.values["fc"] == 7 / 8
    assert score.values["lcu"] == 4 / 5
    assert score.values["decoy"] == 0.0
    # changed lines: service 4 (import, signature, two added lines), api 1 -> 5; ruff: 1 (F401)
    # -> v = 100 * 1 / 5 = 20, ruff score 1/21; radon A/A -> 1; bandit none -> 1
    quality = score.details["quality"]
    assert quality["changed_lines"] == 5 and [v.split()[1] for v in quality["ruff_violations"]] == ["F401"]
    assert score.values["cq"] == pytest.approx((1 / 21 + 1 + 1) / 3)
    assert score.values["se"] == 1.0  # new parameter has a default; the api call binds
    cq = (1 / 21 + 2) / 3
    assert score.values["lcbs"] == pytest.approx(5 * (0.4 * 1 + 0.3 * 7 / 8 + 0.2 * cq + 0.1 * 0.8))
    assert not score.success


def test_the_prompt_holds_the_files_contents_and_a_diff_reply_applies():
    t = task("bug_investigation")
    sc = build_scenario(t.data)
    client = Scripted("I could not find it.")
    run_trial(t, client, FAST)
    shown = parse_prompt_files(client.prompts[0][-1]["content"])
    assert shown == {p: sc.files[p] if sc.files[p].endswith("\n") else sc.files[p] + "\n" for p in sc.order}
    assert list(shown) == sc.order
    assert "_egi_hidden/test_hidden.py" not in shown
    assert sc.hidden_tests not in client.prompts[0][-1]["content"]


@pytest.mark.parametrize(
    "reply, want",
    [
        ('```json\n{"files": {"a.py": "x = 1\\n"}}\n```', {"files": {"a.py": "x = 1\n"}}),
        (
            'Sure: {"approach": "a", "files": {"a.py": null, "b.py": 3}} done',
            {"files": {"a.py": None, "b.py": "3"}},
        ),
        (
            "```diff\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n```",
            {"diff": "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"},
        ),
        (
            "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y",
            {"diff": "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"},
        ),
    ],
)
def test_reply_formats(reply, want):
    assert parse_reply(reply) == want


def test_a_reply_that_does_not_parse_is_the_models_failure_with_the_reason():
    score, _ = play(task("code_comprehension"), "The answer is 42, see services/pricing.py.")
    assert score.values == {"fc": 0.0, "cq": 0.0, "se": 0.0, "lcu": 0.0, "decoy": 0.0, "lcbs": 0.0}
    assert score.got == (
        "session 1: ReplyError: the reply holds neither a JSON object with a 'files' mapping "
        "nor a unified diff"
    )
    with pytest.raises(ReplyError, match="empty"):
        parse_reply("  ")


def test_an_answer_that_changes_nothing_is_never_credited():
    score, _ = play(task("security_analysis"), files_reply({}))
    assert score.values["fc"] == score.values["cq"] == score.values["se"] == 0.0
    assert score.got == "the answer changed no file"


def test_an_answer_writing_outside_the_project_is_refused():
    score, _ = play(task("security_analysis"), files_reply({"../../etc/evil.py": "x = 1\n"}))
    assert score.values["fc"] == 0.0
    assert "AnswerRefused: file path '../../etc/evil.py' is outside the project" in score.got
    hidden = {"_egi_hidden/test_hidden.py": "def test_x(): pass\n"}
    score, _ = play(task("security_analysis"), files_reply(hidden))
    assert "'_egi_hidden' belongs to the harness" in score.got


def test_an_answer_that_loops_forever_is_contained_and_scored_as_a_failure():
    t = task("code_comprehension")
    p = build_scenario(t.data).package
    opts = LocoOptions(tests_timeout_s=6, cpu_s=2)
    score, _ = play(t, files_reply({f"{p}/answers.py": "while True:\n    pass\n"}), options=opts)
    assert score.values["fc"] == 0.0 and score.values["lcu"] == 0.0
    assert "the checks were stopped" in score.got
    assert score.details["run"]["stopped"] in ("cpu_limit", "timeout")


def test_an_answer_that_eats_memory_or_forks_is_contained():
    t = task("code_comprehension")
    p = build_scenario(t.data).package
    code = (
        "import os\nfor _ in range(500):\n    try:\n        os.fork()\n    except OSError:\n        break\n"
        "x = bytearray(8 * 1024 ** 3)\nANSWERS = {}\n"
    )
    opts = LocoOptions(tests_timeout_s=20, cpu_s=5)
    score, _ = play(t, files_reply({f"{p}/answers.py": code}), options=opts)
    assert score.values["fc"] == 0.0
    assert "no longer compiles or imports" in score.got or "stopped" in score.got


def test_a_sandbox_fault_is_an_error_not_a_wrong_answer(monkeypatch):
    import suites.locobench.env as env

    def broken(*args, **kwargs):
        raise SandboxError("the sandbox (namespaces) could not start 'python': unshare failed")

    monkeypatch.setattr(env.Sandbox, "run", broken)
    t = task("security_analysis")
    p = build_scenario(t.data).package
    with pytest.raises(SandboxError, match="could not start"):
        fix = "def parse_quantity(text):\n    return int(text)\n"
        play(t, files_reply({f"{p}/services/input_parsing.py": fix}))


def test_sessions_carry_the_repository_over_not_the_chat():
    t = task("multi_session_development")
    sc = build_scenario(t.data)
    service = f"{sc.package}/services/{sc.plan.e}_service.py"
    first = sc.files[service].rstrip("\n") + "\n\n    def close(self, item_id):\n        return None\n"
    client = Scripted(files_reply({service: first}), "nothing this time", files_reply({}))
    traj = run_trial(t, client, FAST)
    assert [len(p) for p in client.prompts] == [2, 2, 2]  # system + this session's prompt only
    assert "SESSION 2 OF 3" in client.prompts[1][1]["content"]
    assert parse_prompt_files(client.prompts[1][1]["content"])[service] == first
    notes = traj.info["locobench"]["sessions"]
    assert [n["ok"] for n in notes] == [True, False, True]


def test_a_noisy_trial_whose_earlier_session_broke_a_file_is_still_scored():
    """Session 1 breaks the service (``broken_file``); a later session's ``quality`` mistake
    lands on that unparsable file: the policy still answers and the trial is scored 0."""
    from pytest_egi.models.offline import Noise, PolicyClient

    spec = {"seed": 42, "category": "multi_session_development", "difficulty": "easy", "index": 2}
    sc = build_scenario({"spec": spec})
    t = Task(id=sc.id, category=sc.category, data={"spec": spec, **upstream_fields(sc)})
    noise = Noise(0.2, f"42|locobench|{t.id}|1")
    client = PolicyClient("egi/noisy-0.2", SUITE.reference_policy(t, FAST, noise), noise)
    traj = run_trial(t, client, FAST)
    assert noise.made == ["broken_file", "quality"]
    score = SUITE.score(t, traj.to_dict(), FAST)
    assert score.values["fc"] == 0.0 and "no longer compiles or imports" in score.got
