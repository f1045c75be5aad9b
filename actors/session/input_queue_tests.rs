use super::input_queue::InputQueue;
use troupe_messages::ops::UserInput;

fn text(t: &str) -> Vec<UserInput> {
    vec![UserInput::Text { text: t.into() }]
}

#[test]
fn consumed_input_is_dropped_and_the_rest_kept_in_order() {
    let mut queue = InputQueue::default();
    let a = queue.push(text("a"));
    let _b = queue.push(text("b"));
    let _c = queue.push(text("c"));
    queue.consumed_up_to(a);
    assert_eq!(queue.take_all(), [text("b"), text("c")].concat());
    assert!(queue.is_empty());
}

#[test]
fn numbers_keep_growing_after_take() {
    let mut queue = InputQueue::default();
    let first = queue.push(text("a"));
    queue.take_all();
    let second = queue.push(text("b"));
    assert!(second > first);
    queue.consumed_up_to(first);
    assert_eq!(queue.take_all(), text("b"));
}
