//! Issue 29, part 4: one confinement rule for every file a file names
//! (`teleprompt::limits::read_inside`, the rule of includes): no `..`, no
//! absolute path, no symbolic link out of the folder, regular files only
//! (a FIFO is refused at once, never waited on), size-bounded; and data
//! that does not parse is named with its line and column, never quoted.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use teleprompt::data::{parse_text, Format};
use teleprompt::limits::{read_inside, Input};
use teleprompt::Prompt;

fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("hostile-confine")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn refused(root: &Path, name: &str) -> String {
    match read_inside(root, name, 1024, Input::Data) {
        Ok((relative, _)) => format!("read {}", relative.display()),
        Err(error) => format!("{error}"),
    }
}

#[test]
fn names_leaving_the_folder_are_refused() {
    let root = tempdir("names");
    let dir = root.join("in");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(root.join("secret.txt"), "SECRET-OUTSIDE").unwrap();
    std::fs::write(dir.join("sub/ok.json"), "{}").unwrap();
    assert_eq!(refused(&dir, "./sub/ok.json"), "read sub/ok.json");
    for name in [
        "../secret.txt",
        "sub/../../secret.txt",
        "sub/../ok.json",
        "/proc/self/environ",
        "/etc/passwd",
        "",
    ] {
        let error = refused(&dir, name);
        assert!(!error.starts_with("read "), "{name:?} was read");
        assert!(!error.contains("SECRET-OUTSIDE"), "{error}");
    }
    // A folder is not a file.
    assert!(refused(&dir, "sub").contains("folder"));
    // Over the bound: refused unread.
    std::fs::write(dir.join("huge.json"), "x".repeat(4096)).unwrap();
    let error = refused(&dir, "huge.json");
    assert!(error.contains("max-data-bytes"), "{error}");
}

#[cfg(unix)]
#[test]
fn links_out_and_fifos_are_refused_without_blocking() {
    let root = tempdir("links");
    let dir = root.join("in");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(root.join("secret.txt"), "SECRET-OUTSIDE").unwrap();
    std::os::unix::fs::symlink("../secret.txt", dir.join("out.json")).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", dir.join("env.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.json")).unwrap();
    for name in ["out.json", "env.json", "zero.json"] {
        let error = refused(&dir, name);
        assert!(
            error.contains("leads outside its folder"),
            "{name}: {error}"
        );
    }
    // A link that stays inside is followed.
    std::fs::write(dir.join("real.json"), "{}").unwrap();
    std::os::unix::fs::symlink("real.json", dir.join("alias.json")).unwrap();
    assert_eq!(refused(&dir, "alias.json"), "read alias.json");
    // A FIFO no one writes to.
    let fifo = dir.join("fifo.json");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let (send, receive) = std::sync::mpsc::channel();
    let in_thread = dir.clone();
    std::thread::spawn(move || {
        let _ = send.send(refused(&in_thread, "fifo.json"));
    });
    let error = receive
        .recv_timeout(Duration::from_secs(20))
        .expect("reading a FIFO blocks");
    assert!(error.contains("not a regular file"), "{error}");
}

/// The `tokenizer_config.json` beside a `chat_template.jinja` gives its
/// special tokens only when it is a file of the folder.
#[cfg(unix)]
#[test]
fn a_sibling_tokenizer_config_linked_out_is_not_read() {
    let root = tempdir("tokenizer");
    let inside = root.join("inside");
    let linked = root.join("linked");
    let outside = root.join("outside");
    for dir in [&inside, &linked, &outside] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("chat_template.jinja"), "[{{ bos_token }}]").unwrap();
    }
    let config = r#"{"bos_token": "SECRET-BOS"}"#;
    std::fs::write(inside.join("tokenizer_config.json"), config).unwrap();
    std::fs::write(outside.join("tokenizer_config.json"), config).unwrap();
    std::os::unix::fs::symlink(
        "../outside/tokenizer_config.json",
        linked.join("tokenizer_config.json"),
    )
    .unwrap();
    let render = |dir: &Path| {
        let prompt = Prompt::from_file(dir.join("chat_template.jinja")).expect("loads");
        match prompt.render(json!({})) {
            Ok(rendered) => rendered.text().to_string(),
            Err(error) => format!("{error}"),
        }
    };
    assert_eq!(render(&inside), "[SECRET-BOS]");
    let shown = render(&linked);
    assert!(!shown.contains("SECRET-BOS"), "{shown}");
    // A FIFO beside it is not waited on.
    let fifo_dir = root.join("fifo");
    std::fs::create_dir_all(&fifo_dir).unwrap();
    std::fs::write(fifo_dir.join("chat_template.jinja"), "[{{ bos_token }}]").unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(fifo_dir.join("tokenizer_config.json"))
        .status()
        .unwrap()
        .success());
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(render(&fifo_dir));
    });
    let shown = receive
        .recv_timeout(Duration::from_secs(20))
        .expect("a FIFO tokenizer_config.json blocks the load");
    assert!(!shown.contains("SECRET"), "{shown}");
}

#[test]
fn data_that_does_not_parse_is_named_not_quoted() {
    for (text, format) in [
        ("{\"a\": SECRET-JSON}", Format::Json),
        ("a: [1\nSECRET-YAML=x ::\n", Format::Yaml),
        ("PATH=SECRET-ENV\0HOME=/root\0", Format::Yaml),
    ] {
        let error = parse_text(text, Some(format), "d.data").unwrap_err();
        let shown = format!("{error}");
        assert!(shown.contains("d.data"), "{shown}");
        assert!(error.location().is_some(), "{shown}");
        assert!(!shown.contains("SECRET"), "{shown}");
    }
}
