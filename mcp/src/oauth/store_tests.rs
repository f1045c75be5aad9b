use super::*;
use pretty_assertions::assert_eq;
use std::os::unix::fs::PermissionsExt;

fn tokens(server: &ServerKey, access: &str) -> StoredTokens {
    StoredTokens {
        server_name: server.name.clone(),
        server_url: server.url.clone(),
        client_id: "client-1".into(),
        access_token: access.into(),
        refresh_token: Some("refresh-1".into()),
        expires_at: Some(10_000),
        scopes: vec!["read".into()],
    }
}

#[test]
fn entries_are_kept_per_name_and_url_in_a_private_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = CredentialsFile::new(dir.path().join(".credentials.json"));
    let docs = ServerKey::new("docs", "https://a.example/mcp");
    let moved = ServerKey::new("docs", "https://b.example/mcp");
    assert_eq!(file.load(&docs).unwrap(), None);
    file.save(&tokens(&docs, "tok-a")).unwrap();
    file.save(&tokens(&moved, "tok-b")).unwrap();
    assert_eq!(file.load(&docs).unwrap(), Some(tokens(&docs, "tok-a")));
    assert_eq!(file.load(&moved).unwrap(), Some(tokens(&moved, "tok-b")));
    let mode = std::fs::metadata(file.path()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(file.remove(&docs).unwrap());
    assert!(!file.remove(&docs).unwrap());
    assert_eq!(file.load(&moved).unwrap(), Some(tokens(&moved, "tok-b")));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left behind");
}

#[test]
fn a_damaged_file_is_an_error_that_quotes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".credentials.json");
    std::fs::write(&path, "{\"docs|u\": {\"access_token\": \"secret-tok").unwrap();
    let err = CredentialsFile::new(&path)
        .load(&ServerKey::new("docs", "u"))
        .unwrap_err()
        .to_string();
    assert!(err.contains(".credentials.json"), "{err}");
    assert!(!err.contains("secret-tok"), "{err}");
}

#[test]
fn expiry_is_absolute_and_counts_down_in_the_token_response() {
    let server = ServerKey::new("docs", "u");
    let stored = tokens(&server, "tok");
    assert!(!stored.expires_within(Duration::from_secs(1), 5_000));
    assert!(stored.expires_within(Duration::from_secs(6), 5_000));
    let response = stored.to_token_response(4_000);
    assert_eq!(response.expires_in(), Some(Duration::from_secs(6)));
    assert_eq!(
        stored.to_token_response(20_000).expires_in(),
        Some(Duration::ZERO),
        "an expired token reads as expiring now, so rmcp refreshes it"
    );
    let back =
        StoredTokens::from_token_response(&server, "client-1".into(), &response, &[], None, 4_000);
    assert_eq!(back, stored);
}

#[test]
fn a_refresh_answer_without_refresh_token_or_scopes_keeps_the_old_ones() {
    let server = ServerKey::new("docs", "u");
    let previous = tokens(&server, "old");
    let mut answer = OAuthTokenResponse::new(
        AccessToken::new("new".into()),
        BasicTokenType::Bearer,
        EmptyExtraTokenFields {},
    );
    answer.set_expires_in(Some(&Duration::from_secs(60)));
    let next = StoredTokens::from_token_response(
        &server,
        "client-1".into(),
        &answer,
        &[],
        Some(&previous),
        1_000,
    );
    assert_eq!(next.access_token, "new");
    assert_eq!(next.refresh_token.as_deref(), Some("refresh-1"));
    assert_eq!(next.scopes, vec!["read".to_string()]);
    assert_eq!(next.expires_at, Some(61_000));
}

#[test]
fn debug_output_leaves_the_tokens_out() {
    let text = format!("{:?}", tokens(&ServerKey::new("docs", "u"), "tok-secret"));
    assert!(
        !text.contains("tok-secret") && !text.contains("refresh-1"),
        "{text}"
    );
}
