//! Reading a request body whole. An operation with authentication reads its body after the credential is checked
//! (up to [`crate::ServerConfig::body_limit`]); an operation without authentication (`security: []` in the
//! schema, such as the API-key exchange) reads it before anything tells who is asking, so it is bounded more
//! tightly ([`UnauthenticatedBody`]): a few KiB, received whole within a short deadline. Otherwise anyone could
//! hold a connection busy for the whole body-read timeout by announcing a body and sending it a byte at a time.
//! Applications reading such a body themselves (the sandbox's dashboard sign-in) use the same bounds.

use std::time::Duration;

use axum::body::HttpBody as _;
use axum::body::{Body, Bytes};
use http::{header, HeaderMap};

/// The bounds of a body read before any credential is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnauthenticatedBody {
    /// The largest body accepted; a larger one is refused (413 `PayloadTooLarge`) without reading it when its
    /// `Content-Length` says so. Default 4 KiB.
    pub limit: usize,
    /// The body must arrive whole within this, counted from when the request head was read and routed (408
    /// `RequestTimeout`, and the connection is closed). Default 2 s.
    pub timeout: Duration,
}

impl Default for UnauthenticatedBody {
    fn default() -> Self {
        Self { limit: 4 * 1024, timeout: Duration::from_secs(2) }
    }
}

/// Why a body was not read whole.
#[derive(Debug)]
pub enum Unread {
    /// Larger than `limit` bytes.
    TooLarge { limit: usize },
    /// Not received whole within `timeout`.
    TooSlow { timeout: Duration },
    /// Cut short: the client went away, or a body-read timeout of the application's layers fired.
    Failed(axum::Error),
}

/// `body`, read whole, at most `limit` bytes; refused without reading it when its `Content-Length` (in `headers`)
/// is larger.
pub async fn read(headers: &HeaderMap, body: Body, limit: usize) -> Result<Bytes, Unread> {
    use std::error::Error as _;
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.unwrap_or(0).max(body.size_hint().lower()) > limit as u64 {
        return Err(Unread::TooLarge { limit });
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        if e.source().is_some_and(|s| s.is::<http_body_util::LengthLimitError>()) {
            Unread::TooLarge { limit }
        } else {
            Unread::Failed(e)
        }
    })
}

impl UnauthenticatedBody {
    /// `body` (of a request with `headers`), read whole within these bounds.
    pub async fn read(&self, headers: &HeaderMap, body: Body) -> Result<Bytes, Unread> {
        match tokio::time::timeout(self.timeout, read(headers, body, self.limit)).await {
            Ok(read) => read,
            Err(_) => Err(Unread::TooSlow { timeout: self.timeout }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_within_the_bounds_is_read_and_others_are_refused() {
        let bounds = UnauthenticatedBody { limit: 8, timeout: Duration::from_millis(50) };
        let none = HeaderMap::new();
        assert_eq!(bounds.read(&none, Body::from("12345678")).await.unwrap(), "12345678");
        assert!(matches!(bounds.read(&none, Body::from("123456789")).await, Err(Unread::TooLarge { limit: 8 })));
        // Announced larger: refused at once, without waiting for a body that never comes.
        let mut large = HeaderMap::new();
        large.insert(header::CONTENT_LENGTH, "9".parse().unwrap());
        let refused = bounds.read(&large, Body::new(OneByteThenNothing(false))).await;
        assert!(matches!(refused, Err(Unread::TooLarge { limit: 8 })), "{refused:?}");
        // A body that never ends: one byte, then nothing.
        let started = std::time::Instant::now();
        let slow = bounds.read(&none, Body::new(OneByteThenNothing(false))).await;
        assert!(matches!(slow, Err(Unread::TooSlow { .. })), "{slow:?}");
        assert!(started.elapsed() >= Duration::from_millis(50));
    }

    struct OneByteThenNothing(bool);

    impl axum::body::HttpBody for OneByteThenNothing {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
            match std::mem::replace(&mut self.0, true) {
                false => std::task::Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from_static(b"{"))))),
                true => std::task::Poll::Pending,
            }
        }
    }
}
