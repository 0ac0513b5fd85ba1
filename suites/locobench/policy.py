"""The offline reference policy: the oracle's answer in the reply format a model uses.

Each session, the policy reads the context files from the prompt it is given (never the
hidden tests), computes the category's reference solution from them
(``tasks/<category>.reference``) and replies with whole files in upstream's fenced JSON, or
with a unified diff (chosen per trial by the seed): the same path a model's reply takes.

``egi/noisy-<p>`` draws four seeded mistakes per session, always in this order, each with
probability ``p`` (nested in ``p``, so scores only fall as ``p`` rises):

- ``wrong_answer``: the needle files are ignored, so the facts come from the decoy (a wrong
  constant, rule or name): the needle tests fail, a decoy test passes;
- ``wrong_argument``: one changed file is left out (a missed call site or half a feature);
- ``quality``: an unused import is added to a changed file (ruff's F401);
- ``broken_file``: a changed file gets a syntax error (nothing compiles: every score 0).
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from pytest_egi.models.base import assistant_message
from pytest_egi.models.offline import Noise
from pytest_egi.suite import CannotRun
from suites.locobench.agent import parse_prompt_files
from suites.locobench.data import MODULES, Scenario
from suites.locobench.tasks.common import add_import

__all__ = ["LocoPolicy", "format_diff", "format_files_reply"]


def format_files_reply(files: dict[str, str | None], approach: str) -> str:
    """Upstream's reply shape: a fenced JSON object ``{approach, files, explanation}``."""
    body = json.dumps(
        {"approach": approach, "files": files, "explanation": "See the changed files."}, indent=2
    )
    return f"```json\n{body}\n```"


def format_diff(before: dict[str, str], after: dict[str, str | None]) -> str:
    """A unified diff (``--- a/<path>`` / ``+++ b/<path>``) from ``before`` to ``after``."""
    chunks = []
    for path in sorted(after):
        old, new = before.get(path), after[path]
        a = [] if old is None else old.splitlines(keepends=True)
        b = [] if new is None else new.splitlines(keepends=True)
        chunks += difflib.unified_diff(
            a, b, "/dev/null" if old is None else f"a/{path}", "/dev/null" if new is None else f"b/{path}"
        )
    return "```diff\n" + "".join(chunks) + "```"


class LocoPolicy:
    """The oracle (``noise.p == 0``) or noisy reference for one trial of ``scenario``.

    Raises:
        CannotRun: the scenario has no reference solution (an upstream scenario file).
    """

    def __init__(self, scenario: Scenario, noise: Noise) -> None:
        if scenario.planted is None or scenario.plan is None:
            raise CannotRun(
                "upstream scenario files have no reference solution; the offline policies "
                "cannot play them (run a model)"
            )
        self.scenario = scenario
        self.noise = noise
        self.session = 0
        self.format = noise.choice("format", ["files", "diff"])

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The next reply: this session's reference, with the trial's mistakes."""
        self.session += 1
        sc, noise = self.scenario, self.noise
        context = parse_prompt_files(str(messages[-1].get("content") or ""))
        wrong = noise.happens("wrong_answer")
        seen = {p: t for p, t in context.items() if not (wrong and p in sc.planted.needle_files)}
        try:
            ref = dict(MODULES[sc.category].reference(sc.plan, sc.planted, seen, self.session))
        except (SyntaxError, ValueError):  # an earlier session of a noisy trial broke a file it needs
            ref = {}
        if noise.happens("wrong_argument") and len(ref) >= 2:
            ref.pop(sorted(ref)[-1])
        py = sorted(p for p in ref if p.endswith(".py") and ref[p] is not None)
        if noise.happens("quality") and py:
            try:
                ref[py[0]] = add_import(ref[py[0]], "import os")
            except SyntaxError:  # a file an earlier session broke: the import goes on top
                ref[py[0]] = "import os\n" + ref[py[0]]
        if noise.happens("broken_file") and py:
            ref[py[-1]] = ref[py[-1]] + "\n\ndef broken(:\n    pass\n"
        approach = f"{sc.title}: change {', '.join(sorted(ref)) or 'nothing'}."
        text = (
            format_diff(context, ref) if self.format == "diff" and ref else format_files_reply(ref, approach)
        )
        return assistant_message(text)
