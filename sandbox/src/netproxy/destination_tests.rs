use super::*;
use pretty_assertions::assert_eq;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn local_networks_of_both_families_are_not_public() {
    let local = [
        ("127.0.0.1", "loopback"),
        ("127.255.1.2", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "unspecified"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "shared (CGNAT)"),
        ("100.127.255.254", "shared (CGNAT)"),
        ("169.254.169.254", "link-local"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("255.255.255.255", "broadcast"),
        ("240.0.0.1", "reserved"),
        ("192.0.0.8", "reserved"),
        ("198.18.0.1", "reserved"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::127.0.0.1", "reserved"),
        ("::8.8.8.8", "reserved"),
        ("::ffff:0:127.0.0.1", "reserved"),
        ("64:ff9b::7f00:1", "loopback"),
        ("64:ff9b:1::1", "private"),
        ("2002:7f00:1::1", "loopback"),
        ("2002:c0a8:101::1", "private"),
        ("2001::1", "reserved"),
        ("2001:db8::1", "reserved"),
        ("100::1", "reserved"),
        ("fc00::1", "private"),
        ("fd12:3456::1", "private"),
        ("fe80::1", "link-local"),
        ("febf::1", "link-local"),
        ("fec0::1", "private"),
        ("ff02::1", "multicast"),
    ];
    for (text, kind) in local {
        assert_eq!(local_kind(ip(text)), Some(kind), "{text}");
    }
}

#[test]
fn public_addresses_pass() {
    for text in [
        "8.8.8.8",
        "1.1.1.1",
        "172.32.0.1",
        "172.15.255.255",
        "100.63.255.255",
        "100.128.0.1",
        "192.169.0.1",
        "198.20.0.1",
        "223.255.255.255",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2002:808:808::1",
        "2606:4700::1111",
        "2a00:1450::1",
    ] {
        assert_eq!(local_kind(ip(text)), None, "{text}");
    }
}

fn at(text: &str) -> SocketAddr {
    SocketAddr::new(ip(text), 443)
}

#[test]
fn a_name_keeps_only_its_public_addresses() {
    let destinations = Destinations::default();
    assert_eq!(
        destinations.filter("mixed.test", vec![at("10.0.0.1"), at("8.8.8.8")]),
        Ok(vec![at("8.8.8.8")])
    );
    let refused = destinations
        .filter("localhost", vec![at("::1"), at("127.0.0.1")])
        .unwrap_err();
    assert_eq!((refused.address, refused.kind), (ip("::1"), "loopback"));
    assert!(refused
        .to_string()
        .contains("network_proxy.allow_local_names"));
}

#[test]
fn allowed_and_pinned_names_reach_local_addresses() {
    let destinations = Destinations {
        hosts: [("db.test".to_string(), ip("10.0.0.5"))].into(),
        allow_local_names: ["localhost".to_string()].into(),
    };
    assert_eq!(
        destinations.filter("localhost", vec![at("127.0.0.1")]),
        Ok(vec![at("127.0.0.1")])
    );
    assert_eq!(
        destinations.filter("db.test", vec![at("10.0.0.5")]),
        Ok(vec![at("10.0.0.5")])
    );
    assert_eq!(destinations.pinned("db.test"), Some(ip("10.0.0.5")));
    // Another spelling of an allowed name's address is not the name.
    assert!(destinations
        .filter("127.0.0.1", vec![at("127.0.0.1")])
        .is_err());
}
