//! What a prompt's `budget:` asks, and what it did to a turn.

use serde::{Deserialize, Serialize};

/// A prompt's front matter `budget:`: the most tokens a turn may be, and
/// how its history may be cut (the sections say their own in the
/// template).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct BudgetSettings {
    /// `budget.total` (or `budget: N`): the most tokens a turn may be.
    pub total: u64,
    /// `budget.history.priority`: where the history comes in the order of
    /// cuts (parts of lower priority are cut first; 0 when not given, as
    /// for a section).
    pub history_priority: i64,
    /// `budget.history.max_tokens`: the most tokens the history may be,
    /// whatever the total.
    pub history_max_tokens: Option<u64>,
}

impl BudgetSettings {
    /// A budget of `total` tokens, the history at priority 0 with no
    /// limit of its own.
    pub fn new(total: u64) -> BudgetSettings {
        BudgetSettings {
            total,
            history_priority: 0,
            history_max_tokens: None,
        }
    }
}

/// What a prompt's `budget:` did to a turn: its limit, the tokens the
/// turn came to, each section's tokens, and what was cut to fit
/// ([`crate::Rendered::budget`]; `render --explain` prints it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Budget {
    /// The most tokens the turn may be (`budget.total`).
    pub total: usize,
    /// The tokens of the turn as rendered, after the cuts.
    pub tokens: usize,
    /// What was cut, in order (none when the turn fit as it was).
    pub cuts: Vec<Cut>,
    /// The template's budget sections, in the order they first appear,
    /// as rendered after the cuts.
    pub sections: Vec<SectionTokens>,
}

/// One budget section of a render, after the cuts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SectionTokens {
    /// Its name (every block with that name is one section).
    pub name: String,
    /// Its priority: lower is cut first.
    pub priority: i64,
    /// Its blocks (items) left, and how many it had.
    pub items: usize,
    /// How many blocks the template printed.
    pub printed: usize,
    /// Its tokens left (each block's own count, summed).
    pub tokens: usize,
}

/// One cut a budget made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Cut {
    /// What was cut: `history`, or a section's name.
    pub part: String,
    /// How many messages (of the history).
    pub messages: usize,
    /// How many of a section's blocks were dropped whole.
    pub items: usize,
    /// Whether a section's last block left was cut short (at a token
    /// boundary).
    pub truncated: bool,
    /// How many tokens were cut.
    pub tokens: usize,
    /// Why, and by which rule.
    pub reason: String,
}
