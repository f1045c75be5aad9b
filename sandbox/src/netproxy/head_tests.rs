use super::*;
use pretty_assertions::assert_eq;

#[test]
fn connect_names_a_tunnel() {
    let r = parse(b"CONNECT Api.Example.test:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert_eq!(
        (r.host.as_str(), r.port, r.tunnel),
        ("api.example.test", 443, true)
    );
    let r = parse(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!((r.host.as_str(), r.port), ("::1", 8443));
}

#[test]
fn absolute_uris_are_rewritten_to_origin_form() {
    let r = parse(
        b"GET http://example.test:8080/a?b=1 HTTP/1.1\r\nHost: example.test:8080\r\n\
          Proxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n",
    )
    .unwrap();
    assert_eq!(
        (r.host.as_str(), r.port, r.tunnel),
        ("example.test", 8080, false)
    );
    assert_eq!(
        String::from_utf8(r.upstream_head).unwrap(),
        "GET /a?b=1 HTTP/1.1\r\nHost: example.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    );
    let r = parse(b"GET http://example.test HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(r.port, 80);
    assert!(String::from_utf8(r.upstream_head)
        .unwrap()
        .starts_with("GET / HTTP/1.0\r\n"));
}

#[test]
fn everything_else_is_refused() {
    for head in [
        &b"GET /local HTTP/1.1\r\n\r\n"[..],
        b"GET https://example.test/ HTTP/1.1\r\n\r\n",
        b"CONNECT example.test HTTP/1.1\r\n\r\n",
        b"CONNECT example.test:0 HTTP/1.1\r\n\r\n",
        b"CONNECT exa mple:443 HTTP/1.1\r\n\r\n",
        b"CONNECT bad/host:443 HTTP/1.1\r\n\r\n",
        b"GET http://user:pw@example.test/ HTTP/1.1\r\n\r\n",
        b"GET http://example.test/ HTTP/2\r\n\r\n",
        b"\xff\xfe\r\n\r\n",
    ] {
        assert!(parse(head).is_err(), "{:?}", String::from_utf8_lossy(head));
    }
    assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nrest"), Some(18));
    assert_eq!(head_end(b"GET / HTTP/1.1\r\n"), None);
}
