//! Kills at random instants, driven until enough of them have landed mid-run.
//!
//! How many kills land before their victim exits is how a race fell on this machine at this
//! moment, not a property of hookjournal: a test asserts its property after the kills, and the
//! harness keeps killing (at instants drawn within the time the victim takes here, measured as it
//! goes) until the wanted number landed. Its bounds on attempts are generous; reaching one means
//! the harness could not make the situation happen, and it says so.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A small deterministic generator (xorshift64): the same kill instants for the same seed.
pub struct Rng(pub u64);

impl Rng {
    /// A number in `0..n` (`n` > 0).
    pub fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    /// A duration in `0..span`.
    pub fn within(&mut self, span: Duration) -> Duration {
        Duration::from_micros(self.next(span.as_micros().max(1) as u64))
    }
}

/// Starts `hookjournal --journal J hook` with `payload` on stdin (output discarded).
pub fn spawn_hook(j: &Path, payload: &str) -> Child {
    let mut c = super::cmd(j);
    c.arg("hook")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = c.spawn().expect("spawn hook");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    child
}

/// SIGKILLs `child` and reaps it: `None` when the kill landed (it had not exited yet), else how
/// it exited.
pub fn kill_and_reap(child: &mut Child) -> Option<ExitStatus> {
    // SAFETY: kill(2) on a child we spawned and have not reaped (its pid is still ours).
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let status = child.wait().unwrap();
    (status.signal() != Some(libc::SIGKILL)).then_some(status)
}

/// How a campaign of kills of concurrent hooks went.
#[derive(Debug, Default)]
pub struct Kills {
    /// The payloads of the hooks that exited 0, in round order.
    pub acknowledged: Vec<String>,
    /// Rounds run (one kill each).
    pub rounds: usize,
    /// Kills that landed before their victim exited.
    pub landed: usize,
}

/// What a kill campaign wants.
pub struct Campaign {
    /// At least this many rounds, however many kills landed.
    pub min_rounds: usize,
    /// At least this many kills landed mid-run.
    pub landed: usize,
    /// Give up (fail) after this many rounds.
    pub max_rounds: usize,
    pub seed: u64,
}

/// Starts the hooks of `round(i)` together on journal `j`, SIGKILLs one of them (chosen at
/// random) at a random instant within the time a hook takes here, and reaps them all; round
/// after round, until the campaign has what it wants. Every hook that was not killed must exit
/// 0 (a hook always does), and so must a victim the kill missed.
pub fn kill_hooks(j: &Path, want: &Campaign, mut round: impl FnMut(usize) -> Vec<String>) -> Kills {
    let mut rng = Rng(want.seed);
    let mut k = Kills::default();
    // How long a hook runs here, from spawn to exit: a guess, then measured on the survivors.
    let mut span = Duration::from_millis(10);
    while k.rounds < want.min_rounds || k.landed < want.landed {
        assert!(
            k.rounds < want.max_rounds,
            "only {} of {} kills landed mid-run in {} rounds (hooks run ~{span:?} here)",
            k.landed,
            want.landed,
            k.rounds
        );
        let payloads = round(k.rounds);
        let started = Instant::now();
        let mut children: Vec<Child> = payloads.iter().map(|p| spawn_hook(j, p)).collect();
        let victim = rng.next(children.len() as u64) as usize;
        std::thread::sleep(rng.within(span));
        let missed = kill_and_reap(&mut children[victim]);
        k.landed += usize::from(missed.is_none());
        for (i, child) in children.iter_mut().enumerate() {
            let status = match (i == victim, missed) {
                (true, None) => continue,
                (true, Some(status)) => status,
                (false, _) => child.wait().unwrap(),
            };
            assert!(
                status.success(),
                "round {}: a hook no kill landed on exited {status}",
                k.rounds
            );
            k.acknowledged.push(payloads[i].clone());
            if i != victim {
                span = (span * 7 + started.elapsed()) / 8;
            }
        }
        k.rounds += 1;
    }
    k
}

/// Kills a process at random instants until `landed` kills landed before it exited, `attempt`
/// by attempt (at most `max_attempts`). `attempt(i, delay)` starts the process, kills it after
/// `delay` (see `kill_after`), checks what it must, and says whether the kill landed. Delays are
/// drawn within `span`, how long the process runs uninterrupted here (measured by the caller),
/// shortened whenever a kill comes too late. Returns the attempts made.
pub fn kill_until(
    landed: usize,
    max_attempts: usize,
    mut span: Duration,
    seed: u64,
    mut attempt: impl FnMut(usize, Duration) -> bool,
) -> usize {
    let mut rng = Rng(seed);
    let mut got = 0;
    let mut i = 0;
    while got < landed {
        assert!(
            i < max_attempts,
            "only {got} of {landed} kills landed mid-run in {i} attempts (last span {span:?})"
        );
        if attempt(i, rng.within(span)) {
            got += 1;
        } else {
            span = span * 3 / 4;
        }
        i += 1;
    }
    i
}

/// Sleeps `delay`, then SIGKILLs and reaps `child`: whether the kill landed.
pub fn kill_after(mut child: Child, delay: Duration) -> bool {
    std::thread::sleep(delay);
    kill_and_reap(&mut child).is_none()
}
