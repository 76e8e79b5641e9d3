//! A file or its bytes → a compiled prompt: what kind of file it is, its
//! front matter, the files it may include, and the formats of other tools.

pub mod document;
pub(crate) mod formats;
pub(crate) mod include;
