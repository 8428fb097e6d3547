//! The sessions index: one small summary per session, kept in 256 shards beside the sessions'
//! own partitions, so that `sessions`, `tasks` and `status` read a few hundred kilobytes instead
//! of decoding every session.
//!
//! A summary is a pure function of its session's state ([`SessionSummary::of`]): whoever writes
//! a session's partition writes its summary into the session's shard in the same batch, and a
//! full replay derives every shard from the sessions it folded, so `verify` compares the index
//! like any other partition.
//!
//! Cost is kept as usage summed per model and *context band* (requests grouped by their input
//! size at the long-context thresholds of the embedded price table), which prices exactly like
//! the per-request sum whenever every model's threshold is one of those boundaries. A price
//! override with another threshold makes [`SessionSummary::usd`] say so (`None`), and the
//! caller prices that session from its own partition.

use crate::config::PolicyConfig;
use crate::pricing::PricingTable;
use crate::session::{Pressure, SessionState};
use crate::tasks::Task;
use crate::transcript::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many shards the index has.
pub const INDEX_SHARDS: u16 = 256;

/// The input sizes (`input + cache writes + cache reads`) at which requests fall into another
/// band: every long-context threshold of the embedded price table.
pub const BAND_BOUNDS: [u64; 3] = [100_000, 200_000, 272_000];

/// The band of a request of `context_tokens`: 0 up to and including the first bound, 1 up to the
/// second, and so on.
pub fn band_of(context_tokens: u64) -> u8 {
    BAND_BOUNDS
        .iter()
        .take_while(|b| context_tokens > **b)
        .count() as u8
}

/// USD of `usage` summed over requests of context band `band` at `price`; `None` when the
/// model's long-context threshold is not a band bound, so the band cannot tell which requests
/// exceed it.
pub fn band_cost(price: &crate::pricing::ModelPrice, band: u8, usage: &Usage) -> Option<f64> {
    let long = match &price.long_context {
        None => false,
        Some(tier) => {
            let k = BAND_BOUNDS
                .iter()
                .position(|b| *b == tier.threshold_tokens)?;
            usize::from(band) > k
        }
    };
    Some(price.cost_in_tier(usage, long))
}

/// FNV-1a (64-bit) of the session id, like the cost shards: stable across builds.
pub fn shard_of(session_id: &str) -> u8 {
    let h = session_id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    });
    (h % u64::from(INDEX_SHARDS)) as u8
}

/// How many summaries an encoded shard holds, read from its length prefix alone.
pub fn shard_len(bytes: &[u8]) -> Option<usize> {
    let n: u64 = crate::codec::decode(bytes)?;
    usize::try_from(n).ok()
}

/// One shard: session id → summary.
pub type IndexShard = BTreeMap<String, SessionSummary>;

/// What listing a session needs, without its prompts, files, usage records or history.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// The host's name.
    pub host: String,
    /// The project directory.
    pub cwd: Option<String>,
    /// The first event.
    pub first_seq: u64,
    /// The latest event.
    pub last_seq: u64,
    /// When the first event was recorded (µs).
    pub first_at_us: i64,
    /// When the latest event was recorded (µs).
    pub last_at_us: i64,
    /// Hook events recorded.
    pub hook_events: u64,
    /// `active`, `idle`, `compacting`, `ended`, `served` (only calls served for a cloud
    /// session), or `files` (no hook event: known from its session files only, `import`).
    pub status: String,
    /// The context readings the tier is computed from.
    pub pressure: Pressure,
    /// The model last seen.
    pub model: Option<String>,
    /// The git branch last seen.
    pub branch: Option<String>,
    /// Tool calls.
    pub tool_calls: u64,
    /// Prompts.
    pub prompts: u64,
    /// Compactions.
    pub compactions: u64,
    /// Subagents seen.
    pub subagents: u64,
    /// Usage summed per (model, band), in that order.
    pub usage: Vec<(String, u8, Usage)>,
    /// The cost the host put in payloads, when no transcript usage was read.
    pub reported_usd: Option<f64>,
    /// The session's open tasks.
    pub open_tasks: u64,
    /// The session's own tasks as the task board lists them: no description, no history (the
    /// session's partition has those).
    pub tasks: TaskLines,
}

impl SessionSummary {
    /// The summary of a session.
    pub fn of(s: &SessionState) -> SessionSummary {
        let mut usage: BTreeMap<(&str, u8), Usage> = BTreeMap::new();
        for (model, u) in s.usage_by_key.values() {
            usage
                .entry((model.as_str(), band_of(u.context_tokens())))
                .or_default()
                .add(u);
        }
        SessionSummary {
            host: s.host.clone(),
            cwd: s.cwd.clone(),
            first_seq: s.first_seq,
            last_seq: s.last_seq,
            first_at_us: s.first_at_us,
            last_at_us: s.last_at_us,
            hook_events: s.hook_events,
            status: if s.served_only() {
                "served".to_string()
            } else if s.hook_events == 0 {
                // Known from its files only (`import`): no hook of it was recorded.
                "files".to_string()
            } else {
                s.status.as_str().to_string()
            },
            pressure: s.pressure.clone(),
            model: s.model.clone(),
            branch: s.branch.clone(),
            tool_calls: s.tool_calls,
            prompts: s.prompt_count,
            compactions: s.compactions,
            subagents: s.subagents.len() as u64,
            usage: usage
                .into_iter()
                .map(|((m, b), u)| (m.to_string(), b, u))
                .collect(),
            reported_usd: if s.usage_by_key.is_empty() {
                s.metrics.as_ref().and_then(|m| m.payload.cost_usd)
            } else {
                None
            },
            open_tasks: s
                .tasks
                .tasks
                .values()
                .filter(|t| t.status.is_open())
                .count() as u64,
            tasks: TaskLines::new(
                &s.tasks
                    .tasks
                    .values()
                    .map(|t| Task {
                        description: None,
                        active_form: None,
                        history: Vec::new(),
                        ..t.clone()
                    })
                    .collect::<Vec<_>>(),
            ),
        }
    }

    /// All usage, summed.
    pub fn usage_total(&self) -> Usage {
        let mut t = Usage::default();
        for (_, _, u) in &self.usage {
            t.add(u);
        }
        t
    }

    /// USD of the session's usage (unpriced models count 0, as in `sessions`); `None` when a
    /// model's long-context threshold is not a band bound (a price override), so the bands
    /// cannot tell which requests exceed it.
    pub fn usd(&self, pricing: &PricingTable) -> Option<f64> {
        self.usd_with(&mut |m| pricing.lookup(m))
    }

    /// `usd` with the price of a model from `lookup` (a table that remembers its lookups: one
    /// per model, not one per session).
    pub fn usd_with<'p>(
        &self,
        lookup: &mut dyn FnMut(&str) -> Option<&'p crate::pricing::ModelPrice>,
    ) -> Option<f64> {
        if self.usage.is_empty() {
            return Some(self.reported_usd.unwrap_or(0.0));
        }
        let mut usd = 0.0;
        for (model, band, u) in &self.usage {
            let Some(price) = lookup(model) else {
                continue;
            };
            usd += band_cost(price, *band, u)?;
        }
        Some(usd)
    }

    /// The open tasks.
    pub fn open_tasks(&self) -> u64 {
        self.open_tasks
    }

    /// (tier, used fraction) under `cfg`, as `views::pressure` computes it for the session.
    pub fn pressure(&self, cfg: &PolicyConfig) -> (crate::pressure::Tier, f64) {
        crate::pressure::pressure_of(&self.pressure, self.model.as_deref(), cfg, 0)
    }
}

/// A session's tasks as the board lists them, kept encoded inside its summary: `sessions` and
/// `status` read summaries by the thousand and never need the tasks, so decoding a shard copies
/// these bytes instead of building every task; `tasks` decodes them ([`TaskLines::decode`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskLines(Vec<u8>);

impl TaskLines {
    /// The tasks, encoded (nothing for none).
    pub fn new(tasks: &[Task]) -> TaskLines {
        if tasks.is_empty() {
            return TaskLines::default();
        }
        TaskLines(
            bincode::serde::encode_to_vec(tasks, bincode::config::standard())
                .expect("tasks encode"),
        )
    }

    /// No task at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The tasks (none when the bytes do not decode: the summary is a cache of its session).
    pub fn decode(&self) -> Vec<Task> {
        if self.0.is_empty() {
            return Vec::new();
        }
        crate::codec::decode(&self.0).unwrap_or_default()
    }
}

impl Serialize for TaskLines {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for TaskLines {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TaskLines, D::Error> {
        struct Bytes;
        impl<'de> serde::de::Visitor<'de> for Bytes {
            type Value = TaskLines;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("encoded tasks")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<TaskLines, E> {
                Ok(TaskLines(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<TaskLines, E> {
                Ok(TaskLines(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<TaskLines, A::Error> {
                let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(b) = seq.next_element::<u8>()? {
                    v.push(b);
                }
                Ok(TaskLines(v))
            }
        }
        d.deserialize_byte_buf(Bytes)
    }
}
