//! The library's public API, item by item, against the checked-in listing
//! `crates/teleprompt/public-api.txt`, so that every change to it is
//! deliberate: a new, renamed or removed public item fails this test
//! until the listing says so too (`TELEPROMPT_BLESS=1` rewrites it;
//! review the change with `git diff`).
//!
//! The listing comes from rustdoc's JSON output of the crate (default
//! features), which the stable toolchain gives with `RUSTC_BOOTSTRAP=1`,
//! built into a target folder of its own. The same run is the docs'
//! lint: a public item without docs or a broken doc link fails it. One
//! line an item: modules, types, functions, constants, traits and macros
//! by their public path;
//! a struct's public fields, an enum's variants, the inherent methods of
//! a type and the traits it implements by name, and which types are
//! `#[non_exhaustive]` (signatures are not compared).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::blessing;

#[test]
fn the_public_api_is_the_listing() {
    let _alone = crate::common::exclusive();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("public-api");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["rustdoc", "--quiet", "--lib", "--manifest-path"])
        .arg(manifest.join("Cargo.toml"))
        .args(["--", "-Z", "unstable-options", "--output-format", "json"])
        // The same run checks the docs: every public item documented,
        // every doc link resolving.
        .args(["-D", "missing_docs", "-D", "warnings"])
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "rustdoc failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json = std::fs::read_to_string(target.join("doc/teleprompt.json")).expect("rustdoc JSON");
    let doc: Value = serde_json::from_str(&json).expect("rustdoc JSON parses");
    let listing = Listing::of(&doc);

    let expected_file = manifest.join("public-api.txt");
    let actual = listing.text();
    if blessing() {
        std::fs::write(&expected_file, &actual).expect("the listing is writable");
        return;
    }
    let expected = std::fs::read_to_string(&expected_file).unwrap_or_default();
    if expected != actual {
        let before: BTreeSet<&str> = expected.lines().collect();
        let after: BTreeSet<&str> = actual.lines().collect();
        let gone: Vec<&&str> = before.difference(&after).collect();
        let new: Vec<&&str> = after.difference(&before).collect();
        panic!(
            "the public API differs from public-api.txt\n  removed: {gone:#?}\n  added: {new:#?}\n\
             If the change is meant, run with TELEPROMPT_BLESS=1 and review it with git diff."
        );
    }
    let root_items = listing
        .lines
        .iter()
        .filter(|line| !line.starts_with("impl "))
        .filter(|line| {
            line.split(' ')
                .nth(1)
                .is_some_and(|path| path.matches("::").count() == 1)
        })
        .count();
    assert!(
        root_items <= 40,
        "the crate root holds {root_items} items: the front door is for what a host needs"
    );
}

/// The lines of the listing, sorted.
struct Listing<'d> {
    index: &'d serde_json::Map<String, Value>,
    lines: BTreeSet<String>,
}

impl<'d> Listing<'d> {
    fn of(doc: &'d Value) -> Listing<'d> {
        let index = doc["index"].as_object().expect("an index");
        let mut listing = Listing {
            index,
            lines: BTreeSet::new(),
        };
        let root = &index[&doc["root"].to_string()];
        listing.module(root, "teleprompt", &mut Vec::new());
        listing
    }

    fn text(&self) -> String {
        let mut text = String::new();
        for line in &self.lines {
            text.push_str(line);
            text.push('\n');
        }
        text
    }

    fn item(&self, id: &Value) -> Option<&'d Value> {
        self.index.get(&id.to_string())
    }

    /// The public items of `module`, under `path`; `seen` stops a module
    /// re-exported into itself from recursing forever.
    fn module(&mut self, module: &'d Value, path: &str, seen: &mut Vec<String>) {
        let id = module["id"].to_string();
        if seen.contains(&id) {
            return;
        }
        seen.push(id);
        let items = module["inner"]["module"]["items"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for child in &items {
            let Some(item) = self.item(child) else {
                continue;
            };
            if item["visibility"] != "public" {
                continue;
            }
            if let Some(import) = item["inner"].get("use") {
                let name = import["name"].as_str().unwrap_or("?");
                if import["is_glob"] == true {
                    self.lines.insert(format!(
                        "use {path}::* = {}",
                        import["source"].as_str().unwrap_or("?")
                    ));
                    continue;
                }
                match self.item(&import["id"]) {
                    Some(target) => self.named(target, &format!("{path}::{name}"), seen),
                    None => {
                        self.lines.insert(format!(
                            "use {path}::{name} = {}",
                            import["source"].as_str().unwrap_or("?")
                        ));
                    }
                }
                continue;
            }
            let name = item["name"].as_str().unwrap_or("?");
            self.named(item, &format!("{path}::{name}"), seen);
        }
        seen.pop();
    }

    /// `item` under its public `path`, with its members.
    fn named(&mut self, item: &'d Value, path: &str, seen: &mut Vec<String>) {
        let Some((kind, inner)) = item["inner"]
            .as_object()
            .and_then(|inner| inner.iter().next())
        else {
            return;
        };
        // Whether outside code may build or match the item exhaustively
        // is part of the API too.
        let non_exhaustive = item["attrs"].as_array().is_some_and(|attrs| {
            attrs
                .iter()
                .any(|attr| attr.to_string().contains("non_exhaustive"))
        });
        let mark = if non_exhaustive {
            " #[non_exhaustive]"
        } else {
            ""
        };
        self.lines.insert(format!("{kind} {path}{mark}"));
        match kind.as_str() {
            "module" => self.module(item, path, seen),
            "struct" => {
                if let Some(fields) = inner["kind"]["plain"]["fields"].as_array() {
                    let index = self.index;
                    for field in fields.iter().filter_map(|id| index.get(&id.to_string())) {
                        if field["visibility"] == "public" {
                            let name = field["name"].as_str().unwrap_or("?");
                            self.lines.insert(format!("field {path}::{name}"));
                        }
                    }
                }
                self.impls(inner, path);
            }
            "enum" => {
                for variant in inner["variants"].as_array().into_iter().flatten() {
                    if let Some(name) = self.item(variant).and_then(|v| v["name"].as_str()) {
                        self.lines.insert(format!("variant {path}::{name}"));
                    }
                }
                self.impls(inner, path);
            }
            "trait" => {
                for member in inner["items"].as_array().into_iter().flatten() {
                    if let Some(name) = self.item(member).and_then(|m| m["name"].as_str()) {
                        self.lines.insert(format!("trait-item {path}::{name}"));
                    }
                }
            }
            _ => {}
        }
    }

    /// A type's inherent public methods and constants, and the traits it
    /// implements (not the auto traits and blanket impls the compiler adds).
    fn impls(&mut self, inner: &Value, path: &str) {
        for block in inner["impls"].as_array().into_iter().flatten() {
            let Some(block) = self.item(block).map(|b| &b["inner"]["impl"]) else {
                continue;
            };
            if block["is_synthetic"] == true || !block["blanket_impl"].is_null() {
                continue;
            }
            match block["trait"]["path"].as_str() {
                Some(name) => {
                    self.lines.insert(format!("impl {path}: {name}"));
                }
                None => {
                    for member in block["items"].as_array().into_iter().flatten() {
                        let Some(member) = self.item(member) else {
                            continue;
                        };
                        if member["visibility"] != "public" {
                            continue;
                        }
                        let kind = member["inner"]
                            .as_object()
                            .and_then(|inner| inner.keys().next().cloned())
                            .unwrap_or_default();
                        let name = member["name"].as_str().unwrap_or("?");
                        self.lines.insert(format!("{kind} {path}::{name}"));
                    }
                }
            }
        }
    }
}
