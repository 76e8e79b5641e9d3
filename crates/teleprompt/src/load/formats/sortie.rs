//! Sortie's (and Symphony's) `WORKFLOW.md`: YAML front matter for the
//! orchestrator, then a Go template body rendered once per issue. The
//! body's syntax comes from the file's name
//! ([`FileKind::SortieWorkflow`](crate::document::kind::FileKind)); the
//! names Sortie hands every render are named here.

/// Root names Sortie gives every render of a workflow file.
pub(crate) const ROOT_NAMES: &[&str] = &["issue"];
