//! Issue 29, part 3: files that include one another in a long chain, each
//! also a prompt of the folder (`check DIR`, `serve DIR`). Every prompt of
//! a chain loads the rest of it, so a chain of n files cost a library
//! n²/2 file loads (400 Jinja files: 6.9 s and 906 MB). Files nested past
//! `max_call_depth` can never render, and their load now stops there with
//! an error that names the bound: a library's cost is at most
//! `max_call_depth` loads a prompt, linear in its files.

use std::path::{Path, PathBuf};
use std::time::Instant;

use teleprompt::{ErrorClass, Library, LoadOptions};

use super::budget;

/// The chain length: four times the default `max_call_depth` (100).
const FILES: usize = 400;

fn chain(name: &str, extension: &str, line: impl Fn(usize) -> String, last: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("hostile-chains")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    for i in 0..FILES {
        std::fs::write(dir.join(format!("c{i}.{extension}")), line(i)).expect("write");
    }
    std::fs::write(dir.join(format!("c{FILES}.{extension}")), last).expect("write");
    dir
}

/// Loads the folder: how many prompts failed, and how long it took.
fn load(dir: &Path) -> (usize, std::time::Duration) {
    let _alone = crate::common::exclusive();
    let started = Instant::now();
    let result = Library::load_dir(dir, &LoadOptions::default());
    let elapsed = started.elapsed();
    let errors = result.expect_err("the deep prompts fail").0;
    for error in &errors {
        assert_eq!(error.class(), ErrorClass::Parse, "{error}");
        assert!(
            error
                .to_string()
                .contains("more than 100 deep (the limit max_call_depth)"),
            "{error}"
        );
    }
    (errors.len(), elapsed)
}

fn check(name: &str, extension: &str, line: impl Fn(usize) -> String, last: &str) {
    let dir = chain(name, extension, line, last);
    let (failed, elapsed) = load(&dir);
    // c0 … c299 include 100 files or more below them, each (placed at
    // the call 100 deep); the last 101 load.
    assert_eq!(failed, FILES - 100, "{name}");
    assert!(
        elapsed < budget() * 2,
        "{name}: {FILES} chained files took {elapsed:.2?}"
    );
}

#[test]
fn a_chain_of_jinja_includes_stops_at_the_call_depth() {
    check(
        "jinja",
        "j2",
        |i| format!("line {i} {{{{ name }}}} {{% include \"c{}.j2\" %}}", i + 1),
        "end",
    );
}

#[test]
fn a_chain_of_handlebars_partials_stops_at_the_call_depth() {
    check(
        "handlebars",
        "hbs",
        |i| format!("line {i} {{{{name}}}} {{{{> c{}}}}}", i + 1),
        "end",
    );
}

#[test]
fn a_chain_of_go_template_files_stops_at_the_call_depth() {
    check(
        "go",
        "tmpl",
        |i| {
            format!(
                "line {i} {{{{.name}}}} {{{{template \"c{}.tmpl\" .}}}}",
                i + 1
            )
        },
        "end",
    );
}
