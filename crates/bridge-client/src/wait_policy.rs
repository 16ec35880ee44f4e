//! [`WaitPolicy`]: how the client follows a bridge. A setting of the client ([`crate::transport::Settings`]), so it
//! is apart from the waiting itself, which needs the client: a leaf module that `client`, `transport` and `wait` use
//! (public as `wait::WaitPolicy` and `WaitPolicy`).

use std::time::Duration;

use backon::BackoffBuilder as _;

/// How [`Client::wait_for_bridge`](crate::Client::wait_for_bridge) and [`Client::bridge_states`](crate::Client::bridge_states) follow a bridge.
///
/// Defaults: the feed every 2 s, the record at 1 s doubling to 30 s. A bridge takes minutes, its events come
/// within seconds of the change, and a feed request asks only for what is new: the wait hears of an announced
/// change within about 2 s and of an unannounced one within 30 s, for one small request every 2 s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitPolicy {
    use_feed: bool,
    feed_interval: Duration,
    poll_initial: Duration,
    poll_max: Duration,
}

impl Default for WaitPolicy {
    fn default() -> Self {
        Self {
            use_feed: true,
            feed_interval: Duration::from_secs(2),
            poll_initial: Duration::from_secs(1),
            poll_max: Duration::from_secs(30),
        }
    }
}

impl WaitPolicy {
    /// Polls the record only, without reading the event feed.
    pub fn without_feed(mut self) -> Self {
        self.use_feed = false;
        self
    }

    /// How often the event feed is read.
    pub fn with_feed_interval(mut self, interval: Duration) -> Self {
        self.feed_interval = interval;
        self
    }

    /// The first delay between two reads of the record (after each change the schedule starts again).
    pub fn with_poll_initial(mut self, delay: Duration) -> Self {
        self.poll_initial = delay;
        self
    }

    /// The longest delay between two reads of the record (before jitter).
    pub fn with_poll_max(mut self, delay: Duration) -> Self {
        self.poll_max = delay;
        self
    }

    /// Whether the event feed is read.
    pub fn uses_feed(&self) -> bool {
        self.use_feed
    }

    /// How often the event feed is read.
    pub fn feed_interval(&self) -> Duration {
        self.feed_interval
    }

    /// The first delay between two reads of the record.
    pub fn poll_initial(&self) -> Duration {
        self.poll_initial
    }

    /// The longest delay between two reads of the record.
    pub fn poll_max(&self) -> Duration {
        self.poll_max
    }

    pub(super) fn poll_schedule(&self) -> backon::ExponentialBackoff {
        backon::ExponentialBuilder::new()
            .with_min_delay(self.poll_initial)
            .with_max_delay(self.poll_max.max(self.poll_initial))
            .with_factor(2.0)
            .without_max_times()
            .with_jitter()
            .build()
    }
}
