//! Reading a command's arguments the way the real tool does, against a table of its options:
//! short clusters (`-nr`), attached values (`-k2`, `-o/x`), `--name=value` and `--name value`,
//! GNU abbreviations resolved against the tool's full option table (`--outp` is `--output`),
//! and `--`. The known-safe list then checks the options it found against its allow-list.

/// What an option does with a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// A flag.
    No,
    /// Needs a value: attached, or the next word.
    Required,
    /// Needs a value that must be attached (`--name=v`, `-xv`): where we are not sure the tool
    /// would take the next word, we refuse rather than guess.
    Attached,
    /// Takes a value only when attached.
    Optional,
}

/// One option of a tool, and whether the known-safe list accepts it.
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    pub name: &'static str,
    pub value: Value,
    pub safe: bool,
}

/// Shorthands for tables.
pub const fn flag(name: &'static str) -> Opt {
    Opt {
        name,
        value: Value::No,
        safe: true,
    }
}

pub const fn with_value(name: &'static str) -> Opt {
    Opt {
        name,
        value: Value::Required,
        safe: true,
    }
}

pub const fn attached(name: &'static str) -> Opt {
    Opt {
        name,
        value: Value::Attached,
        safe: true,
    }
}

pub const fn optional(name: &'static str) -> Opt {
    Opt {
        name,
        value: Value::Optional,
        safe: true,
    }
}

/// An option that writes, executes or otherwise disqualifies the command.
pub const fn unsafe_opt(name: &'static str, value: Value) -> Opt {
    Opt {
        name,
        value,
        safe: false,
    }
}

/// How a tool reads its command line.
#[derive(Debug, Clone, Copy)]
pub struct Syntax {
    /// Short options by letter (name is the letter), long options by name (without `--`).
    pub short: &'static [Opt],
    pub long: &'static [Opt],
    /// GNU `getopt_long`: a unique prefix of a long option is that option.
    pub abbreviations: bool,
    /// `tree`: each value-taking letter of a cluster takes the next word in turn (`-Lo 1 out`)
    /// instead of the rest of the cluster.
    pub cluster_values_from_next_words: bool,
    /// `-5` is a number option (`git log -5`, context lines of `git grep -3`).
    pub numeric: bool,
}

impl Syntax {
    pub const fn gnu(short: &'static [Opt], long: &'static [Opt]) -> Self {
        Self {
            short,
            long,
            abbreviations: true,
            cluster_values_from_next_words: false,
            numeric: false,
        }
    }

    /// Exact long names only (git, ripgrep, tree).
    pub const fn exact(short: &'static [Opt], long: &'static [Opt]) -> Self {
        Self {
            short,
            long,
            abbreviations: false,
            cluster_values_from_next_words: false,
            numeric: false,
        }
    }

    pub const fn with_numeric(mut self) -> Self {
        self.numeric = true;
        self
    }

    pub const fn tree_clusters(mut self) -> Self {
        self.cluster_values_from_next_words = true;
        self
    }
}

/// The arguments of one command, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Options in order: the table name (`o`, `output`) and the value if any.
    pub options: Vec<(&'static str, Option<String>)>,
    pub operands: Vec<String>,
    /// An option came after an operand (meaningful when `POSIXLY_CORRECT` would stop there).
    pub option_after_operand: bool,
}

impl Parsed {
    /// The values given to any of these options.
    pub fn values<'a>(&'a self, names: &'a [&str]) -> impl Iterator<Item = &'a str> + 'a {
        self.options
            .iter()
            .filter(move |(name, _)| names.contains(name))
            .filter_map(|(_, value)| value.as_deref())
    }
}

/// Reads `args` with `syntax`; `None` when any option is unknown, ambiguous, malformed or
/// not safe: then the command is not known-safe.
pub fn parse_safe(syntax: &Syntax, args: &[String]) -> Option<Parsed> {
    let mut parsed = Parsed::default();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            parsed.operands.extend(words.by_ref().cloned());
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_string())),
                None => (long, None),
            };
            let opt = resolve_long(syntax, name)?;
            let value = match (opt.value, inline) {
                (Value::No, Some(_)) => return None,
                (Value::No, None) => None,
                (_, Some(value)) => Some(value),
                (Value::Required, None) => Some(words.next()?.clone()),
                (Value::Attached, None) => return None,
                (Value::Optional, None) => None,
            };
            record(&mut parsed, opt, value)?;
            continue;
        }
        let cluster = match word.strip_prefix('-') {
            Some(cluster) if !cluster.is_empty() => cluster,
            _ => {
                parsed.operands.push(word.clone());
                continue;
            }
        };
        if syntax.numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
            parsed.options.push(("<number>", Some(cluster.to_string())));
            parsed.option_after_operand |= !parsed.operands.is_empty();
            continue;
        }
        for (at, letter) in cluster.char_indices() {
            let opt = syntax
                .short
                .iter()
                .find(|o| o.name.chars().eq(std::iter::once(letter)))?;
            let rest = &cluster[at + letter.len_utf8()..];
            let value = match opt.value {
                Value::No => None,
                _ if syntax.cluster_values_from_next_words => match opt.value {
                    Value::Required => Some(words.next()?.clone()),
                    _ => return None,
                },
                Value::Optional => Some(rest.to_string()).filter(|r| !r.is_empty()),
                Value::Required | Value::Attached if !rest.is_empty() => Some(rest.to_string()),
                Value::Required => Some(words.next()?.clone()),
                Value::Attached => return None,
            };
            let took_rest = value.is_some() && !syntax.cluster_values_from_next_words;
            record(&mut parsed, opt, value)?;
            if took_rest {
                break;
            }
        }
    }
    Some(parsed)
}

fn record(parsed: &mut Parsed, opt: &Opt, value: Option<String>) -> Option<()> {
    if !opt.safe {
        return None;
    }
    parsed.option_after_operand |= !parsed.operands.is_empty();
    parsed.options.push((opt.name, value));
    Some(())
}

/// The long option `name` names: exact, else (GNU) the only option it is a prefix of.
fn resolve_long<'a>(syntax: &'a Syntax, name: &str) -> Option<&'a Opt> {
    if name.is_empty() {
        return None;
    }
    if let Some(opt) = syntax.long.iter().find(|o| o.name == name) {
        return Some(opt);
    }
    if !syntax.abbreviations {
        return None;
    }
    let mut candidates = syntax.long.iter().filter(|o| o.name.starts_with(name));
    let first = candidates.next()?;
    // Ambiguous: the tool refuses it, and so do we.
    candidates.next().is_none().then_some(first)
}

#[cfg(test)]
#[path = "option_parse_tests.rs"]
mod tests;
