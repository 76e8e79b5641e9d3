//! No input may panic the loader or the renderer: a deterministic stream of
//! mangled prompts goes through `Prompt::from_source` and `render`.

use teleprompt::{ErrorClass, LoadOptions, Prompt, Strictness, Syntax};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const PIECES: &[&str] = &[
    "---\n",
    "---",
    "\r\n",
    "\n",
    "\u{feff}",
    "name: x\n",
    "strict: lenient\n",
    "strict: 7\n",
    "input:\n  default:\n    a.b: 1\n",
    "syntax: jinja\n",
    "on_error: original\n",
    "- a\n",
    "key: [unclosed\n",
    "{{",
    "}}",
    "{%",
    "%}",
    "{#",
    "#}",
    "{{ a.b }}",
    "{{ a | upper }}",
    "{{ a | nope }}",
    "{% if a %}",
    "{% endif %}",
    "{% for x in a %}",
    "{% endfor %}",
    "{% autoescape off %}",
    "{% endautoescape %}",
    "{{ x.y.z }}",
    "{{ range(3) }}",
    "é",
    "\t",
    "{{ 'str' ",
    "{% raw %}",
    "{% endraw %}",
    "{{ a[0] }}",
    "{{ a[-1] }}",
    "{{ a | tojson }}",
    "{% set a = 1 %}",
    "{% macro m() %}",
    "{% endmacro %}",
    "{{ m() }}",
    " ",
    "x",
    "{% generation %}",
    "{% endgeneration %}",
    "{{ a | tojson(indent=2, sort_keys=true) }}",
    "{{ a | indent(4, true) }}",
    "{{ strftime_now('%d %B %Y') }}",
    "{% if f is defined %}{{ f() }}{% endif %}",
    "{{ raise_exception('no') }}",
    "{{ a|default:\"x\" }}",
    "{{ forloop.Counter }}",
    "{% empty %}",
    "{% ifequal a 1 %}",
    "{% endifequal %}",
    "{% firstof a x \"z\" %}",
    "{{ 1.5 }}{{ none }}{{ [1, 'a'] }}",
    "jinja:\n  trim_blocks: true\n",
];

#[test]
fn mangled_prompts_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let data = serde_json::json!({"a": {"b": [1, "two", null, {"c": 3.5}]}, "x": {"y": {}}});
    for case in 0..6000 {
        let length = rng.below(12);
        let source: String = (0..length)
            .map(|_| PIECES[rng.below(PIECES.len())])
            .collect();
        let strict = [Strictness::Strict, Strictness::Semi, Strictness::Lenient][case % 3];
        let syntax = [Syntax::Jinja, Syntax::ChatTemplate, Syntax::Django][(case / 3) % 3];
        let options = LoadOptions::new()
            .with_syntax(syntax)
            .with_strictness(strict);
        if let Ok(prompt) = Prompt::from_source("fuzz.md", &source, &options) {
            if let Err(error) = prompt.render(data.clone()) {
                // Reports must build for any error, too.
                assert!(!error.report().is_empty());
            }
        } else if let Err(error) = Prompt::from_source("fuzz.md", &source, &options) {
            assert!(!error.report().is_empty(), "{source:?}");
        }
    }
}

/// A fresh directory under the target dir for one test.
fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("robustness")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A prompt file larger than `limits.max_template_bytes` is an `io` error
/// naming the file and the limit; one at the limit loads.
#[test]
fn prompt_files_stop_at_the_template_limit() {
    use teleprompt::limits::Limits;
    let dir = tempdir("template-limit");
    let path = dir.join("p.j2");
    std::fs::write(&path, "Hi {{ who }}\n").unwrap(); // 13 bytes
    let options = |bytes| {
        LoadOptions::new().with_limits(Limits {
            max_template_bytes: bytes,
            ..Limits::default()
        })
    };
    assert!(Prompt::from_file_with(&path, &options(13)).is_ok());
    let error = Prompt::from_file_with(&path, &options(12)).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Io);
    assert_eq!(error.file(), Some(path.to_str().unwrap()));
    assert_eq!(
        error.message(),
        "the file is larger than 12 bytes, the limit for prompt files"
    );
    assert!(error.suggestion().unwrap().contains("max_template_bytes"));

    // An endless device stops at the default limit, quickly.
    if std::path::Path::new("/dev/zero").exists() {
        let started = std::time::Instant::now();
        let error = Prompt::from_file("/dev/zero").unwrap_err();
        assert_eq!(
            error.message(),
            "the file is larger than 16 MiB, the limit for prompt files"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}

/// Data files: bounded like prompt files; bytes that are not UTF-8 are an
/// `input` error at the first bad byte.
#[test]
fn data_files_are_bounded_text() {
    let dir = tempdir("data-limit");
    let path = dir.join("d.yaml");
    std::fs::write(&path, b"a: 1\nb: \"\xc3\xa9\xc3\"\n").unwrap();
    let error = teleprompt::data::read_file(&path, 1024).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Input);
    assert_eq!(
        error.location().map(|at| (at.line, at.column)),
        Some((2, 6))
    );
    assert!(error
        .message()
        .starts_with("the data is not UTF-8 text (byte 0xC3 at offset 11)"));

    std::fs::write(&path, "a: 1\n").unwrap();
    assert_eq!(
        teleprompt::data::read_file(&path, 5).unwrap(),
        serde_json::json!({"a": 1})
    );
    let error = teleprompt::data::read_file(&path, 4).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Io);
    assert_eq!(
        error.message(),
        "the file is larger than 4 bytes, the limit for data files"
    );
}

/// JSON data refuses a duplicate key as YAML data does, with the path of
/// its mapping and its line; equal keys in different mappings are fine.
#[test]
fn duplicate_json_keys_are_refused_like_yaml_ones() {
    use teleprompt::data::{parse_text, Format};
    let text = "{\"items\": [\n  {\"id\": 1},\n  {\"id\": 2, \"id\": 3}\n]}";
    let error = parse_text(text, Some(Format::Json), "d.json").unwrap_err();
    assert_eq!(error.class(), ErrorClass::Input);
    assert_eq!(
        error.message(),
        "invalid JSON: duplicate key \"id\" in items[1] (a key may appear once in a mapping)"
    );
    assert_eq!(error.location().map(|at| at.line), Some(3));
    let yaml = "items:\n  - id: 1\n  - id: 2\n    id: 3\n";
    let error = parse_text(yaml, Some(Format::Yaml), "d.yaml").unwrap_err();
    assert_eq!(
        error.message(),
        "invalid YAML: duplicate key \"id\" in items[1] (a key may appear once in a mapping)"
    );
    assert_eq!(error.location().map(|at| at.line), Some(4));
    // Front matter is YAML too.
    let error = Prompt::from_source(
        "p.j2",
        "---\nname: a\nname: b\n---\nHi\n",
        &LoadOptions::default(),
    )
    .unwrap_err();
    assert_eq!(error.class(), ErrorClass::Document);
    assert!(
        error.message().contains("duplicate key \"name\""),
        "{error}"
    );
    assert!(parse_text("{\"a\": {\"id\": 1}, \"b\": {\"id\": 1}}", None, "-").is_ok());
}

/// YAML aliases are budgeted by what they expand to, not by how many there
/// are: many aliases of one anchor are ordinary YAML; a "billion laughs"
/// (anchors of aliases of anchors) stops early with an `input` error.
#[test]
fn yaml_aliases_are_budgeted_by_expansion() {
    use teleprompt::data::{parse_text, Format};
    let parse = |text: &str| parse_text(text, Some(Format::Yaml), "d.yaml");

    let mut ordinary = String::from("base: &base {model: gpt, temperature: 0.2}\nname: &n Ada\n");
    for i in 0..100 {
        ordinary.push_str(&format!("step{i}: {{settings: *base, who: *n}}\n"));
    }
    let value = parse(&ordinary).unwrap();
    assert_eq!(value["step99"]["settings"]["model"], "gpt");
    assert_eq!(value["step0"]["who"], "Ada");

    // More aliases than serde-saphyr's default count (50,000), each small.
    let mut many = String::from("x: &x 1\nl: [");
    many.push_str(&"*x,".repeat(60_000));
    many.push_str("*x]\n");
    assert_eq!(
        parse(&many).unwrap()["l"].as_array().map(Vec::len),
        Some(60_001)
    );

    // Merge keys are aliases too.
    let merged = parse("d: &d {a: 1, b: 2}\ne: {<<: *d, b: 3}\n").unwrap();
    assert_eq!(merged["e"], serde_json::json!({"a": 1, "b": 3}));

    let mut laughs = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for level in 1..10 {
        let alias = format!("*a{}", level - 1);
        laughs.push_str(&format!(
            "a{level}: &a{level} [{}]\n",
            vec![alias; 9].join(", ")
        ));
    }
    let started = std::time::Instant::now();
    let error = parse(&laughs).unwrap_err();
    let took = started.elapsed();
    println!("billion laughs refused in {took:?}");
    assert_eq!(error.class(), ErrorClass::Input);
    assert_eq!(
        error.message(),
        "invalid YAML: its aliases expand to more than 250000 values beyond the file's own (an alias bomb?)"
    );
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");

    // Few values, but long ones: 200 aliases of a 1 MiB string.
    let long = format!(
        "a: &a \"{}\"\nb: [{}]\n",
        "x".repeat(1 << 20),
        vec!["*a"; 200].join(",")
    );
    let error = parse(&long).unwrap_err();
    assert_eq!(
        error.message(),
        "invalid YAML: its aliases expand to more than 64 MiB of text beyond the file's own (an alias bomb?)"
    );
}

// --- the workspace: reads stay inside it and never block --------------------------

/// Runs `work` on a thread and waits at most `seconds` for it: a read that
/// blocks fails the test instead of hanging the suite.
#[cfg(unix)]
fn within<T: Send + 'static>(seconds: u64, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(work()));
    result
        .recv_timeout(std::time::Duration::from_secs(seconds))
        .expect("finishes in time: nothing blocks")
}

#[cfg(unix)]
fn mkfifo(path: &std::path::Path) -> bool {
    std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|status| status.success())
}

#[cfg(unix)]
fn workspace(dir: &std::path::Path) -> teleprompt::context::Workspace {
    teleprompt::context::Workspace::new(dir).max_depth(3)
}

/// A README that is a link to a file outside the workspace is not read:
/// an `io` error names where it leads, and its text is in no value.
#[test]
#[cfg(unix)]
fn a_readme_linked_outside_the_workspace_is_not_read() {
    use std::os::unix::fs::symlink;
    let dir = tempdir("ws-link-out");
    let root = dir.join("repo");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(dir.join("secret.txt"), "API_KEY=sk-123\n").unwrap();
    symlink(dir.join("secret.txt"), root.join("README.md")).unwrap();
    let error = workspace(&root).readme().unwrap_err();
    assert_eq!(error.class(), ErrorClass::Io);
    assert!(
        error
            .message()
            .starts_with("the workspace README README.md leads outside the workspace (to "),
        "{error}"
    );
    assert!(!error.report().contains("sk-123"));

    // A relative link that climbs out, and a chain of links whose last
    // step leads out, are refused the same way.
    std::fs::remove_file(root.join("README.md")).unwrap();
    symlink("../secret.txt", root.join("README.md")).unwrap();
    assert!(workspace(&root)
        .readme()
        .unwrap_err()
        .message()
        .contains("leads outside"));
    std::fs::remove_file(root.join("README.md")).unwrap();
    symlink("../secret.txt", root.join("hop")).unwrap();
    symlink("hop", root.join("README.md")).unwrap();
    assert!(workspace(&root)
        .readme()
        .unwrap_err()
        .message()
        .contains("leads outside"));

    // The process environment (API keys) through /proc.
    if std::path::Path::new("/proc/self/environ").exists() {
        std::fs::remove_file(root.join("README.md")).unwrap();
        symlink("/proc/self/environ", root.join("README.md")).unwrap();
        let error = workspace(&root).readme().unwrap_err();
        assert!(
            error
                .message()
                .contains("leads outside the workspace (to /proc/"),
            "{error}"
        );
        let path = std::env::var("PATH").unwrap_or_default();
        assert!(path.is_empty() || !error.report().contains(&path));
    }
}

/// Links that stay inside the workspace are followed; a link to nothing
/// is no README.
#[test]
#[cfg(unix)]
fn a_readme_linked_inside_the_workspace_is_read() {
    use std::os::unix::fs::symlink;
    let root = tempdir("ws-link-in");
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/README.md"), "# Inside\n").unwrap();
    symlink("docs/README.md", root.join("README.md")).unwrap();
    assert_eq!(workspace(&root).readme().unwrap(), "# Inside\n");
    // Through a linked directory of the workspace, too.
    symlink("docs", root.join("manual")).unwrap();
    let through = teleprompt::context::Workspace::new(&root).readme_file("manual/README.md");
    assert_eq!(through.readme().unwrap(), "# Inside\n");
    std::fs::remove_file(root.join("README.md")).unwrap();
    symlink("docs/nothing.md", root.join("README.md")).unwrap();
    assert_eq!(workspace(&root).readme().unwrap(), "");
    // A workspace reached through a link is still itself.
    let alias = tempdir("ws-link-in-alias");
    std::fs::remove_dir(&alias).unwrap();
    symlink(&root, &alias).unwrap();
    std::fs::remove_file(root.join("README.md")).unwrap();
    symlink("docs/README.md", root.join("README.md")).unwrap();
    assert_eq!(workspace(&alias).readme().unwrap(), "# Inside\n");
}

/// A named pipe, a directory or a device named README.md is refused at
/// once, never opened: a render does not block on it.
#[test]
#[cfg(unix)]
fn a_readme_that_is_not_a_file_never_blocks() {
    let root = tempdir("ws-fifo");
    if !mkfifo(&root.join("README.md")) {
        return;
    }
    let ws = workspace(&root);
    let error = within(10, move || ws.readme()).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Io);
    assert_eq!(
        error.message(),
        "the workspace README README.md is a named pipe, not a regular file: it is not read"
    );
    std::fs::remove_file(root.join("README.md")).unwrap();
    std::fs::create_dir(root.join("README.md")).unwrap();
    assert!(workspace(&root)
        .readme()
        .unwrap_err()
        .message()
        .contains("is a directory"));
    if std::path::Path::new("/dev/zero").exists() {
        // A device inside the workspace is refused; a link to one leads out.
        std::fs::remove_dir(root.join("README.md")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("README.md")).unwrap();
        let ws = workspace(&root);
        assert!(within(10, move || ws.readme()).is_err());
    }
}

/// The file list never follows a link, and ignore files that are pipes,
/// devices or links out are skipped (as if absent), never read.
#[test]
#[cfg(unix)]
fn the_file_list_stays_inside_and_never_blocks() {
    use std::os::unix::fs::symlink;
    let dir = tempdir("ws-files");
    let root = dir.join("repo");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("elsewhere/deep")).unwrap();
    std::fs::write(root.join("src/main.rs"), "").unwrap();
    std::fs::write(root.join("debug.log"), "").unwrap();
    symlink(dir.join("elsewhere"), root.join("escape")).unwrap();
    symlink("src", root.join("source")).unwrap();
    // An ignore file that is a link inside the workspace is honoured.
    std::fs::write(root.join("src/ignore-rules"), "*.log\n").unwrap();
    symlink("src/ignore-rules", root.join(".gitignore")).unwrap();
    let files = workspace(&root).files().unwrap();
    assert_eq!(
        files,
        [
            "escape",
            "source",
            "src/",
            "src/ignore-rules",
            "src/main.rs"
        ]
    );

    // A named pipe as .gitignore, and /dev/zero as .ignore: skipped.
    std::fs::remove_file(root.join(".gitignore")).unwrap();
    if mkfifo(&root.join(".gitignore")) {
        if std::path::Path::new("/dev/zero").exists() {
            symlink("/dev/zero", root.join(".ignore")).unwrap();
        }
        let ws = workspace(&root);
        let files = within(10, move || ws.files()).unwrap();
        assert_eq!(
            files,
            [
                "debug.log",
                "escape",
                "source",
                "src/",
                "src/ignore-rules",
                "src/main.rs"
            ]
        );
    }
}

/// A history read by the library refuses duplicate keys as data does.
#[test]
fn a_history_with_a_duplicate_key_is_refused() {
    let error = teleprompt::messages::parse_history(
        r#"[{"role": "user", "content": "a", "role": "system"}]"#,
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("duplicate key \"role\" in [0]"),
        "{error}"
    );
}

/// Found by the `jinja_template` fuzz target: `toJSON` with a huge indent
/// built the indent string before anything was printed and aborted on the
/// allocation.
#[test]
fn a_huge_to_json_indent_is_the_output_limit() {
    let load = |body: &str| {
        let options = LoadOptions::new().with_syntax(Syntax::Jinja);
        Prompt::from_source("t.j2", body, &options).unwrap()
    };
    // No item goes on a line of its own: the indent is never written.
    let scalar = load("{{ 'a'|toJSON(1e13) }} {{ []|toJSON(indent=10000000000000) }}");
    assert_eq!(
        scalar.render(serde_json::json!({})).unwrap().text(),
        "\"a\" []"
    );
    let list = load("{{ [1, {'k': [2]}]|toJSON(10000000000000) }}");
    let error = list.render(serde_json::json!({})).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Render, "{error}");
    let small = load("{{ [1]|toJSON(2) }}");
    assert_eq!(
        small.render(serde_json::json!({})).unwrap().text(),
        "[\n  1\n]"
    );
}

/// Found by the `render_data` fuzz target: a dotted key of 100,000 parts
/// (`--set`, args, front matter defaults) built data 100,000 deep, which
/// overflowed the stack when it was copied or dropped.
#[test]
fn a_dotted_key_of_many_parts_stays_one_key() {
    use teleprompt::data::{insert_dotted, MAX_DOTTED_PARTS};
    let mut map = serde_json::Map::new();
    let deep = "a.".repeat(100_000) + "b";
    insert_dotted(&mut map, &deep, serde_json::json!(1), true);
    assert_eq!(map.get(&deep), Some(&serde_json::json!(1)));
    let limit = vec!["k"; MAX_DOTTED_PARTS].join(".");
    insert_dotted(&mut map, &limit, serde_json::json!(2), true);
    let mut value = &serde_json::Value::Object(map.clone());
    for _ in 0..MAX_DOTTED_PARTS {
        value = &value["k"];
    }
    assert_eq!(value, &serde_json::json!(2));
    let context = teleprompt::PromptContext::new().args(serde_json::json!({ deep.clone(): 1 }));
    drop(context.unwrap());
}

/// Found by the `jinja_template` fuzz target: `replace` on a value that is
/// not a string (a list, read as its text) skipped the size check and
/// built gigabytes.
#[test]
fn replace_on_a_list_is_checked_like_on_a_string() {
    // Timed (1 s): not beside the suite's heavy tests.
    let _alone = crate::common::exclusive();
    let options = LoadOptions::new().with_syntax(Syntax::Jinja);
    let body = r#"{{ ("ax" * 1000)|list|replace("x", "y" * 10000000)|length }}"#;
    let prompt = Prompt::from_source("t.j2", body, &options).unwrap();
    let started = std::time::Instant::now();
    let error = prompt.render(serde_json::json!({})).unwrap_err();
    assert_eq!(error.class(), ErrorClass::Render, "{error}");
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    let small = Prompt::from_source("t.j2", "{{ [1, 2]|replace('1', 'one') }}", &options).unwrap();
    assert_eq!(
        small.render(serde_json::json!({})).unwrap().text(),
        "[one, 2]"
    );
}

/// Found by the go_template fuzz target (its input as it was, in
/// `tests/data/fuzz/`): front matter whose lines end in bare carriage
/// returns put a YAML error's column past the end of a long line, and
/// showing that line underflowed.
#[test]
fn a_front_matter_error_past_the_end_of_a_long_line_is_reported() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fuzz/front_matter_bare_cr.gotmpl");
    let source = std::fs::read_to_string(path).expect("the input");
    let options = LoadOptions::new()
        .with_syntax(Syntax::Go)
        .with_strictness(Strictness::Lenient);
    let error = Prompt::from_source("fuzz.gotmpl", &source, &options).expect_err("not YAML");
    assert_eq!(error.class(), ErrorClass::Document, "{error}");
    assert!(error.location().is_some(), "{error}");
    let _ = error.report();
}
