//! Embedded per-model prices (every Claude model; Gemini and OpenAI models by name), overridable, and the cost of one response.
//!
//! The prices are data: `data/prices.json` (LiteLLM's per-token field names), made into static
//! tables by `build.rs`, refreshed by `scripts/refresh-prices.py`. `ModelPrice` holds USD per
//! **million** tokens, from Anthropic's pricing page
//! (platform.claude.com/docs/en/about-claude/pricing) and the per-model overview pages. The
//! standard multipliers hold for every model unless the table says otherwise: a 5-minute cache
//! write costs 1.25× the input price, a 1-hour cache write 2×, a cache hit 0.1×. (Exceptions taken
//! from the published rates: Haiku 3 writes at $0.30/$0.50 and reads at $0.03; Opus 5.5 and
//! Sonnet 5.5 read at 0.05×; Fable/Mythos 5.1 read at 0.025×.)
//!
//! # Long-context tiers
//!
//! Some models bill a request whose *input* exceeds a threshold at a second rate card:
//! Sonnet 4 and Sonnet 4.5 (1M-context beta) above 200,000 tokens ($6 in / $22.50 out, cache
//! rates scaled the same way), Haiku 5.5 above 100,000 tokens. Anthropic's rule, implemented by
//! [`ModelPrice::cost`]: the tier is chosen per request by `input + cache writes + cache reads`
//! ([`Usage::context_tokens`]; output does not count), and when it is exceeded **every** token of
//! that request, output included, is billed at the long-context rates (not just the tokens above
//! the threshold). Sonnet 4.6 / Opus 4.6 and later bill their whole 1M window at the base rates.
//!
//! ccusage differs here: for LiteLLM's `*_above_200k_tokens` fields it bills each bucket
//! (input, output, each cache bucket) separately and marginally — the first 200k tokens *of that
//! bucket* at the base rate, the rest at the premium — so a Sonnet 4.5 request with 150k cache
//! reads + 60k cache writes stays entirely at base rates there but is premium here. Below the
//! threshold (every request in the fixtures, and every request made without the 1M beta) the
//! two agree to the last digit: per-token rates are `price / 1e6` exactly as LiteLLM stores them,
//! summed input + output + 5m writes + 1h writes + reads, like ccusage.
//!
//! # Not modelled
//!
//! Fast mode (`usage.speed == "fast"`), the US-only inference surcharge (`inference_geo`), batch
//! discounts and dated price changes (e.g. Opus 4.6's pre-GA long-context premium) are not
//! represented; use [`PricingTable::with_override`] where they matter.

use crate::transcript::Usage;

/// Prices of one model, USD per million tokens.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModelPrice {
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Cache writes with the 5-minute TTL.
    pub cache_write_5m: f64,
    /// Cache writes with the 1-hour TTL.
    pub cache_write_1h: f64,
    /// Cache reads.
    pub cache_read: f64,
    /// Rate card for requests whose input exceeds a threshold, when the model has one.
    pub long_context: Option<LongContext>,
}

/// The second rate card of a model with a long-context tier, USD per million tokens.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LongContext {
    /// The tier applies when `input + cache writes + cache reads` is strictly greater.
    pub threshold_tokens: u64,
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Cache writes with the 5-minute TTL.
    pub cache_write_5m: f64,
    /// Cache writes with the 1-hour TTL.
    pub cache_write_1h: f64,
    /// Cache reads.
    pub cache_read: f64,
}

impl ModelPrice {
    /// A price with Anthropic's standard cache multipliers (5m write 1.25×, 1h write 2×, read
    /// 0.1× the input price) and no long-context tier.
    pub fn standard(input: f64, output: f64) -> Self {
        ModelPrice {
            input,
            output,
            cache_write_5m: input * 1.25,
            cache_write_1h: input * 2.0,
            cache_read: input * 0.1,
            long_context: None,
        }
    }

    /// Cost in USD of one response (one API request) with this usage.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let long = self
            .long_context
            .as_ref()
            .is_some_and(|tier| usage.context_tokens() > tier.threshold_tokens);
        self.cost_in_tier(usage, long)
    }

    /// Cost in USD of `usage` (one request, or several summed) at the long-context rates when
    /// `long` and the model has them, else at the base rates.
    pub fn cost_in_tier(&self, usage: &Usage, long: bool) -> f64 {
        let rates = match &self.long_context {
            Some(tier) if long => [
                tier.input,
                tier.output,
                tier.cache_write_5m,
                tier.cache_write_1h,
                tier.cache_read,
            ],
            _ => [
                self.input,
                self.output,
                self.cache_write_5m,
                self.cache_write_1h,
                self.cache_read,
            ],
        };
        let tokens = [
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_write_5m,
            usage.cache_write_1h,
            usage.cache_read,
        ];
        // Per-token rate first (`price / 1e6`), as LiteLLM stores and ccusage multiplies it.
        tokens
            .iter()
            .zip(rates)
            .map(|(&n, per_million)| n as f64 * (per_million / 1_000_000.0))
            .sum()
    }
}

impl LongContext {
    /// A tier with the standard cache multipliers applied to its input price.
    pub fn standard(threshold_tokens: u64, input: f64, output: f64) -> Self {
        LongContext {
            threshold_tokens,
            input,
            output,
            cache_write_5m: input * 1.25,
            cache_write_1h: input * 2.0,
            cache_read: input * 0.1,
        }
    }
}

/// Embedded defaults plus user overrides. Cheap to build: the defaults are a static table.
#[derive(Clone, Debug, PartialEq)]
pub struct PricingTable {
    /// Whether the embedded table answers lookups that no override matches.
    embedded: bool,
    /// `(lower-cased key, price)` in insertion order; later entries win over earlier equal keys.
    overrides: Vec<(String, ModelPrice)>,
}

impl Default for PricingTable {
    /// The embedded table, no overrides.
    fn default() -> Self {
        PricingTable {
            embedded: true,
            overrides: Vec::new(),
        }
    }
}

impl PricingTable {
    /// A table with no embedded prices: only overrides answer.
    pub fn empty() -> Self {
        PricingTable {
            embedded: false,
            overrides: Vec::new(),
        }
    }

    /// Adds (or replaces) a price. The key is matched case-insensitively:
    ///
    /// * a key that names a Claude model (`claude-sonnet-4-5`, `claude-3-5-haiku-20241022`,
    ///   `anthropic/claude-opus-4.1`, ...) applies to that model in every spelling
    ///   [`lookup`](Self::lookup) understands, and not to its siblings (`claude-sonnet-4` does
    ///   not touch `claude-sonnet-4-5`);
    /// * any other key is the exact model name or a prefix of it (`claude-opus` reprices every
    ///   Opus, `glm-` prices a non-Claude model served through Claude Code); the longest
    ///   matching prefix wins.
    ///
    /// Overrides always win over the embedded table.
    pub fn with_override(mut self, model_prefix_or_name: &str, price: ModelPrice) -> Self {
        let key = model_prefix_or_name.trim().to_ascii_lowercase();
        self.overrides.retain(|(k, _)| *k != key);
        self.overrides.push((key, price));
        self
    }

    /// The price of `model`, or `None` when it is unknown.
    ///
    /// Order: an override equal to the name; an override naming the same Claude model; the
    /// longest override that is a prefix of the name; the embedded entry of the Claude model.
    /// "The same Claude model" is decided on a canonical family+version key that ignores
    /// provider prefixes (`anthropic/`, `us.anthropic.`), release dates (`-20250929`,
    /// `@20250929`), Bedrock suffixes (`-v1:0`), `-latest`, `-thinking`, `[1m]`, `.` vs `-`
    /// (`4.5` = `4-5`), a `.0`/`-0` minor version and the word order of 3.x names
    /// (`claude-3-5-sonnet` = `claude-sonnet-3-5`). Any other qualifier (e.g. `-fast`) makes
    /// the name unknown rather than silently priced as the base model.
    pub fn lookup(&self, model: &str) -> Option<&ModelPrice> {
        // Factory Droid names a model of the user's own `custom:<model>`.
        let model = model.trim();
        let model = model.strip_prefix("custom:").unwrap_or(model);
        let name = model.to_ascii_lowercase();
        if let Some((_, price)) = self.overrides.iter().rev().find(|(k, _)| *k == name) {
            return Some(price);
        }
        let canonical = canonical_key(&name);
        if let Some(canonical) = &canonical {
            let same_model = self
                .overrides
                .iter()
                .rev()
                .find(|(k, _)| canonical_key(k).as_deref() == Some(canonical.as_str()));
            if let Some((_, price)) = same_model {
                return Some(price);
            }
        }
        let prefix = self
            .overrides
            .iter()
            .rev()
            .filter(|(k, _)| canonical_key(k).is_none() && name.starts_with(k.as_str()))
            .fold(None::<&(String, ModelPrice)>, |best, entry| match best {
                Some(b) if b.0.len() >= entry.0.len() => Some(b),
                _ => Some(entry),
            });
        if let Some((_, price)) = prefix {
            return Some(price);
        }
        if !self.embedded {
            return None;
        }
        match canonical {
            Some(canonical) => EMBEDDED
                .iter()
                .find(|(key, _)| *key == canonical)
                .map(|(_, price)| price),
            None => embedded_other(&name),
        }
    }

    /// Cost in USD of one response of `model` with `usage`; `None` when the model is unpriced
    /// (never a silent 0 for an unknown model).
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.lookup(model).map(|price| price.cost(usage))
    }

    /// The canonical keys of the embedded table (`opus-4-1`, `sonnet-3-5`, `haiku-5-5`, `2-1`,
    /// ...) with their prices.
    pub fn embedded_models() -> impl Iterator<Item = (&'static str, &'static ModelPrice)> {
        EMBEDDED.iter().map(|(key, price)| (*key, price))
    }
}

/// The embedded price of a model that is not Claude's (Gemini's, by name): the longest entry of
/// `EMBEDDED_OTHER` that the name, without a provider prefix (`models/`, `google/`), starts with
/// at a word boundary (`gemini-2.5-flash-preview-09-2025` is Flash; `gemini-2.5-flash-lite` is
/// its own entry, never Flash's).
fn embedded_other(name: &str) -> Option<&'static ModelPrice> {
    let name = name.rsplit('/').next().unwrap_or("");
    EMBEDDED_OTHER
        .iter()
        .filter(|(key, _)| {
            name.strip_prefix(key)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
        })
        .max_by_key(|(key, _)| key.len())
        .map(|(_, price)| price)
}

const FAMILIES: [&str; 6] = ["opus", "sonnet", "haiku", "fable", "mythos", "instant"];

/// Canonical `family-major[-minor]` key of a Claude model name (`sonnet-4-5`, `haiku-3`, `2-1`
/// for Claude 2.1), or `None` when `name` is not recognisably one Claude model.
fn canonical_key(name: &str) -> Option<String> {
    let name = name.trim().to_ascii_lowercase();
    let name = name.rsplit('/').next().unwrap_or("");
    let name = name.split(['[', '@', ':']).next().unwrap_or("");
    let rest = &name[name.find("claude")? + "claude".len()..];
    let mut family: Option<&str> = None;
    let mut version: Vec<&str> = Vec::with_capacity(2);
    for token in rest.split(['-', '.', '_']).filter(|t| !t.is_empty()) {
        if FAMILIES.contains(&token) {
            if family.replace(token).is_some() {
                return None;
            }
        } else if token.bytes().all(|b| b.is_ascii_digit()) {
            match token.len() {
                // A release date, e.g. 20250929.
                8 => {}
                1 | 2 if version.len() < 2 => version.push(token.trim_start_matches('0')),
                _ => return None,
            }
        } else if token == "latest"
            || token == "thinking"
            || (token.starts_with('v') && token[1..].bytes().all(|b| b.is_ascii_digit()))
        {
        } else {
            return None;
        }
    }
    // "4-0" is "4"; a leading zero was trimmed to "", so an all-zero minor is now empty.
    if version.len() == 2 && version[1].is_empty() {
        version.pop();
    }
    let major = *version.first()?;
    if major.is_empty() {
        return None;
    }
    let version = version.join("-");
    Some(match family {
        Some(family) => format!("{family}-{version}"),
        None => version,
    })
}

// The tables `EMBEDDED` (canonical Claude key → price) and `EMBEDDED_OTHER` (model name or
// prefix → price), generated from `data/prices.json` by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/prices.rs"));

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, w5: u64, w1: u64, read: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_write_5m: w5,
            cache_write_1h: w1,
            cache_read: read,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn openai_long_context_cards_match_ccusage_at_the_272k_boundary() {
        // Given the figures ccusage 20.0.24's Codex report gave for single gpt-5.5 and gpt-5.4
        // requests (rollouts written for the measurement), when priced here, then they agree.
        let table = PricingTable::default();
        let u = |input: u64, cached: u64, output: u64| Usage {
            input_tokens: input,
            cache_read: cached,
            output_tokens: output,
            ..Usage::default()
        };
        for (model, usage, ccusage) in [
            ("gpt-5.5", u(272_000, 0, 0), 1.36),
            ("gpt-5.5", u(272_001, 0, 0), 2.72001),
            ("gpt-5.5", u(10_000, 290_000, 0), 0.39),
            ("gpt-5.5", u(272_001, 0, 1_000), 2.76501),
            ("gpt-5.4", u(272_000, 0, 0), 0.68),
            ("gpt-5.4", u(272_001, 0, 0), 1.360005),
            ("gpt-5.4", u(0, 300_000, 0), 0.15),
            ("gpt-5.3-codex", u(300_000, 0, 100_000), 1.925),
            ("gpt-5.6-luna", u(300_000, 0, 100_000), 0.3),
        ] {
            let ours = table.cost(model, &usage).unwrap();
            assert!(
                close(ours, ccusage),
                "{model} {usage:?}: {ours} vs {ccusage}"
            );
        }
    }

    #[test]
    fn canonical_keys() {
        let cases = [
            ("claude-sonnet-4-5-20250929", Some("sonnet-4-5")),
            ("claude-sonnet-4-5", Some("sonnet-4-5")),
            ("claude-sonnet-4.5", Some("sonnet-4-5")),
            ("anthropic/claude-sonnet-4.5", Some("sonnet-4-5")),
            ("openrouter/anthropic/claude-sonnet-4.5", Some("sonnet-4-5")),
            (
                "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                Some("sonnet-4-5"),
            ),
            (
                "global.anthropic.claude-haiku-4-5-20251001-v1:0",
                Some("haiku-4-5"),
            ),
            ("claude-sonnet-4-5@20250929", Some("sonnet-4-5")),
            ("claude-sonnet-4-5[1m]", Some("sonnet-4-5")),
            ("Claude-Opus-4-1-20250805", Some("opus-4-1")),
            ("claude-opus-4-0", Some("opus-4")),
            ("claude-opus-4-20250514", Some("opus-4")),
            ("claude-opus-4@20250514", Some("opus-4")),
            ("claude-3-5-sonnet-20241022", Some("sonnet-3-5")),
            (
                "anthropic.claude-3-5-sonnet-20241022-v2:0",
                Some("sonnet-3-5"),
            ),
            ("claude-3-5-sonnet-v2@20241022", Some("sonnet-3-5")),
            ("claude-3-7-sonnet-latest", Some("sonnet-3-7")),
            ("claude-3.7-sonnet-thinking", Some("sonnet-3-7")),
            ("claude-4-sonnet", Some("sonnet-4")),
            ("claude-3-haiku-20240307", Some("haiku-3")),
            ("claude-3-opus-latest", Some("opus-3")),
            ("claude-opus-5", Some("opus-5")),
            ("claude-haiku-5-5", Some("haiku-5-5")),
            ("claude-mythos-5-1", Some("mythos-5-1")),
            ("claude-2.1", Some("2-1")),
            ("claude-2.0", Some("2")),
            ("claude-instant-1.2", Some("instant-1-2")),
            ("claude-opus-4-6-fast", None),
            ("claude-opus", None),
            ("claude", None),
            ("claude-sonnet-haiku-4", None),
            ("<synthetic>", None),
            ("gpt-5", None),
            ("", None),
        ];
        for (name, expected) in cases {
            assert_eq!(canonical_key(name).as_deref(), expected, "{name}");
        }
    }

    #[test]
    fn every_named_model_is_priced() {
        let table = PricingTable::default();
        let expect = [
            ("claude-opus-4-20250514", 15.0, 75.0),
            ("claude-opus-4-1-20250805", 15.0, 75.0),
            ("claude-3-opus-20240229", 15.0, 75.0),
            ("claude-opus-4-5-20251101", 5.0, 25.0),
            ("claude-opus-4-6", 5.0, 25.0),
            ("claude-opus-4-7", 5.0, 25.0),
            ("claude-opus-4-8", 5.0, 25.0),
            ("claude-opus-5", 5.0, 25.0),
            ("claude-opus-5-5", 4.0, 20.0),
            ("claude-3-5-sonnet-20240620", 3.0, 15.0),
            ("claude-3-7-sonnet-20250219", 3.0, 15.0),
            ("claude-sonnet-4-20250514", 3.0, 15.0),
            ("claude-sonnet-4-5-20250929", 3.0, 15.0),
            ("claude-sonnet-4-6", 3.0, 15.0),
            ("claude-sonnet-5", 2.0, 10.0),
            ("claude-sonnet-5-5", 2.0, 10.0),
            ("claude-3-haiku-20240307", 0.25, 1.25),
            ("claude-3-5-haiku-20241022", 0.80, 4.0),
            ("claude-haiku-4-5-20251001", 1.0, 5.0),
            ("claude-haiku-5-5", 0.10, 0.50),
            ("claude-fable-5", 10.0, 50.0),
            ("claude-fable-5-1", 10.0, 50.0),
            ("claude-mythos-5", 10.0, 50.0),
        ];
        for (model, input, output) in expect {
            let p = table
                .lookup(model)
                .unwrap_or_else(|| panic!("{model} unpriced"));
            assert_eq!((p.input, p.output), (input, output), "{model}");
        }
        // Sonnet 4/4.5 carry the 200k tier; 4.6 does not.
        for model in ["claude-sonnet-4-20250514", "claude-sonnet-4-5"] {
            let tier = table.lookup(model).unwrap().long_context.clone().unwrap();
            assert_eq!(
                (tier.threshold_tokens, tier.input, tier.output),
                (200_000, 6.0, 22.5)
            );
        }
        assert!(table
            .lookup("claude-sonnet-4-6")
            .unwrap()
            .long_context
            .is_none());
    }

    #[test]
    fn embedded_cache_rates_follow_the_multipliers() {
        // Every entry follows 1.25× / 2× (and 0.1× unless a published exception). Haiku 3 is
        // the published exception to all three, checked below.
        for (key, p) in PricingTable::embedded_models().filter(|(k, _)| *k != "haiku-3") {
            assert!(close(p.cache_write_5m, p.input * 1.25), "{key} 5m");
            assert!(close(p.cache_write_1h, p.input * 2.0), "{key} 1h");
            let read_ratio = p.cache_read / p.input;
            let exceptions = ["opus-5-5", "sonnet-5-5", "fable-5-1", "mythos-5-1"];
            if !exceptions.contains(&key) {
                assert!(close(read_ratio, 0.1), "{key} read");
            }
            if let Some(t) = &p.long_context {
                assert!(close(t.cache_write_5m, t.input * 1.25), "{key} tier 5m");
                assert!(close(t.cache_write_1h, t.input * 2.0), "{key} tier 1h");
                assert!(close(t.cache_read, t.input * 0.1), "{key} tier read");
            }
        }
        let h3 = PricingTable::default()
            .lookup("claude-3-haiku")
            .cloned()
            .unwrap();
        assert_eq!(
            (h3.cache_write_5m, h3.cache_write_1h, h3.cache_read),
            (0.30, 0.50, 0.03)
        );
    }

    #[test]
    fn unknown_models_are_unpriced_not_free() {
        let table = PricingTable::default();
        for model in [
            "<synthetic>",
            "",
            "gpt-4o",
            "claude-opus-4-6-fast",
            "claude-sonnet-9",
        ] {
            assert_eq!(table.cost(model, &usage(1, 1, 1, 1, 1)), None, "{model}");
        }
    }

    #[test]
    fn gemini_and_openai_models_are_priced_by_name_and_tier() {
        let table = PricingTable::default();
        let flash = table.lookup("gemini-2.5-flash").unwrap();
        assert_eq!(
            (flash.input, flash.output, flash.cache_read),
            (0.30, 2.50, 0.03)
        );
        for (name, input) in [
            ("models/gemini-2.5-flash", 0.30),
            ("gemini-2.5-flash-preview-09-2025", 0.30),
            ("gemini-2.5-flash-lite", 0.10),
            ("google/gemini-2.5-pro", 1.25),
            ("gemini-3-pro-preview", 2.0),
            ("gpt-5.1-codex", 1.25),
            ("gpt-5.1-codex-max", 1.25),
            ("gpt-5-mini-2025-08-07", 0.25),
            ("openai/gpt-5", 1.25),
        ] {
            assert_eq!(table.lookup(name).map(|p| p.input), Some(input), "{name}");
        }
        for unknown in ["gemini-2.5-flashy", "gemini-9", "gemini", "gpt-5x", "gpt-7"] {
            assert_eq!(table.lookup(unknown), None, "{unknown}");
        }
        // Pro's long-context card applies to the whole request above 200k prompt tokens.
        let at = |input| Usage {
            input_tokens: input,
            output_tokens: 1_000_000,
            ..Usage::default()
        };
        assert!(close(
            table.cost("gemini-2.5-pro", &at(200_000)).unwrap(),
            0.25 + 10.0
        ));
        assert!(close(
            table.cost("gemini-2.5-pro", &at(200_001)).unwrap(),
            200_001.0 * 2.5e-6 + 15.0
        ));
    }

    #[test]
    fn cost_sums_every_bucket() {
        let table = PricingTable::default();
        let u = usage(1_000_000, 1_000_000, 1_000_000, 1_000_000, 1_000_000);
        // Sonnet 4.6 has no tier: 3 + 15 + 3.75 + 6 + 0.30.
        assert!(close(table.cost("claude-sonnet-4-6", &u).unwrap(), 28.05));
        let small = usage(1000, 2000, 3000, 4000, 5000);
        // Opus 4.1: 0.015 + 0.15 + 0.05625 + 0.12 + 0.0075
        assert!(close(
            table.cost("claude-opus-4-1-20250805", &small).unwrap(),
            0.34875
        ));
        assert_eq!(table.cost("claude-opus-4-1", &Usage::default()), Some(0.0));
    }

    #[test]
    fn long_context_tier_is_per_request_on_all_input() {
        let table = PricingTable::default();
        // 100k cache read + 100k cache write + 1 input = 200,001 > 200k: all at premium,
        // output too.
        let over = usage(1, 1000, 100_000, 0, 100_000);
        let expected = (6.0 + 1000.0 * 22.5 + 100_000.0 * 7.5 + 100_000.0 * 0.6) / 1e6;
        assert!(close(
            table.cost("claude-sonnet-4-5-20250929", &over).unwrap(),
            expected
        ));
        // Exactly at the threshold stays at base rates.
        let at = usage(0, 1000, 100_000, 0, 100_000);
        let base = (1000.0 * 15.0 + 100_000.0 * 3.75 + 100_000.0 * 0.3) / 1e6;
        assert!(close(table.cost("claude-sonnet-4", &at).unwrap(), base));
        // Output never selects the tier.
        let big_output = usage(10, 500_000, 0, 0, 0);
        assert!(close(
            table.cost("claude-sonnet-4", &big_output).unwrap(),
            (10.0 * 3.0 + 500_000.0 * 15.0) / 1e6
        ));
        // Haiku 5.5 switches at 100k.
        let h = usage(50_000, 1000, 0, 0, 50_001);
        let expected = (50_000.0 * 0.5 + 1000.0 * 2.5 + 50_001.0 * 0.05) / 1e6;
        assert!(close(table.cost("claude-haiku-5-5", &h).unwrap(), expected));
        // 1-hour writes use the tier's 1h rate.
        let w1 = usage(0, 0, 0, 300_000, 0);
        assert!(close(
            table.cost("claude-sonnet-4", &w1).unwrap(),
            300_000.0 * 12.0 / 1e6
        ));
    }

    #[test]
    fn overrides() {
        let cheap = ModelPrice::standard(1.0, 2.0);
        let table = PricingTable::default()
            .with_override("claude-sonnet-4", cheap.clone())
            .with_override("claude-opus", ModelPrice::standard(7.0, 7.0))
            .with_override("claude-opus-4", ModelPrice::standard(8.0, 8.0))
            .with_override("GLM-", ModelPrice::standard(0.5, 0.5))
            .with_override("glm-4.6-air", ModelPrice::standard(0.1, 0.1));
        // Names a model: every spelling of Sonnet 4, not Sonnet 4.5.
        assert_eq!(table.lookup("claude-sonnet-4-20250514"), Some(&cheap));
        assert_eq!(
            table.lookup("us.anthropic.claude-sonnet-4-20250514-v1:0"),
            Some(&cheap)
        );
        assert_eq!(table.lookup("claude-sonnet-4-5").unwrap().input, 3.0);
        // "claude-opus-4" names Opus 4 (not a prefix of all Opus 4.x).
        assert_eq!(table.lookup("claude-opus-4-0").unwrap().input, 8.0);
        // "claude-opus" is a prefix: every other Opus.
        assert_eq!(table.lookup("claude-opus-4-5-20251101").unwrap().input, 7.0);
        assert_eq!(table.lookup("claude-opus-4-6-fast").unwrap().input, 7.0);
        // Non-Claude models by prefix / exact name (case-insensitive, exact beats prefix).
        assert_eq!(table.lookup("glm-4.6").unwrap().input, 0.5);
        assert_eq!(table.lookup("GLM-4.6-Air").unwrap().input, 0.1);
        // Replacing a key.
        let table = table.with_override("claude-sonnet-4", ModelPrice::standard(9.0, 9.0));
        assert_eq!(table.lookup("claude-sonnet-4").unwrap().input, 9.0);
        // Empty table: only overrides answer.
        let empty = PricingTable::empty().with_override("claude-haiku-4-5", cheap.clone());
        assert_eq!(empty.lookup("claude-haiku-4-5-20251001"), Some(&cheap));
        assert_eq!(empty.lookup("claude-sonnet-4"), None);
    }

    #[test]
    fn serde_round_trip() {
        let p = PricingTable::default()
            .lookup("claude-sonnet-4")
            .cloned()
            .unwrap();
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<ModelPrice>(&json).unwrap(), p);
    }
}
