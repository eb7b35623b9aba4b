"""Hostile actions: the lens never raises, stays bounded on huge or deep input, reads a parse
error as an unread sentence, and never puts invisible characters in a sentence; importing
the core loads neither parser."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import unicodedata

import pytest

from proctor.core.kernel.safe_text import is_printable
from proctor.core.lens import Reading, read_action, stronger_than_declared


def test_a_3_mb_line_is_not_parsed_and_says_so() -> None:
    line = "rm -rf / ; " * 300_000  # 3.3 MB
    reading = read_action({"tool": "Bash", "args": {"command": line}})
    assert reading.facts == ()
    assert reading.unread == (f"args.command is too long to read ({len(line)} characters)",)


def test_a_3_mb_action_of_many_fields_is_read_within_its_budget() -> None:
    fields = {f"f{i}": {"command": "rm -rf / && " * 8_000} for i in range(35)}  # 35 x 96 kB
    began = time.monotonic()
    reading = read_action({"tool": "Bash", "args": fields})
    # not a timing assertion on the build machine: a guard against a read that never ends
    assert time.monotonic() - began < 120
    assert any("past the read budget" in u for u in reading.unread)
    assert "shell.recursive_delete" in {f.code for f in reading.facts}


def deep(levels: int, leaf: object) -> object:
    value = leaf
    for _ in range(levels):
        value = {"command": value} if isinstance(value, str) else {"x": [value]}
    return value


def test_10000_deep_nesting_is_bounded() -> None:
    reading = read_action({"tool": "Bash", "args": deep(10_000, "rm -rf /")})
    assert reading.facts == ()
    assert any("nested more than" in u for u in reading.unread)


def test_deep_sql_and_shell_nesting_is_an_unread_sentence() -> None:
    sql = "SELECT " + "(" * 20_000 + "1" + ")" * 20_000
    shell = "echo " + "$(" * 10_000 + "ls" + ")" * 10_000
    reading = read_action({"tool": "run_sql", "args": {"query": sql, "command": shell}})
    assert any(u.startswith("could not read args.query as SQL") for u in reading.unread)


@pytest.mark.parametrize(
    "action",
    [
        None, 1, "rm -rf /", [], [1, 2], {"args": None}, {"args": 5}, {"args": [None, True, 1.5]},
        {"tool": 5, "args": {"command": 5}}, {"tool": None, "args": {"query": ["DROP", {"x": None}]}},
        {"tool": "Bash", "args": {"command": ""}}, {"tool": "Bash", "args": {"command": "\x00\x01\x1b[31m"}},
        {"tool": "run_sql", "args": {"query": "'unterminated"}}, {"tool": "run_sql", "args": {"query": ";;;;"}},
        {"tool": "Bash", "args": {"command": "echo 'unterminated"}}, {"tool": "Bash", "args": {"command": "\ud800"}},
        {"tool": "http", "args": {"url": "http://[::1", "method": "POST"}}, {"tool": "http", "args": {"url": "https://x/", "method": 7}},
        {"tool": "Write", "args": {"file_path": ""}}, {"tool": "apply_patch", "args": {"patch": "--- a\n+++ b\n@@ -x +y @@\n"}},
        {"args": {1: "x", None: {"command": "ls"}}},
    ],
)  # fmt: skip
def test_no_json_input_raises(action: object) -> None:
    reading = read_action(action, cwd="/work")  # type: ignore[arg-type]
    assert isinstance(reading, Reading)
    stronger_than_declared("safe_read", reading)
    reading.summary()


def test_a_parse_error_is_an_unread_sentence() -> None:
    reading = read_action({"tool": "run_sql", "args": {"query": "SELEC * FORM ((users"}})
    assert reading.facts == ()
    assert reading.unread == ("could not read args.query as SQL",)


BIDI = "\u202e\u2066\u200b\x1b[2J\x07"


def test_invisible_characters_are_escaped_in_sentences() -> None:
    reading = read_action(
        {
            "tool": "Bash",
            "args": {
                "command": f"rm -rf /{BIDI} ; psql -c 'DROP TABLE \"a{BIDI}\"'",
                "url": f"https://api{BIDI}.acme.com/",
                "method": "POST",
                "path": f"/etc/{BIDI}",
            },
        }
    )
    codes = {f.code for f in reading.facts}
    assert {"shell.recursive_delete", "sql.drop", "http.write_method", "path.system"} <= codes
    for fact in reading.facts:
        assert is_printable(fact.text), fact.text
        assert not any(unicodedata.category(c) in {"Cc", "Cf"} for c in fact.text)
    assert is_printable(reading.summary(limit=10))


def test_spans_count_characters_not_bytes() -> None:
    command = "echo 'héllo ✓ 😀' && rm -rf /"
    reading = read_action({"tool": "Bash", "args": {"command": command}})
    (fact,) = [f for f in reading.facts if f.code == "shell.recursive_delete"]
    assert command[fact.start : fact.end] == "rm -rf /"


def test_summary_puts_the_most_severe_first_and_counts_the_rest() -> None:
    reading = read_action({"tool": "Bash", "args": {"command": "ls && sudo rm -rf / &"}})
    summary = reading.summary(limit=1)
    assert summary.startswith("rm deletes / and everything under it")
    assert summary.endswith(f"(+{len(reading.facts) - 1} more)")


def test_declared_weaker_than_detected_is_said_once() -> None:
    reading = read_action({"tool": "run_sql", "args": {"query": "DELETE FROM sessions"}})
    assert reading.detected == "destructive"
    sentence = stronger_than_declared("safe_read", reading)
    assert sentence == (
        "declared safe_read, but the lens reads destructive: "
        "DELETE FROM sessions has no WHERE: it deletes every row"
    )
    assert stronger_than_declared("destructive", reading) is None
    bounded = read_action({"tool": "run_sql", "args": {"query": "DELETE FROM s WHERE id = 1"}})
    assert stronger_than_declared("unsafe_write", bounded) is None
    assert stronger_than_declared("safe_read", bounded) is not None
    assert stronger_than_declared("safe_read", read_action({"args": {}})) is None


def loaded_after(code: str) -> set[str]:
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


PARSERS = {"sqlglot", "tree_sitter", "tree_sitter_bash", "unidiff"}


def test_importing_the_core_and_the_lens_loads_no_parser() -> None:
    modules = loaded_after("import proctor.core, proctor.core.lens")
    assert "proctor.core.lens" in modules
    assert not PARSERS & modules


def test_a_read_loads_only_the_parser_it_needs() -> None:
    modules = loaded_after(
        "from proctor.core.lens import read_action\n"
        "read_action({'tool': 'Write', 'args': {'file_path': '/etc/x'}})"
    )
    assert not PARSERS & modules
    modules = loaded_after(
        "from proctor.core.lens import read_action\n"
        "read_action({'tool': 'Bash', 'args': {'command': 'psql -c \"DROP TABLE x\"'}})"
    )
    assert {"sqlglot", "tree_sitter"} <= modules


def test_thousands_of_statements_are_counted_but_only_the_first_are_parsed() -> None:
    reading = read_action({"tool": "run_sql", "args": {"query": "DELETE FROM a; " * 6000}})
    (many,) = [f for f in reading.facts if f.code == "sql.many_statements"]
    assert many.text.startswith("6000 SQL statements in one string")
    assert "only the first 100 of 6000 statements in args.query were read" in reading.unread
    assert len(reading.facts) <= 100


def test_unread_sentences_escape_the_agents_keys() -> None:
    key = f"x{BIDI}"
    reading = read_action(
        {"tool": "run_sql", "args": {key: {"query": "SELEC ((", "command": "x" * 200_000}}}
    )
    assert len(reading.unread) == 2
    for sentence in reading.unread:
        assert is_printable(sentence), sentence
        assert "\\u202e" in sentence


def test_a_db_in_the_middle_of_a_word_is_no_database_tool() -> None:
    reading = read_action({"tool": "feedback_form", "args": {"text": "DROP TABLE users"}})
    assert reading.facts == ()
    assert read_action({"tool": "my_db", "args": {"text": "DROP TABLE users"}}).detected == (
        "destructive"
    )
