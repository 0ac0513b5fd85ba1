"""One module per MCP-Universe domain: its servers, task generator and reference solver.

Every domain module exposes the same names (the suite reads only these):

- ``DOMAIN``: the domain name (``financial_analysis``, ``location_navigation``,
  ``repository_management``, ``web_search``).
- ``SERVERS``: the upstream server names the agent is given (``("yfinance", "calculator")``);
  :data:`suites.mcp_universe.env.servers.SERVER_MODULES` maps each to its local server.
- ``generate_tasks(seed, count) -> list[dict]``: our own tasks in the upstream task-file format
  (``category``, ``question``, ``output_format``, ``mcp_servers``, ``use_specified_server``,
  ``evaluators``, ``cleanups``) plus ``id`` (``<domain>-NNN``) and ``reference`` (below);
  deterministic for the seed, the same list whatever the count (a count is a prefix).
- ``solve(task, seed) -> dict``: the ``reference`` of any task of the domain, generated or an
  upstream file, built from the local data: ``{"calls": [{"server", "tool", "arguments"}],
  "answer": str, "mistake": {"calls": [...], "answer": str, "fails": [evaluator index, ...]}}``.
  ``calls`` are the tool calls a correct agent makes (in order; the world must accept each;
  at most ``suites.mcp_universe.agent.MAX_ITERATIONS - 1`` of them, since the answer takes
  the last step: batch lookups as a competent agent would, and let ``generate_tasks`` skip a
  candidate whose reference would not fit);
  ``answer`` the final answer in the task's ``output_format``, passing every evaluator after
  those calls; ``mistake`` a one-field perturbation (a changed value, or a write call dropped or
  altered) that makes exactly the evaluators listed in ``fails`` fail. Raises
  :class:`NotSolvable` with the reason when the local data cannot answer the task.
"""


class NotSolvable(Exception):
    """The reference solver cannot answer this task on the local data (the message says why);
    a model may still be scored on it."""


class Unanswerable(NotSolvable):
    """The task asks about facts the local data does not hold (upstream's web_search files ask
    about the real world): a score on it would not measure the model, so the suite does not run
    it and says so in a data warning."""
