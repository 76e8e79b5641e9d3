//! `teleprompt diff OLD NEW`: two versions of a prompt rendered with the
//! same data, and what changed as the model sees it — the messages and
//! lines, the tokens, and how much of the start (what a provider or an
//! open-model server keeps cached) stayed the same.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::{json, Value};
use teleprompt::messages::{ContentPart, Entry, StablePrefix};
use teleprompt::{Error, ErrorClass, Prompt, Rendered, Syntax};

use crate::{fail, print_out, render_turn, report, TurnArgs, WriteFailed};

#[derive(Args)]
pub struct DiffArgs {
    /// The old prompt: a file, or REV:PATH for a git revision of one
    /// (`HEAD~1:prompts/task.j2`; PATH from the current folder; the blob
    /// as committed, read with `git cat-file`).
    old: String,
    /// The new prompt: a file, or REV:PATH.
    new: String,
    /// How to print the difference: text (a unified diff of the messages
    /// and a summary), markdown (for a pull-request comment) or json.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    format: DiffFormat,
    #[command(flatten)]
    turn: TurnArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Text,
    Markdown,
    Json,
}

/// One side of the diff: the prompt, where it came from, and its render.
struct Side {
    label: String,
    prompt: Prompt,
    rendered: Rendered,
    /// The conversation as it is sent, one (role, text) a message.
    messages: Vec<(String, String)>,
}

pub fn diff(args: &DiffArgs) -> Result<ExitCode, WriteFailed> {
    let labels = &args.turn.labels;
    if args.turn.data.iter().any(|source| source == "-") {
        let error = Error::new(
            ErrorClass::Io,
            "diff renders the prompt twice, and stdin can be read once: give --data a file",
        );
        return Ok(fail(&report::labelled(error, labels)));
    }
    let sides = load(&args.old, &args.turn, false)
        .and_then(|old| Ok((old, load(&args.new, &args.turn, true)?)));
    let (old, new) = match sides {
        Ok(sides) => sides,
        Err(error) => return Ok(fail(&report::labelled(error, labels))),
    };
    // The new render's map names what wrote its first change.
    let prefix = new.rendered.stable_prefix(&old.rendered);
    let tokens = tokens(&old, &new);
    let transcript = |side: &Side| {
        side.messages
            .iter()
            .enumerate()
            .map(|(index, (role, text))| format!("### message {} ({role})\n{text}\n", index + 1))
            .collect::<String>()
    };
    let (old_text, new_text) = (transcript(&old), transcript(&new));
    let changes = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(old_text.as_str(), new_text.as_str());
    let unified = changes
        .unified_diff()
        .context_radius(3)
        .header(&old.label, &new.label)
        .to_string();
    let summary = Summary {
        old: &old,
        new: &new,
        prefix: &prefix,
        tokens: tokens.as_ref(),
    };
    let out = match args.format {
        DiffFormat::Text => summary.text(&unified),
        DiffFormat::Markdown => summary.markdown(&unified),
        DiffFormat::Json => {
            let mut json =
                serde_json::to_string_pretty(&summary.json(&unified)).unwrap_or_default();
            json.push('\n');
            json
        }
    };
    print_out(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// A prompt from a file, or from `REV:PATH` in git, rendered with the
/// command line's data (and a source map, when `mapped`).
fn load(spec: &str, args: &TurnArgs, mapped: bool) -> Result<Side, Error> {
    let mut options = args.load.options();
    let (prompt, label) = match git_spec(spec) {
        None => (Prompt::from_file_with(spec, &options)?, spec.to_string()),
        Some((revision, path)) => {
            let bytes = git_show(revision, &path, options.limits.max_template_bytes)?;
            // Its includes are read from the working tree, beside it.
            if options.include_root.is_none() {
                options.include_root = Some(match path.parent() {
                    Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                    _ => PathBuf::from("."),
                });
            }
            let origin = path.to_string_lossy().replace('\\', "/");
            (
                Prompt::from_bytes(&origin, &bytes, &options)?,
                format!("{origin} ({revision})"),
            )
        }
    };
    let rendered = render_turn(&prompt, args, mapped)?;
    let messages = sent(&prompt, &rendered);
    Ok(Side {
        label,
        prompt,
        rendered,
        messages,
    })
}

/// `REV:PATH` when `spec` is not a file and has that shape.
fn git_spec(spec: &str) -> Option<(&str, PathBuf)> {
    if Path::new(spec).exists() {
        return None;
    }
    let (revision, path) = spec.split_once(':')?;
    (!revision.is_empty() && !path.is_empty()).then(|| (revision, PathBuf::from(path)))
}

/// The bytes of `path` (from the current folder) at `revision`: the
/// blob as committed (`git cat-file blob`), read up to `max` bytes. A
/// revision that starts with `-` is refused (git would take it for an
/// option).
fn git_show(revision: &str, path: &Path, max: usize) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let io = |message: String| Error::new(ErrorClass::Io, message);
    if revision.starts_with('-') {
        return Err(io(format!(
            "{revision}:{} is not a git revision: a revision does not start with `-`",
            path.display()
        )));
    }
    let relative = match path.is_absolute() || path.starts_with(".") {
        true => path.to_string_lossy().into_owned(),
        false => format!("./{}", path.to_string_lossy()),
    };
    let cannot = |error: std::io::Error| {
        io(format!(
            "cannot run git to read {revision}:{}: {error}",
            path.display()
        ))
    };
    let mut child = std::process::Command::new("git")
        .args(["cat-file", "blob", &format!("{revision}:{relative}")])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(cannot)?;
    let mut bytes = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        stdout
            .take(max as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
    }
    if bytes.len() > max {
        let _ = child.kill();
        let _ = child.wait();
        return Err(io(format!(
            "{revision}:{} is larger than {max} bytes (--max-template-bytes)",
            path.display()
        )));
    }
    let output = child.wait_with_output().map_err(cannot)?;
    if !output.status.success() {
        let why = String::from_utf8_lossy(&output.stderr);
        return Err(io(format!(
            "{revision}:{} is not a file, nor a prompt in git: {}",
            path.display(),
            why.trim()
        )));
    }
    Ok(bytes)
}

/// The conversation as a provider is sent it, one (role, text) a
/// message; a chat template's output is one text.
fn sent(prompt: &Prompt, rendered: &Rendered) -> Vec<(String, String)> {
    if prompt.syntax() == Syntax::ChatTemplate {
        return vec![("text".to_string(), rendered.text().to_string())];
    }
    rendered
        .conversation()
        .iter()
        .map(|entry| match entry {
            Entry::Rendered(message) => {
                // Parts as the OpenAI shape joins them: a blank line
                // between, none across a part that holds nothing.
                let mut pieces: Vec<String> = Vec::new();
                let mut joins = false;
                for part in &message.content {
                    let piece = match part {
                        ContentPart::Text { text } => text.clone(),
                        ContentPart::Media { url, content_type } => {
                            format!("[{content_type}: {url}]")
                        }
                        ContentPart::Section { name } => format!("[section {name}]"),
                        ContentPart::CacheBreakpoint => String::new(),
                    };
                    match pieces.last_mut() {
                        Some(last) if joins => last.push_str(&piece),
                        _ if piece.is_empty() => {}
                        _ => pieces.push(piece),
                    }
                    joins = matches!(part, ContentPart::CacheBreakpoint);
                }
                (message.role.as_str().to_string(), pieces.join("\n\n"))
            }
            Entry::History(message) => {
                let mut text = match &message.content {
                    Some(Value::String(text)) => text.clone(),
                    Some(Value::Null) | None => String::new(),
                    Some(other) => other.to_string(),
                };
                for call in &message.tool_calls {
                    text.push_str(&format!(
                        "\n[tool call {}({})]",
                        call.function.name, call.function.arguments
                    ));
                }
                (message.role.as_str().to_string(), text)
            }
        })
        .collect()
}

/// Both renders' tokens, where both prompts have a tokenizer: the totals
/// and how many at the start the new one keeps.
struct TokenDelta {
    tokenizer: String,
    old: usize,
    new: usize,
    kept: usize,
}

fn tokens(old: &Side, new: &Side) -> Option<TokenDelta> {
    old.prompt.tokenizer()?;
    new.prompt.tokenizer()?;
    // The old render counted into a cache, the new one against it: `kept`
    // is what a prefix cache keeps (a prompt's equal messages, then the
    // ids its first changed one starts with; a chat template's ids).
    let mut cache = teleprompt::tokens::TokenCache::new();
    let before = old.rendered.tokens_with(&mut cache).ok()?;
    let after = new.rendered.tokens_with(&mut cache).ok()?;
    Some(TokenDelta {
        tokenizer: after.tokenizer,
        old: before.total,
        new: after.total,
        kept: after.kept,
    })
}

struct Summary<'a> {
    old: &'a Side,
    new: &'a Side,
    prefix: &'a StablePrefix,
    tokens: Option<&'a TokenDelta>,
}

impl Summary<'_> {
    fn same(&self) -> bool {
        self.prefix.change.is_none()
    }

    /// "the first N bytes (M tokens) stay the same; the change starts in
    /// message 2 (user), line 3".
    fn prefix_sentence(&self) -> String {
        let tokens = self
            .tokens
            .map(|tokens| format!(" ({} tokens)", group(tokens.kept)))
            .unwrap_or_default();
        let Some(change) = &self.prefix.change else {
            return "nothing changed".to_string();
        };
        let index = change.message;
        let role = self
            .new
            .messages
            .get(index)
            .or_else(|| self.old.messages.get(index))
            .map_or("", |(role, _)| role.as_str());
        let kept = match self.prefix.bytes {
            0 => "nothing at the start stays the same".to_string(),
            bytes => format!("the first {} bytes{tokens} stay the same", group(bytes)),
        };
        let mut sentence = format!(
            "{kept}; the change starts in message {} ({role}), line {}",
            index + 1,
            change.line
        );
        if let Some(place) = change.written_at() {
            sentence.push_str(&format!(", written at {place}"));
        }
        sentence
    }

    fn tokens_sentence(&self) -> Option<String> {
        let tokens = self.tokens?;
        Some(format!(
            "{} → {} ({}) by {}",
            group(tokens.old),
            group(tokens.new),
            signed(tokens.new as i64 - tokens.old as i64),
            tokens.tokenizer
        ))
    }

    fn text(&self, unified: &str) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "messages: {} → {}\n",
            self.old.messages.len(),
            self.new.messages.len()
        ));
        if let Some(tokens) = self.tokens_sentence() {
            out.push_str(&format!("tokens: {tokens}\n"));
        }
        out.push_str(&format!("cached prefix: {}\n", self.prefix_sentence()));
        if !self.same() {
            out.push('\n');
            out.push_str(unified);
        }
        out
    }

    fn markdown(&self, unified: &str) -> String {
        let mut out = format!(
            "#### `{}` → `{}`\n\n| | old | new |\n| --- | ---: | ---: |\n| messages | {} | {} |\n",
            self.old.label,
            self.new.label,
            self.old.messages.len(),
            self.new.messages.len()
        );
        if let Some(tokens) = self.tokens {
            out.push_str(&format!(
                "| tokens ({}) | {} | {} ({}) |\n",
                tokens.tokenizer,
                group(tokens.old),
                group(tokens.new),
                signed(tokens.new as i64 - tokens.old as i64)
            ));
        }
        out.push_str(&format!("\nCached prefix: {}.\n", self.prefix_sentence()));
        if !self.same() {
            // A fence longer than any run of backticks in the diff.
            let longest = unified.split(|c| c != '`').map(str::len).max().unwrap_or(0);
            let fence = "`".repeat(longest.max(2) + 1);
            out.push_str(&format!("\n{fence}diff\n{unified}{fence}\n"));
        }
        out
    }

    fn json(&self, unified: &str) -> Value {
        let side = |side: &Side, tokens: Option<usize>| {
            json!({
                "prompt": side.label,
                "messages": side.messages.len(),
                "tokens": tokens,
            })
        };
        json!({
            "old": side(self.old, self.tokens.map(|tokens| tokens.old)),
            "new": side(self.new, self.tokens.map(|tokens| tokens.new)),
            "same": self.same(),
            "prefix": {
                "bytes": self.prefix.bytes,
                "tokens": self.tokens.map(|tokens| tokens.kept),
                "message": self.prefix.change.as_ref().map(|change| change.message + 1),
                "line": self.prefix.change.as_ref().map(|change| change.line),
                "span": self.prefix.change.as_ref().and_then(|change| change.span.clone()),
                "path": self.prefix.change.as_ref().and_then(|change| change.path.clone()),
            },
            "tokenizer": self.tokens.map(|tokens| tokens.tokenizer.clone()),
            "diff": unified,
        })
    }
}

/// 12,345.
fn group(number: usize) -> String {
    let digits = number.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// +12 / −3 / ±0.
fn signed(delta: i64) -> String {
    match delta {
        0 => "±0".to_string(),
        d if d > 0 => format!("+{}", group(d as usize)),
        d => format!("−{}", group(d.unsigned_abs() as usize)),
    }
}

#[cfg(test)]
mod tests {
    use super::{group, signed};

    #[test]
    fn numbers_read_as_numbers() {
        assert_eq!(group(1234567), "1,234,567");
        assert_eq!(group(999), "999");
        assert_eq!(
            (signed(26), signed(-1500), signed(0)),
            ("+26".into(), "−1,500".into(), "±0".into())
        );
    }
}
