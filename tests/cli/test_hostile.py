"""Agent data cannot inject into a shell or a terminal through the CLI.

Agents choose run ids, effect keys, tool-call ids, titles, names, form field names and
choice values. Every command the CLI suggests for pasting must run exactly the argv it names
(checked by running the printed line in bash, with a fake ``proctor`` that records its argv,
in a folder where an injected ``touch PWNED`` would leave a file), and no control character,
ESC sequence, bidi override or line break chosen by an agent may reach the terminal raw — in
tables, lines, error messages, JSON or CSV.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
import subprocess
import unicodedata
from pathlib import Path

import pytest

from proctor.core import Actor, Journal
from proctor.core.kernel.safe_text import INVISIBLE, INVISIBLE_OR_BREAK, json_escaped, visible
from proctor.sim.content import sample_for_schema

from .conftest import OPERATOR

TERM = "\x1b]0;PWNED\x07\x1b[2J"  # sets the terminal's title, then clears the screen
ROW = "a\nforged row"
OTHERS = "bidi 12\u202e345 c1 \x9b2J del \x7f tag \U000e0041 zwsp \u200b cr \rX"
SHELL = [
    "x'; touch PWNED; echo '",
    "$(touch PWNED)",
    "`touch PWNED`",
    "a\ntouch PWNED\n",
    "'\"; touch PWNED #",
    "\\'; touch PWNED; '",
    "a;touch PWNED",
    "$'\\x41'; touch PWNED",
    "-rf; touch PWNED",
    "--reason",
    TERM,
    ROW,
]
RAW = [TERM, ROW, OTHERS]
NAMES = list(dict.fromkeys(SHELL + RAW))
FORGED = "forged row"


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """A journal written by an agent that puts hostile text in every field it chooses."""
    path = tmp_path / "hostile.db"
    monkeypatch.setenv("PROCTOR_JOURNAL", str(path))
    monkeypatch.setenv("PROCTOR_OPERATOR", OPERATOR)
    monkeypatch.setenv("PROCTOR_CONFIG", "/dev/null")
    ids: dict = {"runs": [], "effects": [], "questions": [], "approvals": [], "tool_calls": []}
    with Journal.open(path, actor=Actor.agent("mallory")) as agent:
        for n, text in enumerate(RAW + SHELL[:4]):
            run = agent.runs.start(
                f"proj{text}",
                f"title {text}",
                space=f"sp{text}",
                agent=f"agent{text}",
                run_id=f"run_{text}",
            )
            ids["runs"].append(run.id)
            agent.runs.append_event(run.id, f"type{text}", {f"key{text}": f"value{text}"})
            call = agent.runs.record_tool_call(
                run.id, f"tool{text}", {"q": text}, tool_call_id=f"tc_{n}{text}"
            )
            ids["tool_calls"].append(call.id)
            ids["approvals"].append(
                agent.approvals.request(
                    run.id, {"tool": f"deploy{text}", "args": {text: text}}, reason=text
                ).id
            )
        run_id = ids["runs"][0]
        for n, key in enumerate(NAMES):
            key = f"{key}#{n}"
            agent.effects.reserve(key, tool=f"send{key}", run_id=run_id, action={"k": key})
            agent.effects.begin(key)
            agent.effects.mark_ambiguous(key, f"timed out {key}")
            ids["effects"].append(key)
        form = {
            "type": "object",
            "properties": {s: {"type": "string"} for s in NAMES},
            "required": NAMES,
        }
        ids["questions"].append(
            agent.questions.ask(run_id, "form", f"fill {TERM}", response_schema=form).id
        )
        ids["questions"].append(
            agent.questions.ask(run_id, "choice", f"pick {ROW}", options=NAMES).id
        )
        ids["questions"].append(
            agent.questions.ask(
                run_id,
                "question",
                f"why {OTHERS}",
                response_schema={
                    "type": "object",
                    "properties": {"text": {"enum": SHELL}},
                    "required": ["text"],
                },
            ).id
        )
        entry = agent.memory.add("project", f"shop{TERM}", f"title{ROW}", f"content {OTHERS}")
        ids["conflict"] = agent.memory.record_conflict(
            entry.id, f"incoming {TERM}{ROW}", incoming_source=f"bot{TERM}"
        ).id
        ids["entry"] = entry.id
    ids["path"] = path
    return ids


def raw_controls(text: str) -> list[str]:
    """Characters that must never reach a terminal (newlines and tabs are layout)."""
    return INVISIBLE.findall(text)


def assert_terminal_safe(result) -> None:
    for stream in (result.out, result.err):
        assert raw_controls(stream) == [], repr(stream[:2000])
        assert "\r" not in stream
        assert not any(line.startswith(FORGED) for line in stream.splitlines()), stream[:2000]


# ---------------------------------------------------------------- shell


def run_hint(line: str, cwd: Path) -> list[str]:
    """Run a printed command line in bash with a fake `proctor` that records its argv."""
    record = cwd / "argv"
    record.unlink(missing_ok=True)
    script = 'proctor() { printf "%s\\0" "$@" > "$ARGV_FILE"; }\n' + line + "\n"
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        capture_output=True,
        env={"ARGV_FILE": str(record), "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
        timeout=30,
    )
    assert not (cwd / "PWNED").exists(), line  # the agent's text ran as a command
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in cwd.iterdir()) == ["argv"], line  # nothing else ran
    return record.read_bytes().decode("utf-8").split("\0")[:-1]


def hints(out: str) -> list[str]:
    return [line[len("next: ") :] for line in out.splitlines() if line.startswith("next: ")]


def cli_parses(argv: list[str]):
    from proctor.cli import build_parser

    return build_parser().parse_args(argv)


@pytest.fixture
def shell_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "shell"
    folder.mkdir()
    return folder


def test_the_resolve_effect_hint_names_exactly_the_key(cli, hostile, shell_dir) -> None:
    for key in hostile["effects"]:
        result = cli("show", "--", key)
        assert result.rc == 0, result.err
        assert_terminal_safe(result)
        [line] = hints(result.out)
        argv = run_hint(line, shell_dir)
        assert argv[:3] == ["resolve-effect", "--reason", "TEXT"]
        assert argv[3:] in ([key, "committed"], ["--", key, "committed"])
        assert cli_parses(argv).key == key
        if visible(key, breaks=True) == key:  # printable keys: plain POSIX quoting
            assert shlex.split(line, comments=True) == ["proctor", *argv]


def test_the_answer_hint_is_valid_json_for_the_schema_and_one_shell_word(
    cli, hostile, shell_dir
) -> None:
    for qid in hostile["questions"]:
        result = cli("show", qid)
        assert result.rc == 0, result.err
        assert_terminal_safe(result)
        [line] = hints(result.out)
        argv = run_hint(line, shell_dir)
        assert argv[:3] == ["answer", qid, "--json"] and len(argv) == 4
        assert shlex.split(line, comments=True) == ["proctor", *argv]  # printable: POSIX
        with Journal.open(hostile["path"], read_only=True) as j:
            schema = j.questions.get(qid).response_schema
        assert json.loads(argv[3]) == sample_for_schema(schema)
        assert cli(*argv).rc == 0  # and the suggested answer is accepted


def test_every_other_suggested_command_names_exactly_its_item(cli, hostile, shell_dir) -> None:
    for run_id in hostile["runs"]:
        result = cli("show", run_id)
        assert result.rc == 0, result.err
        assert_terminal_safe(result)
        assert [run_hint(line, shell_dir) for line in hints(result.out)] == [["timeline", run_id]]
    for approval_id in hostile["approvals"]:
        lines = hints(cli("show", approval_id).out)
        assert [run_hint(line, shell_dir) for line in lines] == [
            ["approve", approval_id],
            ["deny", approval_id, "--reason", "TEXT"],
        ]
    result = cli("show", hostile["conflict"])
    assert_terminal_safe(result)
    assert [run_hint(line, shell_dir) for line in hints(result.out)] == [
        ["resolve-conflict", hostile["conflict"], "keep-local", "--reason", "TEXT"],
        [
            "resolve-conflict",
            hostile["conflict"],
            "merge",
            "--content-file",
            "FILE",
            "--reason",
            "TEXT",
        ],
    ]


def test_error_hints_quote_what_the_operator_typed(cli, hostile) -> None:
    for key in NAMES:
        result = cli("approve", "--", key)
        assert result.rc == 1
        assert_terminal_safe(result)
        hint = result.err.split("use `", 1)[1].split("` to see", 1)[0]
        if visible(key, breaks=True) == key:
            argv = shlex.split(hint)
            assert argv[:2] == ["proctor", "show"] and cli_parses(argv[1:]).id == key


# ---------------------------------------------------------------- terminal


def test_no_agent_text_reaches_the_terminal_raw(cli, hostile) -> None:
    commands = [
        ["inbox", "--limit", "500"],
        ["runs", "--limit", "500"],
        ["show", hostile["entry"]],
        ["show", hostile["conflict"]],
    ]
    commands += [
        ["show", "--", i]
        for i in hostile["runs"]
        + hostile["approvals"]
        + hostile["tool_calls"]
        + hostile["questions"]
        + hostile["effects"]
    ]
    commands += [["timeline", i] for i in hostile["runs"]]
    commands += [["timeline", i, "--full"] for i in hostile["runs"]]
    for args in commands:
        result = cli(*args)
        assert result.rc == 0, (args, result.err)
        assert_terminal_safe(result)
    inbox = cli("inbox", "--limit", "500").out
    assert "\\x1b]0;PWNED\\x07\\x1b[2J" in inbox  # shown, visibly
    assert "a\\nforged row" in inbox and "12\\u202e345" in inbox


def test_commands_that_echo_an_id_or_refuse_one_escape_it(cli, hostile, tmp_path) -> None:
    for run_id in hostile["runs"]:
        result = cli("cancel", run_id, "--reason", f"stop {TERM}")
        assert result.rc == 0, result.err
        assert_terminal_safe(result)
        assert visible(run_id, breaks=True) in result.out
    for args in (
        ["show", f"missing{TERM}"],
        ["show", f"run_{ROW}x"],
        ["timeline", f"run_{TERM}x"],
        ["cancel", f"run_{ROW}x", "--reason", "r"],
        ["resolve-effect", f"{ROW}x", "failed", "--reason", "r"],
        ["answer", f"int_{TERM}", "--text", "x"],
        ["export", f"run_{TERM}x"],
        ["export-run", f"run_{ROW}x"],
        ["inbox", "--cursor", TERM],
    ):
        result = cli(*args)
        assert result.rc in (1, 2), (args, result.err)
        assert_terminal_safe(result)
    for effect in hostile["effects"][:3]:
        result = cli("resolve-effect", "--reason", "checked", "--", effect, "failed")
        assert result.rc == 0, result.err
        assert_terminal_safe(result)
    result = cli("approve", hostile["approvals"][0])
    assert result.rc == 0 and raw_controls(result.out) == []
    out = tmp_path / f"out{ROW}.jsonl"
    result = cli("export", hostile["runs"][0], "-o", out)
    assert result.rc == 0, result.err
    assert_terminal_safe(result)


def json_safe(text: str) -> None:
    """JSON text carries no raw invisible character (JSON escapes them instead)."""
    assert INVISIBLE.findall(text) == [], repr(text[:500])


def test_json_outputs_escape_invisible_characters_and_keep_the_values(
    cli, hostile, tmp_path
) -> None:
    inbox = cli("inbox", "--json", "--details", "--limit", "500").out
    json_safe(inbox)
    assert {i["id"] for i in json.loads(inbox)["items"]} >= set(hostile["effects"])
    runs = cli("runs", "--json", "--limit", "500").out
    json_safe(runs)
    assert {r["id"] for r in json.loads(runs)["items"]} == set(hostile["runs"])
    for ident in hostile["runs"] + hostile["effects"] + hostile["tool_calls"]:
        shown = cli("show", "--json", "--", ident).out
        json_safe(shown)
        data = json.loads(shown)["item"]
        assert ident in (data.get("id"), data.get("key"))
    for run_id in hostile["runs"]:
        for args in (
            ["timeline", run_id, "--json"],
            ["export", run_id],
            ["export-run", run_id],
            ["export-run", run_id, "--format", "jsonl"],
        ):
            result = cli(*args)
            assert result.rc == 0, (args, result.err)
            json_safe(result.out)
            jsonl = args[0] == "export" or "jsonl" in args
            lines = result.out.splitlines() if jsonl else [result.out]
            assert all(json.loads(line) for line in lines if line.strip())
        bundle = tmp_path / "bundle.json"
        assert cli("export-run", run_id, "-o", bundle).rc == 0
        json_safe(bundle.read_text(encoding="utf-8"))
        copy = tmp_path / "copy.db"
        copy.unlink(missing_ok=True)
        result = cli("import", bundle, "--journal", copy)  # escapes read back as the text
        assert result.rc == 0, result.err
        assert_terminal_safe(result)
        with Journal.open(copy, read_only=True) as j:
            assert j.runs.get(run_id).title.startswith("title ")


def test_csv_outputs_show_invisible_characters_as_escapes(cli, hostile) -> None:
    for args in (["export-runs"], ["export-audit"]):
        result = cli(*args)
        assert result.rc == 0, result.err
        assert raw_controls(result.out) == [], repr(result.out[:500])
        rows = list(csv.reader(io.StringIO(result.out)))
        assert len(rows) > 1
    runs = list(csv.DictReader(io.StringIO(cli("export-runs").out)))
    assert {r["id"] for r in runs} == {visible(i) for i in hostile["runs"]}


def test_the_escape_set_is_every_control_and_format_character() -> None:
    for code in range(0x110000):
        ch = chr(code)
        wanted = unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and ch not in "\t\n\r\u200d"
        newer = unicodedata.category(ch) == "Cn"  # format characters of a later Unicode
        assert bool(INVISIBLE.match(ch)) == wanted or newer, hex(code)
        assert bool(INVISIBLE_OR_BREAK.match(ch)) == (wanted or ch in "\t\n\r") or newer
    text = json.dumps({"k": OTHERS + TERM + "\U000e0041"}, ensure_ascii=False)
    assert json.loads(json_escaped(text)) == json.loads(text)
    assert INVISIBLE.findall(json_escaped(text)) == []


def test_lists_never_suggest_a_flag_they_reject(cli, hostile) -> None:
    """`inbox` and `runs` shorten long cells without pointing at --full (they have none)."""
    with Journal.open(hostile["path"], actor=Actor.agent("mallory")) as agent:
        run = agent.runs.start("p", "t" * 5000)
        agent.approvals.request(run.id, {"tool": "x" * 5000}, reason="r" * 5000)
    for command in ("inbox", "runs"):
        result = cli(command, "--limit", "500")
        assert result.rc == 0 and "more characters" in result.out
        assert "--full" not in result.out, result.out[-500:]
        assert cli(command, "--full").rc == 2  # indeed rejected


def test_show_of_an_effect_committed_by_a_retry_prints_only_the_current_attempt(
    cli, hostile
) -> None:
    key = "mail:retried"
    with Journal.open(hostile["path"], actor=Actor.agent("bot")) as agent:
        agent.effects.reserve(key, tool="send_email", run_id=hostile["runs"][0])
        agent.effects.begin(key)
        agent.effects.mark_ambiguous(key, "SMTP timed out on attempt one")
    assert cli("resolve-effect", key, "failed", "--reason", "bounced, never sent").rc == 0
    with Journal.open(hostile["path"], actor=Actor.agent("bot")) as agent:
        agent.effects.reserve(key, tool="send_email", run_id=hostile["runs"][0])
        agent.effects.begin(key)
        agent.effects.commit(key, {"id": "msg-2"})
    out = cli("show", key).out
    head = out.split("\nreceipts:")[0]
    assert "[committed]  attempt 2" in head
    assert "SMTP timed out on attempt one" not in head and "bounced" not in head
    assert "unknown" not in head and "resolved" not in head
    assert "bounced" in out.split("\nreceipts:")[1] or "decisions" in out  # history kept
