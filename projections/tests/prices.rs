//! The embedded prices (`data/prices.json`) against the models the real hosts report: every model
//! named in a fixture — a payload, a transcript, a session file — is priced, so a session's cost
//! is never silently $0 for a model a supported host uses.

use projections::pricing::PricingTable;
use std::path::Path;

/// Every value of a `model`-like key (`"model"`, `"modelID"`, `"currentModel"`, …) in the JSON
/// and JSONL files under `dir`.
fn models_in(dir: &Path, out: &mut std::collections::BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            models_in(&p, out);
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            collect(&v, out);
        }
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            collect(&v, out);
        }
    }
}

fn collect(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let key = k.to_ascii_lowercase();
                if matches!(
                    key.as_str(),
                    "model" | "modelid" | "model_id" | "currentmodel"
                ) {
                    if let Some(s) = v.as_str() {
                        out.insert(s.to_string());
                    }
                }
                collect(v, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| collect(v, out)),
        _ => {}
    }
}

#[test]
fn every_model_a_fixture_names_is_priced() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut models = std::collections::BTreeSet::new();
    models_in(&fixtures, &mut models);
    // Claude Code's own marker for a response no model produced.
    models.remove("<synthetic>");
    // OpenHands' name for a subagent task's LLM profile in its accumulated usage
    // (`base_state.json`); each response's own `token_usages[]` record names the model, and
    // those are what `hosts::openhands::base_state` reads.
    models.remove("default");
    // No model named (Qoder CLI's scripted model writes `model:""`; its usage is skipped as such).
    models.remove("");
    assert!(models.len() >= 8, "too few models found: {models:?}");
    let table = PricingTable::default();
    let unpriced: Vec<&String> = models
        .iter()
        .filter(|m| table.lookup(m).is_none())
        .collect();
    assert!(
        unpriced.is_empty(),
        "unpriced models: {unpriced:?} (of {models:?})"
    );
}
