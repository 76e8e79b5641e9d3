//! What is known of a prompt without rendering it, behind `teleprompt
//! check` and `teleprompt inspect`: what a template reads of its data
//! (found on its parse tree), how a chat template treats its messages, and
//! a prompt's warnings.

pub(crate) mod chat;
mod inputs;
mod warnings;

pub(crate) use inputs::dotted;
pub use inputs::{Inputs, Step};
pub(crate) use warnings::{prompt_inputs, warnings};
