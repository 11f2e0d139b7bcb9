//! The special-purpose address table: which IP addresses are not public.
//!
//! `std`'s `IpAddr::is_global` is unstable, so the IANA IPv4 and IPv6 Special-Purpose
//! Address Registries are kept here as an explicit table. IPv6 addresses that embed an
//! IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are unwrapped and the
//! embedded address is classified; any IPv6 address outside the global unicast space
//! `2000::/3` is treated as not public.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};

/// The kind of special-purpose block an address belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// `0.0.0.0`, `::`.
    Unspecified,
    /// `0.0.0.0/8`, "this network".
    ThisNetwork,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// Carrier-grade NAT, `100.64.0.0/10`.
    SharedAddressSpace,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// `192.0.0.0/24`, `2001::/23`.
    ProtocolAssignments,
    /// TEST-NET-1/2/3, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// The deprecated 6to4 relay anycast block `192.88.99.0/24`.
    SixToFourRelay,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `240.0.0.0/4`.
    Reserved,
    /// The deprecated IPv4-compatible block `::/96`.
    Ipv4Compatible,
    /// Local-use IPv4/IPv6 translation, `64:ff9b:1::/48`.
    LocalTranslation,
    /// Discard-only, `100::/64`.
    DiscardOnly,
    /// Teredo, `2001::/32`.
    Teredo,
    /// SRv6 segment identifiers, `5f00::/16`.
    SegmentRouting,
    /// Unique local, `fc00::/7`.
    UniqueLocal,
    /// The deprecated site-local block `fec0::/10`.
    SiteLocal,
    /// Outside the IPv6 global unicast space `2000::/3`.
    NotGlobalUnicast,
}

impl AddressClass {
    /// Whether the class is a private network a user may open for a source they
    /// configured: loopback, RFC 1918, shared address space and unique local. Link-local
    /// stays closed, since cloud metadata services live there.
    pub fn is_private_network(self) -> bool {
        matches!(
            self,
            AddressClass::Loopback
                | AddressClass::Private
                | AddressClass::SharedAddressSpace
                | AddressClass::UniqueLocal
        )
    }

    fn describe(self) -> &'static str {
        match self {
            AddressClass::Unspecified => "the unspecified address",
            AddressClass::ThisNetwork => "\"this network\"",
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "a private network",
            AddressClass::SharedAddressSpace => "shared address space (carrier-grade NAT)",
            AddressClass::LinkLocal => "link-local",
            AddressClass::ProtocolAssignments => "IETF protocol assignments",
            AddressClass::Documentation => "reserved for documentation",
            AddressClass::Benchmarking => "reserved for benchmarking",
            AddressClass::SixToFourRelay => "the deprecated 6to4 relay anycast block",
            AddressClass::Multicast => "multicast",
            AddressClass::Broadcast => "the limited broadcast address",
            AddressClass::Reserved => "reserved for future use",
            AddressClass::Ipv4Compatible => "the deprecated IPv4-compatible block",
            AddressClass::LocalTranslation => "local-use IPv4/IPv6 translation",
            AddressClass::DiscardOnly => "discard-only",
            AddressClass::Teredo => "Teredo tunnelling",
            AddressClass::SegmentRouting => "SRv6 segment identifiers",
            AddressClass::UniqueLocal => "unique local",
            AddressClass::SiteLocal => "the deprecated site-local block",
            AddressClass::NotGlobalUnicast => "outside the global unicast space 2000::/3",
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// How an IPv6 address carries an IPv4 address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Embedding {
    /// `::ffff:a.b.c.d`.
    Ipv4Mapped,
    /// `::a.b.c.d` (deprecated).
    Ipv4Compatible,
    /// NAT64, `64:ff9b::/96` or `64:ff9b:1::/48`.
    Nat64,
    /// 6to4, `2002:AABB:CCDD::/48`.
    SixToFour,
}

impl fmt::Display for Embedding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Embedding::Ipv4Mapped => "IPv4-mapped",
            Embedding::Ipv4Compatible => "IPv4-compatible",
            Embedding::Nat64 => "NAT64",
            Embedding::SixToFour => "6to4",
        })
    }
}

/// The special-purpose block an address falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecialUse {
    /// The kind of block.
    pub class: AddressClass,
    /// The registry block that matched (for an embedded address, the IPv4 block).
    pub network: IpNet,
    /// How an IPv4 address was embedded, when the match is on the embedded address.
    pub via: Option<Embedding>,
}

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), prefix)
}

const fn v6(segments: [u16; 8], prefix: u8) -> Ipv6Net {
    let [a, b, c, d, e, f, g, h] = segments;
    Ipv6Net::new_assert(Ipv6Addr::new(a, b, c, d, e, f, g, h), prefix)
}

/// IPv4 special-purpose blocks, most specific first.
const IPV4_TABLE: &[(Ipv4Net, AddressClass)] = &[
    (v4(0, 0, 0, 0, 32), AddressClass::Unspecified),
    (v4(0, 0, 0, 0, 8), AddressClass::ThisNetwork),
    (v4(10, 0, 0, 0, 8), AddressClass::Private),
    (v4(100, 64, 0, 0, 10), AddressClass::SharedAddressSpace),
    (v4(127, 0, 0, 0, 8), AddressClass::Loopback),
    (v4(169, 254, 0, 0, 16), AddressClass::LinkLocal),
    (v4(172, 16, 0, 0, 12), AddressClass::Private),
    (v4(192, 0, 0, 0, 24), AddressClass::ProtocolAssignments),
    (v4(192, 0, 2, 0, 24), AddressClass::Documentation),
    (v4(192, 88, 99, 0, 24), AddressClass::SixToFourRelay),
    (v4(192, 168, 0, 0, 16), AddressClass::Private),
    (v4(198, 18, 0, 0, 15), AddressClass::Benchmarking),
    (v4(198, 51, 100, 0, 24), AddressClass::Documentation),
    (v4(203, 0, 113, 0, 24), AddressClass::Documentation),
    (v4(224, 0, 0, 0, 4), AddressClass::Multicast),
    (v4(255, 255, 255, 255, 32), AddressClass::Broadcast),
    (v4(240, 0, 0, 0, 4), AddressClass::Reserved),
];

/// IPv6 special-purpose blocks that embed no IPv4 address, most specific first.
const IPV6_TABLE: &[(Ipv6Net, AddressClass)] = &[
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 128), AddressClass::Unspecified),
    (v6([0, 0, 0, 0, 0, 0, 0, 1], 128), AddressClass::Loopback),
    (
        v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64),
        AddressClass::DiscardOnly,
    ),
    (
        v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48),
        AddressClass::Benchmarking,
    ),
    (v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32), AddressClass::Teredo),
    (
        v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23),
        AddressClass::ProtocolAssignments,
    ),
    (
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),
        AddressClass::Documentation,
    ),
    (
        v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),
        AddressClass::Documentation,
    ),
    (
        v6([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16),
        AddressClass::SegmentRouting,
    ),
    (
        v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),
        AddressClass::UniqueLocal,
    ),
    (
        v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),
        AddressClass::LinkLocal,
    ),
    (
        v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),
        AddressClass::SiteLocal,
    ),
    (
        v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),
        AddressClass::Multicast,
    ),
];

const IPV4_MAPPED: Ipv6Net = v6([0, 0, 0, 0, 0, 0xffff, 0, 0], 96);
const IPV4_COMPATIBLE: Ipv6Net = v6([0, 0, 0, 0, 0, 0, 0, 0], 96);
const NAT64_WELL_KNOWN: Ipv6Net = v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);
const NAT64_LOCAL: Ipv6Net = v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48);
const SIX_TO_FOUR: Ipv6Net = v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16);
const GLOBAL_UNICAST: Ipv6Net = v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3);

fn low_ipv4(address: Ipv6Addr) -> Ipv4Addr {
    let [.., a, b, c, d] = address.octets();
    Ipv4Addr::new(a, b, c, d)
}

/// The IPv4 address an IPv6 address carries, and how, if it carries one.
///
/// `::` and `::1` sit inside the IPv4-compatible block but are the IPv6 unspecified
/// and loopback addresses, so they are not unwrapped.
pub fn embedded_ipv4(address: Ipv6Addr) -> Option<(Ipv4Addr, Embedding)> {
    if IPV4_MAPPED.contains(&address) {
        return Some((low_ipv4(address), Embedding::Ipv4Mapped));
    }
    if IPV4_COMPATIBLE.contains(&address) && address.segments()[6] != 0 {
        return Some((low_ipv4(address), Embedding::Ipv4Compatible));
    }
    if NAT64_WELL_KNOWN.contains(&address) || NAT64_LOCAL.contains(&address) {
        return Some((low_ipv4(address), Embedding::Nat64));
    }
    if SIX_TO_FOUR.contains(&address) {
        let octets = address.octets();
        return Some((
            Ipv4Addr::new(octets[2], octets[3], octets[4], octets[5]),
            Embedding::SixToFour,
        ));
    }
    None
}

fn special_ipv4(address: Ipv4Addr) -> Option<SpecialUse> {
    IPV4_TABLE
        .iter()
        .find(|(network, _)| network.contains(&address))
        .map(|(network, class)| SpecialUse {
            class: *class,
            network: IpNet::V4(*network),
            via: None,
        })
}

fn special_ipv6(address: Ipv6Addr) -> Option<SpecialUse> {
    if let Some((inner, via)) = embedded_ipv4(address) {
        if let Some(special) = special_ipv4(inner) {
            return Some(SpecialUse {
                via: Some(via),
                ..special
            });
        }
        // The embedded address is public; the carrier block may still not be.
        let carrier = match via {
            Embedding::Ipv4Compatible => Some((IPV4_COMPATIBLE, AddressClass::Ipv4Compatible)),
            Embedding::Nat64 if NAT64_LOCAL.contains(&address) => {
                Some((NAT64_LOCAL, AddressClass::LocalTranslation))
            }
            Embedding::Ipv4Mapped | Embedding::Nat64 | Embedding::SixToFour => None,
        };
        return carrier.map(|(network, class)| SpecialUse {
            class,
            network: IpNet::V6(network),
            via: None,
        });
    }
    if let Some((network, class)) = IPV6_TABLE
        .iter()
        .find(|(network, _)| network.contains(&address))
    {
        return Some(SpecialUse {
            class: *class,
            network: IpNet::V6(*network),
            via: None,
        });
    }
    if GLOBAL_UNICAST.contains(&address) {
        None
    } else {
        Some(SpecialUse {
            class: AddressClass::NotGlobalUnicast,
            network: IpNet::V6(GLOBAL_UNICAST),
            via: None,
        })
    }
}

/// The special-purpose block `address` falls in, or `None` for a public address.
pub fn special_purpose(address: IpAddr) -> Option<SpecialUse> {
    match address {
        IpAddr::V4(address) => special_ipv4(address),
        IpAddr::V6(address) => special_ipv6(address),
    }
}

/// Cloud metadata endpoints, denied even where private networks are allowed.
const METADATA_ADDRESSES: &[IpAddr] = &[
    // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle (IMDS).
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    // AWS ECS task metadata.
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2)),
    // AWS IMDS over IPv6.
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
    // Alibaba Cloud.
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    // Azure wire server.
    IpAddr::V4(Ipv4Addr::new(168, 63, 129, 16)),
    // Oracle Cloud.
    IpAddr::V4(Ipv4Addr::new(192, 0, 0, 192)),
];

/// Whether `address`, or the IPv4 address it embeds, is a cloud metadata endpoint.
pub fn is_metadata_address(address: IpAddr) -> bool {
    if METADATA_ADDRESSES.contains(&address) {
        return true;
    }
    match address {
        IpAddr::V6(v6) => embedded_ipv4(v6)
            .is_some_and(|(inner, _)| METADATA_ADDRESSES.contains(&IpAddr::V4(inner))),
        IpAddr::V4(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn class_of(text: &str) -> Option<(AddressClass, Option<Embedding>)> {
        let address: IpAddr = text.parse().unwrap();
        special_purpose(address).map(|special| (special.class, special.via))
    }

    #[test]
    fn ipv4_blocks_are_classified() {
        let cases = [
            ("0.0.0.0", AddressClass::Unspecified),
            ("0.1.2.3", AddressClass::ThisNetwork),
            ("10.255.0.1", AddressClass::Private),
            ("100.64.0.1", AddressClass::SharedAddressSpace),
            ("100.127.255.255", AddressClass::SharedAddressSpace),
            ("127.0.0.1", AddressClass::Loopback),
            ("127.255.255.254", AddressClass::Loopback),
            ("169.254.1.1", AddressClass::LinkLocal),
            ("172.16.0.1", AddressClass::Private),
            ("172.31.255.255", AddressClass::Private),
            ("192.0.0.8", AddressClass::ProtocolAssignments),
            ("192.0.2.1", AddressClass::Documentation),
            ("192.88.99.1", AddressClass::SixToFourRelay),
            ("192.168.1.1", AddressClass::Private),
            ("198.18.0.1", AddressClass::Benchmarking),
            ("198.19.255.255", AddressClass::Benchmarking),
            ("198.51.100.7", AddressClass::Documentation),
            ("203.0.113.9", AddressClass::Documentation),
            ("224.0.0.1", AddressClass::Multicast),
            ("239.255.255.250", AddressClass::Multicast),
            ("240.0.0.1", AddressClass::Reserved),
            ("255.255.255.255", AddressClass::Broadcast),
        ];
        for (text, class) in cases {
            assert_eq!(class_of(text), Some((class, None)), "{text}");
        }
    }

    #[test]
    fn public_ipv4_addresses_pass() {
        for text in [
            "1.1.1.1",
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "192.31.196.1",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
        ] {
            assert_eq!(class_of(text), None, "{text}");
        }
    }

    #[test]
    fn ipv6_blocks_are_classified() {
        let cases = [
            ("::", AddressClass::Unspecified),
            ("::1", AddressClass::Loopback),
            ("100::1", AddressClass::DiscardOnly),
            ("2001::1", AddressClass::Teredo),
            ("2001:2::1", AddressClass::Benchmarking),
            ("2001:10::1", AddressClass::ProtocolAssignments),
            ("2001:db8::1", AddressClass::Documentation),
            ("3fff::1", AddressClass::Documentation),
            ("5f00::1", AddressClass::SegmentRouting),
            ("fc00::1", AddressClass::UniqueLocal),
            ("fd12:3456::1", AddressClass::UniqueLocal),
            ("fe80::1", AddressClass::LinkLocal),
            ("fec0::1", AddressClass::SiteLocal),
            ("ff02::1", AddressClass::Multicast),
            ("1234::1", AddressClass::NotGlobalUnicast),
            ("4000::1", AddressClass::NotGlobalUnicast),
        ];
        for (text, class) in cases {
            assert_eq!(class_of(text), Some((class, None)), "{text}");
        }
    }

    #[test]
    fn embedded_ipv4_is_unwrapped() {
        let cases = [
            (
                "::ffff:127.0.0.1",
                AddressClass::Loopback,
                Embedding::Ipv4Mapped,
            ),
            (
                "::ffff:10.0.0.1",
                AddressClass::Private,
                Embedding::Ipv4Mapped,
            ),
            (
                "::127.0.0.1",
                AddressClass::Loopback,
                Embedding::Ipv4Compatible,
            ),
            (
                "64:ff9b::127.0.0.1",
                AddressClass::Loopback,
                Embedding::Nat64,
            ),
            (
                "64:ff9b::a9fe:a9fe",
                AddressClass::LinkLocal,
                Embedding::Nat64,
            ),
            (
                "64:ff9b:1::10.0.0.1",
                AddressClass::Private,
                Embedding::Nat64,
            ),
            (
                "2002:7f00:1::",
                AddressClass::Loopback,
                Embedding::SixToFour,
            ),
            (
                "2002:c0a8:101::1",
                AddressClass::Private,
                Embedding::SixToFour,
            ),
        ];
        for (text, class, via) in cases {
            assert_eq!(class_of(text), Some((class, Some(via))), "{text}");
        }
    }

    #[test]
    fn embedded_public_ipv4_follows_its_carrier() {
        assert_eq!(class_of("::ffff:8.8.8.8"), None);
        assert_eq!(class_of("64:ff9b::8.8.8.8"), None);
        assert_eq!(class_of("2002:808:808::1"), None);
        assert_eq!(class_of("2606:4700::1111"), None);
        assert_eq!(
            class_of("::8.8.8.8"),
            Some((AddressClass::Ipv4Compatible, None))
        );
        assert_eq!(
            class_of("64:ff9b:1::8.8.8.8"),
            Some((AddressClass::LocalTranslation, None))
        );
    }

    #[test]
    fn metadata_addresses_are_recognised_in_every_spelling() {
        for text in [
            "169.254.169.254",
            "169.254.170.2",
            "fd00:ec2::254",
            "100.100.100.200",
            "168.63.129.16",
            "192.0.0.192",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::",
            "::ffff:168.63.129.16",
        ] {
            assert!(is_metadata_address(text.parse().unwrap()), "{text}");
        }
        assert!(!is_metadata_address("169.254.169.253".parse().unwrap()));
    }

    proptest::proptest! {
        #[test]
        fn mapped_addresses_classify_like_their_ipv4(raw in proptest::prelude::any::<u32>()) {
            let inner = Ipv4Addr::from(raw);
            let mapped = IpAddr::V6(inner.to_ipv6_mapped());
            let expected = special_purpose(IpAddr::V4(inner)).map(|special| special.class);
            proptest::prop_assert_eq!(special_purpose(mapped).map(|special| special.class), expected);
        }
    }
}
