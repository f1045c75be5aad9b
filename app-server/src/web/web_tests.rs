use super::*;

fn head(text: &str) -> RequestHead {
    RequestHead::parse(text.as_bytes()).expect("a request head")
}

fn response_text(page: &WebPage, request: &str) -> String {
    String::from_utf8_lossy(&page.respond(&head(request))).into_owned()
}

fn loopback_page() -> WebPage {
    WebPage::new("127.0.0.1:4500".parse().expect("addr"))
}

#[test]
fn the_page_comes_with_a_strict_policy_and_nosniff() {
    let text = response_text(&loopback_page(), "GET / HTTP/1.1\r\nHost: 127.0.0.1:4500");
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.contains("Content-Type: text/html; charset=utf-8\r\n"));
    assert!(text.contains("X-Content-Type-Options: nosniff\r\n"));
    assert!(text.contains("Referrer-Policy: no-referrer\r\n"));
    let csp = text
        .lines()
        .find_map(|l| l.strip_prefix("Content-Security-Policy: "))
        .expect("a CSP header");
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self' ws://127.0.0.1:4500 ws://localhost:4500",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
    ] {
        assert!(csp.contains(directive), "{directive} missing in {csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
}

#[test]
fn every_module_is_served_as_javascript_and_unknown_paths_are_404() {
    let page = loopback_page();
    for path in [
        "/app.js",
        "/rpc.js",
        "/state.js",
        "/render.js",
        "/markdown.js",
        "/views.js",
        "/labels.js",
    ] {
        let text = response_text(
            &page,
            &format!("GET {path} HTTP/1.1\r\nHost: localhost:4500"),
        );
        assert!(text.starts_with("HTTP/1.1 200 OK"), "{path}: {text:.80}");
        assert!(text.contains("Content-Type: text/javascript"), "{path}");
    }
    let missing = response_text(
        &page,
        "GET /../../etc/passwd HTTP/1.1\r\nHost: localhost:4500",
    );
    assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
    let posted = response_text(&page, "POST / HTTP/1.1\r\nHost: localhost:4500");
    assert!(posted.starts_with("HTTP/1.1 405"), "{posted}");
}

#[test]
fn a_foreign_host_is_refused_against_dns_rebinding() {
    let text = response_text(
        &loopback_page(),
        "GET / HTTP/1.1\r\nHost: evil.example:4500",
    );
    assert!(text.starts_with("HTTP/1.1 421"), "{text}");
}

#[test]
fn the_page_origins_are_the_bound_address_and_localhost() {
    assert_eq!(
        loopback_page().own_origins(),
        vec!["http://127.0.0.1:4500", "http://localhost:4500"]
    );
}

#[test]
fn the_token_travels_percent_encoded_in_the_fragment_only() {
    let url = page_url("127.0.0.1:9".parse().expect("addr"), "a b/c#d");
    assert_eq!(url, "http://127.0.0.1:9/#token=a%20b%2Fc%23d");
}

#[test]
fn heads_parse_and_upgrades_are_recognised() {
    let upgrade = head("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: WebSocket\r\nConnection: Upgrade");
    assert!(upgrade.is_websocket_upgrade());
    assert_eq!(upgrade.header("host"), Some("x"));
    assert!(!head("GET / HTTP/1.1\r\nHost: x").is_websocket_upgrade());
    assert!(RequestHead::parse(b"\x16\x03\x01 garbage").is_none());
    assert!(RequestHead::parse(b"GET / SPDY/3").is_none());
}

#[tokio::test]
async fn route_puts_an_upgrade_head_back_in_front_of_the_stream() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut client, server) = tokio::io::duplex(64 * 1024);
    let request = "GET / HTTP/1.1\r\nHost: 127.0.0.1:4500\r\nUpgrade: websocket\r\n\r\nrest";
    client.write_all(request.as_bytes()).await.expect("write");
    let routed = route(server, &loopback_page()).await.expect("routed");
    let Routed::Upgrade(mut stream) = routed else {
        panic!("an upgrade is handed on");
    };
    let mut replayed = vec![0u8; request.len()];
    stream.read_exact(&mut replayed).await.expect("replayed");
    assert_eq!(String::from_utf8_lossy(&replayed), request);
}

#[tokio::test]
async fn route_answers_a_page_request_and_closes() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut client, server) = tokio::io::duplex(1024 * 1024);
    client
        .write_all(b"GET /style.css HTTP/1.1\r\nHost: 127.0.0.1:4500\r\n\r\n")
        .await
        .expect("write");
    let routed = route(server, &loopback_page()).await.expect("routed");
    assert!(matches!(routed, Routed::Served));
    let mut answer = String::new();
    client.read_to_string(&mut answer).await.expect("read");
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer:.80}");
    assert!(answer.contains("text/css"));
}
