//! `request_user_input {questions}`: the model asks the person one to three questions with
//! options (Codex 0.169's spec). As in Codex, only plan mode offers it to be answered: in
//! default mode the call gets Codex's refusal. In plan mode the questions go to the frontend
//! as a `RequestUserInput` event and the call waits for `Op::UserInputAnswer` (the TUI shows
//! an overlay, the app-server sends `item/tool/requestUserInput`, `exec` answers with the
//! recommended options and says so). The answers go back as `{"answers":{id:{"answers":[…]}}}`.

use crate::tool_orchestrator::contract::parse_args as parse;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use troupe_messages::events::EventMsg;
use troupe_messages::policy::CollaborationMode;
use troupe_messages::questions::{UserInputAnswers, UserQuestion};
use troupe_messages::tools::ToolSpec;

/// Handler of `request_user_input`.
pub struct RequestUserInputHandler;

/// Most questions one call may ask (the spec says "do not exceed 3").
const MAX_QUESTIONS: usize = 3;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestUserInputArgs {
    questions: Vec<UserQuestion>,
}

impl ToolHandler for RequestUserInputHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "request_user_input".into(),
            description: "Request user input for one to three short questions and wait for the \
                          response. This tool is only available in Plan mode."
                .into(),
            strict: false,
            parameters: json!({
                "type": "object",
                "properties": {
                    "questions": {
                        "type": "array",
                        "description": "Questions to show the user. Prefer 1 and do not exceed 3",
                        "items": {
                            "type": "object",
                            "properties": {
                                "header": {
                                    "type": "string",
                                    "description": "Short header label shown in the UI (12 or fewer chars)."
                                },
                                "id": {
                                    "type": "string",
                                    "description": "Stable identifier for mapping answers (snake_case)."
                                },
                                "options": {
                                    "type": "array",
                                    "description": "Provide 2-3 mutually exclusive choices. Put the recommended option first and suffix its label with \"(Recommended)\". Do not include an \"Other\" option in this list; the client will add a free-form \"Other\" option automatically.",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "description": {
                                                "type": "string",
                                                "description": "One short sentence explaining impact/tradeoff if selected."
                                            },
                                            "label": {
                                                "type": "string",
                                                "description": "User-facing label (1-5 words)."
                                            }
                                        },
                                        "required": [
                                            "label",
                                            "description"
                                        ],
                                        "additionalProperties": false
                                    }
                                },
                                "question": {
                                    "type": "string",
                                    "description": "Single-sentence prompt shown to the user."
                                }
                            },
                            "required": [
                                "id",
                                "header",
                                "question",
                                "options"
                            ],
                            "additionalProperties": false
                        }
                    }
                },
                "required": [
                    "questions"
                ],
                "additionalProperties": false
            }),
        }
    }

    fn concurrency(&self) -> Concurrency {
        // One question at a time: the person answers them in order.
        Concurrency::Exclusive
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async move {
            if ctx.settings.context.collaboration_mode != CollaborationMode::Plan {
                // Codex 0.169's answer outside plan mode, word for word.
                return ToolOutcome::error("request_user_input is unavailable in Default mode");
            }
            let args: RequestUserInputArgs = match parse("request_user_input", &ctx.call.payload) {
                Ok(args) => args,
                Err(message) => return ToolOutcome::error(message),
            };
            if let Err(message) = check_questions(&args.questions) {
                return ToolOutcome::error(format!(
                    "invalid arguments for request_user_input: {message}"
                ));
            }
            let answer = ctx.pending.register_question(&ctx.call.call_id);
            ctx.services.tell(EventMsg::RequestUserInput {
                call_id: ctx.call.call_id.clone(),
                questions: args.questions.clone(),
            });
            match answer.await {
                Ok(answers) => ToolOutcome::ok(answers_output(&answers)),
                Err(_) => ToolOutcome::error("the questions were not answered: the turn ended"),
            }
        })
    }
}

/// What makes a set of questions unusable; the message names it.
pub fn check_questions(questions: &[UserQuestion]) -> Result<(), String> {
    if questions.is_empty() {
        return Err("`questions` is empty; ask at least one".into());
    }
    if questions.len() > MAX_QUESTIONS {
        return Err(format!(
            "{} questions; ask at most {MAX_QUESTIONS}",
            questions.len()
        ));
    }
    let mut ids = std::collections::BTreeSet::new();
    for question in questions {
        if question.id.trim().is_empty() || question.question.trim().is_empty() {
            return Err("every question needs a non-empty `id` and `question`".into());
        }
        if !ids.insert(question.id.as_str()) {
            return Err(format!("two questions have the id `{}`", question.id));
        }
        if question.options.iter().any(|o| o.label.trim().is_empty()) {
            return Err(format!(
                "question `{}` has an option without a label",
                question.id
            ));
        }
    }
    Ok(())
}

/// The tool's output: the answers as Codex's app-server response carries them.
pub fn answers_output(answers: &UserInputAnswers) -> String {
    json!({ "answers": answers }).to_string()
}

/// The answers a person who cannot be asked gives (`exec`): each question's first option,
/// the recommended one by the spec's convention, or nothing when it has none.
pub fn recommended_answers(questions: &[UserQuestion]) -> UserInputAnswers {
    questions
        .iter()
        .map(|q| {
            let answers = q
                .options
                .first()
                .map(|o| o.label.clone())
                .into_iter()
                .collect();
            (
                q.id.clone(),
                troupe_messages::questions::QuestionAnswer { answers },
            )
        })
        .collect()
}

#[cfg(test)]
#[path = "request_user_input_tests.rs"]
mod tests;
