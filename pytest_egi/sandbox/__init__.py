"""Running untrusted code (a model's patch, a benchmark's checker) in a subprocess with limits.

Benchmark-neutral and shared by every suite that executes what a model wrote. The usual
shape::

    from pytest_egi.sandbox import Limits, Sandbox, python_argv, python_env

    with Sandbox(project_files, limits=Limits(wall_s=60)) as box:   # or Sandbox.from_directory(path)
        box.apply_files(answer_files)          # untrusted: paths checked, sizes capped
        box.write("_hidden/test_x.py", tests)  # the harness's own files
        result = box.run(python_argv("-m", "pytest", "-q", "_hidden", "--junitxml=.report.xml"),
                         env=python_env(), junit=".report.xml")
        result.exit_code, result.stopped, result.reason   # exit status / why it was stopped
        result.junit.cases                                # per-test outcomes (never stdout)
        result.stdout_tail, result.stderr_tail            # the end of each stream
        result.isolation                                  # which isolation ran

Containment: a command that hangs, spins, eats memory, forks without end, writes a huge file
or tries the network is stopped or refused by its limits and *described* in the result
(``stopped``, ``reason``, ``hints``), never raised; only a failure of the sandbox itself
(:class:`SandboxError`) is an exception, an infrastructure error for the caller. Writing
outside the workspace is refused for an answer's paths (:class:`AnswerRefused`) and, under
the ``namespaces`` level, for the running command (every other mount is read-only).

Pieces: :mod:`~pytest_egi.sandbox.runner` (isolation levels, :class:`Limits`,
:func:`run_command`, :class:`RunResult`), :mod:`~pytest_egi.sandbox.workspace`
(:class:`Sandbox`, answer checks), :mod:`~pytest_egi.sandbox.patch` (unified diffs) and
:mod:`~pytest_egi.sandbox.junit` (JUnit XML reports).
"""

from __future__ import annotations

from pytest_egi.sandbox.junit import JUnitCase, JUnitReport, parse_junit, parse_junit_text
from pytest_egi.sandbox.patch import PatchError, apply_unified_diff, parse_unified_diff
from pytest_egi.sandbox.runner import (
    ISOLATION_LEVELS,
    Isolation,
    Limits,
    RunResult,
    SandboxError,
    detect_isolation,
    python_argv,
    python_env,
    run_command,
    sandbox_base_dir,
    scrubbed_env,
)
from pytest_egi.sandbox.workspace import AnswerCaps, AnswerRefused, Sandbox, check_answer_path

__all__ = [
    "ISOLATION_LEVELS",
    "AnswerCaps",
    "AnswerRefused",
    "Isolation",
    "JUnitCase",
    "JUnitReport",
    "Limits",
    "PatchError",
    "RunResult",
    "Sandbox",
    "SandboxError",
    "apply_unified_diff",
    "check_answer_path",
    "detect_isolation",
    "parse_junit",
    "parse_junit_text",
    "parse_unified_diff",
    "python_argv",
    "python_env",
    "run_command",
    "sandbox_base_dir",
    "scrubbed_env",
]
