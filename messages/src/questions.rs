//! `request_user_input`: questions the model asks the person (plan mode), and the answers.
//! Shapes follow Codex 0.169's tool schema and its app-server `item/tool/requestUserInput`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One choice offered for a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuestionOption {
    /// User-facing label (1-5 words); the recommended option comes first.
    pub label: String,
    pub description: String,
}

/// One question to the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserQuestion {
    /// Stable identifier the answer is keyed by.
    pub id: String,
    /// Short label shown in the UI.
    pub header: String,
    pub question: String,
    /// 2-3 mutually exclusive choices; the person may also answer in free form.
    pub options: Vec<QuestionOption>,
}

/// The answer to one question: the chosen labels or the free-form text.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QuestionAnswer {
    pub answers: Vec<String>,
}

/// Answers by question id.
pub type UserInputAnswers = BTreeMap<String, QuestionAnswer>;
