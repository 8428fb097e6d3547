//! The canonical events without their fields: what a host's event name stands for (the host
//! table maps names to these; `Canonical::kind` reads them off a parsed event).

/// The canonical events without their fields: what a host's event name stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// `Canonical::SessionStart`.
    SessionStart,
    /// `Canonical::SessionEnd`.
    SessionEnd,
    /// `Canonical::Prompt`.
    Prompt,
    /// `Canonical::ToolPre`.
    ToolPre,
    /// `Canonical::ToolPost`.
    ToolPost,
    /// `Canonical::ToolFailure`.
    ToolFailure,
    /// `Canonical::Notification`.
    Notification,
    /// `Canonical::Stop`.
    Stop,
    /// `Canonical::StopFailure`.
    StopFailure,
    /// `Canonical::SubagentStart`.
    SubagentStart,
    /// `Canonical::SubagentStop`.
    SubagentStop,
    /// `Canonical::PreCompact`.
    PreCompact,
    /// `Canonical::PostCompact`.
    PostCompact,
    /// `Canonical::TaskCreated`.
    TaskCreated,
    /// `Canonical::TaskCompleted`.
    TaskCompleted,
    /// `Canonical::Other`: recorded, never answered.
    Other,
}
