//! Power loss: nothing a hook acknowledged is lost when the power is cut, and `verify` tells the
//! truth afterwards. The journal lives on a crash-simulating file system (`hookjournal-crashfs`:
//! only what was synced survives, by the strict POSIX rules). Each cycle runs real hooks —
//! sequential and concurrent, record-only and answering, with seals and drains — cuts the power
//! at a random moment or right after a named operation on a named kind of file, kills what still
//! runs, boots again with a new boot id, and checks every event whose hook exited 0.
//!
//! Its own main (libtest-mimic): the test thread moves into a private mount namespace, where a
//! regular file is bind-mounted over `/proc/sys/kernel/random/boot_id` and rewritten at each
//! boot, so the hooks it starts see a new boot with no seam in the program. Needs root and
//! `/dev/fuse`; without them it is reported ignored, and `HOOKJOURNAL_REQUIRE_FUSE=1` (CI) makes
//! that a failure.
//!
//! `HOOKJOURNAL_POWER_CYCLES` (default 300) and `HOOKJOURNAL_POWER_SEED` (default: from the
//! clock, printed) replay a run: the seed fixes every choice the test makes (hooks, waves,
//! injection points, cut moments, writeback); how concurrent hooks interleave is the scheduler's.
//! For a diagnosis: `HOOKJOURNAL_POWER_TRACE=N` prints the last N changes (process, operation,
//! path) before each cut that lost, duplicated or alarmed; `HOOKJOURNAL_POWER_NAMES=immediate`
//! makes names durable at once, to tell missing directory syncs apart from the other losses.

mod common;

use crashfs::{boot, procs, CrashFs, Injection, Names, Op, Options, Writeback};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The injection points: right after the n-th (at most the last field; 1 for what happens only
/// at seals and opens) such operation on a path of this kind. Each is armed in turn; the run
/// fails if one is never reached.
const POINTS: &[(&str, Op, &str, u64)] = &[
    ("write wal/*.wal", Op::Write, "*/wal/*.wal", 3),
    ("fsync wal/*.wal", Op::Fsync, "*/wal/*.wal", 3),
    ("write wal/*.mirror", Op::Write, "*/wal/*.mirror", 3),
    ("fsync wal/*.mirror", Op::Fsync, "*/wal/*.mirror", 3),
    ("create wal/*.wal", Op::Create, "*/wal/*.wal", 1),
    ("unlink wal/*", Op::Unlink, "*/wal/*", 1),
    ("create spool/*", Op::Create, "*/spool/*", 3),
    ("rename spool/*", Op::Rename, "*/spool/*.spool", 3),
    ("fsyncdir spool/", Op::Fsyncdir, "*/spool", 3),
    ("unlink spool/*", Op::Unlink, "*/spool/*.spool", 3),
    ("write hot/*", Op::Write, "*/hot/*", 3),
    ("rename CURRENT", Op::Rename, "*/CURRENT", 1),
    ("rename segments/*", Op::Rename, "*/segments/*", 1),
    ("mkdir active-*", Op::Mkdir, "*/active-*", 1),
    ("write active-*/**", Op::Write, "*/active-*/**", 3),
    ("fsync active-*/**", Op::Fsync, "*/active-*/**", 1),
    ("unlink .hookjournal/*", Op::Unlink, "*/.hookjournal/*", 1),
];

/// Kinds of path the operation counts are reported by (first match wins).
const KINDS: &[(&str, &str)] = &[
    ("wal/*.wal", "*/wal/*.wal"),
    ("wal/*.mirror", "*/wal/*.mirror"),
    ("wal/ other", "*/wal/*"),
    ("wal/", "*/wal"),
    ("spool/*", "*/spool/*"),
    ("spool/", "*/spool"),
    ("CURRENT", "*/CURRENT"),
    ("hot/*", "*/hot/*"),
    ("hot/", "*/hot"),
    ("segments/*", "*/segments/*"),
    ("segments/", "*/segments"),
    ("active-*/**", "*/active-*/**"),
    ("active-*", "*/active-*"),
    ("state/*", "*/state/*"),
    ("state/", "*/state"),
    (".hookjournal/*", "*/.hookjournal/*"),
    (".hookjournal/", "*/.hookjournal"),
];

/// The fixture payloads: `(file, answered)`; record-only events take the spool.
const EVENTS: &[(&str, bool)] = &[
    ("SessionStart-startup", true),
    ("UserPromptSubmit", true),
    ("PostToolUse-Write", true),
    ("Stop", true),
    ("Notification", false),
    ("PreToolUse-Bash", false),
];

/// A journal is replaced after this many cycles, so exports stay short.
const CYCLES_PER_JOURNAL: u64 = 10;

/// Small segments and a small lag, so seals and drains happen every few cycles; a short lock
/// wait, so concurrent hooks spool.
const CONFIG: &str = "[hook]\nsegment_events = 16\ndrain_lag = 4\nlock_wait_ms = 15\n";

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Figures per injection point (or "random moment").
#[derive(Default)]
struct Tally {
    cycles: u64,
    fired: u64,
    acknowledged: u64,
    lost: u64,
    duplicated: u64,
    verify_valid: u64,
    verify_damaged: u64,
    false_alarms: u64,
    lies: u64,
}

/// A hook that was started: its marker, what it is (for a trace) and its process.
struct Hook {
    marker: String,
    what: String,
    child: Child,
}

struct Run {
    bin: PathBuf,
    fs: CrashFs,
    boot: boot::BootId,
    rng: Rng,
    tallies: BTreeMap<String, Tally>,
    failures: Vec<String>,
    /// Markers acknowledged in the current journal and not yet found lost, with what they were.
    expected: BTreeMap<String, String>,
    /// How many failures of each kind.
    failure_kinds: BTreeMap<&'static str, u64>,
    /// Markers already reported duplicated.
    duplicated: BTreeSet<String>,
    journal: PathBuf,
    next_marker: u64,
    /// Operations while the hooks (and what they started) ran, per kind of path.
    hook_counts: crashfs::Counts,
    /// Time spent running hooks, stopping and booting, and checking.
    timing: [Duration; 3],
}

impl Run {
    fn fail(&mut self, kind: &'static str, message: String) {
        *self.failure_kinds.entry(kind).or_insert(0) += 1;
        self.failures.push(message);
    }

    fn cmd(&self, inline: bool) -> Command {
        let mut c = Command::new(&self.bin);
        c.arg("--journal").arg(&self.journal);
        for var in [
            "RALPH_AGENT_ID",
            "HOOKJOURNAL_DIR",
            "CLAUDE_PROJECT_DIR",
            "CLAUDE_CODE_SESSION_ID",
            "GEMINI_SESSION_ID",
            "HOOKJOURNAL_SOURCE",
            "HOOKJOURNAL_DRAINER",
        ] {
            c.env_remove(var);
        }
        if inline {
            c.env("HOOKJOURNAL_DRAINER", "inline");
        }
        c.env("NO_COLOR", "1");
        c
    }

    /// A fixture payload made unique by a marker (and one of three sessions).
    fn payload(&mut self, cycle: u64) -> (String, &'static str, Vec<u8>) {
        let (file, _) = EVENTS[self.rng.below(EVENTS.len() as u64) as usize];
        let path = common::fixtures().join(format!("events/claude/{file}.json"));
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        self.next_marker += 1;
        let marker = format!("c{cycle}-{}", self.next_marker);
        v["hookjournal_power_marker"] = marker.clone().into();
        v["session_id"] = format!("power-{}", self.rng.below(3)).into();
        (marker, file, serde_json::to_vec(&v).unwrap())
    }

    fn spawn(&mut self, cycle: u64, inline: bool) -> Hook {
        let (marker, file, payload) = self.payload(cycle);
        let mut child = self
            .cmd(inline)
            .arg("hook")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn hook");
        // A hook reads all of stdin before it touches the journal: this cannot block on a cut.
        let _ = child.stdin.take().unwrap().write_all(&payload);
        let what = format!("{file} (pid {}, cycle {cycle})", child.id());
        Hook {
            marker,
            what,
            child,
        }
    }

    /// Runs a command to its end (nothing is cut meanwhile): exit code and all it printed.
    fn output(&self, args: &[&str]) -> (Option<i32>, String) {
        let out = self.cmd(true).args(args).output().expect("run hookjournal");
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        (out.status.code(), text)
    }

    /// The machine stops: every hook and everything they started is killed, the requests held
    /// since the cut are answered, and all are reaped. Returns the markers of hooks that exited 0
    /// (they had done all their writing before the cut).
    fn stop(&mut self, cycle: u64, hooks: Vec<Hook>) -> Vec<(String, String)> {
        let pids: Vec<i32> = hooks.iter().map(|h| h.child.id() as i32).collect();
        procs::kill(&pids);
        procs::kill(&procs::children());
        self.fs.release_held();
        let mut acked = Vec::new();
        for mut h in hooks {
            let status = h.child.wait().expect("wait for a hook");
            acked.extend(self.finished(cycle, h, status));
        }
        // Detached drainers and rebuilds, reparented to this process.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = procs::children();
            if left.is_empty() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "processes outlived the kill: {left:?}"
            );
            procs::kill(&left);
            self.fs.release_held();
            for pid in left {
                procs::reap(pid);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        acked
    }

    /// A hook that exited: its marker and what it was if it exited 0 (acknowledged). A panic
    /// is a failure whatever the power did.
    fn finished(
        &mut self,
        cycle: u64,
        mut h: Hook,
        status: ExitStatus,
    ) -> Option<(String, String)> {
        let mut err = String::new();
        if let Some(mut e) = h.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        if err.contains("panicked") {
            self.fail(
                "a hook panicked",
                format!("cycle {cycle}: {} panicked: {}", h.what, err.trim()),
            );
        }
        status.success().then_some((h.marker, h.what))
    }

    /// Reaps finished background processes (drainers) between cuts.
    fn reap_background(&self, tracked: &[Hook]) {
        let tracked: BTreeSet<i32> = tracked.iter().map(|h| h.child.id() as i32).collect();
        for pid in procs::children() {
            if !tracked.contains(&pid) {
                procs::reap(pid);
            }
        }
    }

    /// How often each marker appears in the journal's hook events.
    fn markers(&mut self, cycle: u64) -> Option<BTreeMap<String, usize>> {
        // Readers never ingest the spool: a writer (the drainer) does first.
        let _ = self.output(&["drain"]);
        let (code, text) = self.output(&["export", "--report", "events"]);
        if code == Some(1) && text.contains("no journal at") {
            // The cut came before the journal's creation was durable: then it holds nothing.
            return Some(BTreeMap::new());
        }
        if code != Some(0) {
            self.fail(
                "export failed",
                format!(
                    "cycle {cycle}: export exited {code:?}: {}",
                    first_line(&text)
                ),
            );
            return None;
        }
        let mut counts = BTreeMap::new();
        for line in text.lines().filter(|l| l.starts_with('{')) {
            let mut v: serde_json::Value = serde_json::from_str(line).expect("JSONL");
            if v["kind"] != "Hook" {
                continue;
            }
            v["_line"] = line.into();
            let payload = common::payload_bytes(&v);
            let Ok(p) = serde_json::from_slice::<serde_json::Value>(&payload) else {
                continue;
            };
            if let Some(m) = p["hookjournal_power_marker"].as_str() {
                *counts.entry(m.to_string()).or_insert(0) += 1;
            }
        }
        Some(counts)
    }

    fn new_journal(&mut self, n: u64) {
        self.journal = self.fs.mountpoint().join(format!("p{n}/.hookjournal"));
        std::fs::create_dir_all(&self.journal).unwrap();
        std::fs::write(self.journal.join("config.toml"), CONFIG).unwrap();
        self.fs.sync();
        self.expected.clear();
    }

    fn cycle(&mut self, cycle: u64) {
        if cycle.is_multiple_of(CYCLES_PER_JOURNAL) {
            self.new_journal(cycle / CYCLES_PER_JOURNAL);
        }
        // The plan: an injection point in turn for two cycles of three, else a random moment.
        let writeback = if self.rng.below(2) == 0 {
            Writeback::Nothing
        } else {
            Writeback::Random(self.rng.next())
        };
        let point = (cycle % 3 != 2).then(|| ((cycle - cycle / 3) as usize) % POINTS.len());
        let label = match point {
            Some(i) => {
                let (name, op, glob, most) = POINTS[i];
                let nth = 1 + self.rng.below(most);
                self.fs
                    .arm(Injection::new(op, glob).nth(nth).writeback(writeback));
                name.to_string()
            }
            None => "random moment".to_string(),
        };
        let inline = self.rng.below(3) == 0;
        let t0 = Instant::now();
        let before = self.fs.counts();
        // A random cut lands in one of 3–6 waves; an injection cycle goes on until its point is
        // reached (a seal needs 16 events), at most 12 waves.
        let waves = if point.is_some() {
            12
        } else {
            3 + self.rng.below(4)
        };
        let random_cut = (self.rng.below(waves), self.rng.below(15_000));
        let mut acked = Vec::new();
        let mut running: Vec<Hook> = Vec::new();
        for wave in 0..waves {
            if self.fs.is_cut() {
                break;
            }
            let n = if self.rng.below(3) == 0 {
                1
            } else {
                2 + self.rng.below(4)
            };
            for _ in 0..n {
                let h = self.spawn(cycle, inline);
                running.push(h);
            }
            if point.is_none() && wave == random_cut.0 {
                std::thread::sleep(Duration::from_micros(random_cut.1));
                self.fs.cut(writeback);
            }
            let deadline = Instant::now() + Duration::from_secs(60);
            while !self.fs.is_cut() && !running.is_empty() {
                let mut still = Vec::new();
                for mut h in running {
                    match h.child.try_wait().unwrap() {
                        Some(status) => acked.extend(self.finished(cycle, h, status)),
                        None => still.push(h),
                    }
                }
                running = still;
                if Instant::now() > deadline {
                    self.fail(
                        "hooks hung",
                        format!("cycle {cycle}: hooks ran over 60 s without a cut"),
                    );
                    break;
                }
                std::thread::sleep(Duration::from_micros(500));
            }
            self.reap_background(&running);
        }
        // Background work (a detached drainer seals) may still reach the injection point.
        let wait = if point.is_some() { 1500 } else { 200 };
        let deadline = Instant::now() + Duration::from_millis(wait);
        while !self.fs.is_cut() && Instant::now() < deadline && !procs::children().is_empty() {
            self.reap_background(&running);
            std::thread::sleep(Duration::from_millis(1));
        }
        let fired = self.fs.cut_info().is_some_and(|c| c.injection.is_some());
        let t1 = Instant::now();
        for (key, n) in self.fs.counts() {
            *self.hook_counts.entry(key.clone()).or_insert(0) +=
                n - before.get(&key).copied().unwrap_or(0);
        }
        self.fs.cut(writeback);
        acked.extend(self.stop(cycle, running));
        let trace = self.fs.trace();
        self.fs.reboot().expect("reboot");
        self.boot.next_boot().expect("a new boot id");

        let t = self.tallies.entry(label.clone()).or_default();
        t.cycles += 1;
        t.fired += u64::from(fired);
        t.acknowledged += acked.len() as u64;
        self.expected.extend(acked);
        let t2 = Instant::now();
        self.check(cycle, &label, &trace);
        self.timing[0] += t1 - t0;
        self.timing[1] += t2 - t1;
        self.timing[2] += t2.elapsed();
    }

    /// After a boot: verify, recover if it complained, verify again; every acknowledged event
    /// exactly once; then the journal still takes a hook, and `status` works.
    fn check(&mut self, cycle: u64, label: &str, trace: &[String]) {
        let (mut verify, said) = self.output(&["verify"]);
        if verify == Some(1) && said.contains("no journal at") {
            // The cut came before the journal's creation was durable: nothing to verify (and
            // anything acknowledged is found lost below).
            verify = Some(0);
        }
        if verify != Some(0) {
            let (code, out) = self.output(&["recover"]);
            if code != Some(0) {
                self.fail(
                    "recover failed",
                    format!(
                        "cycle {cycle} ({label}): recover exited {code:?}: {}",
                        first_line(&out)
                    ),
                );
            }
            let (again, out) = self.output(&["verify"]);
            if again != Some(0) {
                self.fail(
                    "verify after recover failed",
                    format!(
                        "cycle {cycle} ({label}): verify after recover exited {again:?}: {}",
                        first_line(&out)
                    ),
                );
            }
        }
        // A journal export cannot open is a failure of its own (recorded by `markers`); what
        // it holds is then checked at the next export that works.
        let counts = self.markers(cycle);
        let (lost, dups) = match &counts {
            Some(counts) => (
                self.expected
                    .keys()
                    .filter(|m| !counts.contains_key(*m))
                    .cloned()
                    .collect(),
                counts
                    .iter()
                    .filter(|(m, &n)| n > 1 && !self.duplicated.contains(*m))
                    .map(|(m, _)| m.clone())
                    .collect(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        let lost_what: Vec<String> = lost
            .iter()
            .filter_map(|m| self.expected.remove(m).map(|w| format!("{m}: {w}")))
            .collect();
        self.duplicated.extend(dups.iter().cloned());
        let valid = verify == Some(0);
        let known = counts.is_some();
        let t = self.tallies.get_mut(label).expect("tallied");
        t.lost += lost.len() as u64;
        t.duplicated += dups.len() as u64;
        t.verify_valid += u64::from(valid);
        t.verify_damaged += u64::from(!valid);
        // A lie: valid while something acknowledged is gone; a false alarm: damaged while
        // nothing is (a power cut alone is not damage).
        t.lies += u64::from(valid && !lost.is_empty());
        t.false_alarms += u64::from(known && !valid && lost.is_empty());
        if !lost.is_empty() {
            self.fail(
                "acknowledged lost",
                format!(
                    "cycle {cycle} ({label}): {} acknowledged lost ({}); verify said {}",
                    lost.len(),
                    lost.join(", "),
                    verdict(verify, &said)
                ),
            );
        } else if known && !valid {
            self.fail(
                "verify false alarm",
                format!(
                    "cycle {cycle} ({label}): nothing acknowledged lost, but verify said {}",
                    verdict(verify, &said)
                ),
            );
        }
        if !dups.is_empty() {
            self.fail(
                "recorded twice",
                format!(
                    "cycle {cycle} ({label}): recorded twice: {}",
                    dups.join(", ")
                ),
            );
        }
        if !trace.is_empty() && (!known || !lost.is_empty() || !dups.is_empty() || !valid) {
            eprintln!(
                "--- cycle {cycle} ({label}): lost {lost_what:?}, duplicated {dups:?}, verify said {}; the last changes before the cut:\n{}",
                verdict(verify, &said),
                trace.join("\n")
            );
        }
        // The journal works after: a hook is acknowledged (found at the next check) and status runs.
        let mut h = self.spawn(cycle, true);
        let status = h.child.wait().unwrap();
        if status.success() {
            self.expected.insert(h.marker, h.what);
        } else {
            self.fail(
                "hook after the boot failed",
                format!("cycle {cycle} ({label}): the hook after the boot exited {status}"),
            );
        }
        let (code, out) = self.output(&["status"]);
        if code != Some(0) {
            self.fail(
                "status failed",
                format!(
                    "cycle {cycle} ({label}): status exited {code:?}: {}",
                    first_line(&out)
                ),
            );
        }
    }
}

/// The first lines of a command's output, on one line.
fn first_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(4)
        .collect();
    lines.join(" | ")
}

fn verdict(code: Option<i32>, said: &str) -> String {
    match code {
        Some(0) => "valid".to_string(),
        _ => format!("exit {code:?}: {}", first_line(said)),
    }
}

fn power_loss() -> Result<Completion, Failed> {
    let cycles: u64 = std::env::var("HOOKJOURNAL_POWER_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let seed: u64 = std::env::var("HOOKJOURNAL_POWER_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                % 1_000_000_007
        });
    eprintln!("power loss: seed {seed}, {cycles} cycles (replay: HOOKJOURNAL_POWER_SEED={seed} HOOKJOURNAL_POWER_CYCLES={cycles})");
    let started = Instant::now();

    boot::private_mount_namespace().map_err(|e| format!("a private mount namespace: {e}"))?;
    procs::become_subreaper().map_err(|e| format!("subreaper: {e}"))?;
    let dir = tempfile::tempdir()?;
    let boot =
        boot::BootId::bind(dir.path(), seed).map_err(|e| format!("binding a boot id: {e}"))?;
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt)?;
    // `HOOKJOURNAL_POWER_NAMES=immediate`: names durable at once, to tell the missing directory
    // syncs apart from the other losses (the strict rule is the test).
    let immediate = std::env::var("HOOKJOURNAL_POWER_NAMES").is_ok_and(|v| v == "immediate");
    // `HOOKJOURNAL_POWER_TRACE=N`: print the last N changes before each cut that lost something.
    let trace = std::env::var("HOOKJOURNAL_POWER_TRACE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut options = Options::default().trace(trace).names(if immediate {
        Names::Immediate
    } else {
        Names::AtDirSync
    });
    for (name, glob) in KINDS {
        options = options.kind(name, glob);
    }
    let fs = CrashFs::mount(&mnt, options)?;

    let mut run = Run {
        bin: PathBuf::from(common::BIN),
        fs,
        boot,
        rng: Rng(seed),
        tallies: BTreeMap::new(),
        failures: Vec::new(),
        failure_kinds: BTreeMap::new(),
        expected: BTreeMap::new(),
        duplicated: BTreeSet::new(),
        journal: PathBuf::new(),
        next_marker: 0,
        timing: [Duration::ZERO; 3],
        hook_counts: crashfs::Counts::new(),
    };
    // The hooks see the boot id this namespace gives them, and a new one after a boot.
    let seen = || -> String {
        let out = Command::new("cat").arg(boot::BOOT_ID).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let first = seen();
    for cycle in 0..cycles {
        run.cycle(cycle);
        if cycle == 0 {
            let second = seen();
            if first == second || second != boot::current()? {
                return Err(format!(
                    "the boot id did not change across a boot: {first} then {second}"
                )
                .into());
            }
        }
    }
    // The last hooks, checked once more.
    let last = cycles;
    if let Some(counts) = run.markers(last) {
        let missing: Vec<&String> = run
            .expected
            .keys()
            .filter(|m| !counts.contains_key(*m))
            .collect();
        if !missing.is_empty() {
            run.fail(
                "missing after the last boot",
                format!(
                    "after the last boot: {} acknowledged missing",
                    missing.len()
                ),
            );
        }
    }
    report(&run, cycles, started.elapsed());
    let never: Vec<&str> = POINTS
        .iter()
        .map(|p| p.0)
        .filter(|name| run.tallies.get(*name).is_none_or(|t| t.fired == 0))
        .collect();
    if cycles >= 3 * POINTS.len() as u64 && !never.is_empty() {
        run.fail(
            "injection point never reached",
            format!("injection points never reached: {}", never.join(", ")),
        );
    }
    drop(run.fs);
    if run.failures.is_empty() {
        Ok(Completion::Completed)
    } else {
        let n = run.failures.len();
        let shown: Vec<&str> = run.failures.iter().take(25).map(String::as_str).collect();
        Err(format!(
            "{n} failures (seed {seed}; replay with HOOKJOURNAL_POWER_SEED={seed} HOOKJOURNAL_POWER_CYCLES={cycles}):\n{}",
            shown.join("\n")
        )
        .into())
    }
}

fn report(run: &Run, cycles: u64, elapsed: Duration) {
    let mut out = String::new();
    out.push_str(&format!(
        "\npower loss: {cycles} cycles in {:.1} s\n{:<22} {:>6} {:>6} {:>6} {:>5} {:>5} {:>7} {:>7} {:>6} {:>5}\n",
        elapsed.as_secs_f64(),
        "cut", "cycles", "fired", "acked", "lost", "dup", "v:valid", "v:dmg", "false", "lies"
    ));
    let mut total = Tally::default();
    for (label, t) in &run.tallies {
        out.push_str(&format!(
            "{label:<22} {:>6} {:>6} {:>6} {:>5} {:>5} {:>7} {:>7} {:>6} {:>5}\n",
            t.cycles,
            t.fired,
            t.acknowledged,
            t.lost,
            t.duplicated,
            t.verify_valid,
            t.verify_damaged,
            t.false_alarms,
            t.lies
        ));
        total.cycles += t.cycles;
        total.fired += t.fired;
        total.acknowledged += t.acknowledged;
        total.lost += t.lost;
        total.duplicated += t.duplicated;
        total.verify_valid += t.verify_valid;
        total.verify_damaged += t.verify_damaged;
        total.false_alarms += t.false_alarms;
        total.lies += t.lies;
    }
    out.push_str(&format!(
        "{:<22} {:>6} {:>6} {:>6} {:>5} {:>5} {:>7} {:>7} {:>6} {:>5}\n",
        "total",
        total.cycles,
        total.fired,
        total.acknowledged,
        total.lost,
        total.duplicated,
        total.verify_valid,
        total.verify_damaged,
        total.false_alarms,
        total.lies
    ));
    if !run.failure_kinds.is_empty() {
        let kinds: Vec<String> = run
            .failure_kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        out.push_str(&format!("failures: {}\n", kinds.join(", ")));
    }
    out.push_str(&format!(
        "time: hooks {:.1} s, stopping and booting {:.1} s, checking {:.1} s\n",
        run.timing[0].as_secs_f64(),
        run.timing[1].as_secs_f64(),
        run.timing[2].as_secs_f64()
    ));
    out.push_str(
        "operations per kind of path while hooks ran (the checks' commands not counted):\n",
    );
    let counts = &run.hook_counts;
    let mut kinds: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for ((op, kind), n) in counts {
        kinds
            .entry(kind.as_str())
            .or_default()
            .push(format!("{op} {n}"));
    }
    for (kind, ops) in kinds {
        out.push_str(&format!("  {kind:<14} {}\n", ops.join(", ")));
    }
    eprint!("{out}");
}

fn main() {
    let mut args = Arguments::from_args();
    // The test thread owns the mount namespace and the children: one test, on the main thread.
    args.test_threads = Some(1);
    let required = std::env::var("HOOKJOURNAL_REQUIRE_FUSE").is_ok_and(|v| v == "1");
    let trial = Trial::ignorable_test("power_loss_keeps_every_acknowledged_event", move || {
        match crashfs::available() {
            Ok(()) => power_loss(),
            Err(why) if required => Err(format!("HOOKJOURNAL_REQUIRE_FUSE=1 but {why}").into()),
            Err(why) => Ok(Completion::ignored_with(why)),
        }
    });
    libtest_mimic::run(&args, vec![trial]).exit();
}
