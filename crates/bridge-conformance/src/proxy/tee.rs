//! A body that passes its frames through unchanged and keeps a copy of the data (up to a limit), handed over
//! when the body ends: the proxy streams requests and answers and checks the copy off the forwarding path.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use tokio::sync::oneshot;

/// The copy of a body: `Some(bytes)` when it ended within the limit, `None` when it did not (larger than the
/// limit, failed, or dropped before its end).
pub type Kept = Option<Bytes>;

pub struct Tee<B> {
    inner: B,
    kept: BytesMut,
    limit: usize,
    overflow: bool,
    done: Option<oneshot::Sender<Kept>>,
}

impl<B: Body<Data = Bytes> + Unpin> Tee<B> {
    /// The body and a receiver of its copy.
    pub fn new(inner: B, limit: usize) -> (Self, oneshot::Receiver<Kept>) {
        let (tx, rx) = oneshot::channel();
        let mut tee = Self { inner, kept: BytesMut::new(), limit, overflow: false, done: Some(tx) };
        if tee.inner.is_end_stream() {
            tee.finish(true);
        }
        (tee, rx)
    }

    fn finish(&mut self, complete: bool) {
        if let Some(done) = self.done.take() {
            let kept = (complete && !self.overflow).then(|| std::mem::take(&mut self.kept).freeze());
            let _ = done.send(kept);
        }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Tee<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    if !this.overflow {
                        if this.kept.len() + data.len() > this.limit {
                            this.overflow = true;
                            this.kept = BytesMut::new();
                        } else {
                            this.kept.extend_from_slice(data);
                        }
                    }
                }
                // A body of known length may not be polled again after its last bytes.
                if this.inner.is_end_stream() {
                    this.finish(true);
                }
            }
            Poll::Ready(Some(Err(_))) => this.finish(false),
            Poll::Ready(None) => this.finish(true),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for Tee<B> {
    fn drop(&mut self) {
        if let Some(done) = self.done.take() {
            let _ = done.send(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Full};

    #[tokio::test]
    async fn frames_pass_and_a_copy_is_kept() {
        let (tee, kept) = Tee::new(Full::new(Bytes::from_static(b"hello")), 10);
        assert_eq!(tee.collect().await.unwrap().to_bytes(), "hello");
        assert_eq!(kept.await.unwrap().unwrap(), "hello");

        let (tee, kept) = Tee::new(Full::new(Bytes::from_static(b"hello")), 3);
        assert_eq!(tee.collect().await.unwrap().to_bytes(), "hello", "over the limit still passes");
        assert_eq!(kept.await.unwrap(), None);

        let (tee, kept) = Tee::new(Full::new(Bytes::new()), 3);
        assert_eq!(kept.await.unwrap().unwrap(), "", "an empty body is kept at once");
        drop(tee);

        let (mut tee, kept) = Tee::new(Endless, 10);
        assert_eq!(tee.frame().await.unwrap().unwrap().into_data().unwrap(), "ab");
        drop(tee);
        assert_eq!(kept.await.unwrap(), None, "dropped before its end");
    }

    /// A body of one frame that never ends.
    struct Endless;

    impl Body for Endless {
        type Data = Bytes;
        type Error = std::convert::Infallible;
        fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"ab")))))
        }
    }
}
