//! Event subscribers: bounded channels. Deltas are dropped for a lagging subscriber (it gets
//! a notice of how many); every other event waits briefly for room, and a subscriber that
//! stays full that long is dropped, so one stuck client cannot stall the thread forever.

use std::time::Duration;
use tokio::sync::mpsc;
use troupe_messages::events::{Event, EventMsg};

/// How long a non-droppable event waits for room.
const SEND_PATIENCE: Duration = Duration::from_secs(5);

struct Subscriber {
    sender: mpsc::Sender<Event>,
    /// Deltas dropped since the last successful send.
    lagged: u64,
}

/// Everyone listening to one thread.
#[derive(Default)]
pub struct Subscribers {
    list: Vec<Subscriber>,
}

impl Subscribers {
    /// Adds a subscriber and sends it the first event.
    pub async fn add(&mut self, sender: mpsc::Sender<Event>, first: Event) {
        if sender.send(first).await.is_ok() {
            self.list.push(Subscriber { sender, lagged: 0 });
        }
    }

    /// Delivers one event to every subscriber.
    pub async fn send(&mut self, event: Event) {
        let droppable = matches!(
            event.msg,
            EventMsg::AgentMessageDelta { .. } | EventMsg::AgentReasoningDelta { .. }
        );
        let mut keep = Vec::with_capacity(self.list.len());
        for mut sub in std::mem::take(&mut self.list) {
            if sub.lagged > 0 && sub.sender.capacity() > 1 {
                let notice = Event {
                    id: event.id.clone(),
                    msg: EventMsg::Warning {
                        message: format!(
                            "{} streaming deltas were dropped: the client fell behind",
                            sub.lagged
                        ),
                    },
                };
                if sub.sender.try_send(notice).is_ok() {
                    sub.lagged = 0;
                }
            }
            let alive = if droppable {
                match sub.sender.try_send(event.clone()) {
                    Ok(()) => true,
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        sub.lagged += 1;
                        true
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => false,
                }
            } else {
                matches!(
                    tokio::time::timeout(SEND_PATIENCE, sub.sender.send(event.clone())).await,
                    Ok(Ok(()))
                )
            };
            if alive {
                keep.push(sub);
            }
        }
        self.list = keep;
    }
}

/// Events that go to the rollout (deltas do not: the finished items carry the same text).
pub fn persisted(msg: &EventMsg) -> bool {
    !matches!(
        msg,
        EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::ItemRecorded { .. }
            | EventMsg::SessionConfigured { .. }
            | EventMsg::ExecCommandBegin { .. }
    )
}
