//! Throughput of thin-edge.io's batcher on a trace file, the same-run baseline of
//! `benchmarks/bench_event_time_batcher.py` (issue 35).
//!
//! `bench FILE [ROUNDS]`. FILE is little-endian: a header `window_ms u32, delay_ms u32,
//! leap_ms u32, count u64` (the config as the adapter maps it, whole milliseconds, EB-D11),
//! then `count` inputs of `op u8 (0 message, 1 tick, 2 flush), at i64 ns, event_time i64 ns,
//! key u32, id u32`. The Python benchmark writes the inputs its "step alone" figure times, so
//! both sides run the same inputs. All events are built before the clock starts; only
//! `event`, `time` and `flush` are timed, in CPU time of the process
//! (`clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`, declared here since std exposes no CPU clock),
//! best of ROUNDS (default 3), each round on a fresh batcher. Prints one `key=value` line.

#![allow(dead_code)] // upstream's builders and helpers are not all used here

#[path = "../../upstream/crates/common/batcher/src/batch.rs"]
mod batch;
#[path = "../../upstream/crates/common/batcher/src/batchable.rs"]
mod batchable;
#[path = "../../upstream/crates/common/batcher/src/batcher.rs"]
mod batcher;
#[path = "../../upstream/crates/common/batcher/src/config.rs"]
mod config;
#[path = "../event.rs"]
mod event; // the message as the adapter (main.rs) builds it: string key and id

use std::hint::black_box;

use time::OffsetDateTime;

use crate::batcher::{Batcher, BatcherOutput};
use crate::config::{BatchConfig, BatchConfigBuilder};
use crate::event::{instant, Event};

enum Input {
    Message(OffsetDateTime, Event),
    Tick(OffsetDateTime),
    Flush,
}

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, spec: *mut Timespec) -> i32;
}

const CLOCK_PROCESS_CPUTIME_ID: i32 = 2; // Linux

/// CPU seconds used by this process so far.
fn cpu_seconds() -> f64 {
    let mut spec = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `spec` is a valid, writable timespec (two 64-bit fields on 64-bit Linux).
    let rc = unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut spec) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    spec.tv_sec as f64 + spec.tv_nsec as f64 * 1e-9
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        if self.0.len() < N {
            return Err("trace file truncated".into());
        }
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        Ok(head.try_into().expect("split_at gave N bytes"))
    }
    fn u32(&mut self) -> Result<u32, String> {
        self.take::<4>().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, String> {
        self.take::<8>().map(u64::from_le_bytes)
    }
    fn i64(&mut self) -> Result<i64, String> {
        self.take::<8>().map(i64::from_le_bytes)
    }
}

/// Records of the file, kept raw so that each round builds its own events outside the clock.
type Record = (u8, i64, i64, u32, u32);

fn parse(bytes: &[u8]) -> Result<(BatchConfig, Vec<Record>), String> {
    let mut reader = Reader(bytes);
    let config = BatchConfigBuilder::new()
        .event_jitter(reader.u32()?)
        .delivery_jitter(reader.u32()?)
        .message_leap_limit(reader.u32()?)
        .build();
    let count = reader.u64()?;
    let mut records = Vec::with_capacity(usize::try_from(count).map_err(|e| e.to_string())?);
    for _ in 0..count {
        let op = reader.take::<1>()?[0];
        records.push((op, reader.i64()?, reader.i64()?, reader.u32()?, reader.u32()?));
    }
    if !reader.0.is_empty() {
        return Err(format!("{} bytes after the last input", reader.0.len()));
    }
    Ok((config, records))
}

fn build(records: &[Record]) -> Result<Vec<Input>, String> {
    records
        .iter()
        .map(|&(op, at, event_time, key, id)| {
            Ok(match op {
                0 => Input::Message(
                    instant(at)?,
                    Event { key: format!("k{key}"), event_time: instant(event_time)?, id: format!("m{id}") },
                ),
                1 => Input::Tick(instant(at)?),
                2 => Input::Flush,
                other => return Err(format!("unknown op {other}")),
            })
        })
        .collect()
}

/// CPU seconds of one run over `inputs` on a fresh batcher, and the number of batches.
fn run(config: &BatchConfig, inputs: Vec<Input>) -> (f64, usize) {
    let mut batcher: Batcher<Event> = Batcher::new(config.clone());
    let mut batches = 0;
    let started = cpu_seconds();
    for input in inputs {
        match input {
            Input::Message(at, event) => {
                for output in batcher.event(at, event) {
                    if let BatcherOutput::Batch(events) = output {
                        batches += 1;
                        black_box(events);
                    }
                }
            }
            Input::Tick(at) => batches += black_box(batcher.time(at)).len(),
            Input::Flush => batches += black_box(batcher.flush()).len(),
        }
    }
    (cpu_seconds() - started, batches)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: bench FILE [ROUNDS]")?;
    let rounds: usize = match args.get(2) {
        Some(text) => text.parse().map_err(|_| format!("ROUNDS {text:?} is not a count"))?,
        None => 3,
    };
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let (config, records) = parse(&bytes).map_err(|e| format!("{path}: {e}"))?;
    let messages = records.iter().filter(|record| record.0 == 0).count();
    let mut best = f64::INFINITY;
    let mut batches = 0;
    for _ in 0..rounds.max(1) {
        let inputs = build(&records).map_err(|e| format!("{path}: {e}"))?;
        let (seconds, counted) = run(&config, inputs);
        best = best.min(seconds);
        batches = counted;
    }
    println!(
        "messages={messages} inputs={} batches={batches} seconds={best:.6} msgs_per_s={:.0} clock=process_cpu rounds={}",
        records.len(),
        messages as f64 / best,
        rounds.max(1)
    );
    Ok(())
}
