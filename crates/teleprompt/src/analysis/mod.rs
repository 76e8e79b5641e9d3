//! What is known of a template without rendering it, behind `teleprompt
//! check` and `teleprompt inspect`: what it reads of its data (found on
//! its parse tree) and how a chat template treats its messages. A loaded
//! prompt's warnings, which read the whole prompt, are `load::warnings`.

pub(crate) mod chat;
mod inputs;

pub(crate) use inputs::{dotted, MAX_PATH};
pub use inputs::{Inputs, Step};
