//! Secrets out of what leaves the machine: text in which a rule finds a
//! secret (`rules`: gitleaks' rule set and a few of ocview's own) gets
//! `[REDACTED:rule-id]` in its place. A rule is tried only where one of its
//! keywords is (one pass over the text finds them all), and a match is a
//! secret only when its entropy is high enough and no allowlist takes it,
//! as gitleaks decides. JSON is redacted inside its strings (`json`).

pub mod json;
pub mod rules;
pub mod writer;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::redact::rules::{Allowlist, Rule, RuleSet, Target};

/// Which archives are redacted before they are written
/// (`archive_redact` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// A team archive (PostgreSQL): what leaves the machine.
    #[default]
    Shared,
    /// The local archive too.
    All,
    /// None: secrets go out as they came.
    Off,
}

impl Policy {
    /// Whether an archive is redacted: `shared` says whether it is a
    /// team's (networked) one.
    pub fn redacts(self, shared: bool) -> bool {
        match self {
            Policy::Shared => shared,
            Policy::All => true,
            Policy::Off => false,
        }
    }
}

static POLICY: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The process's policy, as the config set it (`set_policy`) at start.
pub fn policy() -> Policy {
    match POLICY.load(std::sync::atomic::Ordering::Relaxed) {
        1 => Policy::All,
        2 => Policy::Off,
        _ => Policy::Shared,
    }
}

pub fn set_policy(p: Policy) {
    let v = match p {
        Policy::Shared => 0,
        Policy::All => 1,
        Policy::Off => 2,
    };
    POLICY.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// What redaction takes: the rules, and the keywords they are tried at.
pub struct Redactor {
    set: RuleSet,
    keywords: AhoCorasick,
    /// The rules each keyword (by its pattern's index) calls for.
    called: Vec<Vec<usize>>,
    /// Rules tried everywhere (they name no keyword).
    always: Vec<usize>,
}

/// How many secrets each rule found (by rule id): what a session says of
/// its redactions, never the values.
pub type Tally = BTreeMap<String, u64>;

/// A secret found: where it is in the text, and the rule that found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Secret {
    pub start: usize,
    pub end: usize,
    pub rule: usize,
}

impl Redactor {
    /// The one redactor of the process (its rules are compiled once, when
    /// first needed).
    pub fn shared() -> &'static Redactor {
        static SHARED: OnceLock<Redactor> = OnceLock::new();
        SHARED.get_or_init(|| Redactor::new(RuleSet::load()))
    }

    pub fn new(set: RuleSet) -> Redactor {
        let mut words: Vec<String> = Vec::new();
        let mut called: Vec<Vec<usize>> = Vec::new();
        let mut always = Vec::new();
        for (i, rule) in set.rules.iter().enumerate() {
            if rule.keywords.is_empty() {
                always.push(i);
            }
            for k in &rule.keywords {
                match words.iter().position(|w| w == k) {
                    Some(at) => called[at].push(i),
                    None => {
                        words.push(k.clone());
                        called.push(vec![i]);
                    }
                }
            }
        }
        // Every place of every keyword is looked for (`find`), and some
        // are two letters (`sk`, `ey`): a DFA takes each byte in one step,
        // where the default NFA follows failures (a third less time to
        // redact an export).
        let keywords = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(&words)
            .expect("keywords make an automaton");
        Redactor {
            set,
            keywords,
            called,
            always,
        }
    }

    /// The rules of gitleaks' set this build cannot compile (id, why),
    /// each compiled now.
    pub fn skipped(&self) -> Vec<(String, String)> {
        let mut out = self.set.skipped.clone();
        for rule in &self.set.rules {
            if let Err(why) = rule.check() {
                out.push((rule.id.clone(), why));
            }
        }
        out
    }

    /// A rule's id.
    pub fn rule_id(&self, rule: usize) -> &str {
        &self.set.rules[rule].id
    }

    /// Whether any rule may find something in `text` (one of their
    /// keywords is in it): a text without any is left as it is, unread.
    pub fn may_hold(&self, text: &str) -> bool {
        !self.always.is_empty() || self.keywords.is_match(text)
    }

    /// The secrets in `text`, in order, none overlapping. A rule is tried
    /// around where its keywords are (a keyword is part of what its regex
    /// matches: a key's name, a token's prefix), not over the whole text:
    /// a tool output of megabytes names `key` or `token` here and there.
    pub fn find(&self, text: &str) -> Vec<Secret> {
        let mut at: Vec<Vec<usize>> = vec![Vec::new(); self.set.rules.len()];
        for m in self.keywords.find_overlapping_iter(text) {
            for i in &self.called[m.pattern().as_usize()] {
                at[*i].push(m.start());
            }
        }
        let mut found: Vec<Secret> = Vec::new();
        for i in &self.always {
            self.find_by(*i, &self.set.rules[*i], text, 0, &mut found);
        }
        for (i, hits) in at.iter().enumerate() {
            if hits.is_empty() {
                continue;
            }
            let rule = &self.set.rules[i];
            let after = if rule.spans_lines() {
                WINDOW_LINES
            } else {
                WINDOW_AFTER
            };
            for (from, to) in windows(text, hits, after) {
                self.find_by(i, rule, &text[from..to], from, &mut found);
            }
        }
        found.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
        let mut merged: Vec<Secret> = Vec::with_capacity(found.len());
        for s in found {
            match merged.last_mut() {
                Some(last) if s.start < last.end => last.end = last.end.max(s.end),
                _ => merged.push(s),
            }
        }
        merged
    }

    /// The secrets `rule` finds in `text`, which starts at `offset` of the
    /// whole.
    fn find_by(&self, i: usize, rule: &Rule, text: &str, offset: usize, found: &mut Vec<Secret>) {
        let Some(regex) = rule.regex() else { return };
        for caps in regex.captures_iter(text.as_bytes()) {
            let Some(whole) = caps.get(0) else { continue };
            let secret = match rule.secret_group {
                0 => (1..caps.len())
                    .find_map(|g| caps.get(g).filter(|m| !m.is_empty()))
                    .unwrap_or(whole),
                g => match caps.get(g) {
                    Some(m) => m,
                    None => continue,
                },
            };
            if secret.is_empty() {
                continue;
            }
            // A byte regex may stop inside a character: the secret and the
            // match are taken to whole characters.
            let (start, end) = whole_chars(text, secret.start(), secret.end());
            let (whole_start, whole_end) = whole_chars(text, whole.start(), whole.end());
            let (secret, whole) = (&text[start..end], &text[whole_start..whole_end]);
            if let Some(least) = rule.entropy
                && entropy(secret) <= least
            {
                continue;
            }
            let line = line_around(text, whole_start, whole_end);
            let allowed = |list: &Allowlist| allows(list, secret, whole, line);
            if allowed(&self.set.global) || rule.allowlists.iter().any(allowed) {
                continue;
            }
            found.push(Secret {
                start: offset + start,
                end: offset + end,
                rule: i,
            });
        }
    }

    /// `text` with each secret replaced by `[REDACTED:rule-id]`, counted in
    /// `tally`; borrowed when it holds none.
    pub fn redact<'a>(&self, text: &'a str, tally: &mut Tally) -> Cow<'a, str> {
        if !self.may_hold(text) {
            return Cow::Borrowed(text);
        }
        let secrets = self.find(text);
        if secrets.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for s in secrets {
            let id = self.rule_id(s.rule);
            out.push_str(&text[at..s.start]);
            out.push_str("[REDACTED:");
            out.push_str(id);
            out.push(']');
            at = s.end;
            *tally.entry(id.to_string()).or_default() += 1;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }
}

/// How far before a keyword a rule's match may start (a key's longest
/// name and its separator), and after it end (the longest value).
const WINDOW_BEFORE: usize = 512;
const WINDOW_AFTER: usize = 1024;
/// After a keyword of a rule whose match spans lines (a private key's
/// block).
const WINDOW_LINES: usize = 16 * 1024;

/// The stretches of `text` around `hits` (in order), merged where they
/// meet, each on characters' boundaries.
fn windows(text: &str, hits: &[usize], after: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &hit in hits {
        let mut from = hit.saturating_sub(WINDOW_BEFORE);
        while !text.is_char_boundary(from) {
            from -= 1;
        }
        let mut to = (hit + after).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        match out.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => out.push((from, to)),
        }
    }
    out
}

/// Whether an allowlist takes a match: its regexes (on the secret, the
/// whole match or its line) and its stopwords (in the secret), any of them
/// or, for `condition = "AND"`, all that it has.
fn allows(list: &Allowlist, secret: &str, whole: &str, line: &str) -> bool {
    let target = match list.target {
        Target::Secret => secret,
        Target::Match => whole,
        Target::Line => line,
    };
    let by_regex = (!list.regexes.is_empty())
        .then(|| list.regexes.iter().any(|r| r.is_match(target.as_bytes())));
    let by_word = (!list.stopwords.is_empty()).then(|| {
        let secret = secret.to_lowercase();
        list.stopwords.iter().any(|w| secret.contains(w.as_str()))
    });
    let held = [by_regex, by_word].into_iter().flatten();
    if list.all {
        let mut any = false;
        for h in held {
            if !h {
                return false;
            }
            any = true;
        }
        any
    } else {
        held.into_iter().any(|h| h)
    }
}

/// `start..end` widened to the characters of `text` it touches.
fn whole_chars(text: &str, mut start: usize, mut end: usize) -> (usize, usize) {
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}

/// The line of `text` holding `start..end` (from the line's start to the
/// end of the match's last line).
fn line_around(text: &str, start: usize, end: usize) -> &str {
    let from = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let to = text[end..].find('\n').map_or(text.len(), |i| end + i);
    &text[from..to]
}

/// Shannon entropy of `s`, in bits a character.
pub fn entropy(s: &str) -> f64 {
    let mut counts: std::collections::HashMap<char, usize> = std::collections::HashMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&c| {
            let p = c as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests;
