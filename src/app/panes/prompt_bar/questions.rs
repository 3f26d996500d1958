//! Questions: what has been picked and typed for each, and the answers as
//! the server takes them (their keys: `question_keys.rs`).

use std::collections::BTreeSet;

use crate::model::QuestionRequest;

/// A question being answered: picks and typed text per question, kept
/// apart so nothing typed for one leaks into another.
#[derive(Debug, Clone, Default)]
pub struct Draft {
    /// The question shown; `questions.len()` is the review step.
    pub tab: usize,
    /// The highlighted option; `options.len()` is "type your own answer".
    pub cursor: usize,
    pub picked: Vec<BTreeSet<usize>>,
    pub typed: Vec<String>,
}

impl Draft {
    pub fn new(q: &QuestionRequest) -> Draft {
        Draft {
            tab: 0,
            cursor: 0,
            picked: vec![BTreeSet::new(); q.questions.len()],
            typed: vec![String::new(); q.questions.len()],
        }
    }

    /// The answers as the server wants them, one list per question. A
    /// single-choice question gets exactly one: the typed text replaces
    /// the picked option. A multiple-choice one gets the labels picked,
    /// then the typed text.
    pub fn answers(&self, q: &QuestionRequest) -> Vec<Vec<String>> {
        q.questions
            .iter()
            .enumerate()
            .map(|(i, question)| {
                let typed = self.typed[i].trim();
                if !question.multiple && !typed.is_empty() {
                    return vec![typed.to_string()];
                }
                let mut a: Vec<String> = self.picked[i]
                    .iter()
                    .filter_map(|&o| question.options.get(o).map(|o| o.label.clone()))
                    .collect();
                if !typed.is_empty() {
                    a.push(typed.to_string());
                }
                a
            })
            .collect()
    }

    /// The own answer typed for the question on `tab` is done: on a
    /// single-choice question it is the answer (no option stays picked)
    /// and the next question comes, as after picking an option.
    pub fn typed_done(&mut self, q: &QuestionRequest, tab: usize, text: String) {
        let Some(question) = q.questions.get(tab) else {
            return;
        };
        let answered = !text.trim().is_empty();
        self.typed[tab] = text;
        if answered && !question.multiple {
            self.picked[tab].clear();
            self.tab = (tab + 1).min(q.questions.len());
            self.cursor = 0;
        }
    }

    pub fn is_answered(&self, i: usize) -> bool {
        !self.picked[i].is_empty() || !self.typed[i].trim().is_empty()
    }
}

/// Pick an option; on a single-choice question it replaces the one picked
/// before and any typed answer.
pub(super) fn pick(draft: &mut Draft, tab: usize, option: usize, multiple: bool) {
    let set = &mut draft.picked[tab];
    if multiple {
        if !set.remove(&option) {
            set.insert(option);
        }
    } else {
        set.clear();
        set.insert(option);
        draft.typed[tab].clear();
    }
}
