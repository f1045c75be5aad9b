//! End-to-end table: files before → patch → files after (or an error and no change at all).
//!
//! Every `Ok` row was checked against Codex's own `apply_patch` (0.169):
//! `CODEX_APPLY_PATCH=/path/to/apply_patch cargo test -p troupe-apply-patch codex_agrees -- --ignored`
//! reruns that comparison.

use super::*;
use pretty_assertions::assert_eq;
use std::collections::BTreeMap;
use std::path::Path;

enum Expect {
    /// Every file in the directory afterwards.
    Files(&'static [(&'static str, &'static str)]),
    /// The error text contains this; the directory is exactly as before.
    Error(&'static str),
}

struct Case {
    name: &'static str,
    before: &'static [(&'static str, &'static str)],
    patch: &'static str,
    expect: Expect,
    /// Troupe deliberately differs from Codex here (see the row's comment).
    differs_from_codex: bool,
}

const fn ok(
    name: &'static str,
    before: &'static [(&'static str, &'static str)],
    patch: &'static str,
    after: &'static [(&'static str, &'static str)],
) -> Case {
    Case {
        name,
        before,
        patch,
        expect: Expect::Files(after),
        differs_from_codex: false,
    }
}

const fn err(
    name: &'static str,
    before: &'static [(&'static str, &'static str)],
    patch: &'static str,
    message: &'static str,
) -> Case {
    Case {
        name,
        before,
        patch,
        expect: Expect::Error(message),
        differs_from_codex: false,
    }
}

const CASES: &[Case] = &[
    ok("add file", &[], "*** Begin Patch\n*** Add File: a.txt\n+hello\n+world\n*** End Patch", &[("a.txt", "hello\nworld\n")]),
    ok("add empty file", &[], "*** Begin Patch\n*** Add File: empty.txt\n*** End Patch", &[("empty.txt", "")]),
    ok("add in new nested dirs", &[], "*** Begin Patch\n*** Add File: a/b/c.txt\n+x\n*** End Patch", &[("a/b/c.txt", "x\n")]),
    ok("add over existing file replaces it", &[("a.txt", "old\n")], "*** Begin Patch\n*** Add File: a.txt\n+new\n*** End Patch", &[("a.txt", "new\n")]),
    ok("add keeps blank plus lines", &[], "*** Begin Patch\n*** Add File: a.txt\n+one\n+\n+three\n*** End Patch", &[("a.txt", "one\n\nthree\n")]),
    ok("delete file", &[("a.txt", "x\n"), ("b.txt", "y\n")], "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch", &[("b.txt", "y\n")]),
    ok("update one line", &[("a.txt", "one\ntwo\nthree\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch", &[("a.txt", "one\nTWO\nthree\n")]),
    ok("update without @@ on first chunk", &[("a.txt", "one\ntwo\n")], "*** Begin Patch\n*** Update File: a.txt\n-two\n+2\n*** End Patch", &[("a.txt", "one\n2\n")]),
    ok("update with context header", &[("a.rs", "fn a() {\n    x\n}\nfn b() {\n    x\n}\n")], "*** Begin Patch\n*** Update File: a.rs\n@@ fn b() {\n-    x\n+    y\n*** End Patch", &[("a.rs", "fn a() {\n    x\n}\nfn b() {\n    y\n}\n")]),
    ok("two chunks in order", &[("a.txt", "a\nb\nc\nd\ne\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-b\n+B\n@@\n-d\n+D\n*** End Patch", &[("a.txt", "a\nB\nc\nD\ne\n")]),
    ok("blank lines between chunks are skipped", &[("a.txt", "a\nb\nc\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n\n@@\n-c\n+C\n*** End Patch", &[("a.txt", "A\nb\nC\n")]),
    ok("chunks match after the previous one", &[("a.txt", "x\ny\nx\ny\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+1\n@@\n-x\n+2\n*** End Patch", &[("a.txt", "1\ny\n2\ny\n")]),
    ok("pure addition appends at end", &[("a.txt", "a\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n+c\n*** End Patch", &[("a.txt", "a\nb\nc\n")]),
    ok("remove all lines", &[("a.txt", "a\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n-b\n*** End Patch", &[("a.txt", "")]),
    ok("missing final newline is added", &[("a.txt", "a\nb")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch", &[("a.txt", "A\nb\n")]),
    ok("end of file anchor picks the last match", &[("a.txt", "x\ny\nx\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+END\n*** End of File\n*** End Patch", &[("a.txt", "x\ny\nEND\n")]),
    ok("without anchor the first match wins", &[("a.txt", "x\ny\nx\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+FIRST\n*** End Patch", &[("a.txt", "FIRST\ny\nx\n")]),
    ok("trailing empty context line retried without it", &[("a.txt", "a\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-b\n+B\n\n*** End Patch", &[("a.txt", "a\nB\n")]),
    ok("trailing whitespace ignored, context keeps the file's text", &[("a.txt", "a  \nb\t\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+B\n*** End Patch", &[("a.txt", "a  \nB\n")]),
    ok("crlf file: lf context line stays lf", &[("a.txt", "b\r\na\nc\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n+A\n*** End Patch", &[("a.txt", "b\r\na\nA\r\nc\n")]),
    ok("unicode context keeps the file's punctuation", &[("a.txt", "x \u{2014} y\nz\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n x - y\n-z\n+Z\n*** End Patch", &[("a.txt", "x \u{2014} y\nZ\n")]),
    ok("surrounding whitespace ignored", &[("a.txt", "    indented\nz\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-indented\n+  fixed\n*** End Patch", &[("a.txt", "  fixed\nz\n")]),
    ok("unicode dash normalised", &[("a.txt", "a \u{2014} b\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a - b\n+a - c\n*** End Patch", &[("a.txt", "a - c\n")]),
    ok("unicode quotes normalised", &[("a.txt", "say \u{201C}hi\u{201D} \u{2018}x\u{2019}\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-say \"hi\" 'x'\n+said\n*** End Patch", &[("a.txt", "said\n")]),
    ok("non-breaking space normalised", &[("a.txt", "a\u{00A0}b\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a b\n+ab\n*** End Patch", &[("a.txt", "ab\n")]),
    ok("exact match preferred over earlier lenient one", &[("a.txt", "x \ny\nx\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+X\n*** End Patch", &[("a.txt", "x \ny\nX\n")]),
    ok("unicode in file content kept", &[("a.txt", "h\u{e9}llo \u{1F600}\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n h\u{e9}llo \u{1F600}\n-b\n+\u{4E2D}\u{6587}\n*** End Patch", &[("a.txt", "h\u{e9}llo \u{1F600}\n\u{4E2D}\u{6587}\n")]),
    ok("crlf file keeps crlf on new lines", &[("a.txt", "a\r\nb\r\nc\r\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+B\n*** End Patch", &[("a.txt", "a\r\nB\r\nc\r\n")]),
    ok("crlf file without final newline gets crlf", &[("a.txt", "a\r\nb")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch", &[("a.txt", "A\r\nb\r\n")]),
    ok("crlf pure addition", &[("a.txt", "a\r\nb\r\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n+z\n*** End Patch", &[("a.txt", "a\r\nb\r\nz\r\n")]),
    ok("first line decides line endings", &[("a.txt", "a\nb\r\nc\r\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n+A\n*** End Patch", &[("a.txt", "a\nA\nb\r\nc\r\n")]),
    ok("crlf patch text on lf file", &[("a.txt", "a\nb\n")], "*** Begin Patch\r\n*** Update File: a.txt\r\n@@\r\n a\r\n-b\r\n+B\r\n*** End Patch\r\n", &[("a.txt", "a\nB\n")]),
    ok("crlf patch text for add", &[], "*** Begin Patch\r\n*** Add File: a.txt\r\n+x\r\n+y\r\n*** End Patch\r\n", &[("a.txt", "x\ny\n")]),
    ok("move file", &[("a.txt", "x\n")], "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b/c.txt\n@@\n-x\n+y\n*** End Patch", &[("b/c.txt", "y\n")]),
    ok("move over existing file", &[("a.txt", "x\n"), ("b.txt", "old\n")], "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+X\n*** End Patch", &[("b.txt", "X\n")]),
    Case {
        // Codex writes the destination and then deletes the source, losing the file; Troupe
        // treats a move onto itself as an in-place update.
        name: "move onto itself is an update",
        before: &[("a.txt", "x\n")],
        patch: "*** Begin Patch\n*** Update File: a.txt\n*** Move to: a.txt\n@@\n-x\n+y\n*** End Patch",
        expect: Expect::Files(&[("a.txt", "y\n")]),
        differs_from_codex: true,
    },
    ok("several files at once", &[("a.txt", "a\n"), ("b.txt", "b\n")], "*** Begin Patch\n*** Add File: c.txt\n+c\n*** Delete File: a.txt\n*** Update File: b.txt\n@@\n-b\n+B\n*** End Patch", &[("b.txt", "B\n"), ("c.txt", "c\n")]),
    ok("add then update the same file", &[], "*** Begin Patch\n*** Add File: a.txt\n+one\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch", &[("a.txt", "two\n")]),
    ok("two updates of one file compose", &[("a.txt", "a\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: a.txt\n@@\n-b\n+B\n*** End Patch", &[("a.txt", "A\nB\n")]),
    ok("add, delete, add again", &[("a.txt", "old\n")], "*** Begin Patch\n*** Add File: a.txt\n+new\n*** Delete File: a.txt\n*** Add File: a.txt\n+newer\n*** End Patch", &[("a.txt", "newer\n")]),
    ok("heredoc wrapper tolerated", &[], "<<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\nEOF", &[("a.txt", "x\n")]),
    ok("surrounding blank lines and indented markers", &[], "\n\n  *** Begin Patch\n*** Add File: a.txt\n+x\n  *** End Patch  \n\n", &[("a.txt", "x\n")]),
    ok("empty line inside chunk is empty context", &[("a.txt", "a\n\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n\n-b\n+B\n*** End Patch", &[("a.txt", "a\n\nB\n")]),
    ok("context header then anchor at eof", &[("a.txt", "f\nx\ng\nx\n")], "*** Begin Patch\n*** Update File: a.txt\n@@ g\n-x\n+y\n*** End of File\n*** End Patch", &[("a.txt", "f\nx\ng\ny\n")]),
    ok("pure addition to file without final newline", &[("a.txt", "a\nb")], "*** Begin Patch\n*** Update File: a.txt\n@@\n+c\n*** End Patch", &[("a.txt", "a\nb\nc\n")]),
    ok("path with spaces and trailing blanks on header", &[("my file.txt", "a\n")], "*** Begin Patch\n*** Update File: my file.txt  \n@@\n-a\n+b\n*** End Patch", &[("my file.txt", "b\n")]),
    ok("delete then add same path", &[("a.txt", "old\n")], "*** Begin Patch\n*** Delete File: a.txt\n*** Add File: a.txt\n+new\n*** End Patch", &[("a.txt", "new\n")]),
    ok("context header matched leniently", &[("a.py", "  def f():\n    return 1\n")], "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n+    return 2\n*** End Patch", &[("a.py", "  def f():\n    return 2\n")]),
    ok("remove an empty line", &[("a.txt", "a\n\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-\n b\n*** End Patch", &[("a.txt", "a\nb\n")]),
    ok("move into new directory then update there", &[("a.txt", "x\n")], "*** Begin Patch\n*** Update File: a.txt\n*** Move to: d/b.txt\n@@\n-x\n+y\n*** Update File: d/b.txt\n@@\n-y\n+z\n*** End Patch", &[("d/b.txt", "z\n")]),
    ok("absolute-looking content lines are data", &[], "*** Begin Patch\n*** Add File: a.md\n+*** not a marker\n+@@ nor this\n*** End Patch", &[("a.md", "*** not a marker\n@@ nor this\n")]),
    ok("trailing blank lines survive an update", &[("a.txt", "a\n\n\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch", &[("a.txt", "A\n\n\n")]),
    ok("a file of one blank line keeps it", &[("a.txt", "\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n \n@@\n-\n*** End Patch", &[("a.txt", "\n")]),
    ok("added empty last line is kept", &[("a.txt", "a\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n+\n*** End Patch", &[("a.txt", "A\n\n")]),
    ok("pure addition goes after trailing blank lines", &[("a.txt", "a\n\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n+z\n*** End Patch", &[("a.txt", "a\n\nz\n")]),
    ok("crlf line matches exactly before a later lf one", &[("a.txt", "dup\r\ndup")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-dup\n+foo\n*** End Patch", &[("a.txt", "foo\r\ndup\r\n")]),
    ok("trailing space is not exact", &[("a.txt", "dup \ndup")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-dup\n+foo\n*** End Patch", &[("a.txt", "dup \nfoo\n")]),
    ok("update of a file moved in the same patch", &[("a.txt", "x\n\n"), ("b.txt", "old\n")], "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n+foo\n@@\n x\n \n*** Update File: b.txt\n@@ foo\n+bar\n*** End Patch", &[("b.txt", "x\n\nfoo\nbar\n")]),
    ok("blank line before the first chunk is empty context", &[("a.txt", "a\n\nb\na\n")], "*** Begin Patch\n*** Update File: a.txt\n\n@@\n-a\n+A\n*** End Patch", &[("a.txt", "a\n\nb\nA\n")]),
    ok("blank lines after end of file are skipped", &[("a.txt", "a\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n@@\n-b\n+B\n*** End of File\n \n@@\n+c\n*** End Patch", &[("a.txt", "A\nB\nc\n")]),
    ok("crlf file without final newline, addition after the last line", &[("a.txt", "a\r\nb")], "*** Begin Patch\n*** Update File: a.txt\n@@\n b\n+c\n*** End Patch", &[("a.txt", "a\r\nb\r\nc\r\n")]),
    ok("blank context header names no line", &[("a.txt", "a\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@  \n-b\n+B\n*** End Patch", &[("a.txt", "a\nB\n")]),
    ok("addition at the end goes before a later chunk's lines after its leading context", &[("a.txt", "q\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n+a\n@@\n q\n+b\n*** End Patch", &[("a.txt", "q\na\nb\n")]),
    ok("middle context keeps the file's text", &[("a.txt", "a  \nb\nc  \nd  \n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+B\n c\n-d\n+D\n*** End Patch", &[("a.txt", "a  \nB\nc  \nD\n")]),
    ok("deleting the line an addition follows", &[("a.txt", "q\nr\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n+a\n@@\n-q\n+1\n+2\n+3\n*** End Patch", &[("a.txt", "1\n2\n3\nr\na\n")]),
    ok("context header ignores its trailing blanks", &[("a.txt", "tab  \ny\ntab\nx\n")], "*** Begin Patch\n*** Update File: a.txt\n@@ tab  \n-x\n+X\n*** End Patch", &[("a.txt", "tab  \ny\ntab\nX\n")]),
    ok("each run of changes is its own edit", &[("a.txt", "foo\ntab\nbaz\n")], "*** Begin Patch\n*** Update File: a.txt\n+x\n+y\n@@\n-foo\n+end\n-tab\n+dup\n baz\n+end\n*** End Patch", &[("a.txt", "end\ndup\nbaz\nx\ny\nend\n")]),
    ok("bare cr file matched and kept", &[("a.txt", "a\rb\rc\r")], "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+B\n*** End Patch", &[("a.txt", "a\rB\rc\r")]),
    ok("bare cr file without final cr gets one", &[("a.txt", "a\rb")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n+A2\n*** End Patch", &[("a.txt", "A\rA2\rb\r")]),
    ok("dot and dotdot applied to the text", &[], "*** Begin Patch\n*** Add File: d/./x/../y.txt\n+y\n*** End Patch", &[("d/y.txt", "y\n")]),
    ok("trailing slash names the file", &[], "*** Begin Patch\n*** Add File: newdir/\n+n\n*** End Patch", &[("newdir", "n\n")]),
    ok("move to a path with dotdot inside", &[("a.txt", "x\n")], "*** Begin Patch\n*** Update File: a.txt\n*** Move to: d/../b.txt\n@@\n-x\n+y\n*** End Patch", &[("b.txt", "y\n")]),
    Case {
        // Codex writes outside the working directory; Troupe refuses the whole patch.
        name: "a path climbing out is refused and nothing changes",
        before: &[("a.txt", "a\n")],
        patch: "*** Begin Patch\n*** Delete File: a.txt\n*** Add File: sub/../../x\n+x\n*** End Patch",
        expect: Expect::Error("Refused to change sub/../../x: the path escapes the working directory"),
        differs_from_codex: true,
    },
    Case {
        name: "a move climbing out is refused",
        before: &[("a.txt", "a\n")],
        patch: "*** Begin Patch\n*** Update File: a.txt\n*** Move to: ../b.txt\n@@\n-a\n+b\n*** End Patch",
        expect: Expect::Error("the path escapes the working directory"),
        differs_from_codex: true,
    },
    err("no begin marker", &[], "*** Add File: a.txt\n+x\n*** End Patch", "The first line of the patch must be '*** Begin Patch'"),
    err("no end marker", &[], "*** Begin Patch\n*** Add File: a.txt\n+x", "The last line of the patch must be '*** End Patch'"),
    err("empty input", &[], "", "The first line of the patch must be '*** Begin Patch'"),
    err("no hunks", &[], "*** Begin Patch\n*** End Patch", "No files were modified."),
    err("unknown hunk header", &[], "*** Begin Patch\n*** Frob File: a.txt\n*** End Patch", "Invalid patch hunk on line 2: '*** Frob File: a.txt' is not a valid hunk header"),
    err("update of missing file", &[], "*** Begin Patch\n*** Update File: nope.txt\n@@\n-a\n+b\n*** End Patch", "Failed to read file to update nope.txt"),
    err("delete of missing file", &[], "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch", "Failed to delete file nope.txt"),
    err("hunk that matches nowhere", &[("a.txt", "a\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-zzz\n+y\n*** End Patch", "Failed to find expected lines in a.txt (chunk 1 of `*** Update File: a.txt`, patch line 3):\nzzz"),
    err("second chunk fails names chunk 2", &[("a.txt", "a\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n@@\n-zzz\n+y\n*** End Patch", "chunk 2 of `*** Update File: a.txt`, patch line 6"),
    err("context not found", &[("a.txt", "a\n")], "*** Begin Patch\n*** Update File: a.txt\n@@ class Missing\n-a\n+b\n*** End Patch", "Failed to find context 'class Missing' in a.txt (chunk 1"),
    err("eof anchor requires end", &[("a.txt", "x\ny\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+X\n*** End of File\n*** End Patch", "Failed to find expected lines in a.txt"),
    err("chunks out of order fail", &[("a.txt", "a\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-b\n+B\n@@\n-a\n+A\n*** End Patch", "chunk 2"),
    err("end of file chunk cannot reuse an earlier chunk's lines", &[("a.txt", "q\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-q\n@@\n-q\n+r\n*** End of File\n*** End Patch", "chunk 2"),
    err("malformed hunk line", &[("a.txt", "a\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n*a\n*** End Patch", "Invalid patch hunk on line 4: Unexpected line found in update hunk: '*a'"),
    err("second chunk without @@", &[("a.txt", "a\nb\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\nxyz\n*** End Patch", "Expected update hunk to start with a @@ context marker, got: 'xyz'"),
    err("empty update", &[("a.txt", "a\n")], "*** Begin Patch\n*** Update File: a.txt\n*** End Patch", "Update file hunk for path 'a.txt' is empty"),
    err("chunk header without lines", &[("a.txt", "a\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n*** End Patch", "Invalid patch hunk on line 4: Update hunk does not contain any lines"),
    err("end of file with no lines", &[("a.txt", "a\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n*** End of File\n*** End Patch", "Update hunk does not contain any lines"),
    err("update after delete of same file", &[("a.txt", "a\n")], "*** Begin Patch\n*** Delete File: a.txt\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch", "Failed to read file to update a.txt"),
    err("delete of a directory", &[("d/a.txt", "a\n")], "*** Begin Patch\n*** Delete File: d\n*** End Patch", "Failed to delete file d"),
    err("third file fails, first two untouched", &[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")], "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Delete File: b.txt\n*** Update File: c.txt\n@@\n-zzz\n+C\n*** End Patch", "Failed to find expected lines in c.txt"),
];

fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

/// Every regular file under `dir` (relative path → contents), backups and temps included.
pub(super) fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("under dir");
                let text = std::fs::read(&path).expect("read");
                files.insert(
                    rel.to_string_lossy().into_owned(),
                    String::from_utf8_lossy(&text).into_owned(),
                );
            }
        }
    }
    files
}

fn owned(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

#[test]
fn table() {
    assert!(CASES.len() >= 55, "keep the table broad");
    for case in CASES {
        let dir = tempfile::tempdir().expect("tempdir");
        write_files(dir.path(), case.before);
        let result = apply_patch(case.patch, dir.path());
        match (&case.expect, result) {
            (Expect::Files(after), Ok(_)) => {
                assert_eq!(snapshot(dir.path()), owned(after), "case `{}`", case.name)
            }
            (Expect::Files(_), Err(error)) => panic!("case `{}` failed: {error}", case.name),
            (Expect::Error(message), Ok(_)) => {
                panic!("case `{}` applied; expected `{message}`", case.name)
            }
            (Expect::Error(message), Err(error)) => {
                let text = error.to_string();
                assert!(text.contains(message), "case `{}`: got `{text}`", case.name);
                assert_eq!(
                    snapshot(dir.path()),
                    owned(case.before),
                    "case `{}` changed files",
                    case.name
                );
            }
        }
    }
}

/// Runs every table row through Codex's `apply_patch` and compares the resulting files.
#[test]
#[ignore = "needs CODEX_APPLY_PATCH pointing at Codex's apply_patch"]
fn codex_agrees() {
    let Ok(codex) = std::env::var("CODEX_APPLY_PATCH") else {
        panic!("set CODEX_APPLY_PATCH to Codex's apply_patch binary");
    };
    for case in CASES.iter().filter(|case| !case.differs_from_codex) {
        let dir = tempfile::tempdir().expect("tempdir");
        write_files(dir.path(), case.before);
        let status = std::process::Command::new(&codex)
            .arg(case.patch)
            .current_dir(dir.path())
            .output()
            .expect("run codex");
        match &case.expect {
            Expect::Files(after) => {
                assert!(status.status.success(), "codex rejected `{}`", case.name);
                assert_eq!(snapshot(dir.path()), owned(after), "case `{}`", case.name);
            }
            Expect::Error(_) => {
                assert!(!status.status.success(), "codex accepted `{}`", case.name)
            }
        }
    }
}

#[test]
fn summary_lists_added_modified_deleted() {
    let affected = vec![
        Affected::Modified("m.txt".into()),
        Affected::Deleted("d.txt".into()),
        Affected::Added("a.txt".into()),
    ];
    assert_eq!(
        summary(&affected),
        "Success. Updated the following files:\nA a.txt\nM m.txt\nD d.txt\n"
    );
}

#[test]
fn huge_patch_is_refused_before_parsing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let patch = "x".repeat(MAX_PATCH_BYTES + 1);
    let error = apply_patch(&patch, dir.path()).expect_err("too large");
    assert!(error.to_string().contains("split it into smaller patches"));
}

#[test]
fn non_utf8_file_to_update_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("bin.dat"), [0xff, 0xfe, b'\n']).expect("write");
    let patch = "*** Begin Patch\n*** Update File: bin.dat\n@@\n-x\n+y\n*** End Patch";
    let error = apply_patch(patch, dir.path()).expect_err("not utf-8");
    assert!(error.to_string().contains("bin.dat"), "{error}");
    assert!(error.to_string().contains("not valid UTF-8"), "{error}");
}

#[test]
fn files_that_are_not_utf8_are_deleted_as_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("latin1.txt"), b"caf\xe9\n").expect("write");
    std::fs::write(dir.path().join("blob.bin"), [0u8, 0xff, 0x80]).expect("write");
    let patch =
        "*** Begin Patch\n*** Delete File: latin1.txt\n*** Delete File: blob.bin\n*** End Patch";
    let plan = apply_patch(patch, dir.path()).expect("deletes");
    assert_eq!(snapshot(dir.path()), BTreeMap::new());
    // The turn diff still shows what was deleted.
    let before = &plan.before[&dir.path().join("latin1.txt")];
    assert_eq!(before.as_deref(), Some("caf\u{FFFD}\n"));
}

#[test]
fn a_failed_patch_restores_a_deleted_file_that_is_not_utf8_byte_for_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = [0u8, 0xff, 0x80, b'\r', b'\n'];
    std::fs::write(dir.path().join("blob.bin"), bytes).expect("write");
    // The add fails when it is written (a directory is in the way), after the delete is
    // staged: the rollback must put the binary back as it was.
    std::fs::create_dir_all(dir.path().join("zdir/inner")).expect("mkdir");
    let patch = "*** Begin Patch\n*** Delete File: blob.bin\n*** Add File: zdir\n+x\n*** End Patch";
    let error = apply_patch(patch, dir.path()).expect_err("zdir is a directory");
    assert!(error.to_string().contains("zdir"), "{error}");
    assert_eq!(
        std::fs::read(dir.path().join("blob.bin")).expect("kept"),
        bytes
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 2, "no backup or temp left: {names:?}");
}

#[test]
fn plan_reports_changes_with_absolute_paths() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_files(dir.path(), &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let patch = "*** Begin Patch\n*** Add File: n.txt\n+n\n*** Delete File: a.txt\n\
                 *** Update File: b.txt\n*** Move to: c.txt\n@@\n-b\n+c\n*** End Patch";
    let plan = apply_patch(patch, dir.path()).expect("applies");
    let kinds: Vec<(PathBufLike, ChangeKind)> = plan
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.kind.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (dir.path().join("n.txt"), ChangeKind::Add),
            (dir.path().join("a.txt"), ChangeKind::Delete),
            (
                dir.path().join("b.txt"),
                ChangeKind::Update {
                    move_to: Some(dir.path().join("c.txt"))
                }
            ),
        ]
    );
}

type PathBufLike = std::path::PathBuf;
