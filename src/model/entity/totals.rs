//! Totals that add up. A session's record may carry no cost or token
//! totals (`opencode run` streams, older exports and databases): then its
//! totals are the sum of its assistant messages (`info.cost`,
//! `info.tokens`) and, for a message that reported none, of its
//! `step-finish` parts, each step counted once. The sum is kept as events
//! apply (each message remembers what it added), so reading it costs the
//! same whatever the session's length.

use super::message::Message;
use super::part::PartBody;
use super::session::{CacheTokens, Session, Tokens};

/// The mark shown next to a figure that ocview summed itself.
pub const SUMMED_MARK: &str = "Σ";

/// Cost and tokens in whole units: integers add and take away exactly, so a
/// tally kept per event never drifts (cost in nano-dollars).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    cost_nanos: i128,
    total: i128,
    input: i128,
    output: i128,
    reasoning: i128,
    cache_read: i128,
    cache_write: i128,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.add(&o);
    }
}

/// Any one figure is kept below this, so no sum of them can overflow.
const MAX_FIGURE: f64 = 1e30;

impl Usage {
    pub fn of(cost: f64, tokens: &Tokens) -> Usage {
        let cost = if cost.is_finite() {
            (cost * 1e9).round().clamp(-MAX_FIGURE, MAX_FIGURE) as i128
        } else {
            0
        };
        Usage {
            cost_nanos: cost,
            total: tokens.sum() as i128,
            input: tokens.input as i128,
            output: tokens.output as i128,
            reasoning: tokens.reasoning as i128,
            cache_read: tokens.cache.read as i128,
            cache_write: tokens.cache.write as i128,
        }
    }

    fn has_cost(&self) -> bool {
        self.cost_nanos != 0
    }

    fn has_tokens(&self) -> bool {
        self.total != 0
    }

    fn add(&mut self, o: &Usage) {
        self.cost_nanos += o.cost_nanos;
        self.add_tokens(o);
    }

    fn add_tokens(&mut self, o: &Usage) {
        self.total += o.total;
        self.input += o.input;
        self.output += o.output;
        self.reasoning += o.reasoning;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
    }

    fn sub(&mut self, o: &Usage) {
        self.cost_nanos -= o.cost_nanos;
        self.total -= o.total;
        self.input -= o.input;
        self.output -= o.output;
        self.reasoning -= o.reasoning;
        self.cache_read -= o.cache_read;
        self.cache_write -= o.cache_write;
    }

    pub fn cost(&self) -> f64 {
        self.cost_nanos as f64 / 1e9
    }

    pub fn tokens(&self) -> Tokens {
        let n = |v: i128| v.clamp(0, u64::MAX as i128) as u64;
        Tokens {
            total: Some(n(self.total)),
            input: n(self.input),
            output: n(self.output),
            reasoning: n(self.reasoning),
            cache: CacheTokens {
                read: n(self.cache_read),
                write: n(self.cache_write),
            },
        }
    }
}

/// What one message adds to its session's sum: an assistant message's own
/// figures, each one it left at zero taken from its steps instead. A
/// message whose role is missing or unknown adds nothing; one known only
/// from its parts (its info not seen yet) adds its steps.
pub fn message_usage(message: &Message) -> Usage {
    if !(message.info.is_assistant() || message.placeholder) {
        return Usage::default();
    }
    let own = Usage::of(message.info.cost, &message.info.tokens);
    if own.has_cost() && own.has_tokens() {
        return own;
    }
    let mut steps = Usage::default();
    for part in &message.parts {
        if let PartBody::StepFinish(step) = &part.body {
            steps.add(&Usage::of(step.cost, &step.tokens));
        }
    }
    let mut usage = if own.has_tokens() { own } else { steps };
    usage.cost_nanos = if own.has_cost() {
        own.cost_nanos
    } else {
        steps.cost_nanos
    };
    usage
}

/// A session's running sum of its messages' usage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    sum: Usage,
}

impl Tally {
    /// Take message `mi`'s old share out and its new one in.
    pub(crate) fn recount(&mut self, message: &mut Message) {
        let now = message_usage(message);
        self.sum.sub(&message.counted);
        self.sum.add(&now);
        message.counted = now;
    }

    /// Take a message that is leaving the session out.
    pub(crate) fn forget(&mut self, message: &Message) {
        self.sum.sub(&message.counted);
    }

    pub fn sum(&self) -> Usage {
        self.sum
    }
}

/// The totals a reader is shown: each figure from the session's record, or
/// summed from its messages when the record has none.
#[derive(Debug, Clone, PartialEq)]
pub struct Totals {
    pub cost: f64,
    pub tokens: Tokens,
    pub cost_summed: bool,
    pub tokens_summed: bool,
}

impl Totals {
    pub fn token_count(&self) -> u64 {
        self.tokens.sum()
    }
}

impl Session {
    /// The session's totals, marked where they are summed. Cheap: the sum
    /// is kept as events apply.
    pub fn totals(&self) -> Totals {
        self.totals_with(self.tally.sum())
    }

    /// The totals as [`Session::totals`] gives them, with `sum` as the sum
    /// of the messages: for a reader that holds the messages one page at a
    /// time (`export URL`) and adds their [`message_usage`] itself.
    pub fn totals_with(&self, sum: Usage) -> Totals {
        let record_cost = self.info.cost.is_finite() && self.info.cost != 0.0;
        let cost_summed = !record_cost && sum.has_cost();
        let tokens_summed = self.info.tokens.sum() == 0 && sum.has_tokens();
        Totals {
            cost: if cost_summed {
                sum.cost()
            } else {
                self.info.cost
            },
            tokens: if tokens_summed {
                sum.tokens()
            } else {
                self.info.tokens.clone()
            },
            cost_summed,
            tokens_summed,
        }
    }

    /// Recount message `mi` after it changed.
    pub(crate) fn recount_message(&mut self, mi: usize) {
        if let Some(message) = self.messages.get_mut(mi) {
            self.tally.recount(message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::entity::message::{MessageInfo, Role};
    use crate::model::entity::part::Part;
    use serde_json::value::RawValue;

    fn step(id: &str, cost: f64, input: u64) -> Part {
        let json = format!(
            r#"{{"id":"{id}","messageID":"m","sessionID":"s","type":"step-finish","reason":"stop","cost":{cost},"tokens":{{"input":{input},"output":1,"reasoning":0,"cache":{{"read":0,"write":0}}}}}}"#
        );
        Part::from_raw(&RawValue::from_string(json).unwrap()).unwrap()
    }

    fn assistant(cost: f64, parts: Vec<Part>) -> Message {
        let mut m = Message::new(MessageInfo {
            role: Role::Assistant,
            cost,
            ..Default::default()
        });
        m.parts = parts;
        m
    }

    #[test]
    fn a_message_without_figures_adds_its_steps_once() {
        let m = assistant(0.0, vec![step("a", 0.25, 10), step("b", 0.5, 20)]);
        let u = message_usage(&m);
        assert_eq!(u.cost(), 0.75);
        assert_eq!(u.tokens().sum(), 32);
        // Its own cost wins over its steps'; its missing tokens come from them.
        let m = assistant(2.0, vec![step("a", 0.25, 10)]);
        let u = message_usage(&m);
        assert_eq!((u.cost(), u.tokens().sum()), (2.0, 11));
    }

    #[test]
    fn unknown_roles_add_nothing_and_the_tally_takes_back_what_it_added() {
        let mut other = assistant(1.0, vec![]);
        other.info.role = Role::Other("system".into());
        assert_eq!(message_usage(&other), Usage::default());
        let mut tally = Tally::default();
        let mut m = assistant(0.0, vec![step("a", 0.1, 5)]);
        tally.recount(&mut m);
        tally.recount(&mut m);
        m.parts.push(step("b", 0.2, 5));
        tally.recount(&mut m);
        assert_eq!(tally.sum().cost(), 0.3);
        tally.forget(&m);
        assert_eq!(tally.sum(), Usage::default());
    }

    #[test]
    fn hostile_figures_never_overflow() {
        let mut tally = Tally::default();
        for _ in 0..4 {
            let mut m = assistant(f64::MAX, vec![step("a", 1e300, u64::MAX)]);
            tally.recount(&mut m);
        }
        assert!(tally.sum().cost() > 0.0);
        assert_eq!(tally.sum().tokens().input, u64::MAX);
    }
}
