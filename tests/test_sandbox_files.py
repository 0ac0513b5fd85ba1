"""Applying an untrusted answer to a sandbox workspace: paths, caps, unified diffs, JUnit XML."""

from __future__ import annotations

import pytest

from pytest_egi.sandbox import (
    AnswerCaps,
    AnswerRefused,
    PatchError,
    Sandbox,
    apply_unified_diff,
    check_answer_path,
    parse_junit_text,
)


@pytest.mark.parametrize("path, message", [
    ("../evil.py", "is outside the project: '..' is not allowed"),
    ("pkg/../../evil.py", "is outside the project: '..' is not allowed"),
    ("/etc/passwd", "is outside the project: give it relative to the project root"),
    ("~/x.py", "is outside the project"),
    ("pkg\\x.py", "must use '/' separators"),
    ("", "must be a non-empty string"),
    ("_hidden/test_x.py", "'_hidden' belongs to the harness and cannot be written"),
])  # fmt: skip
def test_paths_outside_the_project_are_refused(path, message):
    with pytest.raises(AnswerRefused) as exc:
        check_answer_path(path, protected=("_hidden",))
    assert message in str(exc.value) and repr(path) in str(exc.value)


def test_a_path_is_normalized():
    assert check_answer_path("./pkg//a.py") == "pkg/a.py"


def test_an_answer_is_applied_all_or_nothing():
    with Sandbox({"pkg/a.py": "A = 1\n"}) as box:
        with pytest.raises(AnswerRefused, match=r"'\.\./x\.py'"):
            box.apply_files({"pkg/a.py": "A = 2\n", "../x.py": "boom\n"})
        assert box.read("pkg/a.py") == "A = 1\n"
        assert box.apply_files({"pkg/a.py": "A = 2\n", "pkg/b.py": "B = 1\n"}) == ["pkg/a.py", "pkg/b.py"]
        assert box.read("pkg/a.py") == "A = 2\n" and box.read("pkg/b.py") == "B = 1\n"
        assert box.apply_files({"pkg/b.py": None}) == ["pkg/b.py"]
        assert box.read("pkg/b.py") is None


def test_sizes_are_capped():
    caps = AnswerCaps(max_files=2, max_file_bytes=10, max_total_bytes=15)
    with Sandbox() as box:
        with pytest.raises(AnswerRefused, match="changes 3 files; at most 2"):
            box.apply_files({"a": "", "b": "", "c": ""}, caps)
        with pytest.raises(AnswerRefused, match="'a' has 11 bytes; at most 10"):
            box.apply_files({"a": "x" * 11}, caps)
        with pytest.raises(AnswerRefused, match="the answer has 20 bytes; at most 15"):
            box.apply_files({"a": "x" * 10, "b": "y" * 10}, caps)
        with pytest.raises(AnswerRefused, match="must be text, got int"):
            box.apply_files({"a": 3}, caps)
        assert list(box.paths()) == []


def test_a_symlink_left_in_the_workspace_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    with Sandbox() as box:
        (box.root / "pkg").symlink_to(outside)
        with pytest.raises(AnswerRefused, match="is not a folder"):
            box.apply_files({"pkg/a.py": "x\n"})
        (box.root / "b.py").symlink_to(outside / "b.py")
        with pytest.raises(AnswerRefused, match="is a symbolic link"):
            box.apply_files({"b.py": "x\n"})
    assert list(outside.iterdir()) == []


DIFF = """\
--- a/pkg/a.py
+++ b/pkg/a.py
@@ -1,3 +1,3 @@
 def f():
-    return 1
+    return 2

--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,2 @@
+X = 1
+Y = 2
"""


def test_a_unified_diff_is_applied():
    out = apply_unified_diff(DIFF, {"pkg/a.py": "def f():\n    return 1\n\n"})
    assert out == {"pkg/a.py": "def f():\n    return 2\n\n", "pkg/new.py": "X = 1\nY = 2\n"}


def test_a_diff_that_does_not_apply_names_file_and_hunk():
    with pytest.raises(PatchError, match=r"pkg/a.py: hunk 1 \(@@ -1\) does not apply.*'def f\(\):'"):
        apply_unified_diff(DIFF, {"pkg/a.py": "def g():\n    return 1\n"})
    with pytest.raises(PatchError, match="no file header"):
        apply_unified_diff("just words", {})


def test_a_diff_through_the_sandbox_checks_paths():
    with Sandbox({"pkg/a.py": "def f():\n    return 1\n\n"}) as box:
        assert box.apply_diff(DIFF) == ["pkg/a.py", "pkg/new.py"]
        assert box.read("pkg/a.py") == "def f():\n    return 2\n\n"
        evil = "--- a/../x.py\n+++ b/../x.py\n@@ -0,0 +1 @@\n+x\n"
        with pytest.raises(AnswerRefused, match="outside the project"):
            box.apply_diff(evil)


def test_junit_text_is_parsed_and_garbage_is_no_report():
    xml = ("<testsuites><testsuite errors='1'><testcase classname='t.test_a' name='test_ok'/>"
           "<testcase classname='t.test_a' name='test_bad'>"
           "<failure message='assert 1 == 2'>tb</failure></testcase>"
           "<testcase classname='t.test_a' name='test_skip'><skipped message='later'/></testcase>"
           "</testsuite></testsuites>")  # fmt: skip
    report = parse_junit_text(xml)
    assert [(c.nodeid, c.outcome, c.message) for c in report.cases] == [
        ("t.test_a::test_ok", "passed", ""),
        ("t.test_a::test_bad", "failed", "assert 1 == 2"),
        ("t.test_a::test_skip", "skipped", "later"),
    ]
    assert report.errors == 1 and report.passed == 1
    assert parse_junit_text("PASSED ok") is None
    assert parse_junit_text("<html/>") is None


def test_read_never_follows_a_symbolic_link_out_of_the_workspace(tmp_path):
    """A command run in the workspace can plant a link (a folder or a file) pointing outside;
    reading through it gives nothing, as for a file that is not there."""
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("s3cret\n", encoding="utf-8")
    with Sandbox({"pkg/a.py": "A = 1\n"}) as box:
        (box.root / "linked").symlink_to(outside, target_is_directory=True)
        (box.root / "pkg" / "key.txt").symlink_to(outside / "key.txt")
        assert box.read("linked/key.txt") is None
        assert box.read("pkg/key.txt") is None
        assert box.read("pkg/a.py") == "A = 1\n"
