//! More of [`App`]: `/model`. Without a name it opens a picker of the models the provider
//! lists (`GET /models`) with a reasoning-effort choice; with a name it switches only when
//! the provider lists that model, or when the provider's list cannot be had (then with a
//! warning: the switch is unchecked).

use super::{override_op, Action, App, Overlay};
use crossterm::event::{KeyCode, KeyEvent};

/// The efforts offered: `None` leaves `reasoning.effort` out of the request (the model's own
/// default), as when `model_reasoning_effort` is not configured.
pub const EFFORTS: [Option<&str>; 5] = [
    None,
    Some("minimal"),
    Some("low"),
    Some("medium"),
    Some("high"),
];

/// The `/model` picker's state.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelPicker {
    pub models: Vec<String>,
    pub selected: usize,
    /// Index into [`EFFORTS`].
    pub effort: usize,
}

/// What `/model` asked for, waiting for the provider's list.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelRequest {
    /// `/model`: open the picker.
    Pick,
    /// `/model NAME`: switch to it if listed.
    Switch(String),
}

impl App {
    pub(super) fn model_command(&mut self, arg: &str) -> Vec<Action> {
        let request = match arg.split_whitespace().next() {
            None => ModelRequest::Pick,
            Some(name) => ModelRequest::Switch(name.to_string()),
        };
        vec![Action::ListModels {
            client: self.threads[self.current].client,
            request,
        }]
    }

    /// The provider's model list arrived (`Err`: it has none, or could not be reached).
    pub fn models_listed(
        &mut self,
        client: usize,
        request: ModelRequest,
        listed: Result<Vec<String>, String>,
    ) -> Vec<Action> {
        let listed = listed.and_then(|models| match models.is_empty() {
            true => Err("the provider listed no model".to_string()),
            false => Ok(models),
        });
        match (request, listed) {
            (ModelRequest::Pick, Ok(models)) => {
                let selected = models
                    .iter()
                    .position(|m| *m == self.status.model)
                    .unwrap_or(0);
                let effort = EFFORTS
                    .iter()
                    .position(|e| e.map(str::to_string) == self.status.effort)
                    .unwrap_or(0);
                self.overlay = Overlay::Models(ModelPicker {
                    models,
                    selected,
                    effort,
                });
                Vec::new()
            }
            (ModelRequest::Pick, Err(err)) => {
                self.info(format!(
                    "model: {} · the provider's model list is not available ({err}); /model NAME switches without checking",
                    self.status.model
                ));
                Vec::new()
            }
            (ModelRequest::Switch(name), Ok(models)) if !models.contains(&name) => {
                let mut shown: Vec<&str> = models.iter().take(8).map(String::as_str).collect();
                if models.len() > shown.len() {
                    shown.push("…");
                }
                self.info(format!(
                    "unknown model `{name}`: the provider lists {}; the model stays {} (/model opens the picker)",
                    shown.join(", "),
                    self.status.model
                ));
                Vec::new()
            }
            (ModelRequest::Switch(name), listed) => {
                if let Err(err) = listed {
                    self.info(format!(
                        "warning: the provider's model list is not available ({err}); `{name}` is not checked, turns may fail"
                    ));
                }
                self.status.model = name.clone();
                self.info(format!("model set to {name} for the next turns"));
                vec![Action::Submit {
                    client,
                    op: override_op(Some(name), None, None),
                }]
            }
        }
    }

    pub(super) fn model_picker_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Overlay::Models(picker) = &mut self.overlay else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up => picker.selected = picker.selected.saturating_sub(1),
            KeyCode::Down => {
                picker.selected = (picker.selected + 1).min(picker.models.len().saturating_sub(1))
            }
            KeyCode::Left => picker.effort = picker.effort.saturating_sub(1),
            KeyCode::Right | KeyCode::Tab => picker.effort = (picker.effort + 1) % EFFORTS.len(),
            KeyCode::Esc => self.overlay = Overlay::None,
            KeyCode::Enter => {
                let model = picker.models[picker.selected].clone();
                let effort = EFFORTS[picker.effort].map(str::to_string);
                self.overlay = Overlay::None;
                self.status.model = model.clone();
                self.status.effort = effort.clone();
                self.info(format!(
                    "model set to {model} ({}) for the next turns",
                    effort_label(effort.as_deref())
                ));
                return vec![Action::SetModel {
                    client: self.threads[self.current].client,
                    model,
                    effort,
                }];
            }
            _ => {}
        }
        Vec::new()
    }
}

/// How an effort reads in the picker and the notices.
pub fn effort_label(effort: Option<&str>) -> &str {
    effort.unwrap_or("default effort")
}
