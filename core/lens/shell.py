"""Shell read with tree-sitter's bash grammar: the commands run, recursive or forced deletes,
sudo, a download piped to a shell, redirections into system folders, environment assignments
that change what runs, background and chained commands, and the SQL given to psql, mysql and
sqlite3. tree-sitter is imported here, on the first read, never by ``import proctor.core``."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cache
from typing import Any

from proctor.core.lens.facts import Fact, quoted
from proctor.core.lens.paths import is_broad, system_folder
from proctor.core.lens.sql import read_sql

DESTRUCTIVE = "destructive"
UNSAFE_WRITE = "unsafe_write"
EXTERNAL = "external_side_effect"
HIJACK = {
    "PROMPT_COMMAND", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
    "PATH", "BASH_ENV", "ENV", "IFS", "PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS",
    "PERL5OPT", "RUBYOPT", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "SHELLOPTS", "PS4",
}  # fmt: skip
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node"}
DOWNLOADS = {"curl", "wget", "fetch"}
# commands that run the command after their own options
WRAPPERS = {"sudo", "doas", "env", "nohup", "time", "nice", "exec", "command", "xargs", "timeout"}
# (command, subcommand words) -> (code, sentence, class)
KNOWN: dict[tuple[str, ...], tuple[str, str, str]] = {
    ("git", "push"): ("shell.publish", "pushes commits to a remote", EXTERNAL),
    ("git", "reset"): ("shell.discard", "git reset may discard work", UNSAFE_WRITE),
    ("git", "clean"): ("shell.discard", "git clean deletes untracked files", DESTRUCTIVE),
    ("kubectl", "delete"): ("shell.discard", "kubectl delete removes cluster objects", DESTRUCTIVE),
    ("kubectl", "apply"): ("shell.publish", "kubectl apply changes a cluster", EXTERNAL),
    ("kubectl", "scale"): ("shell.publish", "kubectl scale changes a cluster", EXTERNAL),
    ("kubectl", "drain"): ("shell.publish", "kubectl drain evicts a node's pods", EXTERNAL),
    ("helm", "uninstall"): ("shell.discard", "helm uninstall removes a release", DESTRUCTIVE),
    ("helm", "upgrade"): ("shell.publish", "helm upgrade changes a release", EXTERNAL),
    ("terraform", "destroy"): ("shell.discard", "terraform destroy deletes infrastructure", DESTRUCTIVE),
    ("terraform", "apply"): ("shell.publish", "terraform apply changes infrastructure", EXTERNAL),
    ("docker", "push"): ("shell.publish", "docker push publishes an image", EXTERNAL),
    ("docker", "rm"): ("shell.discard", "docker rm removes containers", DESTRUCTIVE),
    ("docker", "rmi"): ("shell.discard", "docker rmi removes images", DESTRUCTIVE),
    ("docker", "system", "prune"): ("shell.discard", "docker system prune deletes unused data", DESTRUCTIVE),
    ("docker", "volume", "rm"): ("shell.discard", "docker volume rm deletes volumes", DESTRUCTIVE),
    ("npm", "publish"): ("shell.publish", "npm publish publishes a package", EXTERNAL),
    ("aws", "s3", "rm"): ("shell.discard", "aws s3 rm deletes objects", DESTRUCTIVE),
    ("mkfs",): ("shell.discard", "mkfs formats a filesystem", DESTRUCTIVE),
    ("dd",): ("shell.discard", "dd writes raw blocks", DESTRUCTIVE),
    ("shred",): ("shell.discard", "shred destroys files", DESTRUCTIVE),
}  # fmt: skip
MAX_NESTED = 3
INTERPRETERS = {"sh", "bash", "zsh", "dash", "ksh"}
SSH_VALUES = {f"-{c}" for c in "bcDEeFIiJLlmOopQRSWw"}  # ssh options that take a value
EXEC_VALUES = {
    "-e",
    "--env",
    "-u",
    "--user",
    "-w",
    "--workdir",
    "-c",
    "--container",
    "-n",
    "--namespace",
}
SQL_FLAGS = {"psql": ("-c", "--command"), "mysql": ("-e", "--execute")}


@cache
def parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@dataclass(frozen=True)
class Word:
    value: str  # the word as the shell passes it (quotes removed where simple)
    start: int  # its [start, end) in the field's string, quotes included
    end: int
    inner: int  # where ``value`` starts (after an opening quote)
    exact: bool  # value is text[inner:inner + len(value)]


class Source:
    """The field's text with tree-sitter's byte offsets turned into character offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        self.ascii = len(self.data) == len(text)
        self.bytes_at: list[int] = []
        if not self.ascii:
            total = 0
            for ch in text:
                self.bytes_at.append(total)
                total += len(ch.encode("utf-8", "surrogatepass"))

    def char(self, byte: int) -> int:
        return byte if self.ascii else bisect.bisect_left(self.bytes_at, byte)

    def span(self, node: Any) -> tuple[int, int]:
        return self.char(node.start_byte), self.char(node.end_byte)


def word_of(node: Any, src: Source) -> Word:
    start, end = src.span(node)
    raw = src.text[start:end]
    if node.type == "raw_string" and len(raw) >= 2:
        return Word(raw[1:-1], start, end, start + 1, True)
    if node.type == "string" and len(raw) >= 2:
        simple = all(c.type in {'"', "string_content"} for c in node.children)
        value = raw[1:-1]
        if not simple or "\\" in value:
            value = value.replace('\\"', '"').replace("\\\\", "\\")
            return Word(value, start, end, start + 1, False)
        return Word(value, start, end, start + 1, True)
    if "\\" in raw or "'" in raw or '"' in raw:
        return Word(
            raw.replace("'", "").replace('"', "").replace("\\", ""), start, end, start, False
        )
    return Word(raw, start, end, start, True)


def read_shell(text: str, field: str) -> tuple[list[Fact], list[str]]:
    reader = ShellReader(Source(text), field)
    reader.read()
    return reader.finish(), reader.unread


class ShellReader:
    def __init__(self, src: Source, field: str, depth: int = 0) -> None:
        self.src = src
        self.field = field
        self.depth = depth  # scripts inside scripts (bash -c, ssh HOST CMD) read so far
        self.facts: list[Fact] = []
        self.unread: list[str] = []
        self.commands: list[str] = []

    def read(self) -> None:
        tree = parser().parse(self.src.data)
        self.walk(tree.root_node)
        if tree.root_node.has_error:
            self.unread.insert(0, f"could not read all of {self.field} as shell")

    def nested(self, word: Word) -> None:
        """The script in ``word`` (bash -c SCRIPT, ssh HOST SCRIPT), read as shell; its facts
        point into ``word``."""
        if self.depth >= MAX_NESTED:
            self.unread.append(f"{self.field} runs scripts nested too deep to read")
            return
        inner = ShellReader(Source(word.value), self.field, self.depth + 1)
        inner.read()
        for f in inner.facts:
            start, end = (
                (word.inner + f.start, word.inner + f.end) if word.exact else (word.start, word.end)
            )
            self.facts.append(Fact(f.code, f.text, f.field, start, end, f.implies))
        self.commands += inner.commands
        self.unread += inner.unread

    def fact(self, code: str, text: str, span: tuple[int, int], implies: str | None) -> None:
        self.facts.append(Fact(code, text, self.field, span[0], span[1], implies))

    def walk(self, root: Any) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "command":
                self.command(node)
            elif kind == "pipeline":
                self.pipeline(node)
            elif kind in {"list", "program", "compound_statement", "subshell"}:
                self.sequence(node)
            elif kind == "file_redirect":
                self.redirect(node)
            elif kind == "variable_assignment":
                self.assignment(node)
            elif kind in {"declaration_command", "unset_command"} and node.children:
                self.commands.append(self.src.text[slice(*self.src.span(node.children[0]))])
            stack.extend(reversed(node.children))

    def finish(self) -> list[Fact]:
        if self.commands:
            seen = list(dict.fromkeys(self.commands))
            listed = ", ".join(quoted(c) for c in seen[:8]) + ("…" if len(seen) > 8 else "")
            span = (0, len(self.src.text))
            self.facts.insert(0, Fact("shell.commands", f"runs {listed}", self.field, *span, None))
        return self.facts

    def sequence(self, node: Any) -> None:
        ops = [c for c in node.children if not c.is_named and c.type in {"&&", "||", ";", "&"}]
        for op in ops:
            span = self.src.span(op)
            if op.type == "&":
                self.fact("shell.background", "runs a command in the background", span, None)
            elif node.type == "list":
                self.fact("shell.chained", f"chains commands with {op.type}", span, None)
        statements = [c for c in node.children if c.is_named and c.type != "comment"]
        if node.type != "list" and len(statements) > 1 and any(o.type == ";" for o in ops):
            self.fact(
                "shell.chained",
                f"runs {len(statements)} commands in sequence",
                self.src.span(node),
                None,
            )

    def words(self, node: Any) -> list[Word]:
        return [
            word_of(
                c.named_children[0] if c.type == "command_name" and c.named_children else c,
                self.src,
            )
            for c in node.named_children
            if c.type
            not in {"variable_assignment", "file_redirect", "herestring_redirect", "comment"}
        ]

    def command(self, node: Any) -> None:
        self.command_words(self.words(node))

    def command_words(self, words: list[Word]) -> None:
        while words:
            name = words[0].value.rsplit("/", 1)[-1]
            self.commands.append(name)
            if name in {"sudo", "doas"}:
                self.fact(
                    "shell.sudo",
                    f"runs {quoted(name)} as root",
                    (words[0].start, words[0].end),
                    UNSAFE_WRITE,
                )
            if name in WRAPPERS:
                if name == "env":
                    self.env_words(words[1:])
                words = unwrap(words[1:])
                continue
            self.run(name, words)
            return

    def env_words(self, words: list[Word]) -> None:
        for w in words:
            var = w.value.split("=", 1)[0]
            if "=" in w.value and var in HIJACK:
                self.fact(
                    "shell.env_hijack",
                    f"sets {quoted(var)}, which changes what runs",
                    (w.start, w.end),
                    UNSAFE_WRITE,
                )

    def run(self, name: str, words: list[Word]) -> None:
        args = [w.value for w in words[1:]]
        inner = remote(name, words)
        if inner is not None:
            if len(inner) == 1 and " " in inner[0].value:
                self.nested(inner[0])
            elif inner:
                self.command_words(inner)
            return
        if name in INTERPRETERS and "-c" in args[:-1]:
            self.nested(words[2 + args.index("-c")])
        elif name == "rm":
            self.delete(words)
        elif name == "find" and "-delete" in args:
            w = words[1 + args.index("-delete")]
            self.fact(
                "shell.recursive_delete",
                "find -delete removes every file it matches",
                (w.start, w.end),
                DESTRUCTIVE,
            )
        elif name in SQL_FLAGS or name.startswith("sqlite"):
            self.embedded_sql(name, words)
        elif name in {"curl", "wget", "http", "httpie"}:
            self.download(name, words)
        elif name == "tee":
            for w in words[1:]:
                if not w.value.startswith("-") and system_folder(w.value):
                    self.fact(
                        "shell.system_redirect",
                        f"writes into the system folder {quoted(w.value)}",
                        (w.start, w.end),
                        DESTRUCTIVE,
                    )
        self.known(name, words)

    def known(self, name: str, words: list[Word]) -> None:
        plain = [w for w in words[1:] if not w.value.startswith("-")]
        for key, (code, sentence, implies) in KNOWN.items():
            if key[0] != name or [w.value for w in plain[: len(key) - 1]] != list(key[1:]):
                continue
            flags = {w.value for w in words[1:] if w.value.startswith("-")}
            if key == ("git", "push") and flags & {
                "-f",
                "--force",
                "--force-with-lease",
                "--mirror",
                "--delete",
            }:
                code, sentence, implies = (
                    "shell.discard",
                    "git push --force rewrites a remote's history",
                    DESTRUCTIVE,
                )
            if key == ("git", "reset") and "--hard" in flags:
                sentence, implies = "git reset --hard discards uncommitted work", DESTRUCTIVE
            last = plain[len(key) - 2] if len(key) > 1 else words[0]
            self.fact(code, sentence, (words[0].start, last.end), implies)
            return

    def delete(self, words: list[Word]) -> None:
        flags = "".join(
            w.value[1:]
            for w in words[1:]
            if w.value.startswith("-") and not w.value.startswith("--")
        )
        long = {w.value for w in words[1:] if w.value.startswith("--")}
        targets = [w for w in words[1:] if not w.value.startswith("-")]
        broad = [w for w in targets if is_broad(w.value)]
        shown = ", ".join(quoted(w.value) for w in (broad or targets)[:4]) or "nothing named"
        span = (words[0].start, words[-1].end)
        implies = DESTRUCTIVE if broad else UNSAFE_WRITE
        scope = " (a broad path)" if broad else ""
        if set(flags) & {"r", "R"} or "--recursive" in long:
            self.fact(
                "shell.recursive_delete",
                f"rm deletes {shown} and everything under it{scope}",
                span,
                implies,
            )
        if "f" in flags or "--force" in long:
            self.fact(
                "shell.forced_delete", f"rm -f deletes {shown} without asking{scope}", span, implies
            )

    def embedded_sql(self, name: str, words: list[Word]) -> None:
        flags = SQL_FLAGS.get(name, ())
        found: list[Word] = []
        for i, w in enumerate(words[1:-1], start=1):
            if w.value in flags:
                found.append(words[i + 1])
        for w in words[1:]:
            for flag in flags:
                if w.value.startswith(flag + "=") or (
                    len(flag) == 2
                    and w.value.startswith(flag)
                    and len(w.value) > 2
                    and w.exact
                    and " " in w.value
                ):
                    cut = len(flag) + 1 if w.value.startswith(flag + "=") else len(flag)
                    found.append(Word(w.value[cut:], w.start, w.end, w.inner + cut, w.exact))
        if name.startswith("sqlite"):
            plain = [w for w in words[1:] if not w.value.startswith("-")]
            found += plain[1:2]  # sqlite3 DB "SQL"
        dialect = "postgres" if name == "psql" else "mysql" if name == "mysql" else "sqlite"
        for w in found:
            offset = w.inner if w.exact else w.start
            facts, why = read_sql(w.value, self.field, offset, dialect)
            if not w.exact:
                facts = [Fact(f.code, f.text, f.field, w.start, w.end, f.implies) for f in facts]
            self.facts += facts
            if why:
                self.unread.append(
                    f"could not read the SQL given to {quoted(name)} in {self.field}"
                )

    def download(self, name: str, words: list[Word]) -> None:
        from proctor.core.lens.http import request_facts

        method, url, body = None, None, 0
        for i, w in enumerate(words[1:], start=1):
            nxt = words[i + 1] if i + 1 < len(words) else None
            if w.value in {"-X", "--request"} and nxt:
                method = nxt
            elif (
                w.value
                in {
                    "-d",
                    "--data",
                    "--data-raw",
                    "--data-binary",
                    "--json",
                    "-F",
                    "--form",
                    "-T",
                    "--upload-file",
                    "--post-data",
                }
                and nxt
            ):
                body += len(nxt.value)
                method = method or Word("POST", w.start, w.end, w.start, False)
            elif "://" in w.value and url is None:
                url = w
        if url is None:
            return
        self.facts += request_facts(
            self.field,
            url.value,
            (url.inner, url.inner + len(url.value)) if url.exact else (url.start, url.end),
            method.value.upper() if method else "GET",
            (method.start, method.end) if method else (url.start, url.end),
            body,
        )

    def pipeline(self, node: Any) -> None:
        parts = [c for c in node.named_children if c.type in {"command", "redirected_statement"}]
        names = []
        for part in parts:
            cmd = (
                part
                if part.type == "command"
                else next((c for c in part.named_children if c.type == "command"), None)
            )
            words = self.words(cmd) if cmd is not None else []
            while words and words[0].value.rsplit("/", 1)[-1] in WRAPPERS:
                words = unwrap(words[1:])
            names.append(words[0].value.rsplit("/", 1)[-1] if words else "")
        for i, name in enumerate(names):
            if name in DOWNLOADS and any(n in SHELLS for n in names[i + 1 :]):
                shell = next(n for n in names[i + 1 :] if n in SHELLS)
                self.fact(
                    "shell.pipe_to_shell",
                    f"pipes a download from {quoted(name)} into {quoted(shell)}: it runs code nobody has read",
                    self.src.span(node),
                    DESTRUCTIVE,
                )
                return

    def redirect(self, node: Any) -> None:
        ops = [c.type for c in node.children if not c.is_named]
        target = node.child_by_field_name("destination") or (
            node.named_children[-1] if node.named_children else None
        )
        if target is None or not any(">" in op for op in ops):
            return
        w = word_of(target, self.src)
        if system_folder(w.value) and not w.value.startswith("/dev/null"):
            self.fact(
                "shell.system_redirect",
                f"writes into the system folder {quoted(w.value)}",
                self.src.span(node),
                DESTRUCTIVE,
            )

    def assignment(self, node: Any) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        var = self.src.text[slice(*self.src.span(name))]
        if var in HIJACK:
            self.fact(
                "shell.env_hijack",
                f"sets {quoted(var)}, which changes what runs",
                self.src.span(node),
                UNSAFE_WRITE,
            )


def remote(name: str, words: list[Word]) -> list[Word] | None:
    """The command words ``ssh HOST ...``, ``docker exec CONTAINER ...`` and ``kubectl exec
    POD -- ...`` run elsewhere, or None for any other command."""
    args = words[1:]
    if name == "ssh":
        return after_operand(args, SSH_VALUES)
    if name in {"docker", "podman"} and args[:1] and args[0].value == "exec":
        return after_operand(args[1:], EXEC_VALUES)
    if name in {"kubectl", "oc"} and args[:1] and args[0].value == "exec":
        values = [w.value for w in args]
        return (
            args[values.index("--") + 1 :]
            if "--" in values
            else after_operand(args[1:], EXEC_VALUES)
        )
    return None


def after_operand(words: list[Word], takes_value: set[str]) -> list[Word]:
    """The words after the first operand (a host, a container), skipping options."""
    i = 0
    while i < len(words) and words[i].value.startswith("-"):
        i += 2 if words[i].value in takes_value else 1
    return words[i + 1 :]


def unwrap(words: list[Word]) -> list[Word]:
    """The command a wrapper (sudo, env, timeout ...) runs: its words after the wrapper's own
    options and VAR=value assignments (an option's value is taken for the command when the
    option is unknown; the wrapper's reading stays approximate)."""
    i = 0
    while i < len(words):
        v = words[i].value
        if v in {"-u", "-g", "-C", "-p", "--user", "--group"} and i + 1 < len(words):
            i += 2
        elif (
            v.startswith("-")
            or ("=" in v and not v.startswith("="))
            or v.replace(".", "").isdigit()
            or (v[-1:] in {"s", "m"} and v[:-1].isdigit())
        ):
            i += 1
        else:
            break
    return words[i:]
