//! Static analysis behind `teleprompt check` and `teleprompt inspect`: what
//! a template reads of its data, found on its parse tree without rendering.

pub(crate) mod chat;
mod inputs;

pub(crate) use inputs::dotted;
pub use inputs::{Inputs, Step};
