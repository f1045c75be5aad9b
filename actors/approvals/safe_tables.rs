//! Option tables of the tools on the known-safe list, as the real tools define them (GNU
//! coreutils 9, GNU sed 4.9, file 5.4x, tree 2.x, ripgrep 13/14). Abbreviations resolve
//! against the whole table, so options that disqualify are listed too (`safe: false`).

use super::option_parse::{flag, optional, unsafe_opt, with_value, Opt, Syntax, Value};

const HELP: [Opt; 2] = [flag("help"), flag("version")];

#[rustfmt::skip]
pub const SORT: Syntax = Syntax::gnu(
    &[
        flag("b"), flag("d"), flag("f"), flag("g"), flag("i"), flag("M"), flag("h"),
        flag("n"), flag("R"), flag("r"), flag("V"), flag("c"), flag("C"), flag("m"),
        flag("s"), flag("u"), flag("z"), with_value("k"), with_value("t"), with_value("S"),
        unsafe_opt("o", Value::Required),
        // Temporaries in a directory of the caller's choice: writes.
        unsafe_opt("T", Value::Required),
    ],
    &[
        flag("ignore-leading-blanks"), flag("dictionary-order"), flag("ignore-case"),
        flag("general-numeric-sort"), flag("ignore-nonprinting"), flag("month-sort"),
        flag("human-numeric-sort"), flag("numeric-sort"), flag("random-sort"),
        with_value("random-source"), flag("reverse"), with_value("sort"), flag("version-sort"),
        with_value("batch-size"), optional("check"), flag("debug"), with_value("files0-from"),
        with_value("key"), flag("merge"), flag("stable"), with_value("buffer-size"),
        with_value("field-separator"), with_value("parallel"), flag("unique"),
        flag("zero-terminated"), HELP[0], HELP[1],
        unsafe_opt("output", Value::Required),
        unsafe_opt("compress-program", Value::Required),
        unsafe_opt("temporary-directory", Value::Required),
    ],
);

#[rustfmt::skip]
pub const UNIQ: Syntax = Syntax::gnu(
    &[
        flag("c"), flag("d"), flag("D"), flag("u"), flag("i"), flag("z"), with_value("f"),
        with_value("s"), with_value("w"),
    ],
    &[
        flag("count"), flag("repeated"), optional("all-repeated"), with_value("skip-fields"),
        optional("group"), flag("ignore-case"), with_value("skip-chars"), flag("unique"),
        flag("zero-terminated"), with_value("check-chars"), HELP[0], HELP[1],
    ],
);

#[rustfmt::skip]
pub const SED: Syntax = Syntax::gnu(
    &[
        flag("n"), with_value("e"), flag("E"), flag("r"), flag("s"), flag("u"), flag("z"),
        with_value("l"),
        // A script file cannot be checked here; in-place editing writes.
        unsafe_opt("f", Value::Required),
        unsafe_opt("i", Value::Optional),
    ],
    &[
        flag("quiet"), flag("silent"), flag("debug"), with_value("expression"),
        flag("follow-symlinks"), with_value("line-length"), flag("null-data"),
        flag("zero-terminated"), flag("posix"), flag("regexp-extended"), flag("separate"),
        flag("sandbox"), flag("unbuffered"), flag("binary"), HELP[0], HELP[1],
        unsafe_opt("file", Value::Required),
        unsafe_opt("in-place", Value::Optional),
    ],
);

/// tree reads its own command line: exact long names (`--opt=v` or `--opt v`), and each
/// value-taking letter of a cluster takes the next word in turn.
#[rustfmt::skip]
pub const TREE: Syntax = Syntax::exact(
    &[
        flag("a"), flag("d"), flag("l"), flag("f"), flag("x"), with_value("L"),
        with_value("P"), with_value("I"), flag("q"), flag("N"), flag("Q"), flag("p"),
        flag("u"), flag("g"), flag("s"), flag("h"), flag("D"), flag("F"), flag("v"),
        flag("t"), flag("c"), flag("U"), flag("r"), flag("i"), flag("A"), flag("S"),
        flag("n"), flag("C"), flag("X"), flag("J"), with_value("H"), with_value("T"),
        unsafe_opt("o", Value::Required),
        // Re-runs tree with `-o 00Tree.html` in every directory.
        unsafe_opt("R", Value::No),
    ],
    &[
        flag("gitignore"), with_value("gitfile"), flag("ignore-case"), flag("matchdirs"),
        flag("metafirst"), flag("prune"), flag("info"), with_value("infofile"),
        flag("noreport"), with_value("charset"), with_value("filelimit"), flag("si"),
        flag("du"), with_value("timefmt"), flag("inodes"), flag("device"), flag("dirsfirst"),
        flag("filesfirst"), with_value("sort"), flag("nolinks"), with_value("hintro"),
        with_value("houtro"), flag("fromfile"), flag("fflinks"), HELP[0], HELP[1],
    ],
)
.tree_clusters();

#[rustfmt::skip]
pub const FILE: Syntax = Syntax::gnu(
    &[
        flag("v"), with_value("m"), flag("b"), flag("c"), with_value("e"), with_value("f"),
        with_value("F"), flag("i"), flag("k"), flag("l"), flag("L"), flag("h"), flag("n"),
        flag("N"), flag("0"), with_value("P"), flag("r"), flag("s"), flag("d"), flag("E"),
        // Decompressors are separate programs; -p resets access times; -C writes magic.mgc.
        unsafe_opt("z", Value::No),
        unsafe_opt("Z", Value::No),
        unsafe_opt("p", Value::No),
        unsafe_opt("C", Value::No),
        unsafe_opt("S", Value::No),
    ],
    &[
        with_value("magic-file"), flag("brief"), flag("checking-printout"),
        with_value("exclude"), with_value("exclude-quiet"), with_value("files-from"),
        with_value("separator"), flag("mime"), flag("apple"), flag("extension"),
        flag("mime-type"), flag("mime-encoding"), flag("keep-going"), flag("list"),
        flag("dereference"), flag("no-dereference"), flag("no-buffer"), flag("no-pad"),
        flag("print0"), with_value("parameter"), flag("raw"), flag("special-files"),
        flag("debug"), HELP[0], HELP[1],
        unsafe_opt("uncompress", Value::No),
        unsafe_opt("uncompress-noreport", Value::No),
        unsafe_opt("preserve-date", Value::No),
        unsafe_opt("compile", Value::No),
        unsafe_opt("no-sandbox", Value::No),
    ],
);

#[rustfmt::skip]
pub const DATE: Syntax = Syntax::gnu(
    &[
        with_value("d"), with_value("f"), optional("I"), with_value("r"), flag("R"),
        flag("u"),
        unsafe_opt("s", Value::Required),
    ],
    &[
        with_value("date"), flag("debug"), with_value("file"), optional("iso-8601"),
        flag("resolution"), flag("rfc-email"), with_value("rfc-3339"),
        with_value("reference"), flag("utc"), flag("universal"), HELP[0], HELP[1],
        unsafe_opt("set", Value::Required),
    ],
);

/// ripgrep: exact long names. `--pre`, `--hostname-bin` and `-z` run other programs.
#[rustfmt::skip]
pub const RG: Syntax = Syntax::exact(
    &[
        flag("i"), flag("s"), flag("S"), flag("v"), flag("w"), flag("x"), flag("F"),
        flag("n"), flag("N"), flag("l"), flag("c"), flag("o"), flag("q"), flag("H"),
        flag("I"), flag("L"), flag("U"), flag("P"), flag("u"), flag("a"), flag("0"),
        flag("b"), flag("p"), flag("h"), flag("V"), flag("."), with_value("j"),
        with_value("e"), with_value("f"), with_value("g"), with_value("t"), with_value("T"),
        with_value("A"), with_value("B"), with_value("C"), with_value("m"), with_value("M"),
        with_value("r"), with_value("E"), with_value("d"),
        unsafe_opt("z", Value::No),
    ],
    &[
        flag("files"), flag("files-with-matches"), flag("files-without-match"),
        flag("count"), flag("count-matches"), flag("ignore-case"), flag("smart-case"),
        flag("case-sensitive"), flag("invert-match"), flag("word-regexp"),
        flag("line-regexp"), flag("fixed-strings"), flag("line-number"),
        flag("no-line-number"), flag("hidden"), flag("no-hidden"), flag("no-ignore"),
        flag("no-ignore-vcs"), flag("no-ignore-parent"), flag("no-ignore-dot"),
        flag("no-ignore-global"), flag("no-ignore-exclude"), flag("no-ignore-files"),
        flag("follow"), with_value("glob"), with_value("iglob"), with_value("type"),
        with_value("type-not"), flag("type-list"), with_value("max-count"),
        with_value("max-depth"), with_value("max-filesize"), with_value("after-context"),
        with_value("before-context"), with_value("context"),
        with_value("context-separator"), flag("heading"), flag("no-heading"),
        flag("with-filename"), flag("no-filename"), with_value("color"),
        with_value("colors"), flag("column"), flag("no-column"), flag("json"),
        flag("vimgrep"), flag("only-matching"), flag("quiet"), with_value("replace"),
        with_value("sort"), with_value("sortr"), flag("stats"), flag("trim"),
        flag("multiline"), flag("multiline-dotall"), flag("pcre2"), with_value("engine"),
        with_value("regexp"), with_value("file"), flag("text"), flag("null"),
        flag("null-data"), with_value("threads"), flag("unrestricted"), flag("binary"),
        with_value("encoding"), flag("no-messages"), flag("passthru"), flag("debug"),
        flag("byte-offset"), flag("pretty"), with_value("max-columns"),
        flag("max-columns-preview"), with_value("ignore-file"),
        flag("ignore-file-case-insensitive"), flag("one-file-system"), flag("crlf"),
        flag("no-config"), HELP[0], HELP[1],
        unsafe_opt("pre", Value::Required),
        unsafe_opt("pre-glob", Value::Required),
        unsafe_opt("hostname-bin", Value::Required),
        unsafe_opt("search-zip", Value::No),
    ],
);

/// find's expression words that only test or print, with how many words follow each.
#[rustfmt::skip]
pub const FIND_SAFE: &[(&str, usize)] = &[
    ("-name", 1), ("-iname", 1), ("-path", 1), ("-ipath", 1), ("-wholename", 1),
    ("-iwholename", 1), ("-regex", 1), ("-iregex", 1), ("-lname", 1), ("-ilname", 1),
    ("-type", 1), ("-xtype", 1), ("-size", 1), ("-mtime", 1), ("-mmin", 1), ("-atime", 1),
    ("-amin", 1), ("-ctime", 1), ("-cmin", 1), ("-newer", 1), ("-anewer", 1), ("-cnewer", 1),
    ("-used", 1), ("-perm", 1), ("-user", 1), ("-group", 1), ("-uid", 1), ("-gid", 1),
    ("-links", 1), ("-inum", 1), ("-samefile", 1), ("-maxdepth", 1), ("-mindepth", 1),
    ("-regextype", 1), ("-fstype", 1), ("-printf", 1), ("-files0-from", 1), ("-nouser", 0),
    ("-nogroup", 0), ("-empty", 0), ("-readable", 0), ("-writable", 0), ("-executable", 0),
    ("-depth", 0), ("-mount", 0), ("-xdev", 0), ("-follow", 0), ("-noleaf", 0),
    ("-daystart", 0), ("-ignore_readdir_race", 0), ("-noignore_readdir_race", 0),
    ("-warn", 0), ("-nowarn", 0), ("-print", 0), ("-print0", 0), ("-ls", 0), ("-prune", 0),
    ("-quit", 0), ("-true", 0), ("-false", 0), ("-not", 0), ("-a", 0), ("-o", 0),
    ("-and", 0), ("-or", 0), ("-L", 0), ("-H", 0), ("-P", 0), ("-O0", 0), ("-O1", 0),
    ("-O2", 0), ("-O3", 0),
];
