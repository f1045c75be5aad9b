//! Runs the `mock-model` binary the way benchmarks do: read the `listening`
//! line, drive a two-step conversation over HTTP, check the request log.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

struct Kill(std::process::Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn events(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

#[tokio::test]
async fn binary_serves_auto_mode() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("mock-model-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let log = dir.join("requests.log");
    let mut child = Kill(
        Command::new(env!("CARGO_BIN_EXE_mock-model"))
            .args(["--port", "0", "--tool-calls", "1", "--command", "echo hi"])
            .args(["--answer-bytes", "64", "--answer-deltas", "4", "--log"])
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()?,
    );
    let stdout = child.0.stdout.take().ok_or("no stdout")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let base = line
        .trim()
        .strip_prefix("listening ")
        .ok_or("bad line")?
        .to_owned();
    assert!(
        base.starts_with("http://127.0.0.1:") && base.ends_with("/v1"),
        "{base}"
    );

    let client = reqwest::Client::new();
    let tools = json!([{"type": "function", "name": "shell"}]);
    let text = client
        .post(format!("{base}/responses"))
        .json(&json!({"input": [], "tools": tools}))
        .send()
        .await?
        .text()
        .await?;
    let call = events(&text)
        .into_iter()
        .find(|e| e["item"]["type"] == "function_call")
        .ok_or("no call")?;
    assert_eq!(
        call["item"]["arguments"],
        json!({"command": ["sh", "-c", "echo hi"]}).to_string()
    );

    let input = json!([{"type": "function_call_output", "call_id": "call_0_0", "output": "hi"}]);
    let text = client
        .post(format!("{base}/responses"))
        .json(&json!({"input": input, "tools": tools}))
        .send()
        .await?
        .text()
        .await?;
    let evs = events(&text);
    let deltas = evs
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .count();
    assert_eq!(deltas, 4);

    let logged = std::fs::read_to_string(&log)?;
    assert_eq!(logged.lines().count(), 2);
    assert!(logged
        .lines()
        .nth(1)
        .is_some_and(|l| l.contains("tool_outputs=1")));
    // Each line also times the request and its streamed body (Unix-epoch nanoseconds).
    for (line, items) in logged.lines().zip([0, 1]) {
        let field = |key: &str| -> Option<u128> {
            line.split(' ')
                .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))?
                .parse()
                .ok()
        };
        assert!(line.contains(&format!(" input_items={items} ")), "{line}");
        let (recv, first, last) = (
            field("recv_ns"),
            field("first_byte_ns"),
            field("last_byte_ns"),
        );
        assert!(
            matches!((recv, first, last), (Some(r), Some(f), Some(l)) if r <= f && f <= l),
            "{line}"
        );
        assert!(field("body_bytes").is_some_and(|b| b > 0), "{line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
