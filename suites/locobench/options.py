"""LoCoBench's run options (``--egi-opt locobench.<key>=<value>``) and the sandbox limits
they set; read by the suite object and the agent."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from pytest_egi.sandbox import Limits

__all__ = ["LocoOptions", "limits"]


class LocoOptions(BaseModel):
    """``--egi-opt locobench.<key>=<value>``."""

    model_config = ConfigDict(extra="forbid")

    scenarios: Path | None = None
    """A folder of upstream-format scenario files (``scenarios/*.json`` or ``*.json``) with
    their generated projects beside them, run instead of the generated scenarios."""
    per_cell: int = Field(default=5, ge=1, le=99)
    """Generated scenarios per (category, difficulty) in the pool profiles draw from."""
    ablation: bool = False
    """The context-ablation control (reference C2): each needle file's text in the prompt is
    replaced by filler of the same size (the project itself is unchanged)."""
    tests_timeout_s: float = Field(default=120.0, gt=0)
    """Wall-clock seconds for the checks of one scenario (compile, import, hidden and
    regression tests, in one sandboxed pytest run)."""
    cpu_s: int = Field(default=120, ge=1)
    """CPU seconds per sandboxed process."""
    memory_mb: int = Field(default=2048, ge=64)
    """Address space per sandboxed process, MiB."""


def limits(opts: LocoOptions) -> Limits:
    """The sandbox limits of one scenario's checks."""
    return Limits(
        wall_s=opts.tests_timeout_s, cpu_s=opts.cpu_s, memory_mb=opts.memory_mb, processes=64, file_size_mb=64
    )
