//! The shape of the code, checked: no import circle among the modules of any crate, no
//! production function over 100 lines (issue 30), and no more direct file-system call sites
//! outside `journal::door` than there were (issue 38). Read from the sources, as a reviewer would:
//! comments and `#[cfg(test)] mod tests` are left out, a `use crate::{a, b::C}` names `a` and
//! `b`, and an item the crate root re-exports (`pub use damage::DamagePlace`) is counted as its
//! module's. `cargo test -p hookjournal --test architecture -- --nocapture` prints the figures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates whose modules must form no circle, by their source directory.
const CRATES: [&str; 4] = ["journal", "projections", "engine", "cli"];
/// The longest a production function may be, in lines (signature to closing brace).
const MAX_FN_LINES: usize = 100;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir` (a `tests.rs` module file is test code, and left out).
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && p.file_name().is_some_and(|n| n != "tests.rs")
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A file's production code: comment lines dropped, cut where its test module starts.
fn production(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("#[cfg(test)]") || line.starts_with("mod tests") {
            break;
        }
        if !line.trim_start().starts_with("//") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The top-level module a file belongs to (`store/recover.rs` → `store`); `None` for the root.
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let name = first.trim_end_matches(".rs").to_string();
    (!matches!(name.as_str(), "lib" | "main")).then_some(name)
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first path segment of every item a use tree's `{…}` names (`a, b::{c}, D` → a, b, D).
fn group_heads(group: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(ident_at(group[start..i].trim_start()));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(ident_at(group[start..].trim_start()));
    out.into_iter().filter(|h| !h.is_empty()).collect()
}

/// The first segment of every `crate::` path in `code`.
fn crate_refs(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map(|(i, _)| i)
                .unwrap_or(group.len());
            out.extend(group_heads(&group[..end]));
        } else {
            out.push(ident_at(rest));
        }
    }
    out
}

/// Items the crate root re-exports, by the module they come from.
fn root_reexports(root: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for stmt in root.split(';') {
        let Some(path) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let path = path
            .trim_start_matches("crate::")
            .trim_start_matches("self::");
        let module = ident_at(path);
        if !modules.contains(module) {
            continue;
        }
        let names = path[module.len()..]
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|n| !n.is_empty() && *n != "self" && *n != "as");
        for n in names {
            out.insert(n.to_string(), module.to_string());
        }
    }
    out
}

/// The module graph of one crate: top-level module → the modules it names.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = sources(src);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(src, f)).collect();
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|p| p.exists())
        .map(|p| production(&std::fs::read_to_string(p).unwrap()))
        .unwrap_or_default();
    let reexports = root_reexports(&root, &modules);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Some(from) = top_module(src, f) else {
            continue;
        };
        let code = production(&std::fs::read_to_string(f).unwrap());
        let edges = graph.entry(from.clone()).or_default();
        for head in crate_refs(&code) {
            let to = if modules.contains(head) {
                Some(head.to_string())
            } else {
                reexports.get(head).cloned()
            };
            if let Some(to) = to.filter(|t| *t != from) {
                edges.insert(to);
            }
        }
    }
    graph
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    impl<'g> T<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let l = self.low[v].min(self.low[w]);
                    self.low.insert(v, l);
                } else if self.on.contains(w) {
                    let l = self.low[v].min(self.index[w]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = T {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

/// (lines, `file:line`, name) of every production function longer than `max` lines.
fn long_functions(src: &Path, max: usize) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for f in sources(src) {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let end = lines
            .iter()
            .position(|l| l.starts_with("#[cfg(test)]") || l.starts_with("mod tests"))
            .unwrap_or(lines.len());
        for i in 0..end {
            let Some((indent, name)) = fn_start(lines[i]) else {
                continue;
            };
            // The line that opens its body (a declaration without one ends in `;`, a one-line
            // function in `}`).
            let Some(open) = (i..end).find(|&j| {
                let l = lines[j].trim_end();
                l.ends_with('{') || l.ends_with(';') || l.ends_with('}')
            }) else {
                continue;
            };
            if !lines[open].trim_end().ends_with('{') {
                continue;
            }
            let close = (open + 1..end).find(|&k| {
                let l = lines[k];
                l.len() > indent && l[..indent].trim().is_empty() && l[indent..].starts_with('}')
            });
            let n = close.unwrap_or(end) - i + 1;
            if n > max {
                let rel = f
                    .strip_prefix(workspace())
                    .unwrap_or(&f)
                    .display()
                    .to_string();
                out.push((n, format!("{rel}:{}", i + 1), name.to_string()));
            }
        }
    }
    out
}

/// (indentation, name) when `line` starts a function.
fn fn_start(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start().len();
    let mut rest = line.trim_start();
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "async ",
        "const ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let name = ident_at(rest.strip_prefix("fn ")?);
    (!name.is_empty()).then_some((indent, name))
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut found = Vec::new();
    for krate in CRATES {
        let src = workspace().join(krate).join("src");
        let graph = module_graph(&src);
        let c = circles(&graph);
        println!(
            "{krate}: {} modules, {} in circles {c:?}",
            graph.len(),
            c.iter().map(Vec::len).sum::<usize>()
        );
        found.extend(c.into_iter().map(|c| format!("{krate}: {}", c.join(" ↔ "))));
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn no_production_function_is_over_100_lines() {
    let mut found = Vec::new();
    for krate in CRATES.iter().chain(&["crashfs"]) {
        found.extend(long_functions(
            &workspace().join(krate).join("src"),
            MAX_FN_LINES,
        ));
    }
    found.sort();
    let shown: Vec<String> = found
        .iter()
        .map(|(n, at, name)| format!("{n} lines: {name} ({at})"))
        .collect();
    assert!(found.is_empty(), "{}", shown.join("\n"));
}

/// The functions of `std::fs` that reach the disk by path.
const FS_CALLS: [&str; 18] = [
    "read",
    "read_to_string",
    "write",
    "copy",
    "rename",
    "remove_file",
    "remove_dir",
    "remove_dir_all",
    "create_dir",
    "create_dir_all",
    "metadata",
    "symlink_metadata",
    "read_dir",
    "canonicalize",
    "set_permissions",
    "hard_link",
    "read_link",
    "DirBuilder",
];

/// Direct call sites of the file system in `code` (production code): `fs::NAME(`, `fs::File::`,
/// `fs::OpenOptions::`, `File::open(`, `File::create(`, `File::options(`, `OpenOptions::new(`.
fn direct_fs_calls(code: &str) -> usize {
    let mut n = 0;
    for (i, _) in code.match_indices("fs::") {
        // `fs::` itself, not the end of another name (`refs::`).
        if code[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &code[i + 4..];
        let name = ident_at(rest);
        let after = &rest[name.len()..];
        if FS_CALLS.contains(&name) && (after.starts_with('(') || after.starts_with("::"))
            || (name == "File" || name == "OpenOptions") && after.starts_with("::")
        {
            n += 1;
        }
    }
    for pat in [
        "File::open(",
        "File::create(",
        "File::options(",
        "OpenOptions::new(",
    ] {
        // Not after `fs::` (counted above), nor the end of another name (`OutFile::create(`).
        n += code
            .match_indices(pat)
            .filter(|(i, _)| {
                !code[..*i].ends_with("fs::")
                    && !code[..*i]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
            .count();
    }
    n
}

/// Direct `std::fs` / `File::open` / `OpenOptions` call sites in production code outside the door
/// (`journal/src/door/`: its handles and the journal's by-path primitives), by file.
fn direct_fs_sites(workspace: &Path) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for krate in CRATES {
        let src = workspace.join(krate).join("src");
        for f in sources(&src) {
            let rel = f
                .strip_prefix(workspace)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel.starts_with("journal/src/door/") {
                continue;
            }
            let n = direct_fs_calls(&production(&std::fs::read_to_string(&f).unwrap()));
            if n > 0 {
                out.insert(rel, n);
            }
        }
    }
    out
}

/// The files that open by path on purpose, each with why, and how many sites each holds at most.
/// Everything else in production code reaches the disk through `journal::door` (issue 38: 174
/// direct sites at 767c39d, 148 before the door took doctor, the journal's own primitives and its
/// listings, 0 outside these now).
const BY_PATH_ON_PURPOSE: &[(&str, usize, &str)] = &[
    (
        "cli/src/outfile.rs",
        4,
        "`--out FILE`: the user's own output, written through a FIFO or a terminal on purpose, \
         else a temp file renamed into place; a link to a file is refused",
    ),
    (
        "cli/src/commands/import.rs",
        1,
        "`import --events FILE`: a file the user names, streamed (a pipe as well as a file), \
         every line capped",
    ),
    (
        "cli/src/commands/man.rs",
        1,
        "`man --out DIR`: the directory the user names for the pages",
    ),
    (
        "cli/src/fuzz.rs",
        2,
        "the fuzz targets' entry points: temporary directories of their own, never reached by \
         a hook or a command",
    ),
    (
        "journal/src/fuzz.rs",
        9,
        "the fuzz targets' entry points: temporary directories of their own, never reached by \
         a hook or a command",
    ),
];

#[test]
fn no_file_is_opened_by_path_outside_the_door_but_where_it_says_why() {
    let sites = direct_fs_sites(&workspace());
    let total: usize = sites.values().sum();
    println!("{total} direct file-system call sites outside journal::door:");
    for (f, n) in &sites {
        println!("  {n:3} {f}");
    }
    for (f, n) in &sites {
        let allowed = BY_PATH_ON_PURPOSE
            .iter()
            .find(|(p, _, _)| p == f)
            .map_or(0, |(_, max, _)| *max);
        assert!(
            *n <= allowed,
            "{f} has {n} direct std::fs/File::open/OpenOptions call site(s) (at most {allowed}): \
             open files through journal::door (directory handles, no link followed, bounded \
             reads), or say in BY_PATH_ON_PURPOSE why this one must open by path."
        );
    }
}

#[test]
fn the_checks_find_what_they_look_for() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\nmod c;\npub use c::Deep;\n",
    )
    .unwrap();
    std::fs::write(src.join("a.rs"), "use crate::{b::X, c};\n").unwrap();
    std::fs::write(src.join("b.rs"), "// use crate::a;\nuse crate::Deep;\n").unwrap();
    let long = format!("fn long() {{\n{}}}\n", "    let _ = 1;\n".repeat(99));
    std::fs::write(
        src.join("c.rs"),
        format!("pub struct Deep;\nfn f() {{ crate::a::g(); }}\n{long}"),
    )
    .unwrap();
    let graph = module_graph(src);
    assert_eq!(circles(&graph), vec![vec!["a", "b", "c"]]);
    let long: Vec<String> = long_functions(src, 100).into_iter().map(|f| f.2).collect();
    assert_eq!(long, ["long"]);
    // Each way of reaching the disk by path is one site; a name that merely contains one is not.
    assert_eq!(
        direct_fs_calls(
            "std::fs::read(p); fs::File::open(p); File::open(p); fs::OpenOptions::new();\n\
             OpenOptions::new(); std::fs::Metadata; journal::door::read_following(p); refs::read(p);\n\
             OutFile::create(p);"
        ),
        5
    );
    // A comment names nothing: without `a`'s call, the circle is gone.
    std::fs::write(src.join("c.rs"), "pub struct Deep;\n// crate::a::g();\n").unwrap();
    assert!(circles(&module_graph(src)).is_empty());
}

/// A test target with its own main (`harness_main!`, libtest-mimic) must say `harness = false`:
/// under libtest it would compile, run no test and pass (a required real-client test lost so).
#[test]
fn every_test_target_with_its_own_main_runs_it() {
    let manifest = std::fs::read_to_string(workspace().join("cli/Cargo.toml")).unwrap();
    let mut wrong = Vec::new();
    for target in manifest.split("[[test]]").skip(1) {
        let field = |key: &str| {
            target
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{key} = \"")))
                .map(|v| v.trim_end_matches('"').to_string())
        };
        let (Some(name), Some(path)) = (field("name"), field("path")) else {
            continue;
        };
        let source = std::fs::read_to_string(workspace().join("cli").join(&path)).unwrap();
        // A top-level `harness_main!(…)`, or a call of libtest-mimic's runner (not quoted).
        let own_main = source.lines().any(|l| {
            l.starts_with("harness_main!(")
                || (l.contains("libtest_mimic::run(") && !l.contains('"'))
        });
        let no_harness = target
            .lines()
            .take_while(|l| !l.starts_with('['))
            .any(|l| l.trim() == "harness = false");
        if own_main != no_harness {
            wrong.push(format!(
                "{name}: its own main {own_main}, harness = false {no_harness}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The CLI reaches the journal only through the engine (issue 40): `journal` is no dependency of
/// the `hookjournal` crate (its tests may use it), no CLI source names it, and no command names
/// a store file (`CURRENT`, `lock`, `state/REBUILDING`): the engine answers those questions.
#[test]
fn the_cli_reaches_the_journal_only_through_the_engine() {
    let ws = workspace();
    let manifest = std::fs::read_to_string(ws.join("cli/Cargo.toml")).unwrap();
    let deps = manifest
        .split("\n[dependencies]\n")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap();
    assert!(
        !deps.lines().any(|l| l.starts_with("journal")),
        "cli/Cargo.toml's [dependencies] name journal"
    );
    let mut named = Vec::new();
    for file in sources(&ws.join("cli/src")) {
        let code = production(&std::fs::read_to_string(&file).unwrap());
        let rel = file.strip_prefix(&ws).unwrap().display().to_string();
        for line in code.lines() {
            let store_file = ["\"CURRENT\"", "join(\"lock\")", "REBUILDING"]
                .iter()
                .any(|s| line.contains(s));
            let journal = line.contains("journal::") && !line.contains("engine::");
            if journal || store_file {
                named.push(format!("{rel}: {}", line.trim()));
            }
        }
    }
    assert_eq!(
        named,
        Vec::<String>::new(),
        "the CLI names the journal or a store file"
    );
}
