//! The proxy's upstream: the only place a request is forwarded to, and the only place the proxy connects to.
//!
//! * [`Upstream::uri_for`] builds the upstream request's URI from parts: the upstream's scheme and authority, its
//!   path prefix, and the request target's path and query, nothing else. An absolute-form target
//!   (`GET http://elsewhere.example/bridge/...`) keeps only its path and query: the authority a client names is
//!   ignored, as a reverse proxy has exactly one origin behind it. An asterisk-form target (`OPTIONS *`) and an
//!   authority-form one (`CONNECT host:port`) have no path to forward: [`Unforwardable`], which the proxy answers
//!   400 `ProxyError`.
//! * [`UpstreamOnly`] wraps the HTTP client's connector: a URI whose scheme and authority are not the upstream's
//!   is refused before anything is resolved or connected, so no bug in building URIs can make the proxy talk to
//!   another host (with the credentials of the request).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use anyhow::Context as _;
use http::uri::{Authority, PathAndQuery, Scheme};
use http::{Method, Uri};

/// Where every request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    scheme: Scheme,
    authority: Authority,
    /// The path prefix, without a trailing `/` (empty for none).
    prefix: String,
}

/// A request target the proxy does not forward: it names no path of the upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unforwardable {
    /// `OPTIONS *`: a question about the proxy itself.
    Asterisk,
    /// `CONNECT host:port`: a tunnel request; this is a reverse proxy.
    Authority,
    /// A path and query that do not make a URI with the upstream's prefix.
    Malformed(String),
}

impl std::fmt::Display for Unforwardable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Asterisk => f.write_str(
                "an asterisk-form request (OPTIONS *) is about the proxy itself and is not forwarded: send OPTIONS with a path",
            ),
            Self::Authority => f.write_str(
                "an authority-form request (CONNECT) is not forwarded: this is a reverse proxy of one upstream, not a tunnel",
            ),
            Self::Malformed(e) => write!(f, "the request target cannot be forwarded: {e}"),
        }
    }
}

impl Upstream {
    /// The upstream of `--upstream URL`: `http://` or `https://` (with the `https` feature), a host, an optional
    /// path prefix.
    pub fn parse(url: &str) -> anyhow::Result<Self> {
        let uri: Uri = url.parse().with_context(|| format!("--upstream {url:?} is not a URL"))?;
        let scheme = uri.scheme().context("--upstream needs a scheme (http:// or https://)")?.clone();
        anyhow::ensure!(
            scheme == Scheme::HTTP || scheme == Scheme::HTTPS,
            "--upstream: unknown scheme {scheme} (http:// or https://)"
        );
        if scheme == Scheme::HTTPS && !cfg!(feature = "https") {
            anyhow::bail!("{url} is HTTPS: build with the `https` feature (cargo run -p bridge-conformance --features https -- proxy ...)");
        }
        let authority = uri.authority().context("--upstream needs a host")?.clone();
        anyhow::ensure!(
            authority.as_str().find('@').is_none(),
            "--upstream: user information in the URL is not supported"
        );
        anyhow::ensure!(uri.query().is_none(), "--upstream: a query in the URL is not supported");
        Ok(Self { scheme, authority, prefix: uri.path().trim_end_matches('/').to_owned() })
    }

    /// The upstream URI of a request: the upstream's scheme, authority and prefix, and the path and query of
    /// `target` (an absolute-form target's own scheme and authority ignored).
    pub fn uri_for(&self, method: &Method, target: &Uri) -> Result<Uri, Unforwardable> {
        if method == Method::CONNECT {
            return Err(Unforwardable::Authority);
        }
        let Some(path_and_query) = target.path_and_query() else {
            return Err(Unforwardable::Authority);
        };
        if !path_and_query.path().starts_with('/') {
            // `*` (asterisk-form) is the only origin-less path hyper hands over.
            return Err(Unforwardable::Asterisk);
        }
        let joined = format!("{}{}", self.prefix, path_and_query.as_str());
        let path_and_query = PathAndQuery::try_from(joined).map_err(|e| Unforwardable::Malformed(e.to_string()))?;
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(path_and_query)
            .build()
            .map_err(|e| Unforwardable::Malformed(e.to_string()))
    }

    /// Whether `uri` names this upstream: same scheme, same authority (host compared without case, and port).
    pub fn is(&self, uri: &Uri) -> bool {
        uri.scheme() == Some(&self.scheme) && uri.authority() == Some(&self.authority)
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A refused connection: the URI is not the upstream's.
#[derive(Debug)]
pub struct NotTheUpstream(pub Uri);

impl std::fmt::Display for NotTheUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = match (self.0.scheme_str(), self.0.authority()) {
            (Some(scheme), Some(authority)) => format!("{scheme}://{authority}"),
            _ => "a URI without a scheme or host".to_owned(),
        };
        write!(f, "refused to connect to {shown}: the proxy connects to its upstream only")
    }
}

impl std::error::Error for NotTheUpstream {}

/// A connector (`tower_service::Service<Uri>`) that connects to the upstream only ([`Upstream::is`]); any other
/// URI fails with [`NotTheUpstream`] before the inner connector is called.
#[derive(Debug, Clone)]
pub struct UpstreamOnly<C> {
    inner: C,
    upstream: Arc<Upstream>,
}

impl<C> UpstreamOnly<C> {
    pub fn new(inner: C, upstream: Arc<Upstream>) -> Self {
        Self { inner, upstream }
    }
}

impl<C> tower_service::Service<Uri> for UpstreamOnly<C>
where
    C: tower_service::Service<Uri>,
    C::Response: Send + 'static,
    C::Error: Into<BoxError>,
    C::Future: Send + 'static,
{
    type Response = C::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<C::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        if !self.upstream.is(&uri) {
            return Box::pin(std::future::ready(Err(Box::new(NotTheUpstream(uri)) as BoxError)));
        }
        let connecting = self.inner.call(uri);
        Box::pin(async move { connecting.await.map_err(Into::into) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use tower_service::Service as _;

    fn target(t: &str) -> Uri {
        t.parse().unwrap()
    }

    #[test]
    fn the_upstream_uri_is_made_of_the_upstreams_origin_and_the_targets_path_and_query() {
        let upstream = Upstream::parse("http://127.0.0.1:18081/api/").unwrap();
        let get = Method::GET;
        assert_eq!(
            upstream.uri_for(&get, &target("/bridge/x?a=1")).unwrap(),
            "http://127.0.0.1:18081/api/bridge/x?a=1"
        );
        assert_eq!(
            upstream.uri_for(&get, &target("http://elsewhere.example:80/bridge/x?a=1")).unwrap(),
            "http://127.0.0.1:18081/api/bridge/x?a=1",
            "an absolute-form target's authority is ignored"
        );
        assert_eq!(upstream.uri_for(&Method::OPTIONS, &target("*")), Err(Unforwardable::Asterisk));
        assert_eq!(upstream.uri_for(&Method::CONNECT, &target("elsewhere.example:443")), Err(Unforwardable::Authority));
        assert_eq!(upstream.uri_for(&get, &target("elsewhere.example:443")), Err(Unforwardable::Authority));
        let bare = Upstream::parse("http://127.0.0.1:18081").unwrap();
        assert_eq!(bare.uri_for(&get, &target("/")).unwrap(), "http://127.0.0.1:18081/");
        assert!(Upstream::parse("ftp://127.0.0.1").is_err());
        assert!(Upstream::parse("127.0.0.1:80").is_err());
        assert!(Upstream::parse("http://u:p@127.0.0.1").is_err());
    }

    /// A connector that records what it was asked to connect to, and connects nowhere.
    #[derive(Clone, Default)]
    struct Recording(Arc<Mutex<Vec<Uri>>>);

    impl tower_service::Service<Uri> for Recording {
        type Response = ();
        type Error = std::io::Error;
        type Future = std::future::Ready<Result<(), std::io::Error>>;
        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), std::io::Error>> {
            Poll::Ready(Ok(()))
        }
        fn call(&mut self, uri: Uri) -> Self::Future {
            self.0.lock().unwrap().push(uri);
            std::future::ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn only_the_upstream_reaches_the_inner_connector() {
        let upstream = Arc::new(Upstream::parse("http://127.0.0.1:18081").unwrap());
        let inner = Recording::default();
        let mut guarded = UpstreamOnly::new(inner.clone(), upstream);
        for foreign in
            ["http://127.0.0.1:80/", "http://127.0.0.1/", "https://127.0.0.1:18081/", "http://elsewhere.example:18081/"]
        {
            let refused = guarded.call(target(foreign)).await.unwrap_err();
            assert!(refused.is::<NotTheUpstream>(), "{foreign}: {refused}");
        }
        assert!(inner.0.lock().unwrap().is_empty(), "nothing else reached the connector");
        guarded.call(target("http://127.0.0.1:18081/bridge")).await.unwrap();
        assert_eq!(inner.0.lock().unwrap().len(), 1);
    }
}
