//! The rules secrets are found by: gitleaks' rule set as released
//! (`data/gitleaks/`), read from its TOML, and a few of ocview's own for
//! what an agent's session holds that gitleaks looks for elsewhere (a
//! password in a URL, an `Authorization:` header, a private key block).

use std::sync::OnceLock;

use regex::bytes::Regex;
use serde::Deserialize;

/// gitleaks' rule set, as released.
const GITLEAKS: &str = include_str!("../../data/gitleaks/gitleaks.toml");

/// One rule. Its regex is compiled when a text first calls for it (most
/// of gitleaks' rules are for services a session never names).
pub struct Rule {
    pub id: String,
    pattern: String,
    regex: OnceLock<Option<Regex>>,
    /// Lowercased; the rule is tried only where one of them is (none: always).
    pub keywords: Vec<String>,
    /// The least Shannon entropy (bits a character) the secret has.
    pub entropy: Option<f64>,
    /// The capture group that is the secret (0: the first that matched, or
    /// the whole match when there is none).
    pub secret_group: usize,
    pub allowlists: Vec<Allowlist>,
}

impl Rule {
    /// The rule's regex; `None` when it does not compile here (said once).
    pub fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| match compile_regex(&self.pattern) {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::warn!("secret rule {} is left out: {e}", self.id);
                    None
                }
            })
            .as_ref()
    }

    /// Whether a match may span lines (`[\s\S]`, `(?s`): it is looked for
    /// further after its keyword.
    pub fn spans_lines(&self) -> bool {
        self.pattern.contains("\\s\\S") || self.pattern.contains("(?s")
    }

    /// Compile the rule now: why it cannot be, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        compile_regex(&self.pattern)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// A gitleaks (Go RE2) pattern for Rust's regex: the same syntax but for
/// a `{` that starts no repetition, which Go takes as itself. As in Go,
/// `\w`, `\s`, `\d` and `\b` are ASCII's (Unicode's classes made the
/// generic rule ten times slower), so the regex runs on bytes.
fn compile_regex(pattern: &str) -> Result<Regex, regex::Error> {
    regex::bytes::RegexBuilder::new(&go_braces(pattern))
        .unicode(false)
        .size_limit(64 << 20)
        // The generic rules' lazy DFAs outgrew the default 2 MB on real
        // tool outputs and were built again and again.
        .dfa_size_limit(32 << 20)
        .build()
}

/// `{` escaped where it starts no repetition (`{2}`, `{2,}`, `{2,5}`),
/// outside character classes.
fn go_braces(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.char_indices().peekable();
    let mut class = false;
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some((_, next)) = chars.next() {
                    out.push(next);
                }
                continue;
            }
            '[' if !class => class = true,
            ']' if class => class = false,
            '{' if !class && !is_repetition(&pattern[i + 1..]) => {
                out.push_str("\\{");
                continue;
            }
            '}' if !class && !closes_repetition(&out) => {
                out.push_str("\\}");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Whether `rest` (after a `{`) is a repetition's count and `}`.
fn is_repetition(rest: &str) -> bool {
    let Some(end) = rest.find('}') else {
        return false;
    };
    let body = &rest[..end];
    let (low, high) = body.split_once(',').unwrap_or((body, ""));
    !low.is_empty()
        && low.bytes().all(|b| b.is_ascii_digit())
        && high.bytes().all(|b| b.is_ascii_digit())
}

/// Whether the pattern so far ends inside an open repetition (`{2,5`).
fn closes_repetition(so_far: &str) -> bool {
    let Some(open) = so_far.rfind('{') else {
        return false;
    };
    let escaped = so_far[..open].ends_with('\\');
    !escaped && is_repetition(&format!("{}}}", &so_far[open + 1..]))
}

/// What is not a secret though a rule matched it.
pub struct Allowlist {
    pub target: Target,
    pub regexes: Vec<Regex>,
    pub stopwords: Vec<String>,
    /// Every condition must hold (gitleaks' `condition = "AND"`), not any.
    pub all: bool,
}

/// What an allowlist's regexes are tried on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Secret,
    Match,
    Line,
}

/// The rule set: every rule, and the allowlist of them all.
pub struct RuleSet {
    pub rules: Vec<Rule>,
    pub global: Allowlist,
    /// Rules of gitleaks' file that could not be compiled here (id, why).
    pub skipped: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    allowlist: Option<ListFile>,
    #[serde(default)]
    rules: Vec<RuleFile>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleFile {
    id: String,
    regex: Option<String>,
    #[serde(default)]
    keywords: Vec<String>,
    entropy: Option<f64>,
    #[serde(default)]
    secret_group: usize,
    #[serde(default)]
    allowlists: Vec<ListFile>,
    /// The files the rule is for: text of no file is not looked at with it.
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ListFile {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    regex_target: Option<String>,
    condition: Option<String>,
}

impl ListFile {
    /// The allowlist as it applies to text with no file path: one that
    /// needs a path to hold cannot hold.
    fn compile(self) -> Result<Option<Allowlist>, regex::Error> {
        let all = self.condition.as_deref() == Some("AND");
        if self.regexes.is_empty() && self.stopwords.is_empty() {
            return Ok(None);
        }
        if all && !self.paths.is_empty() {
            return Ok(None);
        }
        let target = match self.regex_target.as_deref() {
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            _ => Target::Secret,
        };
        Ok(Some(Allowlist {
            target,
            regexes: self
                .regexes
                .iter()
                .map(|r| compile_regex(r))
                .collect::<Result<_, _>>()?,
            stopwords: self.stopwords.iter().map(|s| s.to_lowercase()).collect(),
            all,
        }))
    }
}

/// ocview's own rules: (id, regex, keywords). Each secret is its first
/// capture group.
const OWN: &[(&str, &str, &[&str])] = &[
    (
        "url-password",
        r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@'\x22]{1,100}:([^\s/@'\x22]{3,200})@[a-z0-9.\[\]-]",
        &["://"],
    ),
    (
        "authorization-header",
        r"(?i)\b(?:proxy-)?authorization\x22?\s*[:=]\s*\x22?(?:bearer|basic|token|digest|negotiate)\s+([a-z0-9._~+/=-]{8,})",
        &["authorization"],
    ),
    (
        "password-assignment",
        r#"(?i)(?:password|passwd|passphrase|pwd)["']?\s{0,3}(?:=|:|=>|:=)\s{0,3}["']([^"'\s$<>{}]{6,128})["']"#,
        &["pass", "pwd"],
    ),
    (
        "private-key-block",
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----((?s:.){16,}?)-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
        &["private key"],
    ),
];

impl RuleSet {
    /// gitleaks' rules and ocview's own, compiled.
    pub fn load() -> RuleSet {
        let file: File = match toml::from_str(GITLEAKS) {
            Ok(file) => file,
            Err(e) => {
                tracing::error!("gitleaks' rules do not read: {e}");
                File {
                    allowlist: None,
                    rules: Vec::new(),
                }
            }
        };
        let mut rules = Vec::new();
        let mut skipped = Vec::new();
        for r in file.rules {
            let id = r.id.clone();
            match compile(r) {
                Ok(Some(rule)) => rules.push(rule),
                Ok(None) => {}
                Err(e) => skipped.push((id, e.to_string())),
            }
        }
        for (id, regex, keywords) in OWN {
            rules.push(Rule {
                id: (*id).to_string(),
                pattern: (*regex).to_string(),
                regex: OnceLock::new(),
                keywords: keywords.iter().map(|k| k.to_string()).collect(),
                entropy: None,
                secret_group: 1,
                allowlists: Vec::new(),
            });
        }
        let global = file
            .allowlist
            .unwrap_or_default()
            .compile()
            .ok()
            .flatten()
            .unwrap_or(Allowlist {
                target: Target::Secret,
                regexes: Vec::new(),
                stopwords: Vec::new(),
                all: false,
            });
        RuleSet {
            rules,
            global,
            skipped,
        }
    }
}

/// A rule of gitleaks' file; `None` for one without a regex or for certain
/// files only (a Terraform file's `password = "…"`, a PHP file's key): a
/// session's text is of no file, and such a rule finds what is not a
/// secret elsewhere.
fn compile(r: RuleFile) -> Result<Option<Rule>, regex::Error> {
    let (Some(regex), None) = (r.regex, &r.path) else {
        return Ok(None);
    };
    let allowlists = r
        .allowlists
        .into_iter()
        .map(ListFile::compile)
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    Ok(Some(Rule {
        id: r.id,
        pattern: regex,
        regex: OnceLock::new(),
        keywords: r.keywords.iter().map(|k| k.to_lowercase()).collect(),
        entropy: r.entropy,
        secret_group: r.secret_group,
        allowlists,
    }))
}
