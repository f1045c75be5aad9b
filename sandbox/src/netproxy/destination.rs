//! Where the proxy may connect once a host is approved (pure): an approved name reaches the
//! public internet only. A resolved address on the host's own loopback, a private, shared
//! (CGNAT), link-local, multicast, broadcast, unspecified or reserved network is refused,
//! whatever spelling of the host produced it (the check runs on the resolved
//! [`IpAddr`], never on the text), unless the user's config allows the name:
//! `network_proxy.allow_local_names`, or a fixed address in `network_proxy.hosts`.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The user's exceptions to the public-only rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Destinations {
    /// Lower-case host name → the address the user pinned it to (used instead of DNS; a
    /// pinned address is the user's own choice, so it may be local).
    pub hosts: BTreeMap<String, IpAddr>,
    /// Lower-case host names whose local addresses may be connected to.
    pub allow_local_names: BTreeSet<String>,
}

/// Why a connection to an approved host is not made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalRefusal {
    pub host: String,
    pub address: IpAddr,
    pub kind: &'static str,
}

impl std::fmt::Display for LocalRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` resolves to {} ({} address): the proxy does not connect to the host's own \
             or private networks unless network_proxy.allow_local_names lists the name",
            self.host, self.address, self.kind
        )
    }
}

impl Destinations {
    /// The fixed address of `host`, when the user pinned one.
    pub fn pinned(&self, host: &str) -> Option<IpAddr> {
        self.hosts.get(host).copied()
    }

    /// The addresses of `resolved` the proxy may connect to for `host`, in their order:
    /// all of them for an allowed or pinned name, else the public ones; an error when none
    /// is left (naming the first refused address).
    pub fn filter(
        &self,
        host: &str,
        resolved: Vec<SocketAddr>,
    ) -> Result<Vec<SocketAddr>, LocalRefusal> {
        if self.allow_local_names.contains(host) || self.hosts.contains_key(host) {
            return Ok(resolved);
        }
        let mut refused = None;
        let public: Vec<SocketAddr> = resolved
            .into_iter()
            .filter(|addr| match local_kind(addr.ip()) {
                None => true,
                Some(kind) => {
                    refused.get_or_insert(LocalRefusal {
                        host: host.to_string(),
                        address: addr.ip(),
                        kind,
                    });
                    false
                }
            })
            .collect();
        match (public.is_empty(), refused) {
            (true, Some(refusal)) => Err(refusal),
            _ => Ok(public),
        }
    }
}

/// What kind of non-public address `ip` is, or `None` for a public one. IPv6 forms that
/// carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by that address.
pub fn local_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => v6_kind(v6),
    }
}

fn v4_kind(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        (0, _, _) => Some("unspecified"),
        (127, _, _) => Some("loopback"),
        (10, _, _) | (192, 168, _) => Some("private"),
        (172, b, _) if (16..32).contains(&b) => Some("private"),
        (100, b, _) if (64..128).contains(&b) => Some("shared (CGNAT)"),
        (169, 254, _) => Some("link-local"),
        (224..=239, _, _) => Some("multicast"),
        (255, 255, 255) if ip == Ipv4Addr::BROADCAST => Some("broadcast"),
        (240..=255, _, _) => Some("reserved"),
        // Protocol assignments, documentation, the old 6to4 relay, benchmarking.
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) | (192, 88, 99) => {
            Some("reserved")
        }
        (198, 18..=19, _) => Some("reserved"),
        _ => None,
    }
}

fn v6_kind(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    let embedded_v4 =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    match s {
        // ::ffff:a.b.c.d (mapped): the kernel connects to the IPv4 address.
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => v4_kind(embedded_v4(hi, lo)),
        // ::a.b.c.d (the deprecated "compatible" form) and ::ffff:0:a.b.c.d (SIIT): never
        // a public destination.
        [0, 0, 0, 0, 0, 0, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => Some("reserved"),
        // NAT64 (64:ff9b::/96): a translator connects to the embedded address.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => v4_kind(embedded_v4(hi, lo)),
        [0x64, 0xff9b, 1, ..] => Some("private"),
        // 6to4 (2002::/16) carries an IPv4 address after the prefix.
        [0x2002, hi, lo, ..] => v4_kind(embedded_v4(hi, lo)),
        // Discard-only, IETF protocol assignments (Teredo, benchmarking, ORCHID),
        // documentation.
        [0x100, 0, 0, 0, ..] => Some("reserved"),
        [0x2001, second, ..] if second < 0x200 => Some("reserved"),
        [0x2001, 0xdb8, ..] => Some("reserved"),
        [first, ..] if first & 0xfe00 == 0xfc00 => Some("private"),
        [first, ..] if first & 0xffc0 == 0xfe80 => Some("link-local"),
        [first, ..] if first & 0xffc0 == 0xfec0 => Some("private"),
        [first, ..] if first & 0xff00 == 0xff00 => Some("multicast"),
        _ => None,
    }
}

#[cfg(test)]
#[path = "destination_tests.rs"]
mod tests;
