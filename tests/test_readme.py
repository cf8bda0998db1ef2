"""Every command and code block of the README, of docs/ and of queries/README.md runs as written.

A block says what it is by the word after its opening fence (docs/README.md, "The examples are tested"):
`sh` is run by bash, `console` is run and its output compared, `python` is run, `lars` / `mtl` / `sparql`
are read as a program or a query, `json` as JSON, `text` is shown (a synopsis may name only options its
command has). An HTML comment just before a block, `<!-- doc-test: KIND -->`, says how a block that cannot
run alone runs: `spark` and `mqtt` in the tests with those marks, `service` against a real `rsp-plugin serve`,
`arguments` (benchmarks, the suite itself) parsed but not run, `skip, REASON` not at all.

A block runs in a scratch folder that links the repository's data folders (examples/, queries/, ...), so
its relative paths read the repository and what it writes (out/, chk/) stays out of it; `rsp-plugin` on
the path is this tree's command line."""

from __future__ import annotations

import doctest
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from service_helpers import bare, cli_lines, free_port

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "queries" / "README.md"]
KINDS = ("sh", "console", "python", "lars", "mtl", "sparql", "json", "text")
MARKS = ("spark", "mqtt", "service", "arguments", "skip")
FENCE = re.compile(r"^```(\S*)[ \t]*$")
MARK = re.compile(r"^<!-- doc-test: (\w+)(?:, (.+?))? -->$")
#: the README's first block: the contract CI (.ci/run) and the steering hook run
CONTRACT = ("python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/rsp-plugin reason "
            "examples/hightemp.lars --stream examples/hightemp.stream --from 1 --to 15\n"
            ".venv/bin/python -m pytest\n")


@dataclass(frozen=True)
class Block:
    document: Path
    line: int           # of the opening fence
    kind: str
    code: str
    mark: str | None
    reason: str | None

    @property
    def name(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def read_blocks(document: Path) -> list[Block]:
    lines = document.read_text(encoding="utf-8").split("\n")
    found, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        before = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        mark = MARK.match(before.strip())
        found.append(Block(document, index + 1, opening.group(1), "\n".join(lines[index + 1:end]) + "\n",
                           mark.group(1) if mark else None, mark.group(2) if mark else None))
        index = end + 1
    return found


BLOCKS = [block for document in DOCUMENTS for block in read_blocks(document)]
CONTRACT_BLOCK = BLOCKS[0]


def params(kind: str, *marks) -> list:
    chosen = []
    for block in BLOCKS:
        if block is CONTRACT_BLOCK or block.kind != kind or block.mark not in marks:
            continue
        pytest_marks = []
        if block.mark in ("spark", "mqtt") or (kind == "python" and "rsp_plugin.spark" in block.code):
            pytest_marks.append(pytest.mark.spark if block.mark != "mqtt" else pytest.mark.mqtt)
        chosen.append(pytest.param(block, id=block.name, marks=pytest_marks))
    return chosen


# What each block is ----------------------------------------------------------------------------------------


def test_every_block_says_what_it_is_and_how_it_runs():
    wrong = [f"{b.name}: ```{b.kind}" for b in BLOCKS if b.kind not in KINDS]
    wrong += [f"{b.name}: doc-test: {b.mark}" for b in BLOCKS if b.mark is not None and b.mark not in MARKS]
    wrong += [f"{b.name}: a skipped block says why" for b in BLOCKS if b.mark == "skip" and not b.reason]
    assert not wrong, "blocks the test cannot read:\n" + "\n".join(wrong)
    assert len(BLOCKS) > 60
    assert len([b for b in BLOCKS if b.mark == "skip"]) <= 3  # very few blocks are not run


def test_no_indented_code_block_hides_from_the_test():
    """A block indented by four spaces would be shown as code and never run: every block is fenced."""
    hidden = []
    for document in DOCUMENTS:
        fenced, blank_before, in_list = False, True, False
        for number, line in enumerate(document.read_text(encoding="utf-8").split("\n"), 1):
            if line.startswith("```"):
                fenced, blank_before = not fenced, False
                continue
            if fenced:
                continue
            if not line.strip():
                blank_before = True
                continue
            if line.startswith("    ") and blank_before and not in_list:
                hidden.append(f"{document.relative_to(ROOT)}:{number}: {line.strip()[:60]}")
            if re.match(r"(- |\* |\d+\. )", line):
                in_list = True
            elif not line.startswith(" "):
                in_list = False
            blank_before = False
        assert not fenced, f"{document}: a fence is not closed"
    assert not hidden, "indented blocks (fence them, with what they are):\n" + "\n".join(hidden)


def test_the_readme_begins_with_the_contract():
    """The README's first lines are the two commands CI and the steering hook run: the reason command of
    the first prints the bundled example's expected output, .ci/run runs the second."""
    assert CONTRACT_BLOCK.document.name == "README.md" and CONTRACT_BLOCK.line == 3
    assert (CONTRACT_BLOCK.kind, CONTRACT_BLOCK.code) == ("sh", CONTRACT)
    reason = CONTRACT.split("\n")[0].split(" && ")[-1].split()
    assert reason[0] == ".venv/bin/rsp-plugin"
    done = subprocess.run([sys.executable, "-m", "rsp_plugin.cli", *reason[1:]], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (ROOT / "examples/hightemp.expected.jsonl").read_text(encoding="utf-8")
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")
    assert ".venv/bin/python -m pip install --quiet -e '.[test]'" in ci and "\n.venv/bin/python -m pytest\n" in ci


# Running blocks --------------------------------------------------------------------------------------------


def scratch(tmp_path: Path) -> dict:
    """The folder a block runs in, and the environment: the repository's data linked, `rsp-plugin` this
    tree's, curl failing on an HTTP error (a session that goes wrong must not pass unseen)."""
    for folder in ("examples", "ontologies", "queries", "tests", "docs", "benchmarks"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    tools = tmp_path / ".bin"
    tools.mkdir()
    (tools / "rsp-plugin").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m rsp_plugin.cli "$@"\n')
    (tools / "curl").write_text('#!/bin/sh\nexec /usr/bin/curl --silent --show-error --fail-with-body "$@"\n')
    for tool in tools.iterdir():
        tool.chmod(0o755)
    path = os.pathsep.join([str(tools), os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return {**os.environ, "PATH": path, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                                                  os.environ.get("PYTHONPATH")]))}


def bash(script: str, cwd: Path, environment: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    """`script` under `set -euo pipefail`; what it left running in the background is stopped at its end."""
    wrapped = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script
    process = subprocess.Popen(["bash", "-c", wrapped], cwd=cwd, env=environment, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(process.args, process.returncode, output, "")


@pytest.mark.parametrize("block", params("sh", None, "spark"))
def test_a_shell_block_runs_as_written(block, tmp_path):
    done = bash(block.code, tmp_path, scratch(tmp_path))
    assert done.returncode == 0, f"{block.name}:\n{block.code}\n{done.stdout[-3000:]}"


def console_steps(code: str) -> list[tuple[str, str]]:
    """(command, the output shown below it) of each `$ ` line of a console block."""
    steps, command, output = [], None, []
    lines = iter(code.rstrip("\n").split("\n"))
    for line in lines:
        if line.startswith("$ "):
            if command is not None:
                steps.append((command, "".join(output)))
            command, output = line[2:], []
            while command.endswith("\\"):
                command = command[:-1] + next(lines)
        else:
            assert command is not None, f"output before any command: {line}"
            output.append(line + "\n")
    steps.append((command, "".join(output)))
    return steps


@pytest.mark.parametrize("block", params("console", None))
def test_a_console_block_prints_what_it_shows(block, tmp_path):
    environment = scratch(tmp_path)
    checker = doctest.OutputChecker()
    for command, shown in console_steps(block.code):
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=environment, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=600)
        assert checker.check_output(shown, done.stdout, doctest.ELLIPSIS), (
            f"{block.name}: $ {command}\nshown:\n{shown}\nprinted:\n{done.stdout[-3000:]}")


@pytest.mark.parametrize("block", params("python", None, "spark"))
def test_a_python_block_runs_as_written(block, tmp_path):
    script = tmp_path / "block.py"
    script.write_text(block.code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=scratch(tmp_path), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"{block.name}:\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("block", params("lars", None) + params("mtl", None) + params("sparql", None))
def test_a_program_or_query_block_is_accepted(block):
    from rsp_plugin.mtl.programs import parse_program
    from rsp_plugin.query import parse_query

    if block.kind == "sparql":
        assert parse_query(block.code, "doc.rq").windows
    else:
        assert parse_program(block.code, f"doc.{block.kind}").rules


@pytest.mark.parametrize("block", params("json", None))
def test_a_json_block_is_json(block):
    json.loads(block.code)


def command_parsers() -> dict:
    from rsp_plugin.cli.command_line import _parser

    (commands,) = [action for action in _parser()._actions if action.dest == "command"]
    return commands.choices


def synopses(code: str) -> list[str]:
    """The `rsp-plugin ...` commands of a text block, each with its indented continuation lines."""
    found = []
    for line in code.split("\n"):
        if line.startswith("rsp-plugin "):
            found.append(line)
        elif line.startswith(" ") and found:
            found[-1] += " " + line.strip()
    return found


@pytest.mark.parametrize("block", [p for p in params("text", None) if synopses(p.values[0].code)])
def test_a_synopsis_names_only_options_the_command_has(block):
    parsers, wrong = command_parsers(), []
    for synopsis in synopses(block.code):
        words = synopsis.split()
        if words[1].startswith("--"):  # rsp-plugin --version
            assert words[1] == "--version"
            continue
        known = set(parsers[words[1]]._option_string_actions)
        wrong += [f"rsp-plugin {words[1]} {option}" for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", synopsis)
                  if option not in known]
    assert not wrong, f"{block.name}: options no command has: {wrong}"


def commands(code: str) -> list[list[str]]:
    joined = re.sub(r"\\\n", " ", code)
    return [shlex.split(line, comments=True) for line in joined.split("\n") if line.strip()]


@pytest.mark.parametrize("block", params("sh", "arguments"))
def test_a_benchmark_or_suite_command_is_accepted_as_written(block):
    """Benchmarks take minutes to hours and the suite runs itself: each command's arguments are read by
    the command line's own parser (or pytest collects what its markers select)."""
    from rsp_plugin.cli.command_line import parse_arguments
    import tomllib

    markers = {line.split(":")[0] for line in
               tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]}
    for argv in commands(block.code):
        if argv[0] == "rsp-plugin":
            options = parse_arguments(argv[1:])  # argparse exits (a SystemExit) on a mistake
            assert options.command == "bench", argv
        else:
            assert argv[:3] == ["python", "-m", "pytest"], argv
            arguments = argv[3:]
            selection = arguments[arguments.index("-m") + 1] if "-m" in arguments else ""
            assert set(re.findall(r"\w+", selection)) - {"not", "and", "or"} <= markers, selection
            done = subprocess.run([sys.executable, "-m", "pytest", *argv[3:], "--collect-only", "-q", "-n", "0",
                                   "-p", "no:cacheprovider", "tests/test_layers.py"], cwd=ROOT,
                                  capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


# Blocks that need a service or a broker --------------------------------------------------------------------


@pytest.mark.parametrize("block", params("sh", "service"))
def test_a_curl_session_runs_against_a_real_service(block, tmp_path):
    """The service's curl session, against `rsp-plugin serve` on a free port (in place of 8000): every request
    gets a 2xx answer, and the reports it keeps are the command line's lines for the same query and stream."""
    environment = scratch(tmp_path)
    port = free_port()
    server = subprocess.Popen(["rsp-plugin", "serve", "--port", str(port)], cwd=tmp_path, env=environment,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://localhost:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/system", timeout=5).read()
                break
            except OSError:
                assert server.poll() is None and time.time() < deadline, server.stderr.read()
                time.sleep(0.1)
        done = bash(block.code.replace("localhost:8000", f"localhost:{port}"), tmp_path, environment, timeout=300)
        assert done.returncode == 0, f"{block.name}:\n{done.stdout[-3000:]}"
        if "queries/csrbench/max-temperature.rq" in block.code:
            with urllib.request.urlopen(f"{base}/queries/max/results?after=0", timeout=30) as answer:
                kept = json.loads(answer.read())["results"]
            expected = cli_lines(ROOT / "queries/csrbench/max-temperature.rq",
                                 f"http://ex.org/csrbench={ROOT / 'tests/data/csrbench/stream-6s.tnt'}")
            assert [bare(report) for report in kept] == expected
    finally:
        server.terminate()
        server.wait(30)


@pytest.mark.parametrize("block", params("sh", "mqtt"))
def test_a_broker_session_runs_as_written(block, tmp_path):
    """The MQTT examples start their own Mosquitto (Debian's `mosquitto`, `mosquitto-clients`): on a free
    port in place of 1883, the one thing changed."""
    done = bash(block.code.replace("1883", str(free_port())), tmp_path, scratch(tmp_path), timeout=300)
    assert done.returncode == 0, f"{block.name}:\n{done.stdout[-3000:]}"
