//! The webhook egress policy: which addresses webhook deliveries may connect to (`serve --webhook-egress`,
//! `--webhook-allow`).
//!
//! * `public` refuses every address that is not public: private, loopback, link-local, shared (CGNAT), multicast,
//!   documentation, benchmarking, reserved, unspecified and broadcast ranges of IPv4, and of IPv6 the loopback,
//!   unspecified, unique-local, site-local, link-local, multicast, documentation, discard-only, local-use NAT64 and
//!   IETF protocol ranges and everything outside global unicast (`2000::/3`). An IPv6 address that embeds an IPv4
//!   address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`)
//!   is judged by the IPv4 address it embeds.
//! * `any` (the default) keeps local use working (receivers on `localhost`, on the LAN), except link-local
//!   addresses (`169.254.0.0/16`, `fe80::/10`, and their embedded forms), where most cloud metadata services
//!   answer, and the big clouds' metadata and platform addresses outside that range ([`METADATA_SERVICES`]: AWS's
//!   `fd00:ec2::254`, Alibaba's `100.100.100.200`, Azure's `168.63.129.16`, ...): refused in every mode.
//! * `--webhook-allow CIDR` (repeatable) makes exceptions in either mode (an address, or the IPv4 address it
//!   embeds, in one of the networks is allowed).
//!
//! It is checked twice. When a `webhookUrl` is given ([`WebhookEgress::check_webhook_url`]: quotes, deposit
//! addresses, the routing-address and webhook-test helpers): an IP literal is judged, a host name is looked up and
//! refused when none of its addresses is allowed; the answer is 422 `InvalidRequest` naming the rule and the
//! address, and nothing is created. A name that cannot be looked up then is accepted (deliveries judge it again).
//! And at delivery, against the address actually connected to: the delivery client resolves names through
//! [`EgressResolver`], which hands the connector only the allowed addresses (so a name that resolves differently
//! later, DNS rebinding, cannot reach a refused one), IP literals are judged before sending, redirects are not
//! followed and no proxy is used. A refused delivery is recorded with the reason and not retried.
//!
//! The ranges are a table of `ipnet` networks ([`RANGES_V4`], [`RANGES_V6`]), the IANA special-purpose address
//! registries (RFC 6890 and its updates), most specific first; the cloud metadata addresses are one more table
//! ([`METADATA_SERVICES`]), each row with the provider documentation it comes from, judged before the ranges.
//! Host names such as Google's `metadata.google.internal` are not listed: they are judged by the addresses they
//! resolve to, like every name.

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bridge_contract::InvalidRequest;
use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use reqwest::dns::{Name, Resolve, Resolving};
use reqwest::Url;

/// How long the check of a `webhookUrl` waits for a host name's addresses before accepting it unjudged.
pub const LOOKUP_TIMEOUT: Duration = Duration::from_secs(2);

/// Which destinations webhook deliveries may reach (`serve --webhook-egress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum EgressMode {
    /// Every address except link-local ones and the clouds' metadata addresses: local receivers work.
    #[default]
    Any,
    /// Public addresses only.
    Public,
}

impl EgressMode {
    fn flag(self) -> &'static str {
        match self {
            EgressMode::Any => "--webhook-egress any",
            EgressMode::Public => "--webhook-egress public",
        }
    }
}

/// What a refused range is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeKind {
    /// A cloud provider's metadata or platform service ([`METADATA_SERVICES`]): refused in every mode.
    CloudMetadata(&'static MetadataService),
    /// `0.0.0.0/8`, `::/128`.
    Unspecified,
    Loopback,
    /// RFC 1918.
    Private,
    /// `169.254.0.0/16`, `fe80::/10`: refused in every mode.
    LinkLocal,
    /// `100.64.0.0/10`, RFC 6598.
    SharedCgnat,
    Multicast,
    Broadcast,
    Documentation,
    Benchmarking,
    /// `fc00::/7`, RFC 4193.
    UniqueLocal,
    /// `fec0::/10`, deprecated by RFC 3879.
    SiteLocal,
    /// `100::/64`, RFC 6666.
    DiscardOnly,
    /// `64:ff9b:1::/48`, RFC 8215.
    LocalNat64,
    /// `192.0.0.0/24`, `2001::/23`.
    ProtocolAssignments,
    /// `240.0.0.0/4`, `192.88.99.0/24`, IPv6 outside `2000::/3`.
    Reserved,
}

impl RangeKind {
    /// Whether `any` refuses it too (link-local and cloud metadata addresses), not only `public`.
    pub fn refused_in_every_mode(self) -> bool {
        matches!(self, RangeKind::LinkLocal | RangeKind::CloudMetadata(_))
    }

    fn describe(self) -> &'static str {
        match self {
            RangeKind::CloudMetadata(_) => "cloud metadata service",
            RangeKind::Unspecified => "unspecified (this network)",
            RangeKind::Loopback => "loopback",
            RangeKind::Private => "private network (RFC 1918)",
            RangeKind::LinkLocal => "link-local, where cloud metadata services answer",
            RangeKind::SharedCgnat => "shared address space (CGNAT, RFC 6598)",
            RangeKind::Multicast => "multicast",
            RangeKind::Broadcast => "broadcast",
            RangeKind::Documentation => "documentation",
            RangeKind::Benchmarking => "benchmarking",
            RangeKind::UniqueLocal => "unique-local (RFC 4193)",
            RangeKind::SiteLocal => "site-local (deprecated)",
            RangeKind::DiscardOnly => "discard-only (RFC 6666)",
            RangeKind::LocalNat64 => "local-use NAT64 (RFC 8215)",
            RangeKind::ProtocolAssignments => "IETF protocol assignments",
            RangeKind::Reserved => "reserved",
        }
    }
}

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), prefix)
}

const fn v6(segments: [u16; 8], prefix: u8) -> Ipv6Net {
    let [a, b, c, d, e, f, g, h] = segments;
    Ipv6Net::new_assert(Ipv6Addr::new(a, b, c, d, e, f, g, h), prefix)
}

/// A cloud provider's instance metadata (or platform) service address: a server that hands out credentials or
/// controls the machine to whatever on it asks, so a webhook must never be pointed at it.
#[derive(Debug, PartialEq, Eq)]
pub struct MetadataService {
    pub network: IpNet,
    /// Who answers there.
    pub providers: &'static str,
}

const fn v4_service(a: u8, b: u8, c: u8, d: u8, providers: &'static str) -> MetadataService {
    MetadataService { network: IpNet::V4(v4(a, b, c, d, 32)), providers }
}

const fn v6_service(segments: [u16; 8], providers: &'static str) -> MetadataService {
    MetadataService { network: IpNet::V6(v6(segments, 128)), providers }
}

/// The well-known metadata and platform addresses of the big clouds, refused in every mode unless
/// `--webhook-allow` lists them; the IPv6 forms that embed one of the IPv4 ones are refused as it is. Sources (each
/// provider's own documentation):
///
/// * 169.254.169.254: the instance metadata service of AWS EC2
///   (<https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html>), Google Compute Engine,
///   also reached as `metadata.google.internal` (<https://cloud.google.com/compute/docs/metadata/querying-metadata>),
///   Azure (<https://learn.microsoft.com/en-us/azure/virtual-machines/instance-metadata-service>), Oracle Cloud
///   (<https://docs.oracle.com/en-us/iaas/Content/Compute/Tasks/gettingmetadata.htm>), DigitalOcean
///   (<https://docs.digitalocean.com/reference/api/metadata/>), Hetzner Cloud
///   (<https://docs.hetzner.cloud/reference/cloud#server-metadata>) and OpenStack
///   (<https://docs.openstack.org/nova/latest/user/metadata.html>). It is link-local too.
/// * fd00:ec2::254: AWS's IPv6 endpoint of the same service, on Nitro instances (same AWS page), in the
///   unique-local range that `any` otherwise allows.
/// * 169.254.170.2 and 169.254.170.23, fd00:ec2::23: the credentials endpoints of AWS ECS tasks
///   (<https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-iam-roles.html>) and of the EKS Pod
///   Identity agent (<https://docs.aws.amazon.com/eks/latest/userguide/pod-id-how-it-works.html>).
/// * fd20:ce::254: Google Compute Engine's metadata server for IPv6-only instances (same Google page).
/// * 168.63.129.16: Azure's WireServer, the host's platform endpoint (DHCP, DNS, the VM agent, health probes), a
///   public address that Microsoft keeps for it in every region
///   (<https://learn.microsoft.com/en-us/azure/virtual-network/what-is-ip-address-168-63-129-16>).
/// * 100.100.100.200: Alibaba Cloud ECS's metadata service, in the shared (CGNAT) range that `any` otherwise
///   allows (<https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata>).
/// * 192.0.0.192: Oracle Cloud's other metadata address, in the IETF protocol range (Oracle's page above).
pub const METADATA_SERVICES: &[MetadataService] = &[
    v4_service(169, 254, 169, 254, "AWS, Google Cloud, Azure, Oracle Cloud, DigitalOcean, Hetzner, OpenStack"),
    v4_service(169, 254, 170, 2, "AWS ECS task credentials"),
    v4_service(169, 254, 170, 23, "AWS EKS Pod Identity"),
    v4_service(168, 63, 129, 16, "Azure WireServer"),
    v4_service(100, 100, 100, 200, "Alibaba Cloud"),
    v4_service(192, 0, 0, 192, "Oracle Cloud"),
    v6_service([0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254], "AWS"),
    v6_service([0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23], "AWS EKS Pod Identity"),
    v6_service([0xfd20, 0xce, 0, 0, 0, 0, 0, 0x254], "Google Cloud"),
];

/// The metadata service at `ip` (not judging embedded forms: [`classify`] does).
fn metadata_service(ip: IpAddr) -> Option<&'static MetadataService> {
    METADATA_SERVICES.iter().find(|service| service.network.contains(&ip))
}

/// The non-public IPv4 ranges, most specific first (the first that holds an address names it).
pub const RANGES_V4: &[(Ipv4Net, RangeKind)] = &[
    (v4(255, 255, 255, 255, 32), RangeKind::Broadcast),
    (v4(0, 0, 0, 0, 8), RangeKind::Unspecified),
    (v4(10, 0, 0, 0, 8), RangeKind::Private),
    (v4(100, 64, 0, 0, 10), RangeKind::SharedCgnat),
    (v4(127, 0, 0, 0, 8), RangeKind::Loopback),
    (v4(169, 254, 0, 0, 16), RangeKind::LinkLocal),
    (v4(172, 16, 0, 0, 12), RangeKind::Private),
    (v4(192, 0, 0, 0, 24), RangeKind::ProtocolAssignments),
    (v4(192, 0, 2, 0, 24), RangeKind::Documentation),
    (v4(192, 88, 99, 0, 24), RangeKind::Reserved),
    (v4(192, 168, 0, 0, 16), RangeKind::Private),
    (v4(198, 18, 0, 0, 15), RangeKind::Benchmarking),
    (v4(198, 51, 100, 0, 24), RangeKind::Documentation),
    (v4(203, 0, 113, 0, 24), RangeKind::Documentation),
    (v4(224, 0, 0, 0, 4), RangeKind::Multicast),
    (v4(240, 0, 0, 0, 4), RangeKind::Reserved),
];

/// The non-public IPv6 ranges, most specific first; an address outside all of them and outside [`GLOBAL_UNICAST`]
/// is [`RangeKind::Reserved`]. The forms that embed an IPv4 address ([`EMBEDDING`]) are judged before these.
pub const RANGES_V6: &[(Ipv6Net, RangeKind)] = &[
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 128), RangeKind::Unspecified),
    (v6([0, 0, 0, 0, 0, 0, 0, 1], 128), RangeKind::Loopback),
    (v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48), RangeKind::LocalNat64),
    (v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64), RangeKind::DiscardOnly),
    (v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48), RangeKind::Benchmarking),
    (v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), RangeKind::Documentation),
    (v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23), RangeKind::ProtocolAssignments),
    (v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20), RangeKind::Documentation),
    (v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7), RangeKind::UniqueLocal),
    (v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10), RangeKind::LinkLocal),
    (v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10), RangeKind::SiteLocal),
    (v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), RangeKind::Multicast),
];

/// IPv6 global unicast: everything outside it that no other range names is reserved.
pub const GLOBAL_UNICAST: Ipv6Net = v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3);

/// An IPv6 form that embeds an IPv4 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedding {
    /// `::ffff:a.b.c.d`.
    Mapped,
    /// `::a.b.c.d` (deprecated; not `::` or `::1`).
    Compatible,
    /// `64:ff9b::a.b.c.d`, RFC 6052.
    Nat64,
    /// `2002:AABB:CCDD::/48`, RFC 3056.
    SixToFour,
}

/// The IPv6 networks of the forms that embed an IPv4 address, and where it sits (byte offset).
pub const EMBEDDING: &[(Ipv6Net, Embedding, usize)] = &[
    (v6([0, 0, 0, 0, 0, 0xffff, 0, 0], 96), Embedding::Mapped, 12),
    (v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96), Embedding::Nat64, 12),
    (v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16), Embedding::SixToFour, 2),
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 96), Embedding::Compatible, 12),
];

impl Embedding {
    fn describe(self) -> &'static str {
        match self {
            Embedding::Mapped => "IPv4-mapped",
            Embedding::Compatible => "IPv4-compatible",
            Embedding::Nat64 => "NAT64",
            Embedding::SixToFour => "6to4",
        }
    }
}

/// The IPv4 address an IPv6 address embeds, and how.
pub fn embedded_ipv4(ip: Ipv6Addr) -> Option<(Ipv4Addr, Embedding)> {
    if ip.is_unspecified() || ip.is_loopback() {
        return None;
    }
    let (_, form, at) = EMBEDDING.iter().find(|(net, _, _)| net.contains(&ip))?;
    let o = ip.octets();
    Some((Ipv4Addr::new(o[*at], o[at + 1], o[at + 2], o[at + 3]), *form))
}

/// The non-public range an address is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    /// The range (of the embedded IPv4 address when `embedded` is set).
    pub range: IpNet,
    pub kind: RangeKind,
    /// The IPv4 address the address embeds, and how, when it was judged by it.
    pub embedded: Option<(Ipv4Addr, Embedding)>,
}

/// The refused range `ip` is in: a metadata address, else a non-public range (`None`: a public address that is
/// no metadata address).
pub fn classify(ip: IpAddr) -> Option<Classified> {
    match ip {
        IpAddr::V4(ip) => classify_v4(ip).map(|(range, kind)| Classified { range, kind, embedded: None }),
        IpAddr::V6(ip) => match embedded_ipv4(ip) {
            Some((inner, form)) => {
                classify_v4(inner).map(|(range, kind)| Classified { range, kind, embedded: Some((inner, form)) })
            }
            None => {
                if let Some(service) = metadata_service(IpAddr::V6(ip)) {
                    return Some(Classified {
                        range: service.network,
                        kind: RangeKind::CloudMetadata(service),
                        embedded: None,
                    });
                }
                let known = RANGES_V6.iter().find(|(net, _)| net.contains(&ip)).map(|(net, kind)| (*net, *kind));
                let (range, kind) = match known {
                    Some(found) => found,
                    None if GLOBAL_UNICAST.contains(&ip) => return None,
                    None => (Ipv6Net::new_assert(ip, 128), RangeKind::Reserved),
                };
                Some(Classified { range: range.into(), kind, embedded: None })
            }
        },
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<(IpNet, RangeKind)> {
    if let Some(service) = metadata_service(IpAddr::V4(ip)) {
        return Some((service.network, RangeKind::CloudMetadata(service)));
    }
    RANGES_V4.iter().find(|(net, _)| net.contains(&ip)).map(|(net, kind)| (IpNet::from(*net), *kind))
}

/// The IANA range of a metadata address, if it is in one (`169.254.169.254`: link-local).
fn iana_range(address: IpAddr) -> Option<RangeKind> {
    match address {
        IpAddr::V4(ip) => RANGES_V4.iter().find(|(net, _)| net.contains(&ip)).map(|(_, kind)| *kind),
        IpAddr::V6(ip) => RANGES_V6.iter().find(|(net, _)| net.contains(&ip)).map(|(_, kind)| *kind),
    }
}

/// Why an address is refused: the address, its range and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub address: IpAddr,
    pub classified: Classified,
    pub mode: EgressMode,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Classified { range, kind, embedded } = self.classified;
        write!(f, "{} is in {range} ({}", self.address, kind.describe())?;
        if let RangeKind::CloudMetadata(service) = kind {
            write!(f, " of {}", service.providers)?;
            if let Some(within) = iana_range(service.network.addr()) {
                write!(f, "; {}", within.describe())?;
            }
        }
        if let Some((inner, form)) = embedded {
            write!(f, ", as the {} form of {inner}", form.describe())?;
        }
        match kind {
            RangeKind::LinkLocal => {
                f.write_str("): the webhook egress policy refuses link-local addresses in every mode")?
            }
            RangeKind::CloudMetadata(_) => {
                f.write_str("): the webhook egress policy refuses cloud metadata addresses in every mode")?
            }
            _ => write!(f, "): the webhook egress policy `{}` allows public addresses only", self.mode.flag())?,
        }
        f.write_str("; `--webhook-allow CIDR` makes an exception")
    }
}

impl std::error::Error for Refusal {}

/// Finds the addresses of a host name. The sandbox's is the system's resolver ([`SystemLookup`]); a test can
/// answer names itself (every answer still goes through the policy).
#[async_trait]
pub trait HostLookup: Send + Sync + 'static {
    async fn lookup(&self, host: &str) -> io::Result<Vec<IpAddr>>;
}

/// The system's resolver (`getaddrinfo`, through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

#[async_trait]
impl HostLookup for SystemLookup {
    async fn lookup(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        Ok(tokio::net::lookup_host((host, 0)).await?.map(|a| a.ip()).collect())
    }
}

/// The policy: a mode, the allowed networks, and how host names are looked up.
#[derive(Clone)]
pub struct WebhookEgress {
    mode: EgressMode,
    allow: Vec<IpNet>,
    lookup: Arc<dyn HostLookup>,
}

impl Default for WebhookEgress {
    /// `any`, no exception, the system's resolver.
    fn default() -> Self {
        Self::new(EgressMode::Any)
    }
}

impl fmt::Debug for WebhookEgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookEgress").field("mode", &self.mode).field("allow", &self.allow).finish_non_exhaustive()
    }
}

impl WebhookEgress {
    pub fn new(mode: EgressMode) -> Self {
        Self { mode, allow: Vec::new(), lookup: Arc::new(SystemLookup) }
    }

    /// The policy with exceptions: addresses in these networks are allowed in every mode.
    pub fn allowing(mut self, networks: impl IntoIterator<Item = IpNet>) -> Self {
        self.allow.extend(networks);
        self
    }

    /// The policy with host names looked up by `lookup` instead of the system's resolver.
    pub fn with_lookup(mut self, lookup: Arc<dyn HostLookup>) -> Self {
        self.lookup = lookup;
        self
    }

    pub fn mode(&self) -> EgressMode {
        self.mode
    }

    /// Whether a delivery may connect to `ip`.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Refusal> {
        let embedded = match ip {
            IpAddr::V6(v6) => embedded_ipv4(v6).map(|(inner, _)| IpAddr::V4(inner)),
            IpAddr::V4(_) => None,
        };
        if self.allow.iter().any(|net| net.contains(&ip) || embedded.is_some_and(|inner| net.contains(&inner))) {
            return Ok(());
        }
        match classify(ip) {
            Some(classified) if self.mode == EgressMode::Public || classified.kind.refused_in_every_mode() => {
                Err(Refusal { address: ip, classified, mode: self.mode })
            }
            _ => Ok(()),
        }
    }

    /// The refusal of a URL whose host is an IP literal (`None` for a host name, or no host).
    pub fn check_literal(&self, url: &Url) -> Result<(), Refusal> {
        match url.host() {
            Some(url::Host::Ipv4(ip)) => self.check_ip(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => self.check_ip(IpAddr::V6(ip)),
            Some(url::Host::Domain(_)) | None => Ok(()),
        }
    }

    /// The addresses of `host` a delivery may connect to: all of them when some are allowed, else the refusal of
    /// the first.
    pub async fn allowed_addresses(&self, host: &str) -> io::Result<Result<Vec<IpAddr>, Refusal>> {
        let addresses = self.lookup.lookup(host).await?;
        let mut first_refusal = None;
        let allowed: Vec<IpAddr> = addresses
            .into_iter()
            .filter(|ip| match self.check_ip(*ip) {
                Ok(()) => true,
                Err(refusal) => {
                    first_refusal.get_or_insert(refusal);
                    false
                }
            })
            .collect();
        Ok(match (allowed.is_empty(), first_refusal) {
            (true, Some(refusal)) => Err(refusal),
            _ => Ok(allowed),
        })
    }

    /// The check of a `webhookUrl` when it is given: 422 `InvalidRequest` naming the rule and the address when the
    /// policy refuses its IP literal, or every address its host name has now. Text that is no URL with a host is
    /// not judged (there is nothing to connect to; its deliveries fail), nor is a name that cannot be looked up
    /// within [`LOOKUP_TIMEOUT`].
    pub async fn check_webhook_url(&self, webhook_url: Option<&str>) -> Result<(), InvalidRequest> {
        let Some(url) = webhook_url.and_then(|u| Url::parse(u).ok()) else {
            return Ok(());
        };
        let shown = crate::domain::webhook_url::redacted(url.as_str()).into_owned();
        let refused = |why: String| InvalidRequest::new(format!("webhookUrl {shown} is refused: {why}"));
        self.check_literal(&url).map_err(|r| refused(r.to_string()))?;
        let Some(url::Host::Domain(host)) = url.host() else {
            return Ok(());
        };
        match tokio::time::timeout(LOOKUP_TIMEOUT, self.allowed_addresses(host)).await {
            Ok(Ok(Err(refusal))) => Err(refused(format!("{host} has no address the policy allows: {refusal}"))),
            Ok(Ok(Ok(_))) | Ok(Err(_)) | Err(_) => Ok(()),
        }
    }

    /// The resolver of the delivery client: names resolve to their allowed addresses only.
    pub fn resolver(&self) -> Arc<EgressResolver> {
        Arc::new(EgressResolver(self.clone()))
    }

    /// A client builder for requests to webhook receivers under this policy: host names resolved through
    /// [`Self::resolver`] (the connector gets only allowed addresses), no redirect followed, no proxy. The
    /// deliverer's client and the receiver check's are built from it; an IP literal is judged with
    /// [`Self::check_literal`] before each request.
    pub fn client_builder(&self) -> reqwest::ClientBuilder {
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).no_proxy().dns_resolver(self.resolver())
    }
}

/// The delivery client's DNS resolver (`reqwest::dns::Resolve`): the connector is handed only the addresses the
/// policy allows; a name with none fails with the [`Refusal`], before any connection is made.
pub struct EgressResolver(WebhookEgress);

impl Resolve for EgressResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.0.clone();
        Box::pin(async move {
            let allowed = policy.allowed_addresses(name.as_str()).await??;
            let addresses: Vec<SocketAddr> = allowed.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect();
            Ok(Box::new(addresses.into_iter()) as Box<dyn Iterator<Item = SocketAddr> + Send>)
        })
    }
}

/// The [`Refusal`] somewhere in an error's chain of sources (a delivery refused by [`EgressResolver`]).
pub fn refusal_in<'e>(error: &'e (dyn std::error::Error + 'static)) -> Option<&'e Refusal> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(refusal) = e.downcast_ref::<Refusal>() {
            return Some(refusal);
        }
        current = e.source();
    }
    None
}
