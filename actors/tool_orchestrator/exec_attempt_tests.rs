use super::format_for_model;
use std::time::Duration;
use troupe_messages::tools::ExecResult;

#[test]
fn model_output_shape() {
    let exec = ExecResult {
        exit_code: None,
        stdout: String::new(),
        stderr: String::new(),
        aggregated_output: "partial".into(),
        truncated_bytes: 0,
        duration: Duration::from_millis(1234),
        timed_out: true,
    };
    let value: serde_json::Value =
        serde_json::from_str(&format_for_model(&exec, Duration::from_millis(1000))).unwrap();
    assert_eq!(value["metadata"]["exit_code"], -1);
    assert_eq!(value["metadata"]["timed_out"], true);
    assert_eq!(value["metadata"]["duration_seconds"], 1.2);
    assert_eq!(
        value["output"],
        "command timed out after 1000 milliseconds\npartial"
    );
}
