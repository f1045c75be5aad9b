//! Carrying out the app's actions against the runtime: ops, forks, opened rollouts,
//! history, pickers.

use super::*;

impl Runner {
    /// Carries out one action; true when the app should exit.
    pub(super) async fn perform(&mut self, app: &mut App, action: Action) -> bool {
        match action {
            Action::Submit { client, op } => self.submit(app, client, op),
            Action::Quit => return true,
            Action::NewThread => {
                let opened = self
                    .launch
                    .runtime
                    .start_thread(self.current_settings(app))
                    .await;
                self.opened(app, opened, "new thread", true);
            }
            Action::ListModels { client, request } => {
                tasks::list_models(&self.launch, client, request, &self.background_tx)
            }
            Action::SetModel {
                client,
                model,
                effort,
            } => {
                let update = tasks::model_update(self.current_settings(app), model, effort);
                self.submit(app, client, Op::UpdateTurnSettings { update });
            }
            Action::Resume(path) => self.open_rollout(app, path, "resumed").await,
            Action::RecordHistory { session_id, text } => {
                if let Some(record) = self.launch.history.record.clone() {
                    let tx = self.background_tx.clone();
                    tokio::task::spawn_blocking(move || {
                        if let Err(err) = record(&session_id, &text) {
                            let _ = tx.send(Background::Warning(format!(
                                "the prompt history was not saved: {err}"
                            )));
                        }
                    });
                }
            }
            Action::EditFrom { thread, turn, text } => {
                // Turn 1's message: nothing comes before it, the edit starts a new thread.
                if turn <= 1 {
                    let opened = self
                        .launch
                        .runtime
                        .start_thread(self.current_settings(app))
                        .await;
                    self.opened(app, opened, "edit", true);
                } else {
                    match self.fork(thread, Some(turn - 1)).await {
                        Ok(path) => self.open_rollout(app, path, "edit").await,
                        Err(err) => {
                            app.info(format!("cannot fork: {err}"));
                            return false;
                        }
                    }
                }
                app.composer.set_text(&text);
            }
            Action::RewindTurns { client, thread } => self.rewind_turns(client, thread),
            Action::RewindPreview { thread, turn, mode } => {
                self.rewind_preview(app, thread, turn, mode)
            }
            Action::Rewind {
                client,
                thread,
                turn,
                mode,
                force,
                prompt,
            } => {
                self.rewind(
                    app,
                    rewind::RewindArgs {
                        client,
                        thread,
                        turn,
                        mode,
                        force,
                        prompt,
                    },
                )
                .await
            }
            Action::Fork(id) => match self.fork(id, None).await {
                Ok(path) => self.open_rollout(app, path, "fork").await,
                Err(err) => app.info(format!("cannot fork: {err}")),
            },
            Action::ListThreads => {
                let (home, store) = (self.launch.home.clone(), self.launch.store.clone());
                let listed =
                    tokio::task::spawn_blocking(move || list_threads(&home, store.as_deref()))
                        .await;
                match listed {
                    Ok(Ok(mut items)) => {
                        items.retain(|t| !self.opened_ids.contains(&t.id));
                        app.open_picker(items)
                    }
                    Ok(Err(err)) => app.info(format!("cannot list threads: {err}")),
                    Err(err) => app.info(format!("cannot list threads: {err}")),
                }
            }
            Action::WorkTreeDiff => {
                tasks::work_tree_diff(&self.launch.settings, &self.background_tx)
            }
            Action::Review { client, target } => {
                tasks::review(&self.launch.settings, client, target, &self.background_tx)
            }
            Action::InitAgentsMd => {
                let path = self.launch.settings.cwd.join("AGENTS.md");
                let written =
                    tokio::task::spawn_blocking(move || write_agents_md(&path).map(|()| path))
                        .await;
                match written {
                    Ok(Ok(path)) => app.info(format!("wrote {}", path.display())),
                    Ok(Err(err)) => app.info(format!("cannot write AGENTS.md: {err}")),
                    Err(err) => app.info(format!("cannot write AGENTS.md: {err}")),
                }
            }
        }
        false
    }

    /// A copy of thread `id` through turn `at_turn` (all of it when `None`): its rollout.
    async fn fork(&self, id: ThreadId, at_turn: Option<u64>) -> Result<PathBuf, String> {
        let (home, store) = (self.launch.home.clone(), self.launch.store.clone());
        let forked = tokio::task::spawn_blocking(move || {
            ops::fork(&home, store.as_deref(), &id.to_string(), at_turn)
        })
        .await;
        match forked {
            Ok(Ok(summary)) => Ok(summary.rollout_path),
            Ok(Err(err)) => Err(err.to_string()),
            Err(err) => Err(err.to_string()),
        }
    }

    /// Opens the recorded thread at `path` with its transcript replayed on screen.
    async fn open_rollout(&mut self, app: &mut App, path: PathBuf, label: &str) {
        let view = replayed(app, path.clone()).await;
        let opened = self
            .launch
            .runtime
            .resume_thread(self.launch.settings.clone(), path)
            .await;
        match opened {
            Ok(client) => {
                let index = self.attach(client);
                let roots = app.threads.iter().filter(|t| !t.is_agent).count();
                app.add_root_with(index, format!("{label} {}", roots + 1), view);
            }
            Err(err) => app.info(format!("cannot open the thread: {err}")),
        }
    }
}
