use super::*;

fn keys() -> ThreadKeys {
    ThreadKeys::from_secret(&ThreadSecret::generate().unwrap())
}

#[test]
fn a_signature_holds_only_for_its_side_fields_and_key() {
    let keys = keys();
    let sig = keys.sign(Side::Worker, &[b"t1", b"end", b"{}"]);
    assert!(keys.verify(Side::Worker, &[b"t1", b"end", b"{}"], &sig));
    assert!(!keys.verify(Side::Requester, &[b"t1", b"end", b"{}"], &sig));
    assert!(!keys.verify(Side::Worker, &[b"t2", b"end", b"{}"], &sig));
    // Framing: moving bytes between fields changes the signature.
    assert!(!keys.verify(Side::Worker, &[b"t1e", b"nd", b"{}"], &sig));
    assert!(!self::keys().verify(Side::Worker, &[b"t1", b"end", b"{}"], &sig));
    assert!(!keys.verify(Side::Worker, &[b"t1", b"end", b"{}"], "zz"));
    assert!(!keys.verify(Side::Worker, &[b"t1", b"end", b"{}"], ""));
}

#[test]
fn a_secret_round_trips_through_hex_and_refuses_other_text() {
    let secret = ThreadSecret::generate().unwrap();
    assert_eq!(ThreadSecret::from_hex(&secret.to_hex()).unwrap(), secret);
    assert!(ThreadSecret::from_hex("abcd").is_err());
    assert!(ThreadSecret::from_hex(&"g".repeat(64)).is_err());
    assert!(!format!("{secret:?}").contains(&secret.to_hex()));
}

#[test]
fn a_nonce_is_fresh_only_near_its_time() {
    let nonce = new_nonce().unwrap();
    let now = crate::now_ms();
    assert!(nonce_is_fresh(&nonce, now));
    assert!(!nonce_is_fresh(&nonce, now + NONCE_MAX_AGE_MS + 1_000));
    assert!(!nonce_is_fresh("garbage", now));
    assert_ne!(new_nonce().unwrap(), nonce);
}
