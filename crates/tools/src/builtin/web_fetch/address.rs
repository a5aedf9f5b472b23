//! Which addresses `web_fetch` keeps away from unless a rule names the host: the machine itself,
//! the local networks and the cloud metadata service, so that a model talked into fetching
//! `http://169.254.169.254/` or an intranet page (server-side request forgery) cannot.
//!
//! Classes (IANA special-purpose registries, RFC 6890): IPv4 loopback `127/8`, "this network"
//! `0/8`, private `10/8`, `172.16/12`, `192.168/16`, shared (CGNAT) `100.64/10`, link-local
//! `169.254/16` (the metadata service is `169.254.169.254`), multicast `224/4`, reserved `240/4`
//! and broadcast; IPv6 loopback `::1`, unspecified `::`, unique local `fc00::/7`, link-local
//! `fe80::/10`, site-local `fec0::/10` and multicast `ff00::/8`. An IPv6 address that carries an
//! IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`,
//! 6to4 `2002::/16`) is judged by that IPv4 address. The names `localhost` and `*.localhost` are
//! loopback by definition (RFC 6761) and are refused before any lookup.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is not fetched without a rule naming its host (`a loopback address`), or `None` for
/// an address on the public internet.
pub fn restricted(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => restricted_v4(v4),
        IpAddr::V6(v6) => restricted_v6(v6),
    }
}

fn restricted_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() || a == 0 {
        Some("an unspecified (\"this network\") address")
    } else if ip.is_private() {
        Some("a private network address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if ip.is_link_local() {
        Some("a link-local address (where cloud metadata services live)")
    } else if ip.is_broadcast() {
        Some("the broadcast address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if a >= 240 {
        Some("a reserved address")
    } else {
        None
    }
}

fn restricted_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(ip) {
        return restricted_v4(v4);
    }
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a unique local (private) address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if first & 0xffc0 == 0xfec0 {
        Some("a site-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else {
        None
    }
}

/// The IPv4 address an IPv6 address stands for: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`, but not `::` and `::1`), NAT64 (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(mapped) = ip.to_ipv4_mapped() {
        Some(mapped)
    } else if (s[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified())
        || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0]
    {
        Some(low)
    } else if s[0] == 0x2002 {
        Some(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8))
    } else {
        None
    }
}

/// Why the host name itself is not fetched without a rule: `localhost` and its subdomains
/// (RFC 6761), with or without a final dot. Other names are judged by what they resolve to.
pub fn restricted_name(host: &str) -> Option<&'static str> {
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    (name == "localhost" || name.ends_with(".localhost")).then_some("a loopback name")
}

#[cfg(test)]
#[path = "address_tests.rs"]
mod tests;
