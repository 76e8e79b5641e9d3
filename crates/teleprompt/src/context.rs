//! The prompt context: what a host knows about a turn, turned into [`crate::Data`].
