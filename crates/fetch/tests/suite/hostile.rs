//! The hostile-URL matrix: every case is refused, and by the rule it names.
//!
//! Each URL goes through [`Fetcher::fetch`] under the default policy (Hearth's own port
//! 4242 denied) with a scripted resolver. Every case is refused before any connection
//! is made, so nothing leaves this machine.

use hearth_fetch::{AddressClass as Class, Embedding, FetchPolicy, Rule, StaticResolver};
use pretty_assertions::assert_eq;

use super::support::{
    PUBLIC_ELSEWHERE, fetcher, get, ip, loopback, metadata, non_public, non_public_from,
    refused_rule,
};

const OWN_PORT: u16 = 4242;

fn scheme(scheme: &str) -> Rule {
    Rule::Scheme {
        scheme: scheme.to_owned(),
    }
}

fn local(host: &str) -> Rule {
    Rule::LocalName {
        host: host.to_owned(),
    }
}

fn metadata_name(host: &str) -> Rule {
    Rule::MetadataName {
        host: host.to_owned(),
    }
}

fn mapped(address: &str, class: Class, network: &str) -> Rule {
    non_public(address, class, network, Some(Embedding::Ipv4Mapped))
}

/// Literal-address, scheme, credential, name and port cases.
fn url_cases() -> Vec<(&'static str, Rule)> {
    vec![
        // IPv4 loopback in every spelling the URL standard accepts.
        ("http://127.0.0.1/", loopback("127.0.0.1")),
        ("http://2130706433/", loopback("127.0.0.1")),
        ("http://0x7f000001/", loopback("127.0.0.1")),
        ("http://0177.0.0.1/", loopback("127.0.0.1")),
        ("http://0177.0.0.01/", loopback("127.0.0.1")),
        ("http://127.1/", loopback("127.0.0.1")),
        ("http://0x7f.1/", loopback("127.0.0.1")),
        ("http://0x7F.0.0.1/", loopback("127.0.0.1")),
        ("http://127.0.1/", loopback("127.0.0.1")),
        ("http://127.0.0.1./", loopback("127.0.0.1")),
        ("http://127.000.000.001/", loopback("127.0.0.1")),
        ("http://%31%32%37.0.0.1/", loopback("127.0.0.1")),
        ("http://127%2e0%2e0%2e1/", loopback("127.0.0.1")),
        ("http://１２７.０.０.１/", loopback("127.0.0.1")),
        ("http://１２７．０．０．１/", loopback("127.0.0.1")),
        ("http://127。0。0。1/", loopback("127.0.0.1")),
        ("http://12\t7.0.0.1/", loopback("127.0.0.1")),
        ("  http://127.0.0.1/  ", loopback("127.0.0.1")),
        ("http://127.255.255.254/", loopback("127.255.255.254")),
        // Unspecified and IPv6 loopback.
        (
            "http://0/",
            non_public("0.0.0.0", Class::Unspecified, "0.0.0.0/32", None),
        ),
        (
            "http://0.0.0.0/",
            non_public("0.0.0.0", Class::Unspecified, "0.0.0.0/32", None),
        ),
        (
            "http://0x0/",
            non_public("0.0.0.0", Class::Unspecified, "0.0.0.0/32", None),
        ),
        (
            "http://[::]/",
            non_public("::", Class::Unspecified, "::/128", None),
        ),
        (
            "http://[::1]/",
            non_public("::1", Class::Loopback, "::1/128", None),
        ),
        (
            "http://[0:0:0:0:0:0:0:1]/",
            non_public("::1", Class::Loopback, "::1/128", None),
        ),
        // IPv6 spellings that embed IPv4 loopback.
        (
            "http://[::ffff:127.0.0.1]/",
            mapped("::ffff:127.0.0.1", Class::Loopback, "127.0.0.0/8"),
        ),
        (
            "http://[::ffff:7f00:1]/",
            mapped("::ffff:127.0.0.1", Class::Loopback, "127.0.0.0/8"),
        ),
        (
            "http://[0:0:0:0:0:ffff:127.0.0.1]/",
            mapped("::ffff:127.0.0.1", Class::Loopback, "127.0.0.0/8"),
        ),
        (
            "http://[::127.0.0.1]/",
            non_public(
                "::127.0.0.1",
                Class::Loopback,
                "127.0.0.0/8",
                Some(Embedding::Ipv4Compatible),
            ),
        ),
        (
            "http://[64:ff9b::127.0.0.1]/",
            non_public(
                "64:ff9b::7f00:1",
                Class::Loopback,
                "127.0.0.0/8",
                Some(Embedding::Nat64),
            ),
        ),
        (
            "http://[64:ff9b:1::7f00:1]/",
            non_public(
                "64:ff9b:1::7f00:1",
                Class::Loopback,
                "127.0.0.0/8",
                Some(Embedding::Nat64),
            ),
        ),
        (
            "http://[2002:7f00:1::]/",
            non_public(
                "2002:7f00:1::",
                Class::Loopback,
                "127.0.0.0/8",
                Some(Embedding::SixToFour),
            ),
        ),
        (
            "http://[::ffff:10.0.0.1]/",
            mapped("::ffff:10.0.0.1", Class::Private, "10.0.0.0/8"),
        ),
        // Cloud metadata, literal and embedded, denied by their own rule.
        (
            "http://169.254.169.254/latest/meta-data/",
            metadata("169.254.169.254"),
        ),
        ("http://2852039166/", metadata("169.254.169.254")),
        ("http://0xa9fea9fe/", metadata("169.254.169.254")),
        ("http://0251.0376.0251.0376/", metadata("169.254.169.254")),
        (
            "http://[::ffff:169.254.169.254]/",
            metadata("::ffff:169.254.169.254"),
        ),
        (
            "http://[::ffff:a9fe:a9fe]/",
            metadata("::ffff:169.254.169.254"),
        ),
        (
            "http://[64:ff9b::a9fe:a9fe]/",
            metadata("64:ff9b::a9fe:a9fe"),
        ),
        ("http://[2002:a9fe:a9fe::]/", metadata("2002:a9fe:a9fe::")),
        ("http://[::169.254.169.254]/", metadata("::169.254.169.254")),
        ("http://[::a9fe:a9fe]/", metadata("::169.254.169.254")),
        (
            "http://[64:ff9b:1::a9fe:a9fe]/",
            metadata("64:ff9b:1::a9fe:a9fe"),
        ),
        ("http://[fd00:ec2::254]/", metadata("fd00:ec2::254")),
        (
            "http://169.254.170.2/v2/credentials",
            metadata("169.254.170.2"),
        ),
        (
            "http://100.100.100.200/latest/meta-data/",
            metadata("100.100.100.200"),
        ),
        ("http://168.63.129.16/", metadata("168.63.129.16")),
        ("http://192.0.0.192/", metadata("192.0.0.192")),
        (
            "http://metadata.google.internal/computeMetadata/v1/",
            metadata_name("metadata.google.internal"),
        ),
        (
            "http://METADATA.GOOGLE.INTERNAL/",
            metadata_name("metadata.google.internal"),
        ),
        (
            "http://metadata.google.internal./",
            metadata_name("metadata.google.internal."),
        ),
        ("http://metadata/", metadata_name("metadata")),
        ("http://metadata.goog/", metadata_name("metadata.goog")),
        // Special-purpose ranges.
        (
            "http://10.0.0.1/",
            non_public("10.0.0.1", Class::Private, "10.0.0.0/8", None),
        ),
        (
            "http://172.16.5.4/",
            non_public("172.16.5.4", Class::Private, "172.16.0.0/12", None),
        ),
        (
            "http://192.168.1.1/",
            non_public("192.168.1.1", Class::Private, "192.168.0.0/16", None),
        ),
        (
            "http://100.64.0.1/",
            non_public(
                "100.64.0.1",
                Class::SharedAddressSpace,
                "100.64.0.0/10",
                None,
            ),
        ),
        (
            "http://169.254.1.1/",
            non_public("169.254.1.1", Class::LinkLocal, "169.254.0.0/16", None),
        ),
        (
            "http://192.0.0.8/",
            non_public(
                "192.0.0.8",
                Class::ProtocolAssignments,
                "192.0.0.0/24",
                None,
            ),
        ),
        (
            "http://192.0.2.10/",
            non_public("192.0.2.10", Class::Documentation, "192.0.2.0/24", None),
        ),
        (
            "http://198.18.0.1/",
            non_public("198.18.0.1", Class::Benchmarking, "198.18.0.0/15", None),
        ),
        (
            "http://224.0.0.251/",
            non_public("224.0.0.251", Class::Multicast, "224.0.0.0/4", None),
        ),
        (
            "http://240.0.0.1/",
            non_public("240.0.0.1", Class::Reserved, "240.0.0.0/4", None),
        ),
        (
            "http://255.255.255.255/",
            non_public(
                "255.255.255.255",
                Class::Broadcast,
                "255.255.255.255/32",
                None,
            ),
        ),
        (
            "http://[fe80::1]/",
            non_public("fe80::1", Class::LinkLocal, "fe80::/10", None),
        ),
        (
            "http://[fd12:3456::1]/",
            non_public("fd12:3456::1", Class::UniqueLocal, "fc00::/7", None),
        ),
        (
            "http://[ff02::1]/",
            non_public("ff02::1", Class::Multicast, "ff00::/8", None),
        ),
        (
            "http://[2001:db8::1]/",
            non_public("2001:db8::1", Class::Documentation, "2001:db8::/32", None),
        ),
        (
            "http://[::8.8.8.8]/",
            non_public("::8.8.8.8", Class::Ipv4Compatible, "::/96", None),
        ),
        // Schemes other than http and https.
        ("file:///etc/passwd", scheme("file")),
        ("file://localhost/etc/passwd", scheme("file")),
        ("gopher://127.0.0.1:70/_GET%20/", scheme("gopher")),
        ("ftp://example.com/pub/", scheme("ftp")),
        ("dict://127.0.0.1:11211/stat", scheme("dict")),
        ("javascript:alert(1)", scheme("javascript")),
        ("data:text/html,<h1>hi</h1>", scheme("data")),
        ("ws://example.com/socket", scheme("ws")),
        // Credentials and parser-differential forms.
        ("http://evil.com@127.0.0.1/", Rule::UserInfo),
        ("http://user:pass@example.com/", Rule::UserInfo),
        ("http://127.0.0.1:80@evil.com/", Rule::UserInfo),
        ("http://127.0.0.1:80\\@evil.com/", loopback("127.0.0.1")),
        ("http://127.0.0.1#@evil.com/", loopback("127.0.0.1")),
        ("http://127.0.0.1?@evil.com/", loopback("127.0.0.1")),
        ("http://127.0.0.1\\.evil.com/", loopback("127.0.0.1")),
        ("http:\\\\127.0.0.1\\admin", loopback("127.0.0.1")),
        ("http:/127.0.0.1/", loopback("127.0.0.1")),
        // Names of this machine, before any lookup.
        ("http://localhost/", local("localhost")),
        ("http://localhost./", local("localhost.")),
        ("http://LOCALHOST:8080/", local("localhost")),
        ("http://foo.localhost/", local("foo.localhost")),
        ("http://a.b.localhost./", local("a.b.localhost.")),
        ("http://ip6-localhost/", local("ip6-localhost")),
        ("http://ｌｏｃａｌｈｏｓｔ/", local("localhost")),
        ("http://LocalHost%2E/", local("localhost.")),
        (
            "http://[::ffff:0:127.0.0.1]/",
            non_public("::ffff:0:7f00:1", Class::NotGlobalUnicast, "2000::/3", None),
        ),
        // Hearth's own port, on any host.
        ("http://example.com:4242/", Rule::OwnPort { port: OWN_PORT }),
        (
            "http://93.184.215.14:4242/",
            Rule::OwnPort { port: OWN_PORT },
        ),
    ]
}

/// Names whose resolution is the attack.
fn dns_cases() -> (StaticResolver, Vec<(&'static str, Rule)>) {
    let resolver = StaticResolver::new()
        .with("internal.example", [ip("10.1.2.3")])
        .with("loopback.example", [ip("127.0.0.1")])
        .with("mixed.example", [ip(PUBLIC_ELSEWHERE), ip("192.168.0.5")])
        .with("mixed-v6.example", [ip("2606:4700::1111"), ip("::1")])
        .with("mapped.example", [ip("::ffff:10.0.0.1")])
        .with("mapped-loopback.example", [ip("::ffff:127.0.0.1")])
        .with("nat64.example", [ip("64:ff9b::a00:1")])
        .with("metadata.example", [ip("169.254.169.254")])
        .with("mapped-metadata.example", [ip("::ffff:169.254.169.254")])
        .with("ula.example", [ip("fd00::1")])
        .with("zero.example", [ip("0.0.0.0")])
        .with("cgnat.example", [ip("100.100.1.1")])
        .with("empty.example", []);
    let cases = vec![
        (
            "http://internal.example/",
            non_public_from(
                "internal.example",
                "10.1.2.3",
                Class::Private,
                "10.0.0.0/8",
                None,
            ),
        ),
        (
            "http://loopback.example/",
            non_public_from(
                "loopback.example",
                "127.0.0.1",
                Class::Loopback,
                "127.0.0.0/8",
                None,
            ),
        ),
        (
            "http://mixed.example/",
            non_public_from(
                "mixed.example",
                "192.168.0.5",
                Class::Private,
                "192.168.0.0/16",
                None,
            ),
        ),
        (
            "https://mixed-v6.example/",
            non_public_from("mixed-v6.example", "::1", Class::Loopback, "::1/128", None),
        ),
        (
            "http://mapped.example/",
            non_public_from(
                "mapped.example",
                "::ffff:10.0.0.1",
                Class::Private,
                "10.0.0.0/8",
                Some(Embedding::Ipv4Mapped),
            ),
        ),
        (
            "http://mapped-loopback.example/",
            non_public_from(
                "mapped-loopback.example",
                "::ffff:127.0.0.1",
                Class::Loopback,
                "127.0.0.0/8",
                Some(Embedding::Ipv4Mapped),
            ),
        ),
        (
            "http://nat64.example/",
            non_public_from(
                "nat64.example",
                "64:ff9b::a00:1",
                Class::Private,
                "10.0.0.0/8",
                Some(Embedding::Nat64),
            ),
        ),
        (
            "http://metadata.example/",
            Rule::MetadataAddress {
                host: Some("metadata.example".into()),
                address: ip("169.254.169.254"),
            },
        ),
        (
            "http://mapped-metadata.example/",
            Rule::MetadataAddress {
                host: Some("mapped-metadata.example".into()),
                address: ip("::ffff:169.254.169.254"),
            },
        ),
        (
            "http://ula.example/",
            non_public_from(
                "ula.example",
                "fd00::1",
                Class::UniqueLocal,
                "fc00::/7",
                None,
            ),
        ),
        (
            "http://zero.example/",
            non_public_from(
                "zero.example",
                "0.0.0.0",
                Class::Unspecified,
                "0.0.0.0/32",
                None,
            ),
        ),
        (
            "http://cgnat.example/",
            non_public_from(
                "cgnat.example",
                "100.100.1.1",
                Class::SharedAddressSpace,
                "100.64.0.0/10",
                None,
            ),
        ),
        (
            "http://empty.example/",
            Rule::NoAddresses {
                host: "empty.example".into(),
            },
        ),
    ];
    (resolver, cases)
}

async fn refusals(
    resolver: StaticResolver,
    cases: &[(&'static str, Rule)],
) -> Vec<(&'static str, Rule)> {
    let fetcher = fetcher(FetchPolicy::default().deny_own_port(OWN_PORT), resolver);
    let mut actual = Vec::new();
    for (url, _) in cases {
        actual.push((*url, refused_rule(fetcher.fetch(&get(url)).await)));
    }
    actual
}

#[tokio::test]
async fn hostile_urls_are_refused_by_the_named_rule() {
    let cases = url_cases();
    assert!(cases.len() >= 90, "the matrix shrank to {}", cases.len());
    let actual = refusals(StaticResolver::new(), &cases).await;
    assert_eq!(actual, cases);
}

#[tokio::test]
async fn names_resolving_to_non_public_addresses_are_refused_by_the_named_rule() {
    let (resolver, cases) = dns_cases();
    let actual = refusals(resolver, &cases).await;
    assert_eq!(actual, cases);
}

#[tokio::test]
async fn refusal_messages_name_the_rule_and_hide_credentials() {
    let fetcher = fetcher(FetchPolicy::default(), StaticResolver::new());
    let error = fetcher
        .fetch(&get("http://admin:hunter2@10.0.0.1/"))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "refused to fetch http://[redacted]@10.0.0.1/: URLs with credentials (user@host) are refused"
    );
    let error = fetcher
        .fetch(&get("http://[::ffff:192.168.0.1]/"))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "refused to fetch http://[::ffff:c0a8:1]/: ::ffff:192.168.0.1 embeds an IPv4 address \
         (IPv4-mapped) that is in 192.168.0.0/16, a private network, not a public address"
    );
}

#[tokio::test]
async fn malformed_urls_are_invalid_not_refused() {
    let fetcher = fetcher(FetchPolicy::default(), StaticResolver::new());
    for input in [
        "not a url",
        "http://[fe80::1%25eth0]/",
        "http://256.256.256.256/",
        "http://0x100000000/",
        "http://[::1/",
        "",
    ] {
        let error = fetcher.fetch(&get(input)).await.unwrap_err();
        assert!(
            matches!(error, hearth_fetch::FetchError::InvalidUrl { .. }),
            "{input:?}: {error}"
        );
    }
}
