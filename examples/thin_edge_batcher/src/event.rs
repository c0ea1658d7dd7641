//! The message both binaries (`main.rs`, `bin/bench.rs`) feed upstream's batcher.

use time::OffsetDateTime;

use crate::batchable::Batchable;

/// A message of the trace: batched by `key` and `event_time`; `id` names it in outputs.
#[derive(Debug)]
pub struct Event {
    pub key: String,
    pub event_time: OffsetDateTime,
    pub id: String,
}

impl Batchable for Event {
    type Key = String;

    fn key(&self) -> String {
        self.key.clone()
    }

    fn event_time(&self) -> OffsetDateTime {
        self.event_time
    }
}

/// Integer ns since the epoch as upstream's instant type.
pub fn instant(ns: i64) -> Result<OffsetDateTime, String> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ns)).map_err(|e| e.to_string())
}
