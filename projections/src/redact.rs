//! Masks secrets in text for `export --redact` and `report --html --redact`: provider credentials
//! (cloud, VCS, chat, payment, package registries, AI providers, mail and SMS), JWTs, private key
//! blocks (PEM, OpenSSH, PGP, PuTTY), passwords in URLs, netrc entries and command lines (`mysql
//! -pX`, `sshpass -p X`), `Authorization` headers and `*_KEY=` / `password:` style assignments in
//! env text, JSON and YAML.
//!
//! It runs over JSON text as well as plain text, so a replacement only ever covers characters that
//! cannot end a JSON string or split a backslash escape: masked JSON still parses, and text without
//! secrets comes back borrowed, untouched. Every rule starts with a literal (a provider's prefix or
//! a keyword), so a few regexes, each behind a SIMD prefilter of at most 64 such literals, skip
//! ordinary text quickly; what a regex cannot say (word boundaries that see through JSON escapes,
//! ANSI colour codes and `%3D`; "looks random"; placeholders such as `$TOKEN`) is checked on each
//! candidate.

use regex_automata::meta::Regex;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{Anchored, Input, MatchKind, PatternID};
use std::borrow::Cow;
use std::sync::OnceLock;

/// Given the text and where a match starts, where its secret really starts.
type Lead = fn(&[u8], usize) -> Option<usize>;

/// One kind of secret. The secret is the pattern's `(?P<s>…)` group; the rest of the match (a
/// header name, a URL's user, a variable name) is context that stays.
struct Rule {
    kind: &'static str,
    pattern: &'static str,
    /// A token must start a word: `xghp_…` is no GitHub token. `_`, JSON escapes (`\n`, `\u003d`),
    /// URL escapes (`%3D`) and ANSI colour codes count as separators.
    start: bool,
    /// A token must end a word: `ASIAPACIFICSALESREPORT2024` is no AWS key id.
    end: bool,
    /// A further test of the secret (its tail looks random, it is no placeholder…).
    check: Option<fn(&str) -> bool>,
    /// The secret starts before the literal the match starts with (a Telegram bot token's digits
    /// before `:AA`): returns the real start, given the text and the match start.
    lead: Option<Lead>,
    /// A `NAME=value` assignment, judged by the name (see [`assignment_ok`]).
    assignment: bool,
}

/// A secret recognised by its context (a header, a keyword): no word boundaries needed.
const fn ctx(kind: &'static str, pattern: &'static str) -> Rule {
    Rule {
        kind,
        pattern,
        start: false,
        end: false,
        check: None,
        lead: None,
        assignment: false,
    }
}

/// A token recognised by its own shape: a whole word.
const fn tok(kind: &'static str, pattern: &'static str) -> Rule {
    Rule {
        kind,
        pattern,
        start: true,
        end: true,
        check: None,
        lead: None,
        assignment: false,
    }
}

impl Rule {
    const fn checked(self, check: fn(&str) -> bool) -> Rule {
        Rule {
            check: Some(check),
            ..self
        }
    }
    const fn led(self, lead: Lead) -> Rule {
        Rule {
            lead: Some(lead),
            start: false,
            ..self
        }
    }
}

/// `name = value` in env text, `"name": "value"` in JSON (escaped once or twice inside another
/// JSON string), `name: value` in YAML, `name := value`, `name => value`.
macro_rules! assign {
    () => {
        r#"\\*["']?[ \t]*(?::=|=>|[:=])[ \t]*\\*["']?[ \t]*"#
    };
}

/// A newline in a private key body: real, or a JSON escape (doubled inside a nested JSON string).
macro_rules! nl {
    () => {
        r"(?:\r?\n|(?:\\+r)?\\+n)"
    };
}

/// Earlier rules win at the same position; the leftmost match wins otherwise. Every repetition is
/// bounded (256 characters for most secrets, more for the long ones): a rejected candidate is
/// looked at again one character later, so unbounded matches would make long runs of look-alikes
/// quadratic. An accepted assignment's value is followed to its end past the bound.
const RULES: &[Rule] = &[
    // A whole block, or the part of a cut-off block that looks like base64 lines: never the prose
    // after an unterminated BEGIN line.
    ctx(
        "private-key",
        concat!(
            r"(?P<s>-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----",
            r"(?:(?:[A-Za-z0-9+/=\r\n\t]|\\+[nrt/]|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset): [^\r\n\\",
            "\"",
            r"]{0,200})*?-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----",
            r"|(?:(?:[ \t]|",
            nl!(),
            r")*[A-Za-z0-9+/=]{16,1024})*))"
        ),
    ),
    ctx(
        "authorization",
        concat!(
            r"(?:[Aa]uthorization|AUTHORIZATION)",
            assign!(),
            r"(?:[Bb]earer|[Bb]asic|[Tt]oken|[Bb]ot|BEARER|BASIC|TOKEN)[ \t]+(?P<s>[A-Za-z0-9._~+/=-]{8,256})"
        ),
    ),
    ctx(
        "password",
        r#"://[^\s:/@"'\\<>?#]*:(?P<s>[^\s/"'\\<>?#]+)@"#,
    )
    .checked(not_placeholder),
    // `curl -u user:password`, `--user user:password`.
    ctx(
        "password",
        r#"(?:-u|--user)[ =]\\*["']?[A-Za-z0-9._@+-]{1,64}:(?P<s>[^\s"'\\<>@]{3,256})"#,
    )
    .checked(curl_user_ok),
    // A netrc entry: `machine HOST login USER password PASSWORD`, on one line or several.
    ctx(
        "password",
        concat!(
            r"login(?:[ \t]|",
            nl!(),
            r#"){1,16}[^\s"'\\]{1,128}(?:[ \t]|"#,
            nl!(),
            r"){1,16}password(?:[ \t]|",
            nl!(),
            r#"){1,16}(?P<s>[^\s"'\\<>]{1,256})"#
        ),
    )
    .checked(not_placeholder),
    // `mysql -pPASSWORD` (no space: `-p NAME` asks for the password and names a database) and
    // the other MySQL and MariaDB clients.
    ctx(
        "password",
        r#"(?:mysql|mariadb)[a-z-]{0,12}[ \t](?:[^\r\n\\;|&<>]|\\{1,8}["']){0,200}?[ \t]-p\\{0,8}["']?(?P<s>[^\s"'\\<>;|&`]{1,256})"#,
    )
    .checked(not_placeholder),
    // `sshpass -p PASSWORD` (or `-pPASSWORD`), after sshpass's other flags.
    ctx(
        "password",
        r#"sshpass(?:[ \t]{1,16}-[veP][^\s]{0,64}){0,4}[ \t]{1,16}-p[ \t]{0,16}\\{0,8}["']?(?P<s>[^\s"'\\<>;|&`]{1,256})"#,
    )
    .checked(not_placeholder),
    // A PuTTY key file's private part (`PuTTY-User-Key-File-3: …`, then `Private-Lines: N` and
    // N base64 lines of at most 64 characters): whole lines only, so never a part of the name of
    // the `Private-MAC` line after them.
    ctx(
        "private-key",
        concat!(
            r"Private-Lines:[ \t]*[0-9]{1,4}(?:[ \t]|",
            nl!(),
            r"){1,16}(?P<s>[A-Za-z0-9+/=]{4,64}(?:",
            nl!(),
            r"[A-Za-z0-9+/=]{1,64}){0,64})(?:",
            nl!(),
            r#"|[\\"]|$)"#
        ),
    ),
    ctx(
        "aws-secret-key",
        concat!(
            r"(?:aws_?secret_?(?:access_?)?key|AWS_?SECRET_?(?:ACCESS_?)?KEY|[Ss]ecretAccessKey|[Ss]ecret_[Aa]ccess_[Kk]ey)",
            assign!(),
            r"(?P<s>[A-Za-z0-9/+=]{30,256})"
        ),
    ),
    // Cloud.
    tok(
        "aws-access-key",
        r"(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})",
    ),
    tok(
        "aws-session-token",
        r"(?P<s>(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9+/=]{40,4096})",
    ),
    ctx(
        "azure-storage-key",
        r"(?:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/=]{20,256})",
    ),
    ctx(
        "azure-sas",
        r#"SharedAccessSignature=(?P<s>[^\s;"'\\<>]{20,1024})"#,
    ),
    ctx("azure-sas", r"[?&;]sig=(?P<s>[A-Za-z0-9%+/=]{20,256})"),
    tok("azure-client-secret", r"(?P<s>Q~[A-Za-z0-9_~.-]{31,34})").led(azure_client_secret_lead),
    tok(
        "google-oauth",
        r"(?P<s>GOCSPX-[A-Za-z0-9_-]{24,256}|ya29\.[A-Za-z0-9_-]{30,256})",
    ),
    tok("digitalocean-token", r"(?P<s>do[por]_v1_[a-f0-9]{64})"),
    tok("vault-token", r"(?P<s>hv[sbr]\.[A-Za-z0-9_-]{24,256})"),
    tok(
        "doppler-token",
        r"(?P<s>dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,256})",
    ),
    tok("databricks-token", r"(?P<s>dapi[a-f0-9]{32}(?:-[0-9])?)"),
    tok("supabase-token", r"(?P<s>sbp_[a-f0-9]{40})"),
    tok("pulumi-token", r"(?P<s>pul-[a-f0-9]{40})"),
    tok("heroku-key", r"(?P<s>HRKU-[A-Za-z0-9_-]{30,256})"),
    // VCS.
    tok(
        "github-token",
        r"(?P<s>gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})",
    ),
    tok(
        "gitlab-token",
        r"(?P<s>(?:glpat|glptt|gldt|glrt|glcbt|glft|glimt|glsoat|glffct|gloas|glagent)-[A-Za-z0-9_.-]{20,256}|GR1348941[A-Za-z0-9_-]{20,256})",
    ),
    tok(
        "atlassian-token",
        r"(?P<s>ATBB[A-Za-z0-9_=.-]{28,256}|ATATT3[A-Za-z0-9_=.-]{40,256}|ATCTT3[A-Za-z0-9_=.-]{40,256})",
    ),
    // Chat.
    tok(
        "slack-token",
        r"(?P<s>xox[abposer]-[A-Za-z0-9-]{10,256}|xoxe\.xox[bp]-[A-Za-z0-9-]{10,256}|xapp-[A-Za-z0-9-]{10,256})",
    ),
    ctx(
        "slack-webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_-]{20,256})",
    ),
    ctx(
        "discord-webhook",
        r"(?:discord|discordapp)\.com/api/webhooks/(?P<s>[0-9]{15,22}/[A-Za-z0-9_-]{40,100})",
    ),
    tok("telegram-bot-token", r"(?P<s>:AA[A-Za-z0-9_-]{33})").led(telegram_lead),
    // Payment.
    tok(
        "stripe-key",
        r"(?P<s>[sr]k_(?:live|test)_[A-Za-z0-9]{16,256}|whsec_[A-Za-z0-9+/=]{24,256})",
    ),
    tok(
        "square-token",
        r"(?P<s>sq0(?:atp|csp)-[A-Za-z0-9_-]{22,256})",
    ),
    tok(
        "shopify-token",
        r"(?P<s>shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})",
    ),
    // Package registries.
    tok("npm-token", r"(?P<s>npm_[A-Za-z0-9]{36})"),
    tok("pypi-token", r"(?P<s>pypi-Ag[A-Za-z0-9_-]{50,1024})"),
    tok(
        "docker-token",
        r"(?P<s>dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,256})",
    ),
    tok("rubygems-key", r"(?P<s>rubygems_[a-f0-9]{48})"),
    tok("crates-token", r"(?P<s>cio[A-Za-z0-9]{32})").checked(mixed_alnum),
    // AI providers.
    tok("anthropic-key", r"(?P<s>sk-ant-[A-Za-z0-9_-]{20,256})"),
    tok(
        "openai-key",
        r"(?P<s>sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_-]{20,256})",
    )
    .checked(openai_tail),
    tok("huggingface-token", r"(?P<s>hf_[A-Za-z0-9]{30,40})").checked(mixed_case),
    tok("google-api-key", r"(?P<s>AIza[A-Za-z0-9_-]{35})"),
    tok("groq-key", r"(?P<s>gsk_[A-Za-z0-9]{48,256})"),
    tok("replicate-token", r"(?P<s>r8_[A-Za-z0-9]{37})").checked(mixed_alnum),
    tok("xai-key", r"(?P<s>xai-[A-Za-z0-9]{70,256})"),
    tok("perplexity-key", r"(?P<s>pplx-[A-Za-z0-9]{40,256})"),
    tok(
        "langsmith-key",
        r"(?P<s>lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})",
    ),
    // Mail, SMS and other services.
    tok(
        "sendgrid-key",
        r"(?P<s>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})",
    ),
    tok("twilio-key", r"(?P<s>(?:SK|AC)[0-9a-f]{32})"),
    tok("mailgun-key", r"(?P<s>key-[0-9a-f]{32})"),
    tok("linear-key", r"(?P<s>lin_api_[A-Za-z0-9]{40})"),
    tok(
        "notion-token",
        r"(?P<s>ntn_[A-Za-z0-9]{40,256}|secret_[A-Za-z0-9]{43})",
    )
    .checked(mixed_alnum),
    tok("postman-key", r"(?P<s>PMAK-[a-f0-9]{24}-[a-f0-9]{34})"),
    tok("newrelic-key", r"(?P<s>NRAK-[A-Z0-9]{27})"),
    tok(
        "sentry-token",
        r"(?P<s>sntry[su]_[A-Za-z0-9+/=_-]{40,1024})",
    ),
    tok(
        "grafana-token",
        r"(?P<s>glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/=]{32,256})",
    ),
    tok("figma-token", r"(?P<s>figd_[A-Za-z0-9_-]{40,256})"),
    tok(
        "onepassword-token",
        r"(?P<s>ops_eyJ[A-Za-z0-9+/=_-]{50,4096})",
    ),
    tok(
        "age-secret-key",
        r"(?P<s>AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})",
    ),
    tok(
        "mapbox-token",
        r"(?P<s>sk\.eyJ[A-Za-z0-9_-]{20,256}\.[A-Za-z0-9_-]{20,256})",
    ),
    tok(
        "jwt",
        r"(?P<s>eyJ[A-Za-z0-9_-]{10,4096}\.eyJ[A-Za-z0-9_-]{10,4096}\.[A-Za-z0-9_-]{0,1024})",
    ),
    // Last: `*_KEY=…`, `password: …`, `"client_secret": "…"`, `x-api-key: …`. The match starts
    // at the keyword that ends the name; `assignment_ok` looks at the whole name and the value.
    Rule {
        assignment: true,
        ..ctx(
            "secret",
            concat!(
                r"(?:password|Password|PASSWORD|passwd|Passwd|PASSWD|passphrase|Passphrase|PASSPHRASE|_pass|_Pass|_PASS|_pwd|_PWD",
                r"|secret|Secret|SECRET|token|Token|TOKEN|[_-]key|Key|KEY|apikey|APIKEY|_auth|_AUTH)",
                assign!(),
                r#"(?P<s>[^\s"'\\<>&;,()\[\]{}`]{3,256})"#
            ),
        )
    },
];

/// Prefilter needles are cut to this many bytes (and before the separators after a keyword), so
/// that a few dozen cover every rule and each is rare in ordinary text.
const TRIGGER_LEN: usize = 8;
/// Teddy, the SIMD multi-literal search, takes at most 64 needles.
const TRIGGERS_PER_GROUP: usize = 64;

/// Rules are compiled into a few regexes, each with a prefilter of at most 64 literal triggers
/// (the literal prefixes of its rules) so that Teddy can skip ordinary text. One regex over all
/// rules would have hundreds of literals, no SIMD prefilter, and run at a fifth of the speed.
struct Group {
    re: Regex,
    /// (index in `RULES`, capture group index of its secret), in rule order.
    rules: Vec<(usize, usize)>,
}

/// Every literal prefix a match of `pattern` can start with, cut to `cut` bytes.
fn triggers(pattern: &str, cut: usize) -> Vec<Vec<u8>> {
    let hir = regex_syntax::parse(pattern).expect("the redaction patterns parse");
    let seq = regex_syntax::hir::literal::Extractor::new().extract(&hir);
    let lits = seq
        .literals()
        .expect("every redaction pattern starts with a finite set of literals");
    // A literal ends where the separators after a keyword begin (`Key\"`, `Key'`, `Key=` are
    // all `Key`), and at `cut` bytes.
    let mut t: Vec<Vec<u8>> = lits
        .iter()
        .map(|l| {
            let b = l.as_bytes();
            let end = b
                .iter()
                .skip(1)
                .position(|c| matches!(c, b'\\' | b'"' | b'\'' | b' ' | b'\t' | b'=' | b':'))
                .map_or(b.len(), |p| p + 1);
            b[..end.min(cut)].to_vec()
        })
        .collect();
    t.sort();
    t.dedup();
    t
}

fn groups() -> &'static [Group] {
    static GROUPS: OnceLock<Vec<Group>> = OnceLock::new();
    GROUPS.get_or_init(|| build_groups(TRIGGER_LEN, TRIGGERS_PER_GROUP))
}

fn build_groups(cut: usize, per_group: usize) -> Vec<Group> {
    {
        // Teddy fingerprints as many leading bytes as its shortest needle has (up to 3), so
        // rules with two-byte triggers (`AC`, `SK`, `Q~`) are kept apart from the rest.
        let mut order: Vec<(usize, Vec<Vec<u8>>)> = RULES
            .iter()
            .enumerate()
            .map(|(i, r)| (i, triggers(r.pattern, cut)))
            .collect();
        order.sort_by_key(|(i, t)| (t.iter().map(Vec::len).min().unwrap_or(0) >= 3, *i));
        let mut plan: Vec<(Vec<usize>, Vec<Vec<u8>>, bool)> = Vec::new();
        for (i, t) in order {
            let long = t.iter().all(|x| x.len() >= 3);
            let fits = plan.last().is_some_and(|(_, have, l)| {
                let extra = t.iter().filter(|x| !have.contains(x)).count();
                *l == long && have.len() + extra <= per_group
            });
            if !fits {
                plan.push((Vec::new(), Vec::new(), long));
            }
            let (rules, have, _) = plan.last_mut().expect("a group");
            rules.push(i);
            for x in t {
                if !have.contains(&x) {
                    have.push(x);
                }
            }
        }
        plan.into_iter()
            .map(|(rules, needles, _)| {
                let pattern = rules
                    .iter()
                    .map(|&i| {
                        format!(
                            "(?:{})",
                            RULES[i]
                                .pattern
                                .replacen("(?P<s>", &format!("(?P<s{i}>"), 1)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("|");
                let pre = Prefilter::new(MatchKind::LeftmostFirst, &needles);
                let re = Regex::builder()
                    .configure(Regex::config().prefilter(pre))
                    .build(&pattern)
                    .expect("the redaction patterns compile");
                let rules = rules
                    .into_iter()
                    .map(|i| {
                        let g = re
                            .group_info()
                            .to_index(PatternID::ZERO, &format!("s{i}"))
                            .expect("each rule names its secret");
                        (i, g)
                    })
                    .collect();
                Group { re, rules }
            })
            .collect()
    }
}

/// A match of one rule: where the whole match starts, and its secret group.
struct Candidate {
    rule: usize,
    start: usize,
    secret: (usize, usize),
}

/// The next match of `g` at or after `at` (exactly at `at` when `anchored`). The search runs
/// without captures; only a match is searched again, anchored, for its groups.
fn search(g: &Group, text: &str, at: usize, anchored: bool) -> Option<Candidate> {
    if at > text.len() {
        return None;
    }
    let anchor = |a: bool| if a { Anchored::Yes } else { Anchored::No };
    let m =
        g.re.search(&Input::new(text).range(at..).anchored(anchor(anchored)))?;
    let mut caps = g.re.create_captures();
    g.re.search_captures(
        &Input::new(text).range(m.start()..).anchored(Anchored::Yes),
        &mut caps,
    );
    let (rule, secret) = g
        .rules
        .iter()
        .find_map(|&(i, gi)| caps.get_group(gi).map(|s| (i, (s.start, s.end))))?;
    Some(Candidate {
        rule,
        start: m.start(),
        secret,
    })
}

/// A secret found: `text[start..end]` is replaced by `[REDACTED:kind]`.
struct Hit {
    start: usize,
    end: usize,
    kind: &'static str,
}

/// Returns `text` with every secret replaced by `[REDACTED:<kind>]`, and how many were replaced.
/// Borrowed when nothing was.
pub fn redact(text: &str) -> (Cow<'_, str>, usize) {
    redact_with(groups(), text)
}

fn redact_with<'t>(gs: &[Group], text: &'t str) -> (Cow<'t, str>, usize) {
    let mut next: Vec<Option<Candidate>> = gs.iter().map(|g| search(g, text, 0, false)).collect();
    let mut out = String::new();
    let mut copied = 0; // text[..copied] is already in `out`
    let mut count = 0;
    // The leftmost candidate of all groups (the earlier rule on a tie) is judged first.
    while let Some(gi) = (0..gs.len())
        .filter_map(|i| next[i].as_ref().map(|c| (c.start, c.rule, i)))
        .min()
        .map(|(_, _, i)| i)
    {
        let c = next[gi].take().expect("a candidate");
        let Some(hit) = judge(text, &c, copied).filter(|h| h.end > h.start) else {
            // Look again one character later: a real secret may start inside this match.
            let at = c.start + text[c.start..].chars().next().map_or(1, char::len_utf8);
            next[gi] = search(&gs[gi], text, at, false);
            continue;
        };
        out.push_str(&text[copied..hit.start]);
        out.push_str("[REDACTED:");
        out.push_str(hit.kind);
        out.push(']');
        copied = hit.end;
        count += 1;
        // Past the secret only (a secret shorter than its match leaves text to look at), and
        // every group's candidate that overlaps it is looked for again.
        for i in 0..gs.len() {
            if i == gi || next[i].as_ref().is_some_and(|n| n.start < hit.end) {
                next[i] = search(&gs[i], text, hit.end, false);
            }
        }
    }
    if count == 0 {
        return (Cow::Borrowed(text), 0);
    }
    out.push_str(&text[copied..]);
    (Cow::Owned(out), count)
}

/// Whether candidate `c` is a secret (and which span), given that nothing before `floor` may be
/// replaced again.
fn judge(text: &str, c: &Candidate, floor: usize) -> Option<Hit> {
    let rule = &RULES[c.rule];
    let b = text.as_bytes();
    let (start, end) = c.secret;
    let secret = &text[start..end];
    if secret.starts_with("[REDACTED:") {
        return None;
    }
    if rule.assignment {
        // A provider's token as the value: name it, and mask all of it (a whole PEM block).
        if let Some(inner) = specific_at(text, start, floor) {
            return Some(inner);
        }
        if !assignment_ok(text, c.start, start, end) {
            return None;
        }
        let end = end + text[end..].bytes().take_while(|&c| in_value(c)).count();
        return Some(Hit {
            start,
            end,
            kind: if is_password_name(name_before(text, c.start)) {
                "password"
            } else {
                rule.kind
            },
        });
    }
    let start = match rule.lead {
        Some(lead) => lead(b, start)?,
        None => start,
    };
    let ok = start >= floor
        && (!rule.start || boundary_before(b, start))
        && (!rule.end || boundary_after(b, end))
        && rule.check.is_none_or(|c| c(secret));
    ok.then_some(Hit {
        start,
        end,
        kind: rule.kind,
    })
}

/// A provider-specific secret starting exactly at `at` (the value of an assignment).
fn specific_at(text: &str, at: usize, floor: usize) -> Option<Hit> {
    groups()
        .iter()
        .filter_map(|g| search(g, text, at, true))
        .filter(|c| !RULES[c.rule].assignment)
        .min_by_key(|c| c.rule)
        .and_then(|c| judge(text, &c, floor))
}

/// The characters of an assignment's value (as in its pattern): none can end a JSON string.
fn in_value(c: u8) -> bool {
    !c.is_ascii_whitespace()
        && !matches!(
            c,
            b'"' | b'\''
                | b'\\'
                | b'<'
                | b'>'
                | b'&'
                | b';'
                | b','
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'`'
        )
}

/// The variable or key name that ends where the keyword match starts, keyword included.
fn name_before(text: &str, keyword_at: usize) -> &str {
    let b = text.as_bytes();
    let mut s = keyword_at;
    while s > 0 && (b[s - 1].is_ascii_alphanumeric() || matches!(b[s - 1], b'_' | b'-' | b'.')) {
        s -= 1;
    }
    let mut e = keyword_at;
    while e < b.len() && (b[e].is_ascii_alphanumeric() || matches!(b[e], b'_' | b'-')) {
        e += 1;
    }
    &text[s..e]
}

fn is_password_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("pass") || n.ends_with("pwd")
}

/// Judges `name = value`: a name about passwords takes any value that is no placeholder, a
/// name about secrets, tokens or API keys a value of 8 characters or more, and any other
/// `*_KEY` (`sort_key`, `primaryKey`) only a value that looks random.
fn assignment_ok(text: &str, keyword_at: usize, start: usize, end: usize) -> bool {
    let name = name_before(text, keyword_at).to_ascii_lowercase();
    let value = &text[start..end];
    if !not_placeholder(value) || value.starts_with("-----") {
        return false;
    }
    // Code, not a value: `token = get_token()`, `key = os.environ["KEY"]`, `api_key=api_key`.
    if matches!(text.as_bytes().get(end), Some(b'(' | b'[')) {
        return false;
    }
    let v = value.to_ascii_lowercase();
    let identifier = v
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.');
    if identifier
        && v.contains('.')
        && v.split('.').all(|p| {
            p.bytes()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        })
    {
        return false; // self.password, process.env.TOKEN, config.api_key
    }
    if identifier
        && [
            "key", "token", "secret", "password", "passwd", "pass", "auth",
        ]
        .iter()
        .any(|k| v.ends_with(k))
    {
        return false;
    }
    if matches!(
        v.as_str(),
        "true" | "false" | "null" | "none" | "nil" | "undefined" | "required" | "optional"
    ) || v.starts_with("redacted")
        || v.starts_with("your")
        || v.starts_with("xxx")
        || v.starts_with("...")
    {
        return false;
    }
    if name.contains("public") || name.contains("pub_") || name.ends_with("_id") {
        return false;
    }
    if is_password_name(&name) {
        // `password: must be 8 characters` is prose; `password: hunter2` is not.
        let word = value.bytes().all(|c| c.is_ascii_lowercase());
        return value.len() >= 3 && !(word && value.len() < 8);
    }
    let strong = [
        "secret",
        "token",
        "apikey",
        "api_key",
        "api-key",
        "access_key",
        "accesskey",
        "private_key",
        "privatekey",
        "_auth",
        "credential",
    ]
    .iter()
    .any(|k| name.contains(k));
    if strong {
        value.len() >= 8 && !value.bytes().all(|c| c.is_ascii_digit())
    } else {
        value.len() >= 16 && mixed_alnum(value)
    }
}

/// `$TOKEN`, `${{ secrets.X }}`, `<password>`, `********`, `%s`, `{password}`: a stand-in for a
/// secret, not one.
fn not_placeholder(value: &str) -> bool {
    let Some(first) = value.bytes().next() else {
        return false;
    };
    if matches!(first, b'$' | b'{' | b'<' | b'[' | b'*' | b'%' | b'(') {
        return false;
    }
    !value.bytes().all(|c| c == first)
}

/// `curl -u user:password`, not `docker run -u 1000:1000`.
fn curl_user_ok(value: &str) -> bool {
    not_placeholder(value) && !value.bytes().all(|c| c.is_ascii_digit())
}

/// Keys are random: digits and letters mixed, in long unbroken runs. Identifiers made of words
/// (`sk-learn-compatible-estimators`) have short runs between their dashes.
fn looks_random(tail: &str) -> bool {
    let digits = tail.bytes().filter(u8::is_ascii_digit).count();
    let letters = tail.bytes().filter(u8::is_ascii_alphabetic).count();
    let longest_run = tail.split(['-', '_']).map(str::len).max().unwrap_or(0);
    digits >= 2 && letters >= 2 && longest_run >= 16
}

fn openai_tail(secret: &str) -> bool {
    looks_random(&secret[3..])
}

/// Letters and digits both (a random string of 30 characters almost always has both).
fn mixed_alnum(s: &str) -> bool {
    s.bytes().any(|c| c.is_ascii_digit()) && s.bytes().any(|c| c.is_ascii_alphabetic())
}

/// Upper and lower case both (Hugging Face tokens are letters only).
fn mixed_case(s: &str) -> bool {
    let tail = s.get(3..).unwrap_or("");
    tail.bytes().any(|c| c.is_ascii_uppercase()) && tail.bytes().any(|c| c.is_ascii_lowercase())
}

/// A Telegram bot token is `<8–10 digit bot id>:AA<33 characters>`; the match starts at `:AA`.
fn telegram_lead(b: &[u8], colon: usize) -> Option<usize> {
    let digits = b[..colon]
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .count();
    (8..=10).contains(&digits).then(|| colon - digits)
}

/// An Azure AD client secret is `<3 characters><digit>Q~<31–34 characters>`; the match starts at
/// `Q~`.
fn azure_client_secret_lead(b: &[u8], q: usize) -> Option<usize> {
    let s = q.checked_sub(4)?;
    let head = &b[s..q];
    let ok = head[..3]
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'~' | b'.'))
        && head[3].is_ascii_digit()
        && boundary_before(b, s);
    ok.then_some(s)
}

/// Whether a token may start at `start`: no letter or digit just before it, unless that
/// character ends an escape: a JSON escape (`\n`, `\u003d`), a URL escape (`%3D`) or an ANSI
/// colour code (`ESC[32m`, also written `\u001b[32m` in JSON).
fn boundary_before(b: &[u8], start: usize) -> bool {
    let Some(&prev) = start.checked_sub(1).and_then(|i| b.get(i)) else {
        return true;
    };
    if !prev.is_ascii_alphanumeric() {
        return true;
    }
    let odd_backslashes =
        |end: usize| b[..end].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1;
    // `\n`, `\r`, `\t`, `\b`, `\f`.
    if matches!(prev, b'n' | b'r' | b't' | b'b' | b'f') && odd_backslashes(start - 1) {
        return true;
    }
    // `%3D`, and `%253D` (encoded twice).
    if start >= 3 && b[start - 2].is_ascii_hexdigit() && prev.is_ascii_hexdigit() {
        let head = &b[..start - 2];
        if head.ends_with(b"%") || head.ends_with(b"%25") {
            return true;
        }
    }
    // `\u003d`.
    if start >= 6
        && b[start - 5] == b'u'
        && b[start - 4..start].iter().all(u8::is_ascii_hexdigit)
        && odd_backslashes(start - 5)
    {
        return true;
    }
    // `ESC[1;32m`.
    if prev == b'm' {
        let mut k = start - 1;
        while k > 0 && (b[k - 1].is_ascii_digit() || b[k - 1] == b';') {
            k -= 1;
        }
        let bracket = &b[..k];
        let esc = if bracket.ends_with(b"[") {
            Some(&b[..k - 1])
        } else if bracket.ends_with(b"%5B") || bracket.ends_with(b"%5b") {
            Some(&b[..k - 3])
        } else {
            None
        };
        if let Some(esc) = esc {
            return esc.ends_with(b"\x1b")
                || esc.ends_with(b"%1B")
                || esc.ends_with(b"%1b")
                || esc.ends_with(b"\\u001b")
                || esc.ends_with(b"\\u001B")
                || esc.ends_with(b"\\x1b")
                || esc.ends_with(b"\\033")
                || esc.ends_with(b"\\e");
        }
    }
    false
}

/// Whether a token may end at `end`: no letter or digit follows.
fn boundary_after(b: &[u8], end: usize) -> bool {
    b.get(end).is_none_or(|c| !c.is_ascii_alphanumeric())
}

/// Masks secrets in every string of a JSON value, counting them (`export --redact`, `ship`).
pub fn redact_json(v: &mut serde_json::Value, count: &mut usize) {
    match v {
        serde_json::Value::String(s) => {
            let (masked, n) = redact(s);
            if n > 0 {
                *count += n;
                *s = masked.into_owned();
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| redact_json(x, count)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| redact_json(x, count)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_names_its_secret_once() {
        for r in RULES {
            assert_eq!(r.pattern.matches("(?P<s>").count(), 1, "{}", r.kind);
            // Each rule starts with literals worth a prefilter: none shorter than two bytes.
            assert!(
                triggers(r.pattern, TRIGGER_LEN)
                    .iter()
                    .all(|t| t.len() >= 2),
                "{}",
                r.kind
            );
        }
        let gs = groups();
        assert_eq!(gs.iter().map(|g| g.rules.len()).sum::<usize>(), RULES.len());
        assert!(gs.len() <= 4, "{} groups", gs.len());
    }

    #[test]
    fn boundaries_see_through_escapes() {
        assert!(boundary_before(b"sk-", 0));
        assert!(boundary_before(b"=sk-", 1));
        assert!(boundary_before(b"_ghp", 1));
        assert!(!boundary_before(b"task-", 2));
        assert!(boundary_before(br"a\nsk-", 3));
        assert!(
            !boundary_before(br"a\\nsk-", 4),
            "an escaped backslash, then a plain n"
        );
        assert!(boundary_before(b"a%3Dghp", 4));
        assert!(boundary_before(br"\u003dghp", 6));
        assert!(boundary_before(b"\x1b[32mghp", 5));
        assert!(boundary_before(br"\u001b[1;32mghp", 12));
        assert!(!boundary_before(b"[32mghp", 4), "no ESC before the [");
        assert!(boundary_before(b"%1B%5B32mghp", 9));
        assert!(boundary_before(b"t%253Dghp", 6));
        assert!(boundary_after(b"ab", 2));
        assert!(boundary_after(b"ab\\n", 2));
        assert!(!boundary_after(b"abc", 2));
    }

    #[test]
    fn random_tails() {
        assert!(looks_random("proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12"));
        assert!(looks_random("0123456789abcdef0123456789abcdef"));
        assert!(!looks_random("learn-compatible-estimators-v2"));
        assert!(!looks_random("abcdefghijklmnopqrstuvwxyz"));
    }

    #[test]
    fn secrets_longer_than_the_bounds_are_masked_whole() {
        let value = "a1".repeat(400);
        let text = format!("SESSION_TOKEN={value} next");
        assert_eq!(
            redact(&text),
            (Cow::Owned("SESSION_TOKEN=[REDACTED:secret] next".into()), 1)
        );
        // An RS256 JWT: a 342-character signature.
        let jwt = format!(
            "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJmYWtlIn0.{}",
            "Q".repeat(342)
        );
        assert_eq!(
            redact(&format!("jwt {jwt} end")),
            (Cow::Owned("jwt [REDACTED:jwt] end".into()), 1)
        );
    }

    #[test]
    fn names_decide_how_strict_an_assignment_is() {
        let ok = |t: &str| {
            let (out, n) = redact(t);
            (n, out.into_owned())
        };
        assert_eq!(ok("sort_key: created_at_desc_index").0, 0);
        assert_eq!(ok("SORT_KEY=a1b2c3d4e5f6a7b8c9d0").0, 1);
        assert_eq!(ok("token_count: 1234").0, 0);
        assert_eq!(ok("token: 12345678").0, 0);
        assert_eq!(ok("password: hunter2").0, 1);
        assert_eq!(ok("your password: must be long").0, 0);
        assert_eq!(ok("token = get_token()").0, 0);
        assert_eq!(ok("api_key=api_key").0, 0);
        assert_eq!(ok("TOKEN=${{ secrets.GH_TOKEN }}").0, 0);
        assert_eq!(
            ok("DB_PASSWORD=Tr0ub4dor!3 next").1,
            "DB_PASSWORD=[REDACTED:password] next"
        );
    }
}
