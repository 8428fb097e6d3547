//! The transcript-import benchmark: builds a Claude Code projects folder of about N MB from the
//! real fixture transcripts (`tests/fixtures/transcripts-corpus`), then times
//! `hookjournal import --transcripts` (wall, user + system CPU, peak RSS) beside
//! `ccusage daily --offline --json` on the same folder, and `hookjournal cost --by day --json`
//! beside it, checking that both report the same totals. Prints a table and one JSON line.
//!
//! Run: `cargo bench --bench import` (100 MB), `-- --corpus 1000` for 1 GB. `--keep DIR` writes
//! the corpus to DIR and leaves it there (a second run with the same DIR and size reuses it).
//! `HOOKJOURNAL_BENCH_BIN` times another build of the binary. ccusage is taken from the CI cache
//! (`$HOOKJOURNAL_CI_CACHE` or `~/.cache/hookjournal-ci`, `ccusage-20.0.24/`); when it is not
//! there the comparison is skipped with a notice.
//!
//! The corpus: each replica of the fixture files gets fresh session ids, message ids, request
//! ids and line uuids (every id is rewritten to a hash of itself and the replica number, in the
//! same format), and its timestamps are moved by a whole number of days (spread over 180 days),
//! across 16 project folders. Every other byte of every line is the fixture's, so line shapes,
//! the split responses (several lines per `message.id`) and the models (Haiku 3.5, Sonnet 4,
//! Opus 4.1, synthetic lines) are real.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The binary timed: this build's, or `HOOKJOURNAL_BENCH_BIN`.
fn bin() -> PathBuf {
    std::env::var_os("HOOKJOURNAL_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_hookjournal")))
}

fn fixture_projects() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/transcripts-corpus/projects")
}

/// Days the replicas' timestamps are spread over.
const DAYS: u64 = 180;
/// Project folders the replicas are spread over.
const PROJECTS: u64 = 16;

/// One fixture transcript: its project folder, the path below it, and its lines.
struct Template {
    project: String,
    rel: PathBuf,
    lines: Vec<Vec<u8>>,
}

fn templates() -> Vec<Template> {
    let mut out = Vec::new();
    let mut stack = vec![fixture_projects()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                let rel = p.strip_prefix(fixture_projects()).unwrap();
                let mut parts = rel.components();
                let project = parts
                    .next()
                    .unwrap()
                    .as_os_str()
                    .to_string_lossy()
                    .into_owned();
                let bytes = std::fs::read(&p).unwrap();
                out.push(Template {
                    project,
                    rel: parts.as_path().to_path_buf(),
                    lines: bytes
                        .split(|&b| b == b'\n')
                        .filter(|l| !l.is_empty())
                        .map(<[u8]>::to_vec)
                        .collect(),
                });
            }
        }
    }
    out.sort_by(|a, b| (&a.project, &a.rel).cmp(&(&b.project, &b.rel)));
    assert!(!out.is_empty(), "no fixture transcripts");
    out
}

fn is_hex(b: &[u8]) -> bool {
    b.iter().all(u8::is_ascii_hexdigit)
}

/// `8-4-4-4-12` hex digits.
fn is_uuid(b: &[u8]) -> bool {
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// `msg_…`, `req_…`, `toolu_…` followed by letters and digits.
fn id_prefix(b: &[u8]) -> Option<usize> {
    for p in [&b"msg_"[..], b"req_", b"toolu_"] {
        if b.len() > p.len() + 8
            && b.starts_with(p)
            && b[p.len()..].iter().all(u8::is_ascii_alphanumeric)
        {
            return Some(p.len());
        }
    }
    None
}

/// `2026-11-01T09:47:00.306Z`.
fn is_timestamp(b: &[u8]) -> bool {
    b.len() >= 20 && b[4] == b'-' && b[10] == b'T' && b.last() == Some(&b'Z')
}

/// The id `id` becomes in replica `r`: the same format, other hex digits.
fn remap(id: &[u8], r: u64, keep: usize) -> Vec<u8> {
    let mut h = blake3::Hasher::new();
    h.update(&r.to_le_bytes());
    h.update(id);
    let hex = h.finalize().to_hex();
    let hex = hex.as_bytes();
    let mut out = id[..keep].to_vec();
    let mut k = 0;
    for &c in &id[keep..] {
        if c == b'-' {
            out.push(c);
        } else {
            out.push(hex[k % hex.len()]);
            k += 1;
        }
    }
    out
}

/// A line of replica `r`: every id string remapped, every timestamp moved by `days`.
fn rewrite(line: &[u8], r: u64, days: i64, out: &mut Vec<u8>) {
    let mut i = 0;
    while i < line.len() {
        if line[i] != b'"' {
            out.push(line[i]);
            i += 1;
            continue;
        }
        out.push(b'"');
        i += 1;
        // A string with no escapes up to its closing quote, judged as one token.
        let end = line[i..]
            .iter()
            .position(|&c| c == b'"' || c == b'\\')
            .map(|n| i + n);
        let Some(end) = end.filter(|&e| line[e] == b'"') else {
            continue;
        };
        let s = &line[i..end];
        if is_uuid(s) || (s.len() >= 16 && is_hex(s)) {
            out.extend(remap(s, r, 0));
        } else if let Some(keep) = id_prefix(s) {
            out.extend(remap(s, r, keep));
        } else if is_timestamp(s) {
            let t = chrono::DateTime::parse_from_rfc3339(std::str::from_utf8(s).unwrap())
                .unwrap()
                .with_timezone(&chrono::Utc)
                - chrono::Duration::days(days);
            out.extend(t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string().bytes());
        } else {
            out.extend_from_slice(s);
        }
        out.push(b'"');
        i = end + 1;
    }
}

/// What the generator wrote.
struct Corpus {
    bytes: u64,
    files: u64,
    replicas: u64,
}

/// Writes replicas of the fixtures under `root/projects` until it holds `mb` MB.
fn generate(root: &Path, mb: u64) -> Corpus {
    let templates = templates();
    let projects = root.join("projects");
    let target = mb * 1_000_000;
    let mut c = Corpus {
        bytes: 0,
        files: 0,
        replicas: 0,
    };
    let mut buf = Vec::new();
    while c.bytes < target {
        let r = c.replicas;
        // Spread replicas over the days so that consecutive ones land on different days.
        let days = ((r * 7919) % DAYS) as i64;
        for t in &templates {
            let project = projects.join(format!("{}-{:02}", t.project, r % PROJECTS));
            // The session id in the file name (and a parent folder's) is rewritten like in lines.
            let name = t.rel.to_string_lossy().into_owned();
            let stem = name.trim_end_matches(".jsonl");
            let renamed = format!(
                "{}.jsonl",
                stem.split('/')
                    .map(|part| {
                        let b = part.as_bytes();
                        if is_uuid(b) {
                            String::from_utf8(remap(b, r, 0)).unwrap()
                        } else {
                            part.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("/")
            );
            let path = project.join(renamed);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            buf.clear();
            for line in &t.lines {
                rewrite(line, r, days, &mut buf);
                buf.push(b'\n');
            }
            std::fs::write(&path, &buf).unwrap();
            c.bytes += buf.len() as u64;
            c.files += 1;
        }
        c.replicas += 1;
    }
    c
}

/// Wall seconds, user + system CPU seconds and peak RSS (MB) of one child process.
struct Run {
    wall: f64,
    cpu: f64,
    rss_mb: f64,
    stdout: Vec<u8>,
}

/// Runs `cmd` to completion, measuring it with `wait4` (its own rusage, not all children's).
fn measure(mut cmd: Command) -> Option<Run> {
    let out_file = tempfile::tempfile().unwrap();
    cmd.stdout(out_file.try_clone().unwrap())
        .stderr(Stdio::null());
    let t0 = Instant::now();
    let child = cmd.spawn().ok()?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value, and `wait4` writes it for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our un-waited child; `status` and `ru` are valid for writing.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let wall = t0.elapsed().as_secs_f64();
    std::mem::forget(child);
    if rc != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return None;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let mut stdout = Vec::new();
    let mut f = out_file;
    std::io::Seek::rewind(&mut f).unwrap();
    std::io::Read::read_to_end(&mut f, &mut stdout).unwrap();
    Some(Run {
        wall,
        cpu: secs(ru.ru_utime) + secs(ru.ru_stime),
        // Linux reports kilobytes.
        rss_mb: ru.ru_maxrss as f64 / 1024.0,
        stdout,
    })
}

/// The ccusage binary in the CI cache, if installed there.
fn ccusage() -> Option<PathBuf> {
    let cache = std::env::var_os("HOOKJOURNAL_CI_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/hookjournal-ci"))
        })?;
    let bin = cache.join("ccusage-20.0.24/node_modules/.bin/ccusage");
    bin.exists().then_some(bin)
}

/// Totals: (input, output, cache write, cache read, total tokens, USD).
type Totals = (u64, u64, u64, u64, u64, f64);

fn ours_totals(json: &serde_json::Value) -> Totals {
    let t = &json["total"];
    let n = |k: &str| t[k].as_u64().unwrap_or(0);
    (
        n("input_tokens"),
        n("output_tokens"),
        n("cache_write_tokens"),
        n("cache_read_tokens"),
        n("total_tokens"),
        t["usd"].as_f64().unwrap_or(0.0),
    )
}

fn ccusage_totals(json: &serde_json::Value) -> Totals {
    let t = &json["totals"];
    let n = |k: &str| t[k].as_u64().unwrap_or(0);
    (
        n("inputTokens"),
        n("outputTokens"),
        n("cacheCreationTokens"),
        n("cacheReadTokens"),
        n("totalTokens"),
        t["totalCost"].as_f64().unwrap_or(0.0),
    )
}

fn arg_value(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let mb: u64 = arg_value("--corpus")
        .map(|v| v.parse().expect("--corpus MB"))
        .unwrap_or(100);
    let tmp =
        tempfile::tempdir_in(Path::new(env!("CARGO_MANIFEST_DIR")).join("../target")).unwrap();
    let root = arg_value("--keep")
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().join("corpus"));
    let stamp = root.join(format!("generated-{mb}mb"));
    let t0 = Instant::now();
    let corpus = if stamp.exists() {
        let s = std::fs::read_to_string(&stamp).unwrap();
        let v: Vec<u64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
        Corpus {
            bytes: v[0],
            files: v[1],
            replicas: v[2],
        }
    } else {
        let _ = std::fs::remove_dir_all(root.join("projects"));
        let c = generate(&root, mb);
        std::fs::write(&stamp, format!("{} {} {}", c.bytes, c.files, c.replicas)).unwrap();
        c
    };
    eprintln!(
        "corpus: {:.0} MB, {} transcripts ({} replicas) in {:.1} s",
        corpus.bytes as f64 / 1e6,
        corpus.files,
        corpus.replicas,
        t0.elapsed().as_secs_f64()
    );
    let journal = tmp.path().join("journal");
    let mut import = Command::new(bin());
    import
        .arg("--journal")
        .arg(&journal)
        .args(["import", "--transcripts"])
        .arg(root.join("projects"));
    let import = measure(import).expect("hookjournal import failed");
    let mut cost = Command::new(bin());
    cost.arg("--journal")
        .arg(&journal)
        .args(["cost", "--by", "day", "--json"])
        .env("TZ", "UTC");
    let cost = measure(cost).expect("hookjournal cost failed");
    let ours: serde_json::Value = serde_json::from_slice(&cost.stdout).unwrap();
    let days = ours["rows"].as_array().map(Vec::len).unwrap_or(0);
    let ours = ours_totals(&ours);

    let mut json = serde_json::Map::new();
    json.insert("corpus_mb".into(), (corpus.bytes as f64 / 1e6).into());
    json.insert("transcripts".into(), corpus.files.into());
    json.insert("responses".into(), ours_responses(&cost.stdout).into());
    json.insert("import_wall_s".into(), import.wall.into());
    json.insert("import_cpu_s".into(), import.cpu.into());
    json.insert("import_rss_mb".into(), import.rss_mb.into());
    json.insert("cost_wall_s".into(), cost.wall.into());
    json.insert("cost_cpu_s".into(), cost.cpu.into());
    json.insert("cost_rss_mb".into(), cost.rss_mb.into());
    println!(
        "transcript import benchmark: {:.0} MB, {} transcripts, {} responses, {days} days",
        corpus.bytes as f64 / 1e6,
        corpus.files,
        ours_responses(&cost.stdout)
    );
    println!(
        "    hookjournal import --transcripts | wall {:>7.2} s | cpu {:>7.2} s | peak RSS {:>6.0} MB",
        import.wall, import.cpu, import.rss_mb
    );
    println!(
        "    hookjournal cost --by day --json | wall {:>7.2} s | cpu {:>7.2} s | peak RSS {:>6.0} MB",
        cost.wall, cost.cpu, cost.rss_mb
    );
    match ccusage() {
        None => {
            println!("    ccusage 20.0.24 is not installed in the CI cache: comparison skipped")
        }
        Some(cc) => {
            let mut c = Command::new("node");
            c.arg(&cc)
                .args(["daily", "--offline", "--json"])
                .env("CLAUDE_CONFIG_DIR", &root)
                .env("TZ", "UTC");
            match measure(c) {
                None => println!("    ccusage daily --offline --json failed: comparison skipped"),
                Some(run) => {
                    let theirs: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
                    let theirs = ccusage_totals(&theirs);
                    let same_tokens = (ours.0, ours.1, ours.2, ours.3, ours.4)
                        == (theirs.0, theirs.1, theirs.2, theirs.3, theirs.4);
                    let usd_diff = (ours.5 - theirs.5).abs();
                    println!(
                        "    ccusage daily --offline --json   | wall {:>7.2} s | cpu {:>7.2} s | peak RSS {:>6.0} MB",
                        run.wall, run.cpu, run.rss_mb
                    );
                    println!(
                        "    import cpu / ccusage cpu {:.2}x; import + cost cpu / ccusage cpu {:.2}x",
                        import.cpu / run.cpu,
                        (import.cpu + cost.cpu) / run.cpu
                    );
                    println!(
                        "    totals: {} tokens, ${:.2} (hookjournal) vs {} tokens, ${:.2} (ccusage): {}",
                        ours.4,
                        ours.5,
                        theirs.4,
                        theirs.5,
                        if same_tokens && usd_diff < 0.01 {
                            "same".to_string()
                        } else {
                            format!("DIFFERENT (tokens {ours:?} vs {theirs:?})")
                        }
                    );
                    json.insert("ccusage_wall_s".into(), run.wall.into());
                    json.insert("ccusage_cpu_s".into(), run.cpu.into());
                    json.insert("ccusage_rss_mb".into(), run.rss_mb.into());
                    json.insert(
                        "same_totals".into(),
                        (same_tokens && usd_diff < 0.01).into(),
                    );
                }
            }
        }
    }
    println!("{}", serde_json::Value::Object(json));
    std::io::stdout().flush().unwrap();
}

/// Deduplicated responses in `cost --json`'s total.
fn ours_responses(stdout: &[u8]) -> u64 {
    let v: serde_json::Value = serde_json::from_slice(stdout).unwrap();
    v["total"]["responses"].as_u64().unwrap_or(0)
}
