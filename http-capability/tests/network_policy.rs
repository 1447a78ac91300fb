//! Issue 5 §3 / SPEC §10 C-12: the pure network policy — address classes, always-refused
//! ranges, private and cleartext switches, allow and deny lists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::IpAddr;

use http_capability::{
    AddressClass, HostPattern, NetworkPolicy, PolicyViolation, Scheme, policy::classify,
};
use reqwest::Url;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn addresses_are_classified() {
    for (a, class) in [
        ("127.0.0.1", AddressClass::Loopback),
        ("127.255.0.9", AddressClass::Loopback),
        ("::1", AddressClass::Loopback),
        ("10.1.2.3", AddressClass::Private),
        ("172.16.0.1", AddressClass::Private),
        ("172.31.255.255", AddressClass::Private),
        ("192.168.1.1", AddressClass::Private),
        ("100.64.0.1", AddressClass::Private),
        ("fd12:3456::1", AddressClass::Private),
        ("169.254.169.254", AddressClass::LinkLocalOrMetadata),
        ("169.254.0.1", AddressClass::LinkLocalOrMetadata),
        ("fe80::1", AddressClass::LinkLocalOrMetadata),
        ("fd00:ec2::254", AddressClass::LinkLocalOrMetadata),
        ("100.100.100.200", AddressClass::LinkLocalOrMetadata),
        ("::ffff:169.254.169.254", AddressClass::LinkLocalOrMetadata),
        ("64:ff9b::a9fe:a9fe", AddressClass::LinkLocalOrMetadata),
        ("::ffff:127.0.0.1", AddressClass::Loopback),
        ("0.0.0.0", AddressClass::NotUnicast),
        ("::", AddressClass::NotUnicast),
        ("224.0.0.1", AddressClass::NotUnicast),
        ("255.255.255.255", AddressClass::NotUnicast),
        ("ff02::1", AddressClass::NotUnicast),
        ("172.32.0.1", AddressClass::Public),
        ("203.0.113.9", AddressClass::Public),
        ("2001:db8::1", AddressClass::Public),
    ] {
        assert_eq!(classify(ip(a)), class, "{a}");
    }
}

#[test]
fn link_local_and_metadata_are_refused_even_by_the_most_open_policy() {
    let open = NetworkPolicy {
        allow: vec![
            "169.254.0.0/16".parse().unwrap(),
            "fd00::/8".parse().unwrap(),
        ],
        ..NetworkPolicy::local_network()
    };
    for a in [
        "169.254.169.254",
        "fd00:ec2::254",
        "fe80::1",
        "::ffff:169.254.169.254",
    ] {
        for scheme in [Scheme::Http, Scheme::Https] {
            assert_eq!(
                open.check_addr(ip(a), scheme, true),
                Err(PolicyViolation::LinkLocalOrMetadata),
                "{a}"
            );
        }
    }
    assert_eq!(
        open.check_addr(ip("0.0.0.0"), Scheme::Https, true),
        Err(PolicyViolation::NotUnicast)
    );
}

#[test]
fn private_addresses_need_private_access() {
    let strict = NetworkPolicy::default();
    for a in ["127.0.0.1", "192.168.0.10", "10.0.0.1", "fd00::5"] {
        assert_eq!(
            strict.check_addr(ip(a), Scheme::Https, false),
            Err(PolicyViolation::PrivateAccessDisabled),
            "{a}"
        );
    }
    let lan = NetworkPolicy::local_network();
    assert_eq!(
        lan.check_addr(ip("192.168.0.10"), Scheme::Https, false),
        Ok(())
    );
    assert_eq!(
        strict.check_addr(ip("203.0.113.1"), Scheme::Https, false),
        Ok(())
    );
}

#[test]
fn cleartext_is_only_for_local_destinations_and_only_when_enabled() {
    let lan = NetworkPolicy::local_network();
    assert_eq!(
        lan.check_addr(ip("192.168.1.1"), Scheme::Http, false),
        Ok(())
    );
    assert_eq!(lan.check_addr(ip("127.0.0.1"), Scheme::Http, false), Ok(()));
    assert_eq!(
        lan.check_addr(ip("203.0.113.1"), Scheme::Http, false),
        Err(PolicyViolation::CleartextToPublic)
    );
    let no_cleartext = NetworkPolicy {
        allow_cleartext: false,
        ..NetworkPolicy::local_network()
    };
    assert_eq!(
        no_cleartext.check_addr(ip("192.168.1.1"), Scheme::Http, false),
        Err(PolicyViolation::CleartextDisabled)
    );
    let url = Url::parse("http://printer.local/").unwrap();
    assert_eq!(
        no_cleartext.check_url(&url),
        Err(PolicyViolation::CleartextDisabled),
        "refused from the URL alone, before any DNS"
    );
}

#[test]
fn check_url_checks_ip_literals_in_every_spelling() {
    let lan = NetworkPolicy::local_network();
    for u in [
        "http://169.254.169.254/latest/meta-data/",
        "http://2852039166/",          // decimal 169.254.169.254
        "http://0xa9.0xfe.0xa9.0xfe/", // hex octets
        "http://[::ffff:a9fe:a9fe]/",
        "http://[fd00:ec2::254]/",
        "https://[fe80::1]/",
    ] {
        let url = Url::parse(u).unwrap();
        assert_eq!(
            lan.check_url(&url),
            Err(PolicyViolation::LinkLocalOrMetadata),
            "{u}"
        );
    }
    assert_eq!(
        lan.check_url(&Url::parse("http://0.0.0.0:8080/").unwrap()),
        Err(PolicyViolation::NotUnicast)
    );
}

#[test]
fn deny_list_by_name_wildcard_and_network() {
    let p = NetworkPolicy {
        deny: vec![
            "nas.home".parse().unwrap(),
            "*.corp.example".parse().unwrap(),
            "192.168.5.0/24".parse().unwrap(),
        ],
        ..NetworkPolicy::local_network()
    };
    assert_eq!(p.check_name("NAS.home."), Err(PolicyViolation::DenyListed));
    assert_eq!(
        p.check_name("a.b.corp.example"),
        Err(PolicyViolation::DenyListed)
    );
    assert_eq!(
        p.check_name("corp.example"),
        Ok(false),
        "wildcard is subdomains only"
    );
    assert_eq!(
        p.check_addr(ip("192.168.5.77"), Scheme::Http, false),
        Err(PolicyViolation::DenyListed)
    );
    assert_eq!(p.check_addr(ip("192.168.6.1"), Scheme::Http, false), Ok(()));
}

#[test]
fn allow_list_by_name_or_network_never_overrides_other_rules() {
    let p = NetworkPolicy {
        allow: vec!["router.lan".parse().unwrap(), "10.0.0.0/8".parse().unwrap()],
        ..NetworkPolicy::local_network()
    };
    assert_eq!(p.check_name("router.lan"), Ok(true));
    assert_eq!(p.check_name("other.lan"), Ok(false));
    // Name allowed: any (otherwise permitted) address.
    assert_eq!(p.check_addr(ip("192.168.1.1"), Scheme::Http, true), Ok(()));
    // Name not allowed: the address must be in an allowed network.
    assert_eq!(p.check_addr(ip("10.9.9.9"), Scheme::Http, false), Ok(()));
    assert_eq!(
        p.check_addr(ip("192.168.1.1"), Scheme::Http, false),
        Err(PolicyViolation::NotAllowListed)
    );
    // Allow-listed, but private access off: still refused.
    let strict = NetworkPolicy {
        allow_private: false,
        ..p
    };
    assert_eq!(
        strict.check_addr(ip("10.9.9.9"), Scheme::Https, false),
        Err(PolicyViolation::PrivateAccessDisabled)
    );
}

#[test]
fn host_patterns_parse() {
    assert!("10.0.0.0/8".parse::<HostPattern>().is_ok());
    assert!("fd00::/8".parse::<HostPattern>().is_ok());
    assert!("[::1]".parse::<HostPattern>().is_ok());
    assert!("*.example.com".parse::<HostPattern>().is_ok());
    assert!("10.0.0.0/33".parse::<HostPattern>().is_err());
    assert!("bad host!".parse::<HostPattern>().is_err());
    assert!("".parse::<HostPattern>().is_err());
    // An IPv4-mapped network matches plain IPv4 addresses.
    let p = NetworkPolicy {
        deny: vec!["::ffff:10.0.0.0/104".parse().unwrap()],
        ..NetworkPolicy::local_network()
    };
    assert_eq!(
        p.check_addr(ip("10.1.1.1"), Scheme::Http, false),
        Err(PolicyViolation::DenyListed)
    );
}

#[test]
fn refusal_text_is_one_sentence_and_names_no_host() {
    for v in [
        PolicyViolation::LinkLocalOrMetadata,
        PolicyViolation::PrivateAccessDisabled,
        PolicyViolation::CleartextToPublic,
        PolicyViolation::DenyListed,
    ] {
        let t = v.to_string();
        assert!(t.ends_with('.'), "{t}");
        assert_eq!(t.matches(". ").count(), 0, "one sentence: {t}");
    }
}
