//! The loop's own task program: loops that keep their task database outside hookjournal get the
//! agent's active tasks failed there too, when the agent hits the context limit or its session
//! ends. The program is run directly (never through a shell), bounded in time, and what it said is
//! recorded as an `ExternalRelease` event.
//!
//! The contract (the `task` scripts of ralph-style loops): `PROGRAM list --status active --json`
//! prints a JSON array of tasks (or `{"tasks": [...]}`), each with an `id` and its agent in
//! `agent`, `owner`, `assignee` or `agent_id`; `PROGRAM fail ID --reason TEXT` fails one.

use projections::derived::ExternalRelease;
use serde_json::Value;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `program args…` until `deadline`; returns its stdout, or one line saying why not.
pub fn run_bounded(program: &str, args: &[&str], deadline: Instant) -> Result<String, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{program}: {e}"))?;
    // Read both pipes on threads, so a chatty program cannot block on a full pipe.
    let mut out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.take(4096).read_to_end(&mut b);
        b
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`{program} {}` timed out", args.join(" ")));
            }
            Err(e) => return Err(format!("{program}: {e}")),
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if !status.success() {
        let why = String::from_utf8_lossy(&stderr);
        return Err(format!(
            "`{program} {}` exited with {status}: {}",
            args.join(" "),
            projections::text::one_line(why.trim())
        ));
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

/// The ids of `agent`'s tasks in the program's `list` output.
pub fn active_ids(list_json: &str, agent: &str) -> Result<Vec<String>, String> {
    let v: Value = serde_json::from_str(list_json.trim())
        .map_err(|e| format!("the task list is not JSON: {e}"))?;
    let tasks = match &v {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("tasks") {
            Some(Value::Array(a)) => a,
            _ => return Err("the task list has no `tasks` array".into()),
        },
        _ => return Err("the task list is not an array".into()),
    };
    let text = |t: &Value, k: &str| match t.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    Ok(tasks
        .iter()
        .filter(|t| {
            ["agent", "owner", "assignee", "agent_id"]
                .iter()
                .any(|k| text(t, k).as_deref() == Some(agent))
        })
        .filter_map(|t| text(t, "id"))
        .collect())
}

/// Fails `agent`'s active tasks in the loop's program, within `budget`.
pub fn release(
    program: &str,
    agent: &str,
    event: &str,
    reason: &str,
    budget: Duration,
) -> ExternalRelease {
    let deadline = Instant::now() + budget;
    let mut r = ExternalRelease {
        command: program.to_string(),
        agent: agent.to_string(),
        event: event.to_string(),
        reason: reason.to_string(),
        ..ExternalRelease::default()
    };
    let ids = run_bounded(program, &["list", "--status", "active", "--json"], deadline)
        .and_then(|out| active_ids(&out, agent));
    match ids {
        Ok(ids) => {
            for id in ids {
                match run_bounded(program, &["fail", &id, "--reason", reason], deadline) {
                    Ok(_) => r.released.push(id),
                    Err(e) => r.errors.push(e),
                }
            }
        }
        Err(e) => r.errors.push(e),
    }
    r
}

/// What the hook says on stderr of a release by the loop's program: the tasks it failed, and
/// each call that went wrong. (The journal's own tasks are the answer's line.)
pub fn report(r: &ExternalRelease) -> Vec<String> {
    let mut lines = Vec::new();
    if !r.released.is_empty() {
        lines.push(format!(
            "hookjournal: the loop's task program failed and released task {} of agent {}",
            r.released.join(", "),
            r.agent
        ));
    }
    lines.extend(
        r.errors
            .iter()
            .map(|e| format!("hookjournal: the loop's task program: {e}")),
    );
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_is_reported_with_what_it_released_and_each_failed_call() {
        let r = ExternalRelease {
            agent: "dev-1".into(),
            released: vec!["41".into(), "43".into()],
            errors: vec!["`task fail 44` exited 1".into()],
            ..ExternalRelease::default()
        };
        assert_eq!(
            report(&r),
            [
                "hookjournal: the loop's task program failed and released task 41, 43 of agent dev-1",
                "hookjournal: the loop's task program: `task fail 44` exited 1",
            ]
        );
        assert!(report(&ExternalRelease::default()).is_empty());
    }

    #[test]
    fn tasks_of_the_agent_are_picked_by_any_owner_field() {
        let list = r#"[{"id":"7","agent":"dev-1"},{"id":8,"owner":"dev-1"},{"id":"9","assignee":"qa-1"},{"id":"10"}]"#;
        assert_eq!(active_ids(list, "dev-1").unwrap(), vec!["7", "8"]);
        let wrapped = r#"{"tasks":[{"id":"x","agent_id":"qa-1"}]}"#;
        assert_eq!(active_ids(wrapped, "qa-1").unwrap(), vec!["x"]);
        assert!(active_ids("nope", "a").unwrap_err().contains("not JSON"));
    }
}
