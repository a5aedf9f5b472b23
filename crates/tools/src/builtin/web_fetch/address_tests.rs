use std::net::IpAddr;

use super::{restricted, restricted_name};

fn class(text: &str) -> Option<&'static str> {
    let ip: IpAddr = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
    restricted(ip)
}

#[test]
fn local_and_private_ipv4_addresses_are_restricted() {
    for (ip, what) in [
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "unspecified"),
        ("10.0.0.1", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("100.127.255.255", "carrier-grade NAT"),
        ("169.254.169.254", "link-local"),
        ("169.254.0.1", "link-local"),
        ("255.255.255.255", "broadcast"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
    ] {
        let found = class(ip).unwrap_or_else(|| panic!("{ip} is not restricted"));
        assert!(found.contains(what), "{ip}: {found}");
    }
}

#[test]
fn public_addresses_and_their_neighbours_are_not() {
    for ip in [
        "8.8.8.8",
        "1.1.1.1",
        "172.15.255.255",
        "172.32.0.1",
        "100.63.255.255",
        "100.128.0.1",
        "169.253.255.255",
        "11.0.0.1",
        "192.169.0.1",
        "2606:4700::1111",
        "2001:4860:4860::8888",
        "2002:0808:0808::1",
        "64:ff9b::808:808",
        "::ffff:8.8.8.8",
    ] {
        assert_eq!(class(ip), None, "{ip}");
    }
}

#[test]
fn ipv6_forms_and_embedded_ipv4_addresses_are_judged() {
    for (ip, what) in [
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fc00::1", "unique local"),
        ("fd12:3456::1", "unique local"),
        ("fe80::1", "link-local"),
        ("febf::1", "link-local"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        // IPv4-mapped, as written and as URL parsers normalise it.
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:7f00:1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:10.1.2.3", "private"),
        // IPv4-compatible, NAT64 and 6to4.
        ("::127.0.0.1", "loopback"),
        ("::192.168.0.1", "private"),
        ("64:ff9b::a9fe:a9fe", "link-local"),
        ("2002:7f00:1::", "loopback"),
        ("2002:c0a8:0101::1", "private"),
    ] {
        let found = class(ip).unwrap_or_else(|| panic!("{ip} is not restricted"));
        assert!(found.contains(what), "{ip}: {found}");
    }
}

#[test]
fn localhost_names_are_loopback_before_any_lookup() {
    for name in ["localhost", "LOCALHOST", "localhost.", "app.localhost", "a.b.localhost."] {
        assert_eq!(restricted_name(name), Some("a loopback name"), "{name}");
    }
    for name in ["localhost.example.com", "mylocalhost", "example.com", "localhostx"] {
        assert_eq!(restricted_name(name), None, "{name}");
    }
}
