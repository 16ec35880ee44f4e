//! A body that fails when its source falls silent: no frame for the proxy's upstream timeout. The proxy streams
//! long answers as they come; one whose upstream stops sending ends with an error (hyper then closes the client's
//! connection) instead of holding the client for as long as it waits.

use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body::{Body, Frame, SizeHint};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The error of a body whose source sent nothing for `0`.
#[derive(Debug)]
pub struct Silent(pub Duration);

impl std::fmt::Display for Silent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the upstream sent nothing for {} (--upstream-timeout)", humantime::format_duration(self.0))
    }
}

impl std::error::Error for Silent {}

/// `inner`, failing with [`Silent`] when no frame comes for `limit`.
pub struct Idle<B> {
    inner: B,
    limit: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl<B> Idle<B> {
    pub fn new(inner: B, limit: Duration) -> Self {
        Self { inner, limit, deadline: Box::pin(tokio::time::sleep(limit)) }
    }
}

impl<B> Body for Idle<B>
where
    B: Body + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<B::Data>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                let next = tokio::time::Instant::now() + this.limit;
                this.deadline.as_mut().reset(next);
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(Silent(this.limit))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};

    /// One frame, then nothing, ever.
    struct OneThenSilence(bool);

    impl Body for OneThenSilence {
        type Data = Bytes;
        type Error = std::convert::Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            if std::mem::replace(&mut self.0, true) {
                Poll::Pending
            } else {
                Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"a")))))
            }
        }
    }

    #[tokio::test]
    async fn a_silent_body_fails_and_a_flowing_one_passes() {
        let whole = Idle::new(Full::new(Bytes::from_static(b"hello")), Duration::from_millis(50));
        assert_eq!(whole.collect().await.unwrap().to_bytes(), "hello");
        let mut silent = Idle::new(OneThenSilence(false), Duration::from_millis(50));
        assert_eq!(silent.frame().await.unwrap().unwrap().into_data().unwrap(), "a");
        let error = silent.frame().await.unwrap().unwrap_err();
        assert!(error.is::<Silent>(), "{error}");
        assert_eq!(error.to_string(), "the upstream sent nothing for 50ms (--upstream-timeout)");
    }
}
