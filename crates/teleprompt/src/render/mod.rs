//! A compiled prompt + data → text and messages.

pub(crate) mod request;
