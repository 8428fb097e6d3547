//! The Kilo Code adapter: the payload of OpenCode's shim (Kilo kept OpenCode's plugin API), read
//! by OpenCode's parser as Kilo's. A completed assistant message (`message.updated`, which
//! install does not register here) gives no usage: Kilo's usage is read from its database
//! (`db`), and a message counted from both would count twice.

use super::KILO;
use crate::hook_event::{HookEvent, PayloadMetrics};
use crate::host::Host;

/// Parses a payload the shim forwarded from inside Kilo; `None` when it is no JSON object with a
/// string `hook_event_name`.
pub fn parse(bytes: &[u8]) -> Option<HookEvent> {
    let mut e = crate::hosts::opencode::wire::parse_as(Host::Kilo, &KILO, bytes)?;
    if e.usage.take().is_some() {
        e.metrics = PayloadMetrics {
            model: None,
            tokens_in: None,
            tokens_out: None,
            ..e.metrics
        };
    }
    Some(e)
}
