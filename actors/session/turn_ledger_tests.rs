use super::TurnLedger;

#[test]
fn an_end_delivered_before_the_turns_messages_waits_for_them() {
    let mut ledger = TurnLedger::default();
    ledger.handled_one();
    // The end overtook two of the turn's messages (a tool call's exec end, an item).
    ledger.ended_after(3);
    assert!(!ledger.settled());
    ledger.handled_one();
    assert!(!ledger.settled());
    ledger.handled_one();
    assert!(ledger.settled());
}

#[test]
fn an_end_after_every_message_settles_at_once() {
    let mut ledger = TurnLedger::default();
    ledger.handled_one();
    ledger.handled_one();
    assert!(!ledger.settled(), "a running turn is never settled");
    ledger.ended_after(2);
    assert!(ledger.settled());
}

#[test]
fn a_turn_that_sent_nothing_settles_when_it_ends() {
    let mut ledger = TurnLedger::default();
    ledger.ended_after(0);
    assert!(ledger.settled());
}
