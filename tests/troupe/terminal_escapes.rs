//! `troupe exec`'s human output shows terminal control sequences from a command's output
//! and the model's text as visible text (`^[`), never as escapes the terminal would obey
//! (OSC 52 writing the clipboard, OSC 0 retitling, OSC 8 links, screen clears).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

/// The bytes a terminal would act on: ESC, BEL, the C1 CSI (as UTF-8), and a carriage
/// return that would overwrite what was shown.
fn raw_controls(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    text.chars()
        .filter(|c| matches!(c, '\x1b' | '\x07' | '\r' | '\u{9b}'))
        .map(|c| format!("{c:?}"))
        .collect()
}

#[test]
fn escapes_from_commands_and_the_model_reach_the_terminal_as_text() {
    let printed = r"printf '\033]52;c;cHduZWQ=\007\033[2J\033]0;owned\007\033]8;;http://evil.test\033\\link\033]8;;\033\\ \r\302\233H\n'";
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["sh", "-c", printed]),
        MockResponse::text("done\x1b]52;c;bW9kZWw=\x07\x1b[H\x1b[2Jclean\u{9b}2J"),
    ]);
    let out = h.exec(&["--color", "never", "print it"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        raw_controls(&out.stderr),
        Vec::<String>::new(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        raw_controls(&out.stdout),
        Vec::<String>::new(),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("^[]52;c;cHduZWQ=^G^[[2J"), "{stderr}");
    assert!(stderr.contains("^[]8;;http://evil.test"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("done^[]52;c;bW9kZWw=^G^[[H^[[2Jclean<U+009B>2J"),
        "{stdout}"
    );
}
