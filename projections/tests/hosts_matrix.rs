//! The hosts matrix in the README and in docs/hooks.md is the one the host table generates
//! (`hosts_matrix::markdown`), between the `hosts-matrix` markers. `HOOKJOURNAL_BLESS=1` writes
//! it there instead (review the diff).

use projections::hosts_matrix;
use std::path::Path;

const BEGIN: &str = "<!-- hosts-matrix: generated from the host table by `HOOKJOURNAL_BLESS=1 cargo test -p hookjournal-projections --test hosts_matrix` -->\n";
const END: &str = "<!-- hosts-matrix: end -->";

fn check(doc: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(doc);
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text
        .find(BEGIN)
        .unwrap_or_else(|| panic!("{doc} has no hosts matrix marker"))
        + BEGIN.len();
    let end = start + text[start..].find(END).expect("the matrix's end marker");
    let want = hosts_matrix::markdown();
    if std::env::var_os("HOOKJOURNAL_BLESS").is_some_and(|v| v == "1") {
        let new = format!("{}{want}{}", &text[..start], &text[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert_eq!(
        &text[start..end],
        want,
        "{doc}'s hosts matrix is not the host table's: HOOKJOURNAL_BLESS=1 rewrites it"
    );
}

#[test]
fn the_readme_shows_the_host_tables_matrix() {
    check("README.md");
}

#[test]
fn docs_hooks_shows_the_host_tables_matrix() {
    check("docs/hooks.md");
}
