//! Conformance adapter (spec/conformance.md) around the thin-edge.io event batcher.
//!
//! `Batcher::event`, `time` and `flush` are crate-private and the public `BatchDriver` is
//! async and reads the wall clock, so this crate compiles upstream's four source files
//! *unmodified* as its own modules (the `#[path]` attributes below) and drives the batcher
//! directly. The files come from a checkout the user vendors as `upstream/` at the pinned
//! commit (README.md); no upstream source is part of timealign.
//!
//! Protocol: one JSON line per trace on stdin, one answer line per trace on stdout:
//! `{"name": N, "outputs": [...]}` (each output tagged with its input index) or
//! `{"name": N, "error": "..."}` for a trace this implementation cannot take.

#![allow(dead_code)] // upstream's builders and helpers are not all used here

#[path = "../upstream/crates/common/batcher/src/batch.rs"]
mod batch;
#[path = "../upstream/crates/common/batcher/src/batchable.rs"]
mod batchable;
#[path = "../upstream/crates/common/batcher/src/batcher.rs"]
mod batcher;
#[path = "../upstream/crates/common/batcher/src/config.rs"]
mod config;
mod event;

use std::io::{BufRead, Write};
use std::panic;

use serde_json::{json, Value};

use crate::batcher::{Batcher, BatcherOutput};
use crate::config::BatchConfigBuilder;
use crate::event::{instant, Event};

const NS_PER_MS: i64 = 1_000_000;

fn int(value: &Value, field: &str) -> Result<i64, String> {
    value
        .get(field)
        .and_then(Value::as_i64)
        .ok_or_else(|| format!("{field} must be an integer (ns)"))
}

/// A config field in ns as upstream's u32 milliseconds; anything else refuses the trace.
fn millis(config: &Value, field: &str, default: i64) -> Result<u32, String> {
    let ns = match config.get(field) {
        None | Some(Value::Null) => default,
        Some(_) => int(config, field)?,
    };
    if ns < 0 || ns % NS_PER_MS != 0 || ns / NS_PER_MS > i64::from(u32::MAX) {
        return Err(format!(
            "{field} = {ns} ns: thin-edge takes whole milliseconds in [0, 2^32) (use --target thin-edge)"
        ));
    }
    Ok((ns / NS_PER_MS) as u32)
}

fn batch_output(index: usize, events: Vec<Event>) -> Value {
    let ids: Vec<String> = events.into_iter().map(|e| e.id).collect();
    // Upstream's batches carry no window bounds; the `upstream` profile compares ids only.
    json!({"input": index, "kind": "batch", "ids": ids})
}

fn feed(batcher: &mut Batcher<Event>, index: usize, input: &Value) -> Result<Vec<Value>, String> {
    let mut outputs = Vec::new();
    match input.get("op").and_then(Value::as_str) {
        Some("message") => {
            let at = instant(int(input, "at")?)?;
            let event = Event {
                key: input.get("key").and_then(Value::as_str).ok_or("key must be a string")?.to_owned(),
                event_time: instant(int(input, "event_time")?)?,
                id: input.get("id").and_then(Value::as_str).ok_or("id must be a string")?.to_owned(),
            };
            for output in batcher.event(at, event) {
                match output {
                    BatcherOutput::Batch(events) => outputs.push(batch_output(index, events)),
                    BatcherOutput::Timer(when) => outputs.push(json!({
                        "input": index, "kind": "timer",
                        "at": i64::try_from(when.unix_timestamp_nanos()).map_err(|e| e.to_string())?,
                    })),
                }
            }
        }
        Some("tick") => {
            let at = instant(int(input, "at")?)?;
            for events in batcher.time(at) {
                outputs.push(batch_output(index, events));
            }
        }
        Some("flush") => {
            for events in batcher.flush() {
                outputs.push(batch_output(index, events));
            }
        }
        other => return Err(format!("unknown op {other:?}")),
    }
    Ok(outputs)
}

fn run(trace: &Value) -> Result<Vec<Value>, String> {
    let config = trace.get("config").ok_or("no config")?;
    let batch_config = BatchConfigBuilder::new()
        .event_jitter(millis(config, "batching_window", -1)?)
        .delivery_jitter(millis(config, "max_message_delay", -1)?)
        .message_leap_limit(millis(config, "message_leap_limit", 0)?)
        .build();
    let mut batcher = Batcher::new(batch_config); // a fresh batcher per trace
    let inputs = trace.get("inputs").and_then(Value::as_array).ok_or("no inputs")?;
    let mut outputs = Vec::new();
    for (index, input) in inputs.iter().enumerate() {
        match feed(&mut batcher, index, input) {
            Ok(produced) => outputs.extend(produced),
            Err(why) => {
                eprintln!("input {index}: {why}");
                outputs.push(json!({"input": index, "kind": "error", "field": "?", "rule": "?"}));
            }
        }
    }
    Ok(outputs)
}

fn answer(line: &str) -> Value {
    let trace: Value = match serde_json::from_str(line) {
        Ok(trace) => trace,
        Err(error) => return json!({"name": null, "error": error.to_string()}),
    };
    let name = trace.get("name").cloned().unwrap_or(Value::Null);
    // A panic inside upstream code (an arithmetic overflow, say) refuses this trace only.
    match panic::catch_unwind(|| run(&trace)) {
        Ok(Ok(outputs)) => json!({"name": name, "outputs": outputs}),
        Ok(Err(why)) => json!({"name": name, "error": why}),
        Err(_) => json!({"name": name, "error": "the batcher panicked (see stderr)"}),
    }
}

fn main() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        if line.trim().is_empty() {
            continue;
        }
        writeln!(stdout, "{}", answer(&line)).expect("stdout");
        stdout.flush().expect("stdout");
    }
}
