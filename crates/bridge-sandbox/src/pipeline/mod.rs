//! The event pipeline: the jobs that carry a state change to the receivers of its events. A change and the events
//! it emits commit together with their webhook outbox rows (the store's one transaction); [`lifecycle`] makes the
//! changes that come with time (every due bridge one step on), [`delivery`] takes the outbox rows and delivers
//! each event, signed, to its `webhookUrl`. Both run as the server's workers (`crate::operate::workers`), over
//! the [`crate::infra::core::Core`] and below the operations, which start a pass after a clock advance. Beside them,
//! at the pipeline's end, [`retention`] deletes what has been kept longer than `serve --retain` (events once their
//! deliveries have ended, ended bridges, quotes, delivery attempts).

pub mod delivery;
pub mod lifecycle;
pub mod retention;
