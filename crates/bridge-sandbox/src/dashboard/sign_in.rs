//! What bounds signing in (docs/operations.md, "Threats"): sign-in is the one dashboard request that needs no
//! session, so it is what a client without a credential, or a tenant flooding it, can reach.
//!
//! * **Budgets** ([`Budget`]): sign-ins per client address (every attempt, counted before its form is read) and
//!   per project (every accepted credential, counted before its session is made), each a GCRA budget keyed by
//!   address or project ([`KeyedBudget`], as the API's per-project rate limit). A sign-in over either is refused
//!   429 with `Retry-After` ([`Throttled`]) and the sign-in page saying when to try again; nothing is made. One project's sign-ins
//!   spend only its own budget, and one address's only its own.
//! * **The client's address** ([`client_address`]): the TCP peer's, or, when the peer is one of the operator's
//!   trusted proxies (`serve --trusted-proxy`), the last address of `X-Forwarded-For` that is not one (each proxy
//!   appends the address it got the request from, so the entries before the last untrusted one are the client's
//!   to write). An IPv6 address is budgeted by its /64 network, which one host commonly holds whole.
//! * **The form's body**: read within [`bridge_server::UnauthenticatedBody`]'s bounds, as the API reads the body
//!   of an operation without authentication (a few KiB within a short deadline).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use axum::http::HeaderMap;
use bridge_server::{Throttled, UnauthenticatedBody};
use ipnet::{IpNet, Ipv6Net};

use crate::infra::rate_limit::{KeyedBudget, RateLimit};

/// How many sign-ins are served: per client address, per project.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub per_address: RateLimit,
    pub per_project: RateLimit,
}

impl Default for Budget {
    /// 30 a minute per address and 10 a minute per project, each all at once after a quiet minute.
    fn default() -> Self {
        Self { per_address: RateLimit::per_minute(30), per_project: RateLimit::per_minute(10) }
    }
}

/// Everything that bounds sign-in, as `serve` was told.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    pub budget: Budget,
    /// The proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<IpNet>,
    /// How the sign-in form is read.
    pub body: UnauthenticatedBody,
}

/// The budgets of this instance.
pub struct Gate {
    per_address: KeyedBudget<IpNet>,
    per_project: KeyedBudget<String>,
    pub limits: Limits,
}

impl Gate {
    pub fn new(limits: Limits) -> Self {
        Self {
            per_address: KeyedBudget::new(limits.budget.per_address),
            per_project: KeyedBudget::new(limits.budget.per_project),
            limits,
        }
    }

    /// Takes one sign-in from the budget of the address the request comes from (`peer`: the TCP peer, when
    /// known); a refusal says when to retry.
    pub fn admit_address(&self, peer: Option<SocketAddr>, headers: &HeaderMap) -> Result<(), Throttled> {
        let address = client_address(peer.map(|p| p.ip()), headers, &self.limits.trusted_proxies);
        let limit = self.limits.budget.per_address;
        self.per_address.take(&budget_key(address)).map_err(|retry_after| over(retry_after, "this address", limit))
    }

    /// Takes one sign-in from `project`'s budget; a refusal says when to retry.
    pub fn admit_project(&self, project: &str) -> Result<(), Throttled> {
        let limit = self.limits.budget.per_project;
        self.per_project
            .take(&project.to_owned())
            .map_err(|retry_after| over(retry_after, &format!("project {project}"), limit))
    }
}

/// The refusal of a sign-in over `whose` budget of `limit`.
fn over(retry_after: Duration, whose: &str, limit: RateLimit) -> Throttled {
    let mut throttled = Throttled { message: String::new(), retry_after };
    throttled.message = format!(
        "Too many sign-ins of {whose} (at most {} a minute); try again in {} s",
        (limit.per_second() * 60.0).round(),
        throttled.retry_after_header()
    );
    throttled
}

/// The address a request comes from: `peer`, or, while the address at hand is one of the `trusted` proxies, the
/// `X-Forwarded-For` entry before it (read from the right). An entry that is not an address stops the walk at
/// the proxy that wrote it. With no peer (a request not served by the sandbox's accept loop): the unspecified
/// address, one budget for all such requests.
pub fn client_address(peer: Option<IpAddr>, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let Some(mut address) = peer else { return IpAddr::from([0, 0, 0, 0]) };
    let forwarded: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    for entry in forwarded.iter().rev() {
        if !trusted.iter().any(|net| net.contains(&address)) {
            break;
        }
        match entry.parse::<IpAddr>() {
            Ok(before) => address = before,
            Err(_) => break,
        }
    }
    address
}

/// The budget key of an address: itself (IPv4), or its /64 network (IPv6).
fn budget_key(address: IpAddr) -> IpNet {
    match address {
        IpAddr::V4(_) => IpNet::from(address),
        IpAddr::V6(v6) => IpNet::V6(Ipv6Net::new(v6, 64).map(|n| n.trunc()).unwrap_or_else(|_| Ipv6Net::from(v6))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forwarded(values: &[&'static str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append("x-forwarded-for", v.parse().unwrap());
        }
        headers
    }

    #[test]
    fn the_client_is_the_peer_unless_the_peer_is_a_trusted_proxy() {
        let proxy: IpAddr = "10.0.0.5".parse().unwrap();
        let trusted: Vec<IpNet> = vec!["10.0.0.0/24".parse().unwrap()];
        let headers = forwarded(&["1.1.1.1, 203.0.113.7"]);
        // Not trusted: the header is the client's to write, and ignored.
        assert_eq!(client_address(Some(proxy), &headers, &[]), proxy);
        // Trusted: the last untrusted entry, not the forged one before it.
        assert_eq!(client_address(Some(proxy), &headers, &trusted), "203.0.113.7".parse::<IpAddr>().unwrap());
        // Two proxies of ours in a row, headers split over two lines.
        let two = forwarded(&["1.1.1.1", "203.0.113.7, 10.0.0.9"]);
        assert_eq!(client_address(Some(proxy), &two, &trusted), "203.0.113.7".parse::<IpAddr>().unwrap());
        // Garbage stops at the proxy that wrote it.
        assert_eq!(client_address(Some(proxy), &forwarded(&["nonsense"]), &trusted), proxy);
        assert_eq!(client_address(None, &headers, &trusted), IpAddr::from([0, 0, 0, 0]));
    }

    #[test]
    fn an_ipv6_client_is_budgeted_by_its_64_network() {
        let a = budget_key("2001:db8:1:2::1".parse().unwrap());
        assert_eq!(a, budget_key("2001:db8:1:2:ffff::9".parse().unwrap()));
        assert_ne!(a, budget_key("2001:db8:1:3::1".parse().unwrap()));
        assert_eq!(budget_key("192.0.2.1".parse().unwrap()), "192.0.2.1/32".parse::<IpNet>().unwrap());
    }

    #[test]
    fn budgets_are_per_address_and_per_project() {
        let limits = Limits {
            budget: Budget { per_address: RateLimit::per_minute(3), per_project: RateLimit::per_minute(2) },
            ..Limits::default()
        };
        let gate = Gate::new(limits);
        let (one, two): (SocketAddr, SocketAddr) = ("192.0.2.1:1".parse().unwrap(), "192.0.2.2:1".parse().unwrap());
        let none = HeaderMap::new();
        for _ in 0..3 {
            assert!(gate.admit_address(Some(one), &none).is_ok());
        }
        let over = gate.admit_address(Some(one), &none).unwrap_err();
        assert!(over.message.starts_with("Too many sign-ins of this address (at most 3 a minute)"), "{over:?}");
        assert!((19..=20).contains(&over.retry_after_header()), "{over:?}");
        assert!(gate.admit_address(Some(two), &none).is_ok(), "another address has its own budget");
        assert!(gate.admit_project("a").is_ok() && gate.admit_project("a").is_ok());
        assert!(gate.admit_project("a").unwrap_err().message.contains("of project a (at most 2 a minute)"));
        assert!(gate.admit_project("b").is_ok(), "another project has its own budget");
    }
}
