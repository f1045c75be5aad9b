#!/usr/bin/env python3
"""Differential check of Troupe's apply_patch against Codex's (not part of `cargo test`).

usage: apply_patch/tests/differential.py TROUPE_APPLY_PATCH CODEX_APPLY_PATCH [CASES] [SEED]

Both arguments are executables named `apply_patch` (a link to `target/debug/troupe`, and one
to Codex's native binary). Each case is a few random files (LF or CRLF, with or without a
final newline, with lines differing only in whitespace or Unicode punctuation) and a random
patch over them (adds, deletes, moves, updates with context headers, blank lines, end-of-file
anchors, pure additions, the odd malformed line). Both tools apply it to their own copy.

Expected: where Codex succeeds, Troupe produces byte-identical files; where Codex fails,
Troupe fails and changes nothing (Troupe is atomic; Codex may have changed earlier files).
A move onto itself is skipped: Codex deletes the file, Troupe updates it in place.
"""
import os, random, re, shutil, subprocess, sys, tempfile

WORDS = ["foo", "bar", "baz", "qux", "a - b", "x \u2014 y", "\u201cq\u201d", "  indented",
         "\ttab", "", "end", "dup", "dup"]


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def line(self):
        word = self.rng.choice(WORDS)
        if self.rng.random() < 0.2:
            word += " " * self.rng.randint(1, 3)
        return word

    def file(self):
        lines = [self.line() for _ in range(self.rng.randint(0, 12))]
        eol = "\r\n" if self.rng.random() < 0.2 else "\n"
        text = eol.join(lines)
        if lines and self.rng.random() < 0.8:
            text += eol
        return text

    def variant(self, line):
        r = self.rng.random()
        if r < 0.1:
            return line.strip()
        if r < 0.15:
            return line + " "
        if r < 0.2:
            return line.replace("-", "\u2013").replace("\u2014", "-")
        return line

    def chunk(self, lines):
        if not lines or self.rng.random() < 0.1:
            return ["@@"] + ["+" + self.line() for _ in range(self.rng.randint(1, 2))]
        start = self.rng.randint(0, len(lines) - 1)
        end = min(len(lines), start + self.rng.randint(1, 4))
        out = ["@@ " + self.variant(lines[start - 1])] if start and self.rng.random() < 0.3 else ["@@"]
        for line in lines[start:end]:
            r = self.rng.random()
            if r < 0.4:
                out.append(" " + self.variant(line))
            elif r < 0.7:
                out.append("-" + self.variant(line))
            else:
                out += ["-" + self.variant(line), "+" + self.line()]
        if self.rng.random() < 0.3:
            out.append("+" + self.line())
        if end == len(lines) and self.rng.random() < 0.3:
            out.append("*** End of File")
        if self.rng.random() < 0.05:
            out.append("garbage line")
        return out

    def case(self):
        files = {f"f{i}.txt": self.file() for i in range(self.rng.randint(1, 4))}
        names = list(files)
        parts = ["*** Begin Patch"]
        for _ in range(self.rng.randint(1, 4)):
            r = self.rng.random()
            if r < 0.2:
                parts.append(f"*** Add File: {self.rng.choice(names + ['new.txt', 'd/new.txt'])}")
                parts += ["+" + self.line() for _ in range(self.rng.randint(0, 3))]
            elif r < 0.3:
                parts.append(f"*** Delete File: {self.rng.choice(names + ['missing.txt'])}")
            else:
                name = self.rng.choice(names)
                parts.append(f"*** Update File: {name}")
                if self.rng.random() < 0.15:
                    parts.append(f"*** Move to: {self.rng.choice(['moved.txt', 'd/m.txt'] + names)}")
                lines = files[name].replace("\r\n", "\n").split("\n")
                if lines and lines[-1] == "":
                    lines.pop()
                for c in range(self.rng.randint(1, 3)):
                    chunk = self.chunk(lines)
                    if c == 0 and self.rng.random() < 0.2:
                        chunk = chunk[1:] or ["+x"]
                    parts += chunk
        parts.append("*** End Patch")
        return files, "\n".join(parts)


def snapshot(root):
    out = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


def run(binary, files, patch):
    work = tempfile.mkdtemp()
    try:
        for name, text in files.items():
            with open(os.path.join(work, name), "w", newline="") as f:
                f.write(text)
        proc = subprocess.run([binary, patch], cwd=work, capture_output=True)
        return proc.returncode, snapshot(work), proc.stderr.decode()
    finally:
        shutil.rmtree(work)


def main():
    troupe, codex = sys.argv[1], sys.argv[2]
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    gen = Gen(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    accepted = mismatches = 0
    for index in range(cases):
        files, patch = gen.case()
        if re.search(r"Update File: (\S+)\n\*\*\* Move to: \1\n", patch):
            continue
        before = {name: text.encode() for name, text in files.items()}
        t_code, t_files, t_err = run(troupe, files, patch)
        c_code, c_files, c_err = run(codex, files, patch)
        if c_code == 0:
            accepted += 1
            same = t_code == 0 and t_files == c_files
        else:
            same = t_code != 0 and t_files == before
        if not same:
            mismatches += 1
            print(f"=== case {index}: codex exit {c_code}, troupe exit {t_code}")
            print(repr(files))
            print(patch)
            print("codex:", c_files, c_err)
            print("troupe:", t_files, t_err)
    print(f"{cases} cases, codex accepted {accepted}, mismatches {mismatches}")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
