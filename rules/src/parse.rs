//! Evaluating a `.rules` file: the `prefix_rule` builtin and load-time example checks.

use crate::{PrefixRule, RuleDecision, Rules, RulesError};
use starlark::any::ProvidesStaticType;
use starlark::codemap::FileSpanRef;
use starlark::environment::{GlobalsBuilder, Module};
use starlark::eval::{BeforeStmtFuncDyn, Evaluator};
use starlark::starlark_module;
use starlark::syntax::{AstModule, Dialect};
use starlark::values::list::{ListRef, UnpackList};
use starlark::values::none::NoneType;
use starlark::values::Value;
use std::cell::RefCell;

/// Statements a rules file may execute: real files run a few hundred; a loop that does not
/// end stops here with an error instead of holding the loader.
pub const MAX_STEPS: u64 = 100_000;

/// Counts statements and fails the evaluation when the budget is spent.
struct StepBudget {
    left: u64,
}

impl<'a, 'e: 'a> BeforeStmtFuncDyn<'a, 'e> for StepBudget {
    fn call<'v>(
        &mut self,
        span: FileSpanRef,
        _eval: &mut Evaluator<'v, 'a, 'e>,
    ) -> starlark::Result<()> {
        if self.left == 0 {
            return Err(starlark::Error::new_other(anyhow::anyhow!(
                "{span}: the rules file ran more than {MAX_STEPS} statements (an endless loop?)"
            )));
        }
        self.left -= 1;
        Ok(())
    }
}

/// What the builtins collect while the file runs.
#[derive(Debug, Default, ProvidesStaticType)]
struct Collected {
    rules: Vec<PrefixRule>,
    /// Example failures, with the `file:line` of the offending `prefix_rule` call.
    bad_examples: Vec<(String, String)>,
}

/// Parses and runs one rules file; `name` is used in error locations.
pub fn parse_rules(name: &str, text: &str) -> Result<Rules, RulesError> {
    let ast = AstModule::parse(name, text.to_string(), &Dialect::Extended)
        .map_err(|err| RulesError::Starlark(err.to_string()))?;
    let globals = GlobalsBuilder::standard().with(rule_builtins).build();
    let module = Module::new();
    let collected = RefCell::new(Collected::default());
    {
        let mut eval = Evaluator::new(&module);
        eval.extra = Some(&collected);
        let budget: Box<dyn BeforeStmtFuncDyn> = Box::new(StepBudget { left: MAX_STEPS });
        eval.before_stmt_for_dap(budget.into());
        eval.eval_module(ast, &globals)
            .map_err(|err| RulesError::Starlark(err.to_string()))?;
    }
    let collected = collected.into_inner();
    if let Some((location, message)) = collected.bad_examples.into_iter().next() {
        return Err(RulesError::Example { location, message });
    }
    Ok(Rules {
        rules: collected.rules,
    })
}

fn words(value: Value<'_>, what: &str) -> anyhow::Result<Vec<String>> {
    if let Some(text) = value.unpack_str() {
        return Ok(vec![text.to_string()]);
    }
    let list = ListRef::from_value(value).ok_or_else(|| {
        anyhow::anyhow!(
            "{what} must be a string or a list of strings (got {})",
            value.get_type()
        )
    })?;
    list.content()
        .iter()
        .map(|v| {
            v.unpack_str()
                .map(str::to_string)
                .ok_or_else(|| anyhow::anyhow!("{what} must hold strings (got {})", v.get_type()))
        })
        .collect()
}

/// An example is argv as a list, or a shell-quoted string.
fn example(value: Value<'_>) -> anyhow::Result<Vec<String>> {
    let argv = match value.unpack_str() {
        Some(text) => shlex::split(text)
            .ok_or_else(|| anyhow::anyhow!("example `{text}` is not valid shell quoting"))?,
        None => words(value, "an example")?,
    };
    if argv.is_empty() {
        anyhow::bail!("an example cannot be empty");
    }
    Ok(argv)
}

#[starlark_module]
fn rule_builtins(builder: &mut GlobalsBuilder) {
    fn prefix_rule<'v>(
        pattern: UnpackList<Value<'v>>,
        decision: Option<&'v str>,
        r#match: Option<UnpackList<Value<'v>>>,
        not_match: Option<UnpackList<Value<'v>>>,
        justification: Option<&'v str>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<NoneType> {
        let decision = match decision {
            Some(raw) => RuleDecision::parse(raw).map_err(anyhow::Error::msg)?,
            None => RuleDecision::Allow,
        };
        if justification.is_some_and(|j| j.trim().is_empty()) {
            anyhow::bail!("justification cannot be empty");
        }
        let pattern = pattern
            .items
            .into_iter()
            .map(|v| words(v, "a pattern element"))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if pattern.is_empty() || pattern.iter().any(Vec::is_empty) {
            anyhow::bail!("pattern cannot be empty, nor hold an empty list of alternatives");
        }
        let rule = PrefixRule {
            pattern,
            decision,
            justification: justification.map(str::to_string),
        };
        let location = eval.call_stack_top_location().map_or_else(
            || "rules file".into(),
            |span| {
                let pos = span.resolve_span();
                format!("{}:{}", span.filename(), pos.begin.line + 1)
            },
        );
        let mut bad = Vec::new();
        for ex in r#match.map(|l| l.items).unwrap_or_default() {
            let argv = example(ex)?;
            if !rule.matches(&argv) {
                bad.push(format!("`match` example {argv:?} does not match the rule"));
            }
        }
        for ex in not_match.map(|l| l.items).unwrap_or_default() {
            let argv = example(ex)?;
            if rule.matches(&argv) {
                bad.push(format!("`not_match` example {argv:?} matches the rule"));
            }
        }
        let cell = eval
            .extra
            .and_then(|extra| extra.downcast_ref::<RefCell<Collected>>())
            .ok_or_else(|| anyhow::anyhow!("prefix_rule called outside a rules file"))?;
        let mut collected = cell.borrow_mut();
        collected
            .bad_examples
            .extend(bad.into_iter().map(|message| (location.clone(), message)));
        collected.rules.push(rule);
        Ok(NoneType)
    }
}
