//! Embeds the model prices (`data/prices.json`) as static tables, so pricing a response costs no
//! parsing at run time. Prices are kept as the file writes them: per token in the file, shifted
//! six decimal places as text to the per-million figures `ModelPrice` holds, so a price is the
//! same `f64` whether it came from the file or from a user's `[pricing]` override.

use serde_json::{Map, Value};
use std::fmt::Write;

const BASE: [(&str, &str); 5] = [
    ("input", "input_cost_per_token"),
    ("output", "output_cost_per_token"),
    ("cache_write_5m", "cache_creation_input_token_cost"),
    (
        "cache_write_1h",
        "cache_creation_input_token_cost_above_1hr",
    ),
    ("cache_read", "cache_read_input_token_cost"),
];

fn main() {
    let path = "data/prices.json";
    println!("cargo:rerun-if-changed={path}");
    let text = std::fs::read_to_string(path).expect("reading data/prices.json");
    let data: Value = serde_json::from_str(&text).expect("data/prices.json is not JSON");
    let mut out = String::new();
    for (section, table) in [("anthropic", "EMBEDDED"), ("other", "EMBEDDED_OTHER")] {
        let models = data[section]
            .as_object()
            .unwrap_or_else(|| panic!("data/prices.json has no `{section}` object"));
        writeln!(out, "static {table}: &[(&str, ModelPrice)] = &[").unwrap();
        for (name, fields) in models {
            let fields = fields
                .as_object()
                .unwrap_or_else(|| panic!("{section}.{name} is not an object"));
            writeln!(out, "    ({name:?}, {}),", price(name, fields)).unwrap();
        }
        writeln!(out, "];").unwrap();
    }
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("prices.rs");
    std::fs::write(dest, out).unwrap();
}

/// `ModelPrice { … }` for one model's fields (every base price required; a long-context card,
/// `<field>_above_<N>k_tokens`, has all five or none).
fn price(name: &str, fields: &Map<String, Value>) -> String {
    let get = |key: &str| fields.get(key).map(|v| per_million(name, key, v));
    let base: Vec<String> = BASE
        .iter()
        .map(|(ours, theirs)| {
            let v = get(theirs).unwrap_or_else(|| panic!("{name}: `{theirs}` is missing"));
            format!("{ours}: {v}")
        })
        .collect();
    let suffix = fields.keys().find_map(|k| {
        let rest = k.strip_prefix("input_cost_per_token_above_")?;
        rest.strip_suffix("k_tokens")?.parse::<u64>().ok()
    });
    let long = match suffix {
        None => "None".to_string(),
        Some(k) => {
            let card: Vec<String> = BASE
                .iter()
                .map(|(ours, theirs)| {
                    let key = format!("{theirs}_above_{k}k_tokens");
                    let v = get(&key).unwrap_or_else(|| panic!("{name}: `{key}` is missing"));
                    format!("{ours}: {v}")
                })
                .collect();
            format!(
                "Some(LongContext {{ threshold_tokens: {}, {} }})",
                k * 1000,
                card.join(", ")
            )
        }
    };
    for key in fields.keys() {
        let known = BASE.iter().any(|(_, t)| {
            key == t
                || key
                    .strip_prefix(t)
                    .and_then(|r| r.strip_prefix("_above_"))
                    .is_some_and(|r| r.ends_with("k_tokens"))
        });
        assert!(known, "{name}: unknown field `{key}`");
    }
    format!("ModelPrice {{ {}, long_context: {long} }}", base.join(", "))
}

/// A per-token price, as written in the file, shifted to USD per million tokens as text (so the
/// decimal the file holds is the one parsed, with no float arithmetic).
fn per_million(name: &str, key: &str, v: &Value) -> String {
    let text = match v {
        Value::Number(n) => n.to_string(),
        _ => panic!("{name}: `{key}` is not a number"),
    };
    let (mantissa, exp) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m.to_string(), e.parse::<i32>().expect("an exponent")),
        None => (text.clone(), 0),
    };
    assert!(
        mantissa.chars().all(|c| c.is_ascii_digit() || c == '.'),
        "{name}: `{key}` = {text} is not a price"
    );
    format!("{mantissa}e{}", exp + 6)
}
