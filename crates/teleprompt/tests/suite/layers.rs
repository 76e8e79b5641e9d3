//! The library's top-level modules depend one way (ARCHITECTURE.md,
//! "Layers"): no two of them reach each other, however indirectly. A
//! module that needs something from one above it is a sign the thing
//! belongs lower down. Read from the sources: every `crate::NAME` path
//! outside comments and `mod tests` blocks is an edge.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The top-level modules of `src`: its files and folders, `lib.rs` aside.
fn top_modules(src: &Path) -> BTreeSet<String> {
    let entries = fs::read_dir(src).expect("the library's src folder");
    entries
        .map(|entry| entry.expect("a folder entry").path())
        .filter_map(|path| {
            let stem = path.file_stem()?.to_str()?.to_string();
            let module = path.is_dir() || path.extension().is_some_and(|ext| ext == "rs");
            (module && stem != "lib").then_some(stem)
        })
        .collect()
}

/// The code of a source file: comments dropped, and everything from a
/// `#[cfg(test)] mod tests {` on (the tests come last in a file).
fn code_of(source: &str) -> String {
    let mut code = String::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests {"))
        {
            break;
        }
        let line = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// The first identifier of `text`.
fn ident(text: &str) -> &str {
    let text = text.trim_start();
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The top-level names `code` reaches through `crate::`: `crate::a::b`
/// names `a`, `crate::{a::b, c}` names `a` and `c`.
fn crate_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            names.push(ident(rest).to_string());
            continue;
        };
        // The items of the group, split at its own commas.
        let mut depth = 0;
        let mut start = 0;
        for (index, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    names.push(ident(&group[start..index]).to_string());
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    names.push(ident(&group[start..index]).to_string());
                    start = index + 1;
                }
                _ => {}
            }
        }
    }
    names
}

/// Every library source file under `dir`, the `tests` folders and
/// `tests.rs` files aside.
fn sources(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("a folder entry").path();
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("");
        if path.is_dir() {
            if name != "tests" {
                sources(&path, found);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            found.push(path);
        }
    }
}

/// Which top-level module uses which, with one place each edge comes from.
fn edges(src: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let modules = top_modules(src);
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src");
        let first = relative.components().next().expect("a path");
        let from = Path::new(first.as_os_str())
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or("")
            .to_string();
        if from == "lib" {
            continue;
        }
        let code = code_of(&fs::read_to_string(&file).expect("a readable source"));
        for to in crate_paths(&code) {
            if to != from && modules.contains(&to) {
                let place = relative.display().to_string();
                edges
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert(place);
            }
        }
    }
    edges
}

/// The modules `start` reaches, itself not included unless by a cycle.
fn reach(edges: &BTreeMap<String, BTreeMap<String, String>>, start: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![start.to_string()];
    while let Some(module) = stack.pop() {
        for next in edges.get(&module).into_iter().flat_map(BTreeMap::keys) {
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    seen
}

#[test]
fn the_top_level_modules_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    let mut cycles = Vec::new();
    for (from, uses) in &edges {
        for (to, place) in uses {
            if reach(&edges, to).contains(from) {
                cycles.push(format!(
                    "{from} → {to} (in {place}), and {to} reaches {from} back"
                ));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "modules that depend on each other:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_reader_sees_grouped_and_plain_paths() {
    let code = code_of(
        "use crate::{data::Data, options::Strictness};\n\
         use crate::limits::Limits; // crate::render in a comment\n\
         #[cfg(test)]\nmod tests {\n    use crate::prompt::Prompt;\n}\n",
    );
    assert_eq!(crate_paths(&code), ["data", "options", "limits"]);
}
