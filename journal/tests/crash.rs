//! The journal alone under kill -9. A writer process (this test binary run again, as
//! `writer_until_killed`) commits numbered batches through full and light handles, sealing as it
//! goes, and prints the last number of each batch once the journal acknowledged it (`commit` on
//! a full handle, `finish` on a light one). The test kills it at a point it does not choose (after
//! a drawn number of acknowledgements, while it keeps writing), reopens the journal and checks:
//! every acknowledged event is there, each once, in order, seq = number, and `verify` says valid.
//! Then the next writer goes on from the head. No assertion depends on where a kill fell.

mod common;

use common::{event, numbered};
use journal::{Journal, OpenOptions, Opened};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const WRITER_DIR: &str = "JOURNAL_CRASH_WRITER_DIR";

fn options() -> OpenOptions {
    common::options(11)
}

/// The writer: runs only when the test below starts it, and never ends by itself.
#[test]
fn writer_until_killed() {
    let Some(dir) = std::env::var_os(WRITER_DIR) else {
        return;
    };
    let dir = Path::new(&dir);
    let mut batch = 0u64;
    loop {
        batch += 1;
        let n = 1 + batch % 4;
        let acked = match Journal::open_light(dir, &options()).unwrap() {
            Opened::Light(mut l) => {
                let first = l.head_seq() + 1;
                let mut tx = l.begin();
                for i in first..first + n {
                    tx.push(event(i));
                }
                l.commit_deferred(tx).unwrap();
                l.finish().unwrap();
                first + n - 1
            }
            Opened::Full(mut j) => {
                let first = j.head_seq() + 1;
                let mut tx = j.begin();
                for i in first..first + n {
                    tx.push(event(i));
                }
                j.commit(tx).unwrap();
                if batch.is_multiple_of(3) {
                    j.seal_if_full().unwrap();
                }
                first + n - 1
            }
        };
        println!("acked {acked}");
    }
}

/// Given a writer that never stops, when it is killed with SIGKILL after a drawn number of
/// acknowledgements, forty times over, then after each kill the reopened journal holds every
/// acknowledged event once, in order, gap-free, and verifies.
#[test]
fn every_acknowledged_event_survives_kill_9_of_its_writer() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("j");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64
        | 1;
    let mut rng = seed;
    let mut draw = |below: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % below
    };
    let mut acked = 0u64;
    for kill in 0..40 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "writer_until_killed",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(WRITER_DIR, &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let want = 1 + draw(12);
        let mut seen = 0;
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        while seen < want {
            let line = lines.next().expect("the writer ended by itself").unwrap();
            if let Some(n) = line.strip_prefix("acked ") {
                acked = n.parse().unwrap();
                seen += 1;
            }
        }
        child.kill().unwrap();
        let _ = child.wait();
        // Acknowledgements printed between the last line read and the kill count too.
        for line in lines.map_while(Result::ok) {
            if let Some(n) = line.strip_prefix("acked ") {
                acked = n.parse().unwrap();
            }
        }
        let got = common::logged(&dir, &options());
        let head = got.len() as u64;
        assert!(
            head >= acked,
            "kill {kill} (seed {seed}): {acked} acknowledged, {head} in the log"
        );
        assert_eq!(got, numbered(head), "kill {kill} (seed {seed})");
        let report = journal::verify(&dir, Duration::from_secs(30), |_| {}).unwrap();
        assert!(
            report.ok(),
            "kill {kill} (seed {seed}): {:?}",
            report.damage
        );
        assert_eq!(report.events, head);
    }
}
