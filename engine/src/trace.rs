//! `HOOKJOURNAL_TRACE=1`: phase timings on stderr (for profiling the hook path), printed when
//! the guard `Trace` the hook holds is dropped. `mark` works from anywhere on the hook's thread.

/// The guard that prints the marks when dropped (see the module doc).
pub struct Trace;

type Marks = Option<(std::time::Instant, Vec<(&'static str, std::time::Duration)>)>;

thread_local! {
    static MARKS: std::cell::RefCell<Marks> = const { std::cell::RefCell::new(None) };
}

impl Trace {
    /// Starts the marks (nothing unless `HOOKJOURNAL_TRACE` is set).
    pub fn start() -> Trace {
        if std::env::var_os("HOOKJOURNAL_TRACE").is_some() {
            MARKS.with(|m| *m.borrow_mut() = Some((std::time::Instant::now(), Vec::new())));
        }
        Trace
    }
}

/// Records that phase `what` ended now (nothing unless `HOOKJOURNAL_TRACE` is set).
pub fn mark(what: &'static str) {
    MARKS.with(|m| {
        if let Some((t0, v)) = &mut *m.borrow_mut() {
            v.push((what, t0.elapsed()));
        }
    });
}

impl Drop for Trace {
    fn drop(&mut self) {
        if let Some((_, v)) = MARKS.with(|m| m.borrow_mut().take()) {
            let parts: Vec<String> = v
                .iter()
                .map(|(w, d)| format!("{w} {:.2}", d.as_secs_f64() * 1000.0))
                .collect();
            eprintln!("hookjournal trace (ms since start): {}", parts.join(", "));
        }
    }
}
