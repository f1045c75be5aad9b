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

    /// Delivers one event to every subscriber (the last one gets it without a copy).
    pub async fn send(&mut self, event: Event) {
        let droppable = event.msg.is_delta();
        let mut index = 0;
        let mut event = Some(event);
        while index < self.list.len() {
            let last = index + 1 == self.list.len();
            let this = match (last, event.as_ref()) {
                (true, _) => event.take(),
                (false, Some(e)) => Some(e.clone()),
                (false, None) => None,
            };
            let Some(this) = this else { break };
            let alive = deliver(&mut self.list[index], this, droppable).await;
            if alive {
                index += 1;
            } else {
                self.list.remove(index);
            }
        }
    }
}

/// Sends one event to one subscriber; false when the subscriber is gone.
async fn deliver(sub: &mut Subscriber, event: Event, droppable: bool) -> bool {
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
    if droppable {
        match sub.sender.try_send(event) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                sub.lagged += 1;
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    } else {
        matches!(
            tokio::time::timeout(SEND_PATIENCE, sub.sender.send(event)).await,
            Ok(Ok(()))
        )
    }
}
