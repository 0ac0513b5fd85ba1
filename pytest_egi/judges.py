"""Judges that grade free text, and the identity of whoever graded.

By default every suite grades with deterministic rules (``egi/rules``: exact match, token F1,
key-fact recall, abstention phrases). With ``--egi-judge-model`` the suites that grade free
text call an :class:`LLMJudge` through the same model client as the model under test (cache,
retries and usage apply; usage is counted separately).

The judge asks for ``temperature=0`` (:data:`JUDGE_PARAMS`, as the benchmarks' own judges
do); like every default it goes through the client, so ``--egi-judge-params`` overrides it
(``temperature=null`` stops sending it) and a model LiteLLM knows to refuse it (reasoning
models) does not get it. A reply that gives no usable verdict is removed from the response
cache before the judge asks again, so the retry goes to the network and a rerun never replays
it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_egi.models.base import ContextWindowExceeded, ModelClient, ProviderError, Usage

__all__ = ["JUDGE_PARAMS", "JudgeError", "LLMJudge", "RULES_JUDGE"]

JUDGE_PARAMS: dict[str, Any] = {"temperature": 0.0}
"""The judge's default generation parameters (overridable with ``--egi-judge-params``)."""

RULES_JUDGE = "egi/rules"
"""Name recorded when deterministic rules graded (no LLM)."""

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class JudgeError(ProviderError):
    """The judge did not return a usable verdict after retries (an infra error, not a score)."""


class LLMJudge:
    """An LLM that returns a 0-100 score or a yes/no verdict as JSON.

    Args:
        client: the judge model client (pinned for the run).
        max_attempts: calls before giving up on an unparsable verdict.
        params: generation parameters of every judge call (default :data:`JUDGE_PARAMS`);
            the client overlays the user's ``--egi-judge-params`` and drops refused ones.

    Attributes:
        usage: summed usage of all judge calls (kept apart from the model under test).
    """

    def __init__(self, client: ModelClient, *, max_attempts: int = 3,
                 params: dict[str, Any] | None = None) -> None:
        self.client = client
        self.name = client.name
        self.max_attempts = max_attempts
        self.params = dict(JUDGE_PARAMS if params is None else params)
        self.usage = Usage()

    def _ask(self, system: str, prompt: str, key: str, check: Any) -> tuple[Any, str]:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        last = ""
        for _ in range(self.max_attempts):
            try:
                response = self.client.generate(messages, None, **self.params)
            except ContextWindowExceeded as exc:  # the grading prompt, not the model's turn
                raise JudgeError(f"judge {self.name}: {exc}") from None
            self.usage.add(response.usage)
            last = response.message.get("content") or ""
            parsed = self._parse(last, key, check)
            if parsed is not None:
                return parsed
            invalidate = getattr(self.client, "invalidate_last", None)
            if invalidate is not None:  # never keep (or replay) a reply with no verdict
                invalidate()
        raise JudgeError(
            f"judge {self.name} gave no usable {key!r} in {self.max_attempts} attempts; "
            f"last reply: {last[:200]!r}"
        )

    def ask(self, messages: list[dict[str, Any]], parse: Any) -> Any:
        """Send a suite's own grading ``messages`` and read the reply with ``parse``.

        For a suite whose benchmark defines its own judge prompt and verdict format (e.g.
        MCPEval's trajectory and completion aspects). A reply ``parse`` cannot read (it
        returns None) is asked again, up to ``max_attempts`` calls, and never kept in the
        response cache.

        Args:
            messages: OpenAI-format messages (system + user).
            parse: reply text -> the verdict, or None when unusable.

        Returns:
            The parsed verdict, or None when no reply was usable: a missing verdict, which the
            suite reports as missing, never as a zero.

        Raises:
            JudgeError: the grading prompt does not fit the judge's context window.
            ProviderError: the judge's provider failed.
        """
        for _ in range(self.max_attempts):
            try:
                response = self.client.generate(messages, None, **self.params)
            except ContextWindowExceeded as exc:
                raise JudgeError(f"judge {self.name}: {exc}") from None
            self.usage.add(response.usage)
            parsed = parse(response.message.get("content") or "")
            if parsed is not None:
                return parsed
            invalidate = getattr(self.client, "invalidate_last", None)
            if invalidate is not None:
                invalidate()
        return None

    @staticmethod
    def _parse(text: str, key: str, check: Any) -> tuple[Any, str] | None:
        """(value, reason) from the first JSON object in ``text``, or None when unusable."""
        match = _JSON_OBJECT.search(text)
        if not match:
            return None
        try:
            data = json.loads(match.group(0))
        except json.JSONDecodeError:
            return None
        if isinstance(data, dict) and key in data:
            value = check(data[key])
            if value is not None:
                return value, str(data.get("reason", ""))
        return None

    def score(self, prompt: str) -> tuple[int, str]:
        """Ask for ``{"score": 0-100, "reason": str}``.

        Returns:
            (score as int in [0, 100], reason).

        Raises:
            JudgeError: no parsable score after ``max_attempts`` calls.
            ProviderError: the judge's provider failed.
        """

        def check(v: Any) -> int | None:
            try:
                n = int(round(float(v)))
            except (TypeError, ValueError):
                return None
            return n if 0 <= n <= 100 else None

        system = (
            "You are a strict, fair grader. Reply with one JSON object only: "
            '{"score": <integer 0-100>, "reason": "<one sentence>"}.'
        )
        return self._ask(system, prompt, "score", check)

    def verdict(self, prompt: str) -> tuple[bool, str]:
        """Ask for ``{"verdict": "yes"|"no", "reason": str}``.

        Returns:
            (True for yes, reason). Only an exact yes/no counts (not "yes" inside other text).

        Raises:
            JudgeError: no parsable verdict after ``max_attempts`` calls.
        """

        def check(v: Any) -> bool | None:
            text = str(v).strip().lower()
            return {"yes": True, "no": False}.get(text)

        system = (
            "You are a strict, fair grader. Reply with one JSON object only: "
            '{"verdict": "yes" or "no", "reason": "<one sentence>"}.'
        )
        return self._ask(system, prompt, "verdict", check)
