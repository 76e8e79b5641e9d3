//! Other tools' prompt files, read as those tools read them: each maps
//! its file onto a document and metadata (the prompt's own front-matter
//! keys), so the rest of the load never asks where a prompt came from.

pub(crate) mod dotprompt;
pub(crate) mod hf_tokenizer;
pub(crate) mod prompty;
pub(crate) mod semantic_kernel;
pub(crate) mod sortie;
