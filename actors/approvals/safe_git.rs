//! The read-only git subcommands on the known-safe list, each with an allow-list of options.
//! Git resolves long-option abbreviations too (`--open-f` is `--open-files-in-pager`), and
//! its full option tables are far larger than ours: so only exact names are accepted, and a
//! value is taken from the next word only where git certainly does so.

use super::option_parse::{attached, flag, optional, parse_safe, with_value, Opt, Syntax};

/// Options of the log/show/diff family (revision walking and diff output). Not here:
/// `--output` (writes), `--ext-diff` and `--textconv` (run configured programs),
/// `--show-signature` (runs gpg), `-O` (reads an order file: harmless but rare).
#[rustfmt::skip]
const LOG_DIFF_LONG: &[Opt] = &[
    flag("oneline"), flag("graph"), optional("decorate"), flag("no-decorate"), flag("all"),
    optional("branches"), optional("tags"), optional("remotes"), optional("stat"),
    flag("numstat"), flag("shortstat"), flag("name-only"), flag("name-status"),
    flag("summary"), flag("patch"), flag("no-patch"), flag("raw"), flag("patch-with-stat"),
    attached("format"), optional("pretty"), flag("abbrev-commit"), flag("no-abbrev-commit"),
    optional("abbrev"), attached("date"), flag("relative-date"), attached("author"),
    attached("committer"), attached("grep"), attached("since"), attached("after"),
    attached("until"), attached("before"), attached("max-count"), attached("skip"),
    flag("reverse"), flag("first-parent"), flag("no-merges"), flag("merges"), flag("follow"),
    optional("color"), flag("no-color"), flag("cached"), flag("staged"),
    optional("word-diff"), attached("word-diff-regex"), optional("color-words"),
    attached("unified"), flag("ignore-all-space"), flag("ignore-space-change"),
    flag("ignore-blank-lines"), flag("ignore-space-at-eol"), attached("diff-filter"),
    optional("find-renames"), optional("find-copies"), flag("no-renames"),
    flag("no-ext-diff"), flag("no-textconv"), flag("exit-code"), flag("quiet"),
    flag("full-index"), flag("binary"), flag("minimal"), flag("patience"), flag("histogram"),
    attached("diff-algorithm"), flag("left-right"), flag("cherry-pick"), flag("cherry-mark"),
    flag("boundary"), flag("topo-order"), flag("date-order"), flag("author-date-order"),
    flag("source"), flag("no-notes"), flag("full-diff"), optional("relative"),
    flag("no-relative"), flag("check"), optional("dirstat"), flag("compact-summary"),
    flag("name-rev"), flag("no-prefix"), flag("ignore-submodules"), flag("simplify-merges"),
    flag("ancestry-path"), flag("full-history"), flag("dense"), flag("sparse"),
    flag("walk-reflogs"), flag("merge"), flag("remerge-diff"), flag("dd"), flag("cc"),
    flag("no-walk"), flag("do-walk"), flag("children"), flag("parents"),
    flag("mailmap"), flag("no-mailmap"), flag("use-mailmap"), flag("no-use-mailmap"),
    flag("expand-tabs"), flag("no-expand-tabs"), flag("not"), flag("ignore-missing"),
    flag("regexp-ignore-case"), flag("extended-regexp"), flag("fixed-strings"),
    flag("invert-grep"), flag("all-match"), attached("stat-width"), flag("irreversible-delete"),
];

#[rustfmt::skip]
const LOG_DIFF_SHORT: &[Opt] = &[
    flag("p"), flag("u"), flag("s"), flag("z"), with_value("n"), optional("M"),
    optional("C"), optional("B"), flag("w"), flag("b"), attached("U"), flag("R"),
    flag("a"), flag("W"), flag("i"), flag("E"), flag("F"), flag("m"), flag("c"), flag("t"),
    flag("r"),
];

const LOG_DIFF: Syntax = Syntax::exact(LOG_DIFF_SHORT, LOG_DIFF_LONG).with_numeric();

#[rustfmt::skip]
const STATUS: Syntax = Syntax::exact(
    &[flag("s"), flag("b"), optional("u"), flag("z"), flag("v")],
    &[
        flag("short"), flag("branch"), optional("porcelain"), flag("long"), flag("verbose"),
        optional("untracked-files"), optional("ignored"), optional("ignore-submodules"),
        optional("column"), flag("no-column"), flag("ahead-behind"), flag("no-ahead-behind"),
        flag("renames"), flag("no-renames"), optional("find-renames"), flag("show-stash"),
        flag("null"),
    ],
);

/// `git grep`: not here `-O`/`--open-files-in-pager` (runs a pager program on the matches)
/// and `--textconv`.
#[rustfmt::skip]
const GREP: Syntax = Syntax::exact(
    &[
        flag("n"), flag("i"), flag("I"), flag("w"), flag("v"), flag("l"), flag("L"),
        flag("c"), flag("h"), flag("H"), flag("o"), flag("q"), flag("z"), flag("E"),
        flag("G"), flag("F"), flag("P"), flag("W"), flag("p"), with_value("e"),
        with_value("f"), with_value("A"), with_value("B"), with_value("C"), with_value("m"),
    ],
    &[
        flag("line-number"), flag("ignore-case"), flag("word-regexp"), flag("invert-match"),
        flag("files-with-matches"), flag("files-without-match"), flag("name-only"),
        flag("count"), flag("only-matching"), flag("quiet"), flag("null"),
        flag("extended-regexp"), flag("basic-regexp"), flag("fixed-strings"),
        flag("perl-regexp"), flag("cached"), flag("untracked"), flag("no-index"),
        flag("recurse-submodules"), flag("heading"), flag("break"), flag("full-name"),
        flag("all-match"), flag("and"), flag("or"), flag("not"), flag("function-context"),
        flag("show-function"), flag("column"), with_value("max-depth"), with_value("threads"),
        with_value("after-context"), with_value("before-context"), with_value("context"),
        with_value("max-count"), flag("exclude-standard"), flag("no-exclude-standard"),
        optional("color"), flag("no-color"), flag("text"), flag("no-textconv"),
    ],
)
.with_numeric();

#[rustfmt::skip]
const BLAME: Syntax = Syntax::exact(
    &[
        attached("L"), flag("w"), optional("M"), optional("C"), flag("e"), flag("s"),
        flag("p"), flag("l"), flag("t"), flag("b"), flag("c"), flag("f"), flag("n"),
    ],
    &[
        flag("porcelain"), flag("line-porcelain"), flag("show-email"), flag("show-name"),
        flag("show-number"), flag("root"), attached("date"), flag("incremental"),
        optional("abbrev"), flag("minimal"), flag("progress"), flag("no-progress"),
    ],
);

#[rustfmt::skip]
const LS_FILES: Syntax = Syntax::exact(
    &[
        flag("c"), flag("d"), flag("m"), flag("o"), flag("i"), flag("s"), flag("u"),
        flag("k"), flag("z"), flag("t"), flag("v"), flag("f"),
    ],
    &[
        flag("cached"), flag("deleted"), flag("modified"), flag("others"), flag("ignored"),
        flag("stage"), flag("unmerged"), flag("killed"), flag("directory"),
        flag("no-empty-directory"), attached("exclude"), attached("exclude-from"),
        flag("exclude-standard"), flag("full-name"), flag("error-unmatch"),
        optional("abbrev"), flag("debug"), flag("eol"), flag("recurse-submodules"),
        flag("deduplicate"), attached("format"),
    ],
);

/// rev-parse matches its options as exact strings, one per word.
const REV_PARSE_FLAGS: &[&str] = &[
    "--show-toplevel",
    "--abbrev-ref",
    "--git-dir",
    "--git-common-dir",
    "--absolute-git-dir",
    "--is-inside-work-tree",
    "--is-inside-git-dir",
    "--is-bare-repository",
    "--is-shallow-repository",
    "--short",
    "--verify",
    "--quiet",
    "-q",
    "--symbolic",
    "--symbolic-full-name",
    "--show-prefix",
    "--show-cdup",
    "--all",
    "--branches",
    "--tags",
];

/// `git branch` only lists with these.
const BRANCH_FLAGS: &[&str] = &[
    "-a",
    "-r",
    "-v",
    "-vv",
    "--list",
    "--show-current",
    "--all",
    "--remotes",
    "--verbose",
    "--no-color",
];

/// Options before the subcommand that change nothing but the output.
const GLOBAL_FLAGS: &[&str] = &["--no-pager", "--no-optional-locks"];

/// True when `git ARGS` only reads. Other global options (`-c`, `-C`, `--exec-path`,
/// `--git-dir`…) can run configured programs or point git elsewhere: not safe.
pub fn is_safe_git(args: &[String]) -> bool {
    let skip = args
        .iter()
        .take_while(|a| GLOBAL_FLAGS.contains(&a.as_str()))
        .count();
    let Some((sub, rest)) = args[skip..].split_first() else {
        return false;
    };
    let syntax = match sub.as_str() {
        "log" | "show" | "diff" => &LOG_DIFF,
        "status" => &STATUS,
        "grep" => &GREP,
        "blame" => &BLAME,
        "ls-files" => &LS_FILES,
        "rev-parse" => {
            return rest.iter().all(|a| {
                !a.starts_with('-')
                    || REV_PARSE_FLAGS.contains(&a.as_str())
                    || a.starts_with("--short=")
                    || a.starts_with("--abbrev-ref=")
            })
        }
        "branch" => return rest.iter().all(|a| BRANCH_FLAGS.contains(&a.as_str())),
        _ => return false,
    };
    parse_safe(syntax, rest).is_some()
}
