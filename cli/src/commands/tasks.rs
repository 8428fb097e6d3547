//! `tasks`: the task store. Changes are `TaskCommand` events; every change is idempotent (a
//! command that would change nothing records nothing and says so).

use crate::cli_util::CommandHelper;
use crate::output::{self, escape};
use crate::render::tasks::{render, task_json};
use anyhow::{bail, Result};
use engine::state;
use engine::writer::Writer;
use engine::Journal;
use projections::derived::{self, TaskCommand, TaskOp};
use projections::fold::State;
use projections::tasks::{Task, TaskRef, TaskStatus};
use projections::Kind;

use std::process::ExitCode;

/// `tasks` flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to do (default: list).
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
    /// Only tasks with this status (list).
    #[arg(long, global = true)]
    pub status: Option<String>,
    /// Only tasks owned by this agent (list), or the agent taking the task (add, claim, start).
    #[arg(long, global = true)]
    pub agent: Option<String>,
    /// List every task: finished ones too, from every session.
    #[arg(long, global = true)]
    pub all: bool,
    /// List the tasks of the N sessions started last (default: 100 in the table, every session
    /// with --json); journal-wide tasks are always listed.
    #[arg(long, global = true, value_name = "N", conflicts_with = "all")]
    pub last: Option<usize>,
    /// Print JSON for tools instead of the human-readable output.
    #[arg(long, global = true)]
    pub json: bool,
    /// List the tasks of every journal in your registry (`$XDG_STATE_HOME/hookjournal/journals`),
    /// read untouched, with a PROJECT column (with --json: a `project` field).
    #[arg(long)]
    pub all_projects: bool,
}

/// The task subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum Cmd {
    /// List tasks (the default).
    List,
    /// One task with its history.
    Show {
        /// Task id: `T3` (journal-wide), or a session's task as `SESSION:ID` (or the id alone when one session has it).
        id: String,
    },
    /// Add a journal-wide task; prints its id.
    Add {
        /// What the task is, in one line.
        subject: String,
        /// Longer text shown by `tasks show`.
        #[arg(long)]
        description: Option<String>,
    },
    /// Claim a task for an agent: atomic across processes, refused while another agent holds it.
    Claim {
        /// Task id (`T3`, or `SESSION:ID`); with --next, the oldest open task nobody holds.
        #[arg(required_unless_present = "next", conflicts_with = "next")]
        id: Option<String>,
        /// Claim the oldest pending or failed journal-wide task nobody holds.
        #[arg(long)]
        next: bool,
    },
    /// Release (fail, for retry) tasks whose agent has been silent longer than the lease.
    ReleaseStale {
        /// The lease in seconds (default: policy.task_lease_secs from config.toml).
        #[arg(long)]
        lease: Option<u64>,
    },
    /// Mark a task in progress (with --agent, that agent owns it; refused while another holds it).
    Start {
        /// Task id: `T3` (journal-wide), or a session's task as `SESSION:ID` (or the id alone when one session has it).
        id: String,
    },
    /// Mark a task completed.
    Done {
        /// Task id: `T3` (journal-wide), or a session's task as `SESSION:ID` (or the id alone when one session has it).
        id: String,
    },
    /// Fail a task: released for retry, retry_count + 1.
    Fail {
        /// Task id: `T3` (journal-wide), or a session's task as `SESSION:ID` (or the id alone when one session has it).
        id: String,
        /// Why it failed (shown in the task list).
        #[arg(long, default_value = "failed")]
        reason: String,
    },
    /// Put a task back to pending.
    Reopen {
        /// Task id: `T3` (journal-wide), or a session's task as `SESSION:ID` (or the id alone when one session has it).
        id: String,
    },
}

/// `T3` (journal-wide) or `SESSION:ID` (a session's own task; a session prefix is enough).
fn resolve(state: &State, id: &str) -> Result<TaskRef> {
    if let Some((s, tid)) = id.split_once(':') {
        let session = engine::resolve_session(state.sessions.keys(), s)?;
        if !state.sessions[&session].tasks.tasks.contains_key(tid) {
            bail!(
                "session {} has no task {tid:?}",
                projections::short_id(&session)
            );
        }
        return Ok(TaskRef {
            session: Some(session),
            id: tid.to_string(),
        });
    }
    if state.tasks.tasks.contains_key(id) {
        return Ok(TaskRef::global(id));
    }
    let owners: Vec<&String> = state
        .sessions
        .iter()
        .filter(|(_, s)| s.tasks.tasks.contains_key(id))
        .map(|(k, _)| k)
        .collect();
    match owners.as_slice() {
        [one] => Ok(TaskRef {
            session: Some((*one).clone()),
            id: id.to_string(),
        }),
        [] => bail!("no task {id:?} (see `hookjournal tasks`)"),
        _ => bail!(
            "task id {id:?} exists in {} sessions; write it as SESSION:{id}",
            owners.len()
        ),
    }
}

fn find<'a>(state: &'a State, r: &TaskRef) -> Option<&'a Task> {
    match &r.session {
        Some(s) => state.sessions.get(s)?.tasks.get(&r.id),
        None => state.tasks.get(&r.id),
    }
}

/// Lists, shows or changes tasks.
pub fn run(cmd: &CommandHelper, mut args: Args) -> Result<ExitCode> {
    let sub = args.cmd.take().unwrap_or(Cmd::List);
    match sub {
        Cmd::List => list(cmd, &args)?,
        Cmd::Show { ref id } => show(cmd, id, args.json)?,
        Cmd::Add {
            subject,
            description,
        } => {
            change(cmd, args.json, None, |state| {
                let id = format!("T{}", state.tasks.next_number + 1);
                Ok(TaskCommand {
                    op: TaskOp::Add,
                    task: TaskRef::global(&id),
                    subject: Some(subject.clone()),
                    description: description.clone(),
                    agent: args.agent.clone(),
                    reason: None,
                })
            })?;
        }
        Cmd::Claim { id, next } => {
            let Some(agent) = args.agent.clone() else {
                bail!("tasks claim needs --agent NAME (the agent taking the task)");
            };
            change(cmd, args.json, id.as_deref(), |st| {
                let task = match (&id, next) {
                    (Some(id), _) => resolve(st, id)?,
                    (None, _) => next_unclaimed(st, &agent)?,
                };
                claimable(st, &task, &agent)?;
                Ok(command(TaskOp::Claim, task, Some(agent.clone()), None))
            })?
        }
        Cmd::ReleaseStale { lease } => release_stale(cmd, args.json, lease)?,
        Cmd::Start { id } => change(cmd, args.json, Some(&id), |st| {
            let task = resolve(st, &id)?;
            if let Some(agent) = &args.agent {
                claimable(st, &task, agent)?;
            }
            Ok(command(TaskOp::Start, task, args.agent.clone(), None))
        })?,
        Cmd::Done { id } => change(cmd, args.json, Some(&id), |st| {
            Ok(command(TaskOp::Done, resolve(st, &id)?, None, None))
        })?,
        Cmd::Fail { id, reason } => change(cmd, args.json, Some(&id), |st| {
            Ok(command(
                TaskOp::Fail,
                resolve(st, &id)?,
                None,
                Some(reason.clone()),
            ))
        })?,
        Cmd::Reopen { id } => change(cmd, args.json, Some(&id), |st| {
            Ok(command(TaskOp::Reopen, resolve(st, &id)?, None, None))
        })?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses a task another agent holds, or one that is finished.
fn claimable(st: &State, task: &TaskRef, agent: &str) -> Result<()> {
    let Some(t) = find(st, task) else {
        return Ok(());
    };
    if projections::tasks::held_by_other(t, Some(agent)) {
        bail!(
            "task {} is held by agent {} (in progress since {}); not claimed",
            escape(&task.display()),
            escape(t.owner.as_deref().unwrap_or("?")),
            output::timestamp(t.changed_at_us())
        );
    }
    if !t.status.is_open() {
        bail!(
            "task {} is {}; only pending or failed tasks can be claimed",
            escape(&task.display()),
            t.status.as_str()
        );
    }
    Ok(())
}

/// The oldest journal-wide task that is pending or failed and held by nobody.
fn next_unclaimed(st: &State, agent: &str) -> Result<TaskRef> {
    let mut open: Vec<&Task> = st
        .tasks
        .open()
        .filter(|t| t.status != TaskStatus::InProgress)
        .collect();
    open.sort_by_key(|t| t.created_seq);
    if let Some(t) = open.first() {
        return Ok(t.task_ref());
    }
    let held = st
        .tasks
        .open()
        .filter(|t| t.owner.as_deref() != Some(agent))
        .count();
    bail!(
        "no open task to claim for {} ({} held by other agents)",
        escape(agent),
        output::count(held as u64, "task")
    )
}

/// Fails, for retry, every task whose owner has been silent longer than the lease.
fn release_stale(cmd: &CommandHelper, json: bool, lease: Option<u64>) -> Result<()> {
    let dir = cmd.dir();
    let mut policy = cmd.settings().policy.clone();
    if let Some(l) = lease {
        policy.task_lease_secs = l;
    }
    let mut j: Journal = state::open_and_drain(dir, true)?;
    let state = state::checkpoint_or_rebuild(&mut j)?;
    let now = crate::clock::now_us();
    let expired = projections::policy::lease_expired(&state, now, &policy, true);
    let mut tx = engine::Transaction::start(&mut j)?;
    for r in &expired {
        if let Some(s) = &r.task.session {
            tx.load_session(s)?;
        }
        // The agent is not the one acting here: the envelope names no agent, so releasing its
        // task does not count as hearing from it.
        let c = command(TaskOp::Fail, r.task.clone(), None, Some(r.reason.clone()));
        tx.push(engine::ingest::event(
            now,
            "cli",
            None,
            None,
            Kind::TaskCommand,
            derived::body(&c),
        ))?;
    }
    if tx.finish()? {
        j.seal_if_full()?;
    }
    if json {
        let v: Vec<serde_json::Value> = expired
            .iter()
            .map(|r| serde_json::json!({ "task": r.task.display(), "agent": r.agent, "reason": r.reason }))
            .collect();
        output::print_json(&serde_json::Value::Array(v));
    } else if expired.is_empty() {
        println!("no task held past its lease");
    } else {
        for r in &expired {
            println!(
                "{} released: {}",
                escape(&r.task.display()),
                escape(&r.reason)
            );
        }
    }
    Ok(())
}

fn command(
    op: TaskOp,
    task: TaskRef,
    agent: Option<String>,
    reason: Option<String>,
) -> TaskCommand {
    TaskCommand {
        op,
        task,
        subject: None,
        description: None,
        agent,
        reason,
    }
}

/// The sessions whose tasks a task reference `id` may name (see `resolve`), found in the
/// sessions index: the session a `SESSION:ID` prefix names, or for a bare id that is not
/// journal-wide, the sessions holding a task of that id.
fn sessions_named(st: &State, id: Option<&str>) -> Result<Vec<String>> {
    let Some(id) = id else {
        return Ok(Vec::new());
    };
    let summaries = st.summaries();
    Ok(match id.split_once(':') {
        Some((s, _)) => {
            match engine::resolve_session(summaries.iter().map(|(k, _)| *k), s) {
                Ok(one) => vec![one],
                // `resolve` names the problem.
                Err(_) => Vec::new(),
            }
        }
        None if st.tasks.tasks.contains_key(id) => Vec::new(),
        None => summaries
            .into_iter()
            .filter(|(_, s)| s.tasks.decode().iter().any(|t| t.id == id))
            .map(|(k, _)| k.clone())
            .collect(),
    })
}

/// What a task command did.
enum Outcome {
    /// Nothing recorded: the task is already so (`status`), or unknown.
    Unchanged { label: String, status: String },
    /// Recorded; the task as it is now.
    Changed { label: String, task: Task },
}

/// Applies a task command under the journal's lock: records it only if it changes the task.
/// `task_id` is the reference the command resolves (`None`: only journal-wide tasks are read).
///
/// The common case holds the lock for a moment: the journal opened light (no sled, like a
/// hook), the command recorded in the write-ahead log, the lock released, then the log synced.
/// A session's task is found through the sessions index, so only that session is read. A spool
/// backlog, a stale checkpoint, or a partition the hot cache lacks takes the store, under the
/// same lock.
fn change(
    cmd: &CommandHelper,
    json: bool,
    task_id: Option<&str>,
    make: impl Fn(&State) -> Result<TaskCommand>,
) -> Result<()> {
    let drain_lag = cmd.settings().hook.drain_lag;
    let outcome = engine::writer::change(cmd.dir(), drain_lag, |w| apply(w, task_id, &make))?;
    match outcome {
        Outcome::Unchanged { label, status } => {
            if json {
                output::print_json(
                    &serde_json::json!({ "task": label, "changed": false, "status": status }),
                );
            } else {
                println!("{} unchanged (it is {status})", escape(&label));
            }
        }
        Outcome::Changed { label, task: t } => {
            if json {
                let mut v = task_json(&t);
                v["changed"] = true.into();
                output::print_json(&v);
            } else {
                println!(
                    "{} {} — {}",
                    escape(&label),
                    t.status.as_str(),
                    escape(&t.subject)
                );
            }
        }
    }
    Ok(())
}

/// Loads what the reference can name — the journal-wide tasks, and the sessions a
/// `SESSION:ID` prefix matches (every session only for a bare id that is not journal-wide) —
/// and records the command when it changes the task.
fn apply(
    j: &mut dyn Writer,
    task_id: Option<&str>,
    make: &dyn Fn(&State) -> Result<TaskCommand>,
) -> Result<Outcome> {
    let mut tx = engine::Transaction::start(j)?;
    if tx.stale().is_some() {
        return Err(anyhow::Error::new(state::CacheMiss));
    }
    if task_id.is_some_and(|id| id.contains(':') || !tx.state().tasks.tasks.contains_key(id)) {
        tx.load_index()?;
    }
    let names = sessions_named(tx.state(), task_id)?;
    for s in names {
        tx.load_session(&s)?;
    }
    let c = make(tx.state())?;
    let before = find(tx.state(), &c.task).cloned();
    let now = chrono::Utc::now().timestamp_micros();
    let env = tx.record(engine::ingest::event(
        now,
        "cli",
        None,
        c.agent.as_deref(),
        Kind::TaskCommand,
        derived::body(&c),
    ));
    // The finished tasks too: a command may reopen one, or finish one.
    tx.load_for(&env)?;
    let mut trial = tx.state().clone();
    trial.apply(&env);
    let after = find(&trial, &c.task).cloned();
    let changed = match (&before, &after) {
        (Some(b), Some(a)) => b.status != a.status || b.owner != a.owner || b.subject != a.subject,
        (None, Some(_)) => true,
        _ => false,
    };
    let label = c.task.display();
    if !changed {
        let status = before.map(|t| t.status.as_str()).unwrap_or("unknown");
        return Ok(Outcome::Unchanged {
            label,
            status: status.to_string(),
        });
    }
    tx.set_state(trial);
    tx.finish()?;
    Ok(Outcome::Changed {
        label,
        task: after.expect("changed"),
    })
}

/// `tasks [list]`: the board, filtered by status and agent.
///
/// The table lists open tasks: every journal-wide one, and those of the sessions started last
/// (`--last`, 100 unless told), from their index summaries. `--all` lists every task, finished
/// ones too, of every session; `--status` lists that status, finished or not. `--json` lists
/// every task of every session (unless `--last`), with descriptions and histories, so it reads
/// the sessions that have one to list.
fn list(cmd: &CommandHelper, args: &Args) -> Result<()> {
    let status = status_filter(args)?;
    if args.all_projects {
        return list_all_projects(args, status);
    }
    let mut p = board(cmd.dir())?;
    let open_only = !args.all && !args.json && status.is_none();
    let last = output::shown_last(args.last, args.all, args.json);
    let agent = args.agent.as_deref();
    let keep = |t: &Task| {
        (!open_only || t.status.is_open())
            && status.is_none_or(|s| t.status == s)
            && (agent.is_none() || t.owner.as_deref() == agent)
    };
    let open_global = p.state.tasks.tasks.len() as u64;
    let finished_global = p.state.tasks.next_number.saturating_sub(open_global);
    if !open_only && finished_global > 0 {
        p.load(&projections::fold::Partition::TasksDone)?;
    }
    // The sessions in scope, in the order they started; those before them are only counted.
    let order = p.state.summaries_by_start();
    let skip = last.map_or(0, |l| order.len().saturating_sub(l));
    let (older, shown) = order.split_at(skip);
    let mut lines: Vec<Task> = Vec::new();
    let mut finished_shown = false;
    for (_, sum) in shown {
        for t in sum.tasks.decode() {
            finished_shown |= !t.status.is_open();
            if keep(&t) {
                lines.push(t);
            }
        }
    }
    if args.json {
        // Whole tasks, history included: from the sessions that have one to list.
        let mut named: Vec<String> = lines.iter().filter_map(|t| t.session.clone()).collect();
        named.dedup();
        drop(order);
        for s in named {
            p.load(&projections::fold::Partition::Session(s))?;
        }
        let state = p.into_state();
        let v: Vec<serde_json::Value> = state
            .tasks
            .tasks
            .values()
            .filter(|t| keep(t))
            .chain(lines.iter().filter_map(|l| {
                let s = state.sessions.get(l.session.as_deref()?)?;
                s.tasks.get(&l.id)
            }))
            .map(task_json)
            .collect();
        output::print_json(&serde_json::Value::Array(v));
        return Ok(());
    }
    let older_with_tasks = older.iter().filter(|(_, s)| !s.tasks.is_empty()).count() as u64;
    let older_open: u64 = older.iter().map(|(_, s)| s.open_tasks).sum();
    let tasks: Vec<&Task> = p
        .state
        .tasks
        .tasks
        .values()
        .filter(|t| keep(t))
        .chain(&lines)
        .collect();
    let mut hidden = Vec::new();
    if open_only && (finished_global > 0 || finished_shown) {
        hidden.push("finished tasks".to_string());
    }
    if older_with_tasks > 0 {
        hidden.push(format!(
            "the tasks of {} started earlier ({} open)",
            output::count(older_with_tasks, "session"),
            older_open
        ));
    }
    if !hidden.is_empty() {
        println!(
            "{}",
            output::dim(&format!(
                "not listed: {}; every task: `hookjournal tasks --all`",
                hidden.join(" and ")
            ))
        );
    }
    print!("{}", render(&tasks));
    Ok(())
}

/// `--status`, parsed.
fn status_filter(args: &Args) -> Result<Option<TaskStatus>> {
    args.status
        .as_deref()
        .map(|s| {
            TaskStatus::parse(s).ok_or_else(|| {
                anyhow::anyhow!(
                    "unknown status {s:?} (pending, in_progress, completed, failed, deleted)"
                )
            })
        })
        .transpose()
}

/// `tasks --all-projects`: every registered journal's tasks (read untouched): journal-wide ones
/// first, then each session's in the order they started, as each project's own list has them.
fn list_all_projects(args: &Args, status: Option<TaskStatus>) -> Result<()> {
    let open_only = !args.all && !args.json && status.is_none();
    let agent = args.agent.as_deref();
    let keep = |t: &Task| {
        (!open_only || t.status.is_open())
            && status.is_none_or(|s| t.status == s)
            && (agent.is_none() || t.owner.as_deref() == agent)
    };
    let mut per = Vec::new();
    let mut finished_hidden = false;
    for r in crate::cli_util::registered() {
        // As the project's own list reads them: the journal-wide tasks (finished ones too), and
        // each session's from its index summary; with --json, whole tasks from their sessions.
        let mut p = r.open()?;
        p.load(&projections::fold::Partition::Global)?;
        p.load(&projections::fold::Partition::Tasks)?;
        p.load(&projections::fold::Partition::TasksDone)?;
        p.load_index()?;
        let mut tasks: Vec<Task> = p.state.tasks.tasks.values().cloned().collect();
        let mut named = Vec::new();
        for (id, sum) in p.state.summaries_by_start() {
            let decoded = sum.tasks.decode();
            if !decoded.is_empty() {
                named.push(id.clone());
            }
            tasks.extend(decoded);
        }
        finished_hidden |= open_only && tasks.iter().any(|t| !t.status.is_open());
        tasks.retain(|t| keep(t));
        if args.json {
            for s in named {
                p.load(&projections::fold::Partition::Session(s))?;
            }
            let state = p.into_state();
            for t in &mut tasks {
                let whole = t
                    .session
                    .as_deref()
                    .and_then(|s| state.sessions.get(s))
                    .and_then(|s| s.tasks.get(&t.id));
                if let Some(w) = whole {
                    *t = w.clone();
                }
            }
        }
        per.push((r.project, tasks));
    }
    let all: Vec<projections::across::InProject<Task>> = per
        .into_iter()
        .flat_map(|(p, tasks)| projections::across::tagged(&p, tasks))
        .collect();
    if args.json {
        let v: Vec<serde_json::Value> = all
            .iter()
            .map(|t| {
                let mut v = task_json(&t.row);
                v["project"] = t.project.clone().into();
                v
            })
            .collect();
        output::print_json(&serde_json::Value::Array(v));
        return Ok(());
    }
    if finished_hidden {
        println!(
            "{}",
            output::dim(
                "not listed: finished tasks; every task: `hookjournal tasks --all-projects --all`"
            )
        );
    }
    let rows: Vec<(Option<&str>, &Task)> = all
        .iter()
        .map(|t| (Some(t.project.as_str()), &t.row))
        .collect();
    print!("{}", crate::render::tasks::render_in(&rows));
    Ok(())
}

/// The task board's sources: the journal-wide open tasks and the sessions index (whose
/// summaries hold each session's tasks); no session's own partition.
fn board(dir: &std::path::Path) -> Result<state::Partial> {
    let mut p = state::Partial::open(dir)?;
    p.load(&projections::fold::Partition::Global)?;
    p.load(&projections::fold::Partition::Tasks)?;
    p.load_index()?;
    Ok(p)
}

/// `tasks show ID`: one task and its history.
fn show(cmd: &CommandHelper, id: &str, json: bool) -> Result<()> {
    let mut p = board(cmd.dir())?;
    // Only the sessions the reference can name are loaded (their ids from the index).
    let named: Vec<String> = match id.split_once(':') {
        Some((s, _)) => vec![engine::resolve_session(
            p.state.summaries().iter().map(|(k, _)| *k),
            s,
        )?],
        None if p.state.tasks.tasks.contains_key(id) => Vec::new(),
        None => p
            .state
            .summaries()
            .into_iter()
            .filter(|(_, s)| s.tasks.decode().iter().any(|t| t.id == id))
            .map(|(k, _)| k.clone())
            .collect(),
    };
    for s in named {
        p.load(&projections::fold::Partition::Session(s))?;
    }
    let state = p.into_state();
    let r = resolve(&state, id)?;
    let t = find(&state, &r).expect("resolved");
    if json {
        output::print_json(&task_json(t));
    } else {
        println!(
            "{} {}  {}",
            output::bold(&escape(&r.display())),
            output::tint(t.status.as_str()),
            escape(&t.subject)
        );
        if let Some(d) = &t.description {
            println!("  {}", escape(d));
        }
        if let Some(o) = &t.owner {
            println!("  owner {}", escape(o));
        }
        if t.retry_count > 0 || t.fail_reason.is_some() {
            println!(
                "  retries {}; last failure: {}",
                t.retry_count,
                escape(t.fail_reason.as_deref().unwrap_or("-"))
            );
        }
        for h in &t.history {
            println!(
                "  {}  seq {:<6} {:<12} by {}{}",
                output::timestamp(h.at_us),
                h.seq,
                h.status.as_str(),
                escape(&h.by),
                h.note
                    .as_deref()
                    .map(|n| format!(" — {}", escape(n)))
                    .unwrap_or_default()
            );
        }
    }
    Ok(())
}
