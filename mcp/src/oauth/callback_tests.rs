use super::*;
use pretty_assertions::assert_eq;

#[test]
fn a_callback_carries_code_and_state() {
    assert_eq!(
        parse_callback("/callback?code=abc%2F1&state=xyz"),
        CallbackOutcome::Code {
            code: "abc/1".into(),
            state: "xyz".into()
        }
    );
}

#[test]
fn other_paths_and_empty_queries_are_invalid() {
    for target in [
        "/callback",
        "/other?code=a&state=b",
        "/callback?code=a",
        "/",
    ] {
        assert_eq!(parse_callback(target), CallbackOutcome::Invalid, "{target}");
    }
}

#[test]
fn a_provider_error_is_reported() {
    let outcome = parse_callback("/callback?error=access_denied&error_description=no%20way");
    assert_eq!(
        outcome,
        CallbackOutcome::ProviderError {
            error: Some("access_denied".into()),
            description: Some("no way".into())
        }
    );
}

#[tokio::test]
async fn only_the_callback_with_this_logins_state_ends_the_wait() {
    let listener = CallbackListener::bind().await.unwrap();
    let redirect = listener.redirect_uri();
    let waiting = tokio::spawn(async move { listener.wait_for_code("right").await });
    let get = |query: &'static str| {
        let target = format!("{redirect}?{query}");
        async move {
            let url = url::Url::parse(&target).unwrap();
            let addr = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
            let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            let request = format!(
                "GET {}?{} HTTP/1.1\r\nhost: x\r\n\r\n",
                url.path(),
                url.query().unwrap()
            );
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).await.unwrap();
            answer
        }
    };
    let refused = get("code=c1&state=wrong").await;
    assert!(refused.starts_with("HTTP/1.1 400"), "{refused}");
    let accepted = get("code=c2&state=right").await;
    assert!(accepted.starts_with("HTTP/1.1 200"), "{accepted}");
    assert_eq!(waiting.await.unwrap().unwrap(), "c2");
}

#[tokio::test]
async fn no_callback_in_time_is_a_timeout_error() {
    let listener = CallbackListener::bind().await.unwrap();
    let err = listener
        .wait_for_code_within("state", Duration::from_millis(100))
        .await
        .unwrap_err();
    assert!(matches!(err, OAuthError::CallbackTimeout { .. }), "{err}");
    assert!(err.to_string().contains("timed out"), "{err}");
}
