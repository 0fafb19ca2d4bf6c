"""CI runs what the README tells contributors to run: its test command verbatim, then the
slow three-replica test that command leaves out."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"Run the tests \(the same command CI runs\):\n\n```sh\n(.+?)\n```", readme, re.S)
    assert block, "the README has no test command after 'Run the tests'"
    (command,) = block.group(1).splitlines()
    return command


def ci_commands() -> list[str]:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_ci_runs_the_readme_test_command_verbatim_and_the_replica_test_after_it():
    command = readme_test_command()
    commands = ci_commands()
    assert command in commands
    pytest_runs = [c for c in commands if " -m pytest " in f"{c} "]
    replicas = [c for c in pytest_runs if shlex.split(c)[-2:] == ["-m", "replicas"]]
    assert len(replicas) == 1 and commands.index(replicas[0]) > commands.index(command)
    assert "set -euo pipefail" in commands  # a failing replica test fails CI


def test_the_readme_test_command_runs_in_parallel_with_the_coverage_gate_and_without_the_replica_test():
    args = shlex.split(readme_test_command())
    args = args[args.index("pytest") + 1 :]
    assert args[args.index("-n") + 1] == "auto" and args[args.index("-m") + 1] == "not replicas"
    assert "--cov=bot" in args and any(a.startswith("--cov-fail-under=") for a in args)
