//! The suite's own layout: every file of `tests/suite/` is a module of it
//! (a file no `mod` names would compile into nothing and its tests would
//! never run), and `tests/` holds no other test binary.

use std::fs;
use std::path::Path;

/// The `.rs` files of `dir` that no `mod NAME;` of `parent` declares (a
/// folder counts as declared by `mod FOLDER;`, its `mod.rs` declaring its
/// files), recursively; as paths relative to `root`.
fn undeclared(root: &Path, dir: &Path, parent: &str, missing: &mut Vec<String>) {
    let declared = |name: &str| {
        parent
            .lines()
            .any(|line| line.trim() == format!("mod {name};"))
    };
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("a readable folder")
        .map(|entry| entry.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let shown = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if path.is_dir() {
            if !declared(&name) {
                missing.push(format!("{shown}/ (no `mod {name};`)"));
                continue;
            }
            let text = fs::read_to_string(path.join("mod.rs")).unwrap_or_default();
            undeclared(root, &path, &text, missing);
        } else if path.extension().is_some_and(|ext| ext == "rs")
            && name != "main"
            && name != "mod"
            && !declared(&name)
        {
            missing.push(format!("{shown} (no `mod {name};`)"));
        }
    }
}

#[test]
fn every_file_of_the_suite_is_one_of_its_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite");
    let main = fs::read_to_string(root.join("main.rs")).expect("tests/suite/main.rs");
    let mut missing = Vec::new();
    undeclared(&root, &root, &main, &mut missing);
    assert!(
        missing.is_empty(),
        "files of tests/suite that are no module of the suite (their tests do not run):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_suite_is_the_only_test_binary() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut others: Vec<String> = fs::read_dir(&tests)
        .expect("tests/")
        .map(|entry| entry.expect("a folder entry").path())
        .filter(|path| {
            let file = path.extension().is_some_and(|ext| ext == "rs");
            let folder = path.join("main.rs").is_file() && !path.ends_with("suite");
            file || folder
        })
        .map(|path| path.display().to_string())
        .collect();
    others.sort();
    assert!(
        others.is_empty(),
        "tests/ holds other test binaries; make each a module of tests/suite \
         (one binary links once):\n{}",
        others.join("\n")
    );
}
