//! What the Handlebars and mustache conformance tests share: running a case
//! through the public API, partials as inline partials, and the per-file
//! report. The runs: the mustache spec ([`mustache`]) and handlebars.js's
//! spec ([`handlebars`]).

mod handlebars;
mod mustache;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use teleprompt::{LoadOptions, Prompt, Strictness, Syntax};

/// How one case went.
pub enum Outcome {
    Skipped(&'static str),
    Passed,
    Failed(String),
    /// Differs on purpose, for this reason.
    Differs(&'static str),
    /// Listed as a difference, yet it passes: the list is stale.
    Stale,
}

/// Where the conformance data is: `TELEPROMPT_CONFORMANCE` when set, else
/// the first `shared/conformance` found going up from the workspace root's
/// parent: `../shared/conformance` from the root of a clone, and from a git
/// worktree kept in a folder beside the clone (`wt/NAME/`) too.
pub fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("TELEPROMPT_CONFORMANCE") {
        return PathBuf::from(dir);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    root.ancestors()
        .skip(1)
        .map(|dir| dir.join("shared/conformance"))
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| root.join("../shared/conformance"))
}

/// The JSON files of `<set>` in the conformance data ([`data_dir`]),
/// sorted, each as its file name and parsed content; `None` when the data
/// is not there (a clone without it).
pub fn files(set: &str) -> Option<Vec<(String, Value)>> {
    let dir = data_dir().join(set);
    let Ok(entries) = fs::read_dir(&dir) else {
        println!("no conformance data at {}: skipped", dir.display());
        return None;
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let files = files
        .iter()
        .map(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let text = fs::read_to_string(path).expect("readable conformance file");
            let json = serde_json::from_str(&text).expect("a JSON spec file");
            (name.to_string(), json)
        })
        .collect();
    Some(files)
}

/// Whether an expected output depends on HTML escaping.
pub fn escaped(expected: &str) -> bool {
    [
        "&amp;", "&lt;", "&gt;", "&quot;", "&#x27;", "&#39;", "&#x60;", "&#x3D;",
    ]
    .iter()
    .any(|entity| expected.contains(entity))
}

/// Partials as inline partial definitions to put before the template, each
/// on lines of its own so that the template's first line keeps its
/// standalone tags; `None` when a partial is not a string.
pub fn inline_partials(partials: Option<&Value>) -> Option<String> {
    let mut out = String::new();
    let Some(partials) = partials.and_then(Value::as_object) else {
        return Some(out);
    };
    for (name, partial) in partials {
        let partial = partial.as_str()?;
        // The opening tag stands alone on its line; so does the closing
        // tag: after the partial's own line break, or after one it strips
        // (`~`) when the partial ends without one. A partial that ends with
        // spaces keeps them: its closing tag follows them, and an empty
        // definition's closing tag stands alone on the next line.
        out.push_str(&format!("{{{{#*inline \"{name}\"}}}}\n{partial}"));
        if partial.is_empty() || partial.ends_with('\n') {
            out.push_str("{{/inline}}\n");
        } else if !partial.ends_with(char::is_whitespace) {
            out.push_str("\n{{~/inline}}\n");
        } else {
            out.push_str("{{/inline}}{{#*inline \"(line break)\"}}\n{{/inline}}\n");
        }
    }
    Some(out)
}

/// Renders a Handlebars body through the public API.
pub fn render(body: &str, data: Value, strict: Strictness) -> Result<String, String> {
    let options = LoadOptions::new()
        .with_syntax(Syntax::Handlebars)
        .with_strictness(strict);
    // An empty front matter keeps a body that starts with `---` a body.
    let source = format!("---\n---\n{body}");
    let prompt = Prompt::from_source("case.hbs", &source, &options)
        .map_err(|error| error.message().to_string())?;
    prompt
        .render(data)
        .map(|rendered| rendered.into_text())
        .map_err(|error| error.message().to_string())
}

/// Runs a file's cases, prints its counts (and with `HBS_VERBOSE` every
/// failure and difference), and adds to `failures` a pass count below
/// `floor` or a stale difference.
pub fn report(
    file: &str,
    cases: &[Value],
    label: impl Fn(&Value) -> String,
    run: impl Fn(&Value) -> Outcome,
    floor: Option<usize>,
    failures: &mut Vec<String>,
) {
    let verbose = std::env::var_os("HBS_VERBOSE").is_some();
    let (mut passed, mut ran, mut differ) = (0, 0, 0);
    let mut skipped: Vec<(&str, usize)> = Vec::new();
    for case in cases {
        match run(case) {
            Outcome::Skipped(reason) => match skipped.iter_mut().find(|(r, _)| *r == reason) {
                Some((_, n)) => *n += 1,
                None => skipped.push((reason, 1)),
            },
            Outcome::Passed => {
                passed += 1;
                ran += 1;
            }
            Outcome::Failed(detail) => {
                ran += 1;
                if verbose {
                    println!("FAIL {file} {}\n  {detail}", label(case));
                }
            }
            Outcome::Differs(why) => {
                differ += 1;
                if verbose {
                    println!("DIFFERS {file} {}\n  {why}", label(case));
                }
            }
            Outcome::Stale => failures.push(format!(
                "{file} {} passes: remove it from DIFFERENCES",
                label(case)
            )),
        }
    }
    let skips: Vec<String> = skipped.iter().map(|(r, n)| format!("{n} {r}")).collect();
    println!(
        "{file}: {passed} of {ran} run passed ({} cases; {differ} differ on purpose; skipped: {})",
        cases.len(),
        if skips.is_empty() {
            "none".to_string()
        } else {
            skips.join(", ")
        }
    );
    if let Some(floor) = floor.filter(|floor| passed < *floor) {
        failures.push(format!("{file}: {passed} passed, the floor is {floor}"));
    }
}
