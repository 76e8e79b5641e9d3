//! The library's integration tests, as one test binary: each area is a
//! module of this crate (a folder groups the modules of one area), so the
//! library and its dependencies are linked into one executable instead of
//! one per file. `tests/README.md` describes the layout, the fixtures and
//! how to bless them.
//!
//! The tests share one process: what used to be isolated by separate
//! binaries is not any more. No test sets an environment variable or
//! changes the current folder; each writes its files in a folder of its
//! own under `CARGO_TARGET_TMPDIR`; the tests that take most of the
//! machine or assert a wall-clock time hold [`common::exclusive`], so
//! they never run at the same time as one another.
//!
//! Run one area with a filter: `cargo test -p teleprompt --test suite
//! hostile::` (or `fixtures::`, `conformance::`, …).

mod append_only;
#[cfg(feature = "tokens")]
mod budget;
mod cache_breakpoints;
mod common;
mod conformance;
mod context;
mod data_fidelity;
mod deep_templates;
mod examples;
mod fixtures;
mod history_append;
mod host_functions;
mod hostile;
mod includes;
mod inputs;
mod kept_data;
mod layers;
mod library;
#[cfg(feature = "tokens")]
mod prefix_stability;
mod public_api;
mod reload;
mod robustness;
mod roles;
mod schema;
mod source_maps;
mod suite_layout;
#[cfg(feature = "tokens")]
mod token_cache;
#[cfg(feature = "tokens")]
mod tokens;
