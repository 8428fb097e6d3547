//! What commands print: each view a function of the projections' data, shared by the command
//! that shows it, its team mode (`--source`) and `demo` — so no command imports another.

pub mod blocks;
pub mod cost;
pub mod notifications;
pub mod replay;
pub mod report;
pub mod sessions;
pub mod show;
pub mod tasks;
