"""Which deleted lines a fix's history search traces (bot.engine.history.lines)."""

from __future__ import annotations

import pytest

from bot.engine.history.lines import deleted_lines, insertion_context, line_ranges, trace_plan
from bot.engine.snapshot import ChangedFile


def patch(*lines: str, old_start: int = 1) -> str:
    """A one-hunk GitHub patch of ``lines`` (each starting with ' ', '-' or '+')."""
    old = sum(1 for line in lines if line[0] in " -")
    new = sum(1 for line in lines if line[0] in " +")
    return f"@@ -{old_start},{old} +{old_start},{new} @@\n" + "\n".join(lines)


def traced(name: str, *lines: str, **kw) -> list[str]:
    plan = trace_plan([ChangedFile(name, patch=patch(*lines), **kw)])
    return [line.text.strip() for line in plan.traced]


def dropped(name: str, *lines: str) -> dict[str, int]:
    return trace_plan([ChangedFile(name, patch=patch(*lines))]).dropped


def test_python_comments_imports_blank_and_trivial_lines_are_not_traced():
    lines = (" def f(x):", "-    # old note", "-    import os", "-", "-    pass", "-    y = g(x)", "+    y = h(x)")
    assert traced("a.py", *lines) == ["y = g(x)"]
    assert dropped("a.py", *lines) == {"blank": 1, "comment": 1, "import": 1, "trivial": 1}


def test_python_parenthesised_import_lines_are_imports_to_the_closing_paren():
    lines = ("-from pkg.mod import (", "-    alpha,", "-    beta,", "-)", "-value = alpha()", "+value = beta()")
    assert traced("m.py", *lines) == ["value = alpha()"]
    assert dropped("m.py", *lines) == {"import": 4}


def test_python_docstrings_are_comments_even_when_the_hunk_starts_inside_one():
    lines = (
        "     inside an earlier docstring",
        '-    """',
        "-    if ready:",
        "-        return tensor",
        "+    return tensor if ready else None",
        " def g():",
        '-    """Old doc.',
        '-    more"""',
        '+    """New doc."""',
    )
    assert traced("d.py", *lines) == ["if ready:", "return tensor"]


@pytest.mark.parametrize(
    ("name", "comment", "imports", "code"),
    [
        ("x.c", "// note", ("#include <stdio.h>",), "int n = count(items);"),
        ("x.cc", "/* block */", ('#include "util.h"',), "return total / n;"),
        ("x.rs", "/// docs", ("use std::io::Read;", "extern crate serde;", "mod parser;"), "let n = read(buf)?;"),
        ("x.go", "// note", ('import "fmt"',), "n := len(items)"),
        ("X.java", "* javadoc line", ("import java.util.List;", "package org.demo;"), "int n = items.size();"),
        ("x.js", "// note", ("import { a } from './a';", "const fs = require('fs');"), "const n = items.length;"),
        ("x.ts", "/* note */", ("import type { T } from './t';", "export * from './b';"), "let n: number = items.length;"),
        ("sync.sh", "# note", ("source ./env.sh", ". ./lib.sh"), 'rsync -a "$SRC" "$DST"'),
        ("conf.yaml", "# note", (), "learning_rate: 0.001"),
        ("settings.toml", "# note", (), 'timeout = 30'),
    ],
)
def test_comment_and_import_syntax_of_each_language(name, comment, imports, code):
    lines = [f"-{comment}", *(f"-{i}" for i in imports), f"-{code}", "+changed = True"]
    assert traced(name, *lines) == [code]
    assert dropped(name, *lines) == {"comment": 1, **({"import": len(imports)} if imports else {})}


def test_go_import_blocks_and_rust_use_groups_are_imports():
    go = ("-import (", '-\t"fmt"', '-\t"os"', "-)", "-n := run()", "+n := run2()")
    assert traced("main.go", *go) == ["n := run()"]
    rust = ("-use std::{", "-    io,", "-    fs,", "-};", "-let n = run();", "+let n = run2();")
    assert traced("lib.rs", *rust) == ["let n = run();"]


def test_whitespace_only_changes_are_formatting_but_python_reindentation_counts():
    js = ("-const n = f( a,b );", "+const n = f(a, b);")
    assert traced("x.js", *js) == []
    assert dropped("x.js", *js) == {"formatting": 1}
    # A call re-wrapped over three lines is the same code.
    wrap = ("-    total = compute(alpha, beta, gamma)", "+    total = compute(", "+        alpha, beta, gamma", "+    )")
    assert traced("w.py", *wrap) == []
    # Moving a Python line into a new block changes what it does.
    block = ("-    y = g(x)", "+    if x:", "+        y = g(x)")
    assert traced("b.py", *block) == ["y = g(x)"]
    # In YAML too, indentation is structure.
    assert traced("c.yaml", "-  key: 1", "+    key: 1") == ["key: 1"]


def test_lines_moved_to_another_file_are_not_traced_but_reordered_lines_are():
    moved_out = ChangedFile("old.py", patch=patch("-def helper(value):", "-    return value * 2", " x = 1"))
    moved_in = ChangedFile("new.py", patch=patch("+def helper(value):", "+    return value * 2"))
    plan = trace_plan([moved_out, moved_in])
    assert plan.traced == ()
    assert plan.dropped == {"moved": 2}
    # The same line deleted and added back in its own file changed the order of statements.
    reorder = ("-    cache.clear()", "     load()", "+    cache.clear()")
    assert traced("r.py", *reorder) == ["cache.clear()"]


def test_documents_generated_ci_example_and_lock_files_are_skipped():
    files = [
        ChangedFile("docs/guide.md", patch=patch("-Old sentence.", "+New sentence.")),
        ChangedFile(".github/workflows/ci.yml", patch=patch("-  runs-on: x", "+  runs-on: y")),
        ChangedFile("uv.lock", patch=patch('-version = "1"', '+version = "2"')),
        ChangedFile("src/app.py", patch=patch("-x = 1", "+x = 2")),
    ]
    plan = trace_plan(files)
    assert [line.path for line in plan.traced] == ["src/app.py"]
    assert plan.dropped == {"file": 3}


def test_a_renamed_file_is_traced_under_its_old_name_and_numbered_as_before():
    f = ChangedFile(
        "pkg/new.py", status="renamed", previous_filename="pkg/old.py",
        patch=patch(" a = 1", "-b = 2", "+b = 3", old_start=10),
    )  # fmt: skip
    (line,) = trace_plan([f]).traced
    assert (line.path, line.line, line.file) == ("pkg/old.py", 11, "pkg/new.py")


def test_files_without_a_patch_and_added_lines_give_nothing():
    assert trace_plan([ChangedFile("big.py", patch=None, additions=5000), ChangedFile("n.py", patch=patch("+x = 1"))]).traced == ()


def test_plain_deletions_keep_everything_and_ranges_merge_adjacent_lines():
    f = ChangedFile("a.py", patch=patch("-# c", "-import os", "-x = 1", " y", "-z = 2"))
    assert [line.line for line in deleted_lines([f])] == [1, 2, 3, 5]
    assert line_ranges(deleted_lines([f])) == {"a.py": [(1, 3), (5, 5)]}


def around(name: str, *lines: str, old_start: int = 1, **kw) -> list[tuple[int, str]]:
    context = insertion_context([ChangedFile(name, patch=patch(*lines, old_start=old_start), **kw)])
    return [(line.line, line.text.strip()) for line in context]


def test_the_lines_around_an_insertion_stay_inside_its_python_block():
    lines = (
        "     return total",  # the previous function's body: outside the block
        " def load(path):",
        "     # read it",
        "     data = read(path)",
        "+    if data is None:",
        "+        raise ValueError(path)",
        "     return parse(data)",
        " ",
        " def save(path):",
    )  # fmt: skip
    assert around("io.py", *lines, old_start=20) == [(21, "def load(path):"), (23, "data = read(path)"), (24, "return parse(data)")]


def test_only_insertions_in_code_files_have_context():
    replaced = ("     a = 1", "-    b = 2", "+    b = 3", "+    c = 4", "     d = 5")
    assert around("x.py", *replaced) == []  # a replacement: its deleted line is traced instead
    assert around("x.py", " import os", " ", "+x = 1", " # note", " y = 2") == [(4, "y = 2")]
    assert around("x.py", " a = 1", "+# only a comment", " b = 2") == []
    # An import moved into a function (to import it lazily) is an insertion like any other.
    assert around("x.py", " def f():", "+    import json", "     return 1") == [(1, "def f():"), (2, "return 1")]
    assert around("docs/guide.md", " Some text.", "+More text.", " End.") == []
    assert around("new.py", "+x = 1", status="added") == []
    assert around("x.c", " int a;", " int b;", " int c;", " int d;", "+int e;", " int f;", old_start=5) == [(6, "int b;"), (7, "int c;"), (8, "int d;"), (9, "int f;")]  # three each side


def test_ci_and_example_lines_are_blamed_only_when_no_line_of_code_is():
    ci = ChangedFile(".github/workflows/ci.yml", patch=patch("   steps:", "-    - run: pytest -x", "+    - run: pytest"))
    example = ChangedFile("examples/run.sh", patch=patch("-python train.py --lr 1", "+python train.py --lr 2"))
    docker = ChangedFile("docker/Dockerfile", patch=patch("-FROM base:1", "+FROM base:2"))
    plan = trace_plan([ci, example, docker])
    assert plan.traced == () and plan.dropped == {"file": 3}
    assert [line.text for line in plan.fallback] == ["    - run: pytest -x", "python train.py --lr 1"]
    assert plan.to_blame == plan.fallback and plan.unanimous and not plan.adds_only
    with_code = trace_plan([ci, ChangedFile("src/app.py", patch=patch("-x = 1", "+x = 2"))])
    assert [line.path for line in with_code.to_blame] == ["src/app.py"] and with_code.fallback == () and not with_code.unanimous


def test_a_pull_request_that_deletes_nothing_worth_blaming_blames_the_lines_around_its_insertions():
    adds = ChangedFile("io.py", patch=patch(" def load(path):", "     data = read(path)", "+    check(data)", "     return parse(data)", old_start=4))
    plan = trace_plan([adds, ChangedFile("docs/a.md", patch=patch("-old", "+new"))])
    assert plan.traced == () and plan.fallback == ()
    assert [(line.line, line.text.strip()) for line in plan.to_blame] == [(4, "def load(path):"), (5, "data = read(path)"), (6, "return parse(data)")]
    assert plan.unanimous and plan.adds_only
    # A deleted line of code, or of a CI file, comes first.
    assert not trace_plan([adds, ChangedFile("ci.py", patch=patch("-y = 1", "+y = 2"))]).adds_only
    assert trace_plan([adds, ChangedFile(".github/workflows/t.yml", patch=patch("-  run: a", "+  run: b"))]).around == ()


def test_the_last_argument_line_of_a_re_indented_call_is_only_re_wrapped():
    """A formatter moved a call's argument lines one column: the lines ending in a comma
    were "formatting", but the last one, ``num_key_value_heads=16)``, read as code moved
    to another level and was traced (a blind rating: "every change of that file is yapf
    re-indentation", yet two of its lines named the PR the fix came from)."""
    lines = (
        " def init_model(self):",
        "     config = LlamaConfig(vocab_size=256,",
        "-                                hidden_size=2048,",
        "-                                num_key_value_heads=16)",
        "+                                 hidden_size=2048,",
        "+                                 num_key_value_heads=16)",
        "     return config",
    )
    assert traced("tests/server.py", *lines) == []
    assert dropped("tests/server.py", *lines) == {"formatting": 2}


def test_a_statement_moved_to_another_level_is_still_traced():
    lines = (" def f(x):", "-    y = g(x)", "+    if x:", "+        y = g(x)")
    assert traced("a.py", *lines) == ["y = g(x)"]
