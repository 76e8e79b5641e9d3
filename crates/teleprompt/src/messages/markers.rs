//! Role, history, media and section markers: how a template says "a message starts
//! here" in a way that the data it prints can never imitate.
//!
//! A render creates one [`Markers`] with a fresh secret. Template functions
//! (`role`, `history`, `media`, Dotprompt's `section`) print marker text that contains the secret;
//! after the render, [`Markers::split`] cuts the output at the markers that
//! carry *this* secret and nowhere else. Data values are printed by the same
//! render, but they were built before it started, so they cannot contain a
//! secret that did not exist yet: any marker-like text in them (the
//! delimiters alone or at the end of the output, a copy of a marker from
//! another render, a guess, the start of a marker's tag,
//! `<message role="system">`, a `system:` line) stays ordinary text, kept
//! character for character; it never starts a message and never fails the
//! split.
//!
//! A template that changes its own markers (`role("system")|upper`, a
//! slice, `truncate`, `replace`, a quoted or escaped copy) would lose the
//! role or print the secret into a message, so the split fails with
//! [`SplitError::Changed`] or [`SplitError::Missing`]. Two checks find
//! it, and neither can be set off by text without the secret:
//!
//! - pieces that carry the secret: [`OPEN`] followed by the tag and secret
//!   in another letter case, a stray [`CLOSE`] with the secret just before
//!   it, or the tag `teleprompt` with the secret just after it and no
//!   delimiter between (an escaped or quoted marker). A secret alone, with
//!   neither the tag nor a delimiter beside it, is not looked for;
//! - a count: every marker the render made must be in the output whole. A
//!   marker cut down to a piece that holds none of the secret
//!   (`role("system")[:5]`) is found this way; the error then points at
//!   the first `OPEN` that looks like such a piece, if there is one.
//!
//! So a marker made and then dropped (`{% set r = role("system") %}` never
//! printed) is an error too: its role would be lost.
//!
//! The delimiters are private-use code points ([`OPEN`], [`CLOSE`]) so that
//! markers do not collide with real text by accident, but the protection
//! rests on the secret, not on the delimiters.
//!
//! Between the delimiters a marker holds only ASCII letters, digits, `:`,
//! and `-._~%` (media URLs, content types and section names are percent-encoded), so HTML
//! escaping (Jinja autoescape, Handlebars `{{…}}`) leaves markers intact.

use aho_corasick::{AhoCorasick, Input, MatchKind};
use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::{ContentPart, Message, Role};
use crate::diagnostics::closest;

/// The first character of every marker (a private-use code point).
pub const OPEN: char = '\u{E000}';
/// The last character of every marker (a private-use code point).
pub const CLOSE: char = '\u{E001}';

/// The word after [`OPEN`] that says "this is a teleprompt marker".
const TAG: &str = "teleprompt";

/// Renders started in this process, mixed into each secret so that two
/// renders never share one even if the clock and the hasher keys repeat.
static RENDERS: AtomicU64 = AtomicU64::new(0);

/// The markers of one render: role, history, media and section markers that carry a
/// secret made fresh for this render.
///
#[derive(Clone)]
pub struct Markers {
    /// `OPEN` + `TAG` + `:` + secret + `:`: how every marker of this render
    /// starts. Made when the render writes its first marker: most renders
    /// of plain prompts never do, and skip the cost. Shared by clones (a Jinja
    /// render's filters hold a copy of its scope), so they all use one
    /// secret.
    shared: std::sync::Arc<Shared>,
}

/// What the clones of one render's [`Markers`] share.
#[derive(Default)]
struct Shared {
    /// See [`Markers::prefix`].
    prefix: std::sync::OnceLock<String>,
    /// How many markers the render made: each must reach the output whole
    /// (a marker cut or changed past recognition, with no piece of the
    /// secret left, is found by this count).
    made: AtomicUsize,
}

impl fmt::Debug for Markers {
    /// Never prints the secret: an error report must not leak it into text
    /// that a later render could read back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Markers { .. }")
    }
}

impl Default for Markers {
    fn default() -> Self {
        Markers::new()
    }
}

/// Why a marker could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MarkerError {
    /// The content type of `media(…)` is empty.
    #[error("media(…) needs a content type such as \"image/png\"")]
    EmptyContentType,
    /// The URL of `media(…)` is empty.
    #[error("media(…) needs a URL or a data: URI")]
    EmptyUrl,
    /// The name of a Dotprompt `{{section}}` is empty.
    #[error("the name is empty: name the section, e.g. {{{{section \"output\"}}}}")]
    UnnamedSection,
    /// The name of a budget section is empty.
    #[error("the name is empty: name the section, e.g. {{% section \"docs\", priority=1 %}}")]
    UnnamedBudgetSection,
}

/// Why the output of a render could not be split into messages.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    /// `history()` was called twice.
    #[error("history() is placed twice; the history can appear only once")]
    SecondHistory,
    /// A budget section holds a role or history marker: cutting it would
    /// move messages.
    #[error("the section \"{0}\" holds a message's start, the history or a media part: a section is text inside one message, so close it before role(), history() or media()")]
    MessageInSection(String),
    /// A cache breakpoint inside a budget section: a cut could drop it.
    #[error("the section \"{0}\" holds a cache_breakpoint(): a budget may cut a section, so place the breakpoint outside it")]
    BreakpointInSection(String),
    /// A cache breakpoint in a prompt whose messages follow another
    /// system's rules (Prompty's role lines, Dotprompt's).
    #[error("cache_breakpoint() is teleprompt's: a prompt whose messages follow Prompty's or Dotprompt's rules cannot place one")]
    BreakpointOutsideTeleprompt,
    /// A cache breakpoint with nothing before it that it could end.
    #[error("cache_breakpoint() has no text before it to end: place it after the text a provider should cache (the end of the system prompt, say)")]
    NothingToCache,
    /// A budget section starts inside another.
    #[error("the section \"{inner}\" starts inside the section \"{outer}\": sections do not nest")]
    NestedSection {
        /// The section that is open.
        outer: String,
        /// The section that starts inside it.
        inner: String,
    },
    /// A budget section is not closed, or a close has no section.
    #[error("{0}")]
    UnpairedSection(String),
    /// A marker of this render was cut short (a filter changed it).
    #[error("a role marker was changed by a filter or cut ({}): call role() on its own, e.g. {{{{ role(\"system\") }}}}", place(*after))]
    Unterminated {
        /// Whole markers before it in the output.
        after: usize,
    },
    /// A marker of this render was altered (a filter changed it).
    #[error("a role marker was changed by a filter or cut ({}): call role() on its own, e.g. {{{{ role(\"system\") }}}}", place(*after))]
    Malformed {
        /// Whole markers before it in the output.
        after: usize,
    },
    /// A piece of a marker of this render is left in the output: its
    /// secret beside the tag or a delimiter outside a marker (an `upper`
    /// filter, a `repr`, `%q`, `js` or `urlquery` escape, a slice that
    /// drops the start), or a marker's first character followed by the
    /// start of the marker's tag (a slice or `truncate` that kept only the
    /// start).
    #[error("a role marker was changed by a filter or cut ({}): call role() on its own, e.g. {{{{ role(\"system\") }}}}", place(*after))]
    Changed {
        /// Whole markers before it in the output.
        after: usize,
    },
    /// Fewer markers of this render are in the output than it made, and
    /// nothing in the output looks like what is left of one (a filter
    /// that dropped a marker's delimiters and tag, say).
    #[error("a role marker was changed by a filter or cut ({found} of the {made} markers this render made are in the output): call role() on its own, e.g. {{{{ role(\"system\") }}}}")]
    Missing {
        /// Markers the render made.
        made: usize,
        /// Markers of this render found whole in the output.
        found: usize,
    },
}

/// Where a changed marker is, told by the whole markers before it. Not a
/// byte offset: the text a filter makes of a marker holds some of the
/// render's random secret, so its length, and every offset after it, would
/// change from one render of the same prompt to the next.
fn place(after: usize) -> String {
    match after {
        0 => "before the output's first whole marker".to_owned(),
        1 => "after the output's first whole marker".to_owned(),
        n => format!("after {n} whole markers of the output"),
    }
}

/// The output of a render, cut at its markers.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Split {
    /// The output with every marker of the render removed (and nothing else).
    pub text: String,
    /// The messages and the history placeholder, in output order.
    pub items: Vec<Item>,
    /// Byte ranges of [`Split::text`] printed inside `{% generation %}`
    /// blocks (what a model generates, in a chat template).
    pub generations: Vec<std::ops::Range<usize>>,
    /// The budget sections the render printed, in output order, each with
    /// the byte range of its content in the output as rendered (markers
    /// and all): what a budget cuts ([`Markers::section_start`]).
    pub sections: Vec<SectionSpan>,
}

/// How a budget section may be cut: what `{% section "docs", priority=2,
/// max_tokens=2000, truncate=true %}` says.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SectionSpec {
    /// The section's name: every block with one name is one part, each
    /// block an item of it.
    pub name: String,
    /// Parts of lower priority are cut first.
    #[serde(default)]
    pub priority: i64,
    /// The most tokens the part may be, whatever the total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Whether the part's last item left may be cut short (at a token
    /// boundary) rather than dropped whole.
    #[serde(default)]
    pub truncate: bool,
}

/// A section setting's value as a template gives it.
#[derive(Clone, Copy, Debug)]
pub enum Setting {
    Integer(i64),
    Bool(bool),
    /// Any other value: what it is, for the message ("a string").
    Other(&'static str),
}

impl SectionSpec {
    /// The settings a section has.
    const SETTINGS: &'static str = "\"priority\" (a whole number), \"max_tokens\" (a whole number above 0) and \"truncate\" (true or false)";

    /// A section named `name` with `settings` (key and value, as the
    /// template wrote them); the error is a sentence for the template's
    /// author.
    pub fn from_settings(
        name: &str,
        settings: impl IntoIterator<Item = (String, Option<Setting>)>,
    ) -> Result<SectionSpec, String> {
        let (mut priority, mut max_tokens, mut truncate) = (None, None, None);
        for (key, value) in settings {
            let wrong = |want: &str, value: Option<Setting>| {
                let found = match value {
                    None => "nothing".to_string(),
                    Some(Setting::Integer(n)) => n.to_string(),
                    Some(Setting::Bool(b)) => b.to_string(),
                    Some(Setting::Other(kind)) => kind.to_string(),
                };
                Err(format!(
                    "the section \"{name}\": `{key}` must be {want}, found {found}"
                ))
            };
            match (key.as_str(), value) {
                ("priority", Some(Setting::Integer(n))) => priority = Some(n),
                ("priority", value) => return wrong("a whole number", value),
                ("max_tokens", Some(Setting::Integer(n))) => max_tokens = Some(n),
                ("max_tokens", value) => return wrong("a whole number of tokens above 0", value),
                ("truncate", Some(Setting::Bool(b))) => truncate = Some(b),
                ("truncate", value) => return wrong("true or false", value),
                (other, _) => {
                    let hint = closest(other, ["priority", "max_tokens", "truncate"])
                        .map(|near| format!(" (did you mean \"{near}\"?)"))
                        .unwrap_or_default();
                    return Err(format!(
                        "the section \"{name}\" has no setting \"{other}\"{hint}: its settings are {}",
                        Self::SETTINGS
                    ));
                }
            }
        }
        SectionSpec::new(name, priority, max_tokens, truncate)
    }

    /// A section's settings, checked; the error is a sentence for the
    /// template's author.
    fn new(
        name: &str,
        priority: Option<i64>,
        max_tokens: Option<i64>,
        truncate: Option<bool>,
    ) -> Result<SectionSpec, String> {
        if name.trim().is_empty() {
            return Err(MarkerError::UnnamedBudgetSection.to_string());
        }
        let max_tokens = match max_tokens {
            None => None,
            Some(most) if most > 0 => Some(most.unsigned_abs()),
            Some(most) => {
                return Err(format!(
                    "the section \"{name}\": `max_tokens` must be a whole number of tokens above 0, found {most}"
                ))
            }
        };
        Ok(SectionSpec {
            name: name.to_string(),
            priority: priority.unwrap_or(0),
            max_tokens,
            truncate: truncate.unwrap_or(false),
        })
    }
}

/// One budget section block in a render's output.
#[derive(Clone, Debug, PartialEq)]
pub struct SectionSpan {
    pub spec: std::sync::Arc<SectionSpec>,
    /// Its content, between its markers, as a byte range of the output.
    pub content: std::ops::Range<usize>,
}

/// One piece of a split render: a message, or the place of the history.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Item {
    /// A message the template wrote.
    Message(Message),
    /// Where `history()` was placed.
    History,
    /// A cache breakpoint right after the history: it ends the history's
    /// last message.
    CacheBreakpoint,
}

/// What one marker says.
#[derive(Debug, PartialEq)]
enum Mark {
    /// A message starts, with the fields of its role line (Prompty's
    /// `user[name="Alice"]:`), if any.
    Role(Role, Map<String, Value>),
    History,
    Media {
        url: String,
        content_type: String,
    },
    /// A named part left for the host to fill (Dotprompt's `{{section}}`).
    Section(String),
    /// The start (`true`) or end of a `{% generation %}` block.
    Generation(bool),
    /// A provider's cache breakpoint: the text before it is a prefix to
    /// cache.
    CacheBreakpoint,
    /// The start of a budget section.
    SectionStart(SectionSpec),
    /// The end of a budget section.
    SectionEnd,
}

impl Markers {
    /// The marker prefix, with the secret made on first use.
    fn prefix(&self) -> &str {
        self.shared.prefix.get_or_init(|| {
            let mut prefix = String::with_capacity(TAG.len() + 36);
            prefix.push(OPEN);
            prefix.push_str(TAG);
            prefix.push(':');
            prefix.push_str(&fresh_secret());
            prefix.push(':');
            prefix
        })
    }

    /// Markers with a fresh secret. Create one per render.
    pub fn new() -> Markers {
        Markers {
            shared: std::sync::Arc::default(),
        }
    }

    /// The marker that starts a message with `role`.
    pub fn role(&self, role: Role) -> String {
        self.marker(&["role:", role.as_str()])
    }

    /// The marker that starts a message with `role` and the fields
    /// `attributes` (a Prompty role line's, such as `name`), which the
    /// message carries in [`Message::extra`]. Percent-encoded in the
    /// marker, so any text is safe in them.
    pub fn role_with(&self, role: Role, attributes: &Map<String, Value>) -> String {
        if attributes.is_empty() {
            return self.role(role);
        }
        let json = Value::Object(attributes.clone()).to_string();
        self.marker(&["role:", role.as_str(), ":", &percent_encode(&json)])
    }

    /// The marker that places the conversation history.
    pub fn history(&self) -> String {
        self.marker(&["history"])
    }

    /// The marker of a cache breakpoint (`cache_breakpoint()`): what the
    /// conversation holds before it is a prefix a provider should cache.
    pub fn cache_breakpoint(&self) -> String {
        self.marker(&["cache"])
    }

    /// `text` between the markers of a generated span (a chat template's
    /// `{% generation %}` block).
    pub fn generation(&self, text: &str) -> String {
        let mut out = self.marker(&["generation:start"]);
        out.push_str(text);
        out.push_str(&self.marker(&["generation:end"]));
        out
    }

    /// The marker for a media part: a URL (or data URI) and its content type.
    ///
    /// Both are percent-encoded inside the marker, so any text is safe in
    /// them, the delimiters [`OPEN`] / [`CLOSE`] included.
    pub fn media(&self, url: &str, content_type: &str) -> Result<String, MarkerError> {
        if content_type.trim().is_empty() {
            return Err(MarkerError::EmptyContentType);
        }
        if url.trim().is_empty() {
            return Err(MarkerError::EmptyUrl);
        }
        let content_type = percent_encode(content_type);
        let url = percent_encode(url);
        Ok(self.marker(&["media:", &content_type, ":", &url]))
    }

    /// The marker for a section: a named, empty part of the message that
    /// the host fills (Dotprompt's `{{section "output"}}`). The name is
    /// percent-encoded inside the marker, so any text is safe in it.
    pub fn section(&self, name: &str) -> Result<String, MarkerError> {
        if name.trim().is_empty() {
            return Err(MarkerError::UnnamedSection);
        }
        Ok(self.marker(&["section:", &percent_encode(name)]))
    }

    /// The marker that starts a budget section (`{% section "docs",
    /// priority=2 %}`): its settings (checked by [`SectionSpec`]),
    /// percent-encoded JSON.
    pub fn section_start(&self, spec: &SectionSpec) -> String {
        let json = serde_json::to_string(spec).unwrap_or_default();
        self.marker(&["part:start:", &percent_encode(&json)])
    }

    /// The marker that ends a budget section.
    pub fn section_end(&self) -> String {
        self.marker(&["part:end"])
    }

    fn marker(&self, pieces: &[&str]) -> String {
        let length = pieces.iter().map(|piece| piece.len()).sum::<usize>();
        let prefix = self.prefix();
        self.shared.made.fetch_add(1, Ordering::Relaxed);
        let mut out = String::with_capacity(prefix.len() + length + CLOSE.len_utf8());
        out.push_str(prefix);
        for piece in pieces {
            out.push_str(piece);
        }
        out.push(CLOSE);
        out
    }

    /// Cuts a render's `output` at this render's markers.
    ///
    /// - Text before the first role marker belongs to `default_role`.
    ///   Text after the history marker keeps the role that was in force.
    /// - Media and section markers split a message's content into parts.
    /// - Each text part is trimmed of whitespace at both ends (the blank
    ///   lines and indentation that role tags leave); parts left empty are
    ///   dropped, and so are messages left with no parts.
    /// - Marker-like text without this render's secret is ordinary text.
    /// - Every marker made with `self` must be in `output` whole (else
    ///   [`SplitError::Missing`] or [`SplitError::Changed`]): make one
    ///   `Markers` per output.
    /// - [`Split::text`] is `output` with this render's markers removed.
    pub fn split(&self, output: &str, default_role: Role) -> Result<Split, SplitError> {
        self.split_as(output, default_role, Rules::Teleprompt)
    }

    /// [`Markers::split`] by Prompty's rules (its parser's, `prompty`
    /// 2.1.0, and the parse vectors of its specification), for the
    /// messages of role lines:
    ///
    /// - a message's text is its lines (the line break that ends the role
    ///   line is not one of them), joined by `\n`, with the line breaks at
    ///   both ends trimmed; spaces and indentation stay;
    /// - a message with no line at all (a role line right before another)
    ///   is dropped; one with only blank lines is kept, empty;
    /// - beside the history marker (a `kind: thread` input), the text
    ///   before and after it is trimmed of all whitespace and dropped if
    ///   empty, each piece keeping the role and fields of its message.
    pub fn split_prompty(&self, output: &str, default_role: Role) -> Result<Split, SplitError> {
        self.split_as(output, default_role, Rules::Prompty)
    }

    /// [`Markers::split`] by Google Dotprompt's rules (`dotprompt` 1.1.2):
    ///
    /// - text parts keep their whitespace and newlines as rendered; only
    ///   whitespace-only parts are dropped;
    /// - text after the history marker is the assistant's;
    /// - without a history marker, the history goes before the last
    ///   message if it is the user's (else after all of them).
    ///
    pub fn split_dotprompt(&self, output: &str, default_role: Role) -> Result<Split, SplitError> {
        self.split_as(output, default_role, Rules::Dotprompt)
    }

    /// How many markers this render has made.
    pub fn made(&self) -> usize {
        self.shared.made.load(Ordering::Relaxed)
    }

    /// Sets the count of markers made back to `made`: a second render of
    /// one output (a source map's) made each of its markers again.
    pub(crate) fn rewind(&self, made: usize) {
        self.shared.made.store(made, Ordering::Relaxed);
    }

    /// Where this render's markers are in `output` (each whole, its close
    /// included): what [`Markers::split`] removes from it.
    pub(crate) fn ranges_in(&self, output: &str) -> Vec<std::ops::Range<usize>> {
        let mut ranges = Vec::new();
        if !self.made_any() {
            return ranges;
        }
        let prefix = self.prefix();
        let mut from = 0;
        while let Some(found) = output.get(from..).and_then(|rest| rest.find(prefix)) {
            let start = from + found;
            let Some(close) = output[start..].find(CLOSE) else {
                break;
            };
            let end = start + close + CLOSE.len_utf8();
            ranges.push(start..end);
            from = end;
        }
        ranges
    }

    /// Whether this render made any marker (and so has a secret): without
    /// one, the output holds no marker and no piece of one.
    pub fn made_any(&self) -> bool {
        self.shared.prefix.get().is_some()
    }

    fn split_as(
        &self,
        output: &str,
        default_role: Role,
        rules: Rules,
    ) -> Result<Split, SplitError> {
        let mut builder = Builder::new(default_role, output.len());
        builder.rules = rules;
        let prefix = self.prefix();
        let secret = prefix
            .get(OPEN.len_utf8() + TAG.len() + 1..)
            .and_then(|rest| rest.strip_suffix(':'))
            .unwrap_or_default()
            .as_bytes();
        let Some(scanner) = scanner() else {
            return Err(SplitError::Malformed { after: 0 });
        };
        let mut from = 0;
        let mut text_from = 0;
        // Markers of this render found whole, and the first `OPEN` that
        // looks like a marker cut short but holds none of the secret: data
        // may hold such text, so it is text unless a marker is missing.
        let mut found_markers = 0usize;
        let mut cut_like = None;
        while let Some(found) = scanner.find(Input::new(output).span(from..output.len())) {
            let start = found.start();
            check_escaped(output, from, start, secret, found_markers)?;
            from = found.end();
            let here = output.get(start..).unwrap_or_default();
            match found.pattern().as_usize() {
                // `OPEN`: a marker of this render, a marker upper-cased or
                // cut after some of its secret, or text.
                0 if here.starts_with(prefix) => {}
                0 if tag_and_secret(here.get(OPEN.len_utf8()..), secret) => {
                    return Err(SplitError::Changed {
                        after: found_markers,
                    });
                }
                0 => {
                    if cut_like.is_none() && is_cut_marker(here) {
                        cut_like = Some(found_markers);
                    }
                    continue;
                }
                // `CLOSE` outside a marker, with the secret just before it
                // (a marker whose start was cut off).
                1 => {
                    // Only text after the last marker: not that marker's secret.
                    let window_from = start.saturating_sub(64).max(text_from);
                    let window = output.as_bytes().get(window_from..start);
                    if window
                        .and_then(|window| find_secret(window, secret))
                        .is_some()
                    {
                        return Err(SplitError::Changed {
                            after: found_markers,
                        });
                    }
                    continue;
                }
                _ => continue,
            }
            builder.text(output.get(text_from..start).unwrap_or_default());
            let body_and_tail = here.get(prefix.len()..).unwrap_or_default();
            let Some(end) = body_and_tail.find(CLOSE) else {
                return Err(SplitError::Unterminated {
                    after: found_markers,
                });
            };
            let body = body_and_tail.get(..end).unwrap_or_default();
            let mark = parse_mark(body).ok_or(SplitError::Malformed {
                after: found_markers,
            })?;
            let marker_end = start + prefix.len() + end + CLOSE.len_utf8();
            match mark {
                Mark::SectionStart(_) | Mark::SectionEnd => {
                    builder.section(mark, start, marker_end)?
                }
                mark => builder.mark(mark)?,
            }
            found_markers += 1;
            from = marker_end;
            text_from = from;
        }
        check_escaped(output, from, output.len(), secret, found_markers)?;
        let made = self.shared.made.load(Ordering::Relaxed);
        if found_markers < made {
            return Err(match cut_like {
                Some(after) => SplitError::Changed { after },
                None => SplitError::Missing {
                    made,
                    found: found_markers,
                },
            });
        }
        builder.text(output.get(text_from..).unwrap_or_default());
        builder.finish()
    }
}

/// The one scanner of every split: [`OPEN`] and [`CLOSE`]. Built once per
/// process (the secret changes with every render, so it is not a pattern:
/// it is looked for only next to a hit). Both start with the byte 0xEE,
/// rare in text, so the scan runs at memory speed.
fn scanner() -> Option<&'static AhoCorasick> {
    static SCANNER: std::sync::OnceLock<Option<AhoCorasick>> = std::sync::OnceLock::new();
    SCANNER
        .get_or_init(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .build([OPEN.to_string().as_str(), CLOSE.to_string().as_str()])
                .ok()
        })
        .as_ref()
}

/// A marker that lost its [`OPEN`] to an escape (`repr`, `%q`, `js`,
/// `urlquery`) or a cut shows its tag followed, within a few bytes, by the
/// secret. Looks for the tag in `output[from..to]`, text between two hits
/// of the scanner, while it is still in cache.
fn check_escaped(
    output: &str,
    from: usize,
    to: usize,
    secret: &[u8],
    markers_before: usize,
) -> Result<(), SplitError> {
    let Some(span) = output.as_bytes().get(from..to) else {
        return Ok(());
    };
    for at in memchr::memmem::find_iter(span, TAG.as_bytes()) {
        // Up to the next `OPEN` or `CLOSE` only: an escaped marker has
        // neither, and the secret of a whole marker that follows the word
        // (data that ends in "teleprompt") is not a leak.
        let after = span.get(at + TAG.len()..);
        let window = after.map(|after| {
            after
                .get(..after.len().min(secret.len() + 16))
                .unwrap_or(after)
        });
        if window
            .and_then(|window| find_secret(window, secret))
            .is_some()
        {
            return Err(SplitError::Changed {
                after: markers_before,
            });
        }
    }
    Ok(())
}

/// Whether `text` starts with the tag and `:` and then the secret, in any
/// letter case (an upper-cased marker).
fn tag_and_secret(text: Option<&str>, secret: &[u8]) -> bool {
    let text = text.unwrap_or_default().as_bytes();
    let tag_length = TAG.len() + 1;
    let tag_matches = text
        .get(..TAG.len())
        .is_some_and(|tag| tag.eq_ignore_ascii_case(TAG.as_bytes()));
    tag_matches
        && text
            .get(tag_length..tag_length + secret.len())
            .is_some_and(|candidate| candidate.eq_ignore_ascii_case(secret))
}

/// Where `secret` is in `window`, in any letter case.
fn find_secret(window: &[u8], secret: &[u8]) -> Option<usize> {
    if secret.is_empty() {
        return None;
    }
    window
        .windows(secret.len())
        .position(|candidate| candidate.eq_ignore_ascii_case(secret))
}

/// Whether `text`, which starts with [`OPEN`] but not with this render's
/// marker prefix, looks like what is left of a marker cut short: `OPEN` at
/// the end of the output, followed by a part of the tag (`teleprompt:`),
/// or by the tag and fewer than 32 hex digits, in any letter case. `OPEN`
/// followed by other text, or by a whole marker prefix with another secret
/// (a marker copied from another render), is not.
///
/// Data can hold such text too, so it is only blamed when a marker of the
/// render is missing from the output.
fn is_cut_marker(text: &str) -> bool {
    let after = text.get(OPEN.len_utf8()..).unwrap_or_default().as_bytes();
    let tag = TAG.bytes().chain(std::iter::once(b':'));
    let same = after
        .iter()
        .zip(tag)
        .take_while(|(byte, tag)| byte.eq_ignore_ascii_case(tag))
        .count();
    if same <= TAG.len() {
        // The tag is cut (or missing): a cut if any of it is there.
        return same > 0 || after.is_empty();
    }
    let digits = after
        .get(same..)
        .unwrap_or_default()
        .iter()
        .take_while(|byte| byte.is_ascii_hexdigit())
        .count();
    digits < 32
}

/// Every byte but ASCII letters, digits and `-._~` as `%XX`.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(hex_digit(byte >> 4));
            out.push(hex_digit(byte & 0x0F));
        }
    }
    out
}

fn hex_digit(nibble: u8) -> char {
    char::from_digit(u32::from(nibble), 16)
        .unwrap_or('0')
        .to_ascii_uppercase()
}

/// The text that [`percent_encode`] encoded, if `text` is such an encoding.
fn percent_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let hex = tail
                .get(..2)
                .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))?;
            let hex = std::str::from_utf8(hex).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = tail.get(2..)?;
        } else {
            bytes.push(byte);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

/// Reads the part of a marker between the prefix and [`CLOSE`].
fn parse_mark(body: &str) -> Option<Mark> {
    match body {
        "history" => return Some(Mark::History),
        "cache" => return Some(Mark::CacheBreakpoint),
        "generation:start" => return Some(Mark::Generation(true)),
        "generation:end" => return Some(Mark::Generation(false)),
        "part:end" => return Some(Mark::SectionEnd),
        _ => {}
    }
    if let Some(spec) = body.strip_prefix("part:start:") {
        let spec = serde_json::from_str(&percent_decode(spec)?).ok()?;
        return Some(Mark::SectionStart(spec));
    }
    if let Some(rest) = body.strip_prefix("role:") {
        let (name, attributes) = match rest.split_once(':') {
            Some((name, encoded)) => {
                let json = percent_decode(encoded)?;
                match serde_json::from_str::<Value>(&json).ok()? {
                    Value::Object(attributes) => (name, attributes),
                    _ => return None,
                }
            }
            None => (rest, Map::new()),
        };
        return Role::parse(name).map(|role| Mark::Role(role, attributes));
    }
    if let Some(name) = body.strip_prefix("section:") {
        return Some(Mark::Section(percent_decode(name)?));
    }
    let media = body.strip_prefix("media:")?;
    let (content_type, url) = media.split_once(':')?;
    Some(Mark::Media {
        url: percent_decode(url)?,
        content_type: percent_decode(content_type)?,
    })
}

/// Whose rules cut an output into messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rules {
    /// teleprompt's: text trimmed, empty messages dropped.
    Teleprompt,
    /// Google Dotprompt's ([`Markers::split_dotprompt`]).
    Dotprompt,
    /// Prompty's ([`Markers::split_prompty`]).
    Prompty,
}

/// Collects messages while the output is walked.
struct Builder {
    text: String,
    items: Vec<Item>,
    role: Role,
    /// The fields of the message being built (its role line's attributes).
    attributes: Map<String, Value>,
    /// Prompty: the text being collected follows a role marker, whose
    /// role line's own line break comes first.
    after_role: bool,
    /// Prompty: the text being collected follows the history marker.
    after_history: bool,
    parts: Vec<ContentPart>,
    pending: String,
    history_placed: bool,
    generations: Vec<std::ops::Range<usize>>,
    /// Where the open generation span starts in `text`, and how many
    /// blocks deep it is (a block inside another one adds no span).
    generation_open: Option<(usize, usize)>,
    sections: Vec<SectionSpan>,
    /// The budget section that is open: its spec and where its content
    /// starts in the output.
    section_open: Option<(SectionSpec, usize)>,
    rules: Rules,
}

impl Builder {
    fn new(role: Role, capacity: usize) -> Builder {
        Builder {
            text: String::with_capacity(capacity),
            items: Vec::new(),
            role,
            attributes: Map::new(),
            after_role: false,
            after_history: false,
            parts: Vec::new(),
            pending: String::new(),
            history_placed: false,
            generations: Vec::new(),
            generation_open: None,
            sections: Vec::new(),
            section_open: None,
            rules: Rules::Teleprompt,
        }
    }

    fn text(&mut self, text: &str) {
        self.text.push_str(text);
        self.pending.push_str(text);
    }

    /// A budget section's marker: `start` and `end` are the marker's
    /// place in the output.
    fn section(&mut self, mark: Mark, start: usize, end: usize) -> Result<(), SplitError> {
        match (mark, self.section_open.take()) {
            (Mark::SectionStart(inner), Some((outer, _))) => Err(SplitError::NestedSection {
                outer: outer.name,
                inner: inner.name,
            }),
            (Mark::SectionStart(spec), None) => {
                self.section_open = Some((spec, end));
                Ok(())
            }
            (_, Some((spec, from))) => {
                self.sections.push(SectionSpan {
                    spec: std::sync::Arc::new(spec),
                    content: from..start,
                });
                Ok(())
            }
            (_, None) => Err(SplitError::UnpairedSection(
                "a section ends that never started: each endsection closes one section".to_string(),
            )),
        }
    }

    fn mark(&mut self, mark: Mark) -> Result<(), SplitError> {
        if let (
            Mark::Role(..) | Mark::History | Mark::Media { .. } | Mark::Section(_),
            Some((spec, _)),
        ) = (&mark, &self.section_open)
        {
            return Err(SplitError::MessageInSection(spec.name.clone()));
        }
        if let (Mark::CacheBreakpoint, Some((spec, _))) = (&mark, &self.section_open) {
            return Err(SplitError::BreakpointInSection(spec.name.clone()));
        }
        match mark {
            Mark::Role(role, attributes) => {
                self.close_message();
                self.role = role;
                self.attributes = attributes;
                self.after_role = true;
                self.after_history = false;
            }
            Mark::History => {
                if self.history_placed {
                    return Err(SplitError::SecondHistory);
                }
                self.history_placed = true;
                self.after_history = true;
                self.close_message();
                self.items.push(Item::History);
                if self.rules == Rules::Dotprompt {
                    self.role = Role::Assistant;
                }
            }
            Mark::Media { url, content_type } => {
                self.close_text_part();
                self.parts.push(ContentPart::Media { url, content_type });
            }
            Mark::Section(name) => {
                self.close_text_part();
                self.parts.push(ContentPart::Section { name });
            }
            Mark::CacheBreakpoint => self.cache_breakpoint()?,
            Mark::Generation(true) => {
                self.generation_open = match self.generation_open {
                    None => Some((self.text.len(), 1)),
                    Some((start, depth)) => Some((start, depth + 1)),
                };
            }
            Mark::Generation(false) => {
                self.generation_open = match self.generation_open {
                    Some((start, 1)) => {
                        self.generations.push(start..self.text.len());
                        None
                    }
                    Some((start, depth)) => Some((start, depth - 1)),
                    None => None,
                };
            }
            Mark::SectionStart(_) | Mark::SectionEnd => {}
        }
        Ok(())
    }

    fn close_text_part(&mut self) {
        if self.rules == Rules::Prompty && self.after_role {
            self.after_role = false;
            if self.pending.starts_with('\n') {
                self.pending.remove(0);
            }
        }
        // After a cache breakpoint the text goes on as printed.
        let trimmed = match self.parts.last() {
            Some(ContentPart::CacheBreakpoint) => self.pending.trim_end(),
            _ => self.pending.trim(),
        };
        if !trimmed.trim_start().is_empty() {
            let text = match self.rules {
                Rules::Dotprompt => std::mem::take(&mut self.pending),
                _ => trimmed.to_string(),
            };
            self.parts.push(ContentPart::Text { text });
        }
        self.pending.clear();
    }

    /// A cache breakpoint ends the text before it in the message being
    /// written (kept as printed: the text on either side of it joins as
    /// in the rendered text); with none, the message before.
    fn cache_breakpoint(&mut self) -> Result<(), SplitError> {
        if self.rules != Rules::Teleprompt {
            return Err(SplitError::BreakpointOutsideTeleprompt);
        }
        let text = std::mem::take(&mut self.pending);
        let text = match self.parts.last() {
            Some(ContentPart::CacheBreakpoint) => text,
            _ => text.trim_start().to_string(),
        };
        if !text.trim().is_empty() {
            self.parts.push(ContentPart::Text { text });
        }
        if !self.parts.is_empty() {
            self.parts.push(ContentPart::CacheBreakpoint);
            return Ok(());
        }
        match self.items.last_mut() {
            Some(Item::Message(message)) => {
                if message.content.last() != Some(&ContentPart::CacheBreakpoint) {
                    message.content.push(ContentPart::CacheBreakpoint);
                }
                Ok(())
            }
            Some(Item::History) => {
                self.items.push(Item::CacheBreakpoint);
                Ok(())
            }
            Some(Item::CacheBreakpoint) => Ok(()),
            None => Err(SplitError::NothingToCache),
        }
    }

    fn close_message(&mut self) {
        if self.rules == Rules::Prompty && self.parts.is_empty() {
            return self.close_prompty_message();
        }
        self.close_text_part();
        // A text a breakpoint ended keeps its end as printed; at the end
        // of the message, it is trimmed as the last text is.
        if let [.., ContentPart::Text { text }, ContentPart::CacheBreakpoint] =
            self.parts.as_mut_slice()
        {
            text.truncate(text.trim_end().len());
        }
        if !self.parts.is_empty() {
            self.items.push(Item::Message(Message {
                role: self.role,
                content: std::mem::take(&mut self.parts),
                extra: self.attributes.clone(),
            }));
        }
    }

    /// A message of text only, by Prompty's rules
    /// ([`Markers::split_prompty`]).
    fn close_prompty_message(&mut self) {
        let mut text = std::mem::take(&mut self.pending);
        if std::mem::take(&mut self.after_role) && text.starts_with('\n') {
            text.remove(0);
        }
        let lines = python_lines(&text);
        if lines.is_empty() {
            return;
        }
        let joined = lines.join("\n");
        // Beside the history (the very marker that closes this text, or
        // one before it in this message) Prompty trims all whitespace and
        // drops what is left empty; elsewhere only line breaks, keeping
        // an empty message.
        let content = match self.after_history {
            true => joined.trim_matches(python_space),
            false => joined.trim_matches('\n'),
        };
        if self.after_history && content.is_empty() {
            return;
        }
        self.items.push(Item::Message(Message {
            role: self.role,
            content: vec![ContentPart::Text {
                text: content.to_string(),
            }],
            extra: self.attributes.clone(),
        }));
    }

    fn finish(mut self) -> Result<Split, SplitError> {
        if let Some((spec, _)) = self.section_open.take() {
            return Err(SplitError::UnpairedSection(format!(
                "the section \"{}\" is not closed: end it with endsection",
                spec.name
            )));
        }
        self.close_message();
        if self.rules == Rules::Dotprompt && !self.history_placed {
            let last_is_user = matches!(
                self.items.last(),
                Some(Item::Message(Message {
                    role: Role::User,
                    ..
                }))
            );
            let at = match last_is_user {
                true => self.items.len().saturating_sub(1),
                false => self.items.len(),
            };
            self.items.insert(at, Item::History);
        }
        Ok(Split {
            text: self.text,
            items: self.items,
            generations: self.generations,
            sections: self.sections,
        })
    }
}

/// The lines of `text` as Python's `str.splitlines` cuts them (Prompty's
/// parser does): at `\n`, `\r\n`, `\r` and the other line boundaries
/// Python knows; a final line break ends the last line without starting
/// another.
fn python_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let end = match c {
            '\r' => match chars.peek() {
                Some((_, '\n')) => {
                    chars.next();
                    at + 2
                }
                _ => at + 1,
            },
            '\n' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => at + c.len_utf8(),
            _ => continue,
        };
        lines.push(text.get(start..at).unwrap_or_default());
        start = end;
    }
    if start < text.len() {
        lines.push(text.get(start..).unwrap_or_default());
    }
    lines
}

/// Python's `str.isspace`: Unicode white space and the separators
/// `\x1c`–`\x1f`.
fn python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// A secret of 128 bits, as 32 hex digits, that no text existing before this
/// call can contain except by a 1-in-2^128 guess.
///
/// The bits come from the operating system's random source (`getrandom`).
/// Should that fail (no such source in a sandbox, say), the secret falls
/// back to [`hashed_secret`] rather than failing the render.
fn fresh_secret() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        return hashed_secret();
    }
    let mut secret = String::with_capacity(32);
    for byte in bytes {
        secret.push(hex_digit(byte >> 4).to_ascii_lowercase());
        secret.push(hex_digit(byte & 0x0F).to_ascii_lowercase());
    }
    secret
}

/// The fallback secret, when the operating system's random source fails.
///
/// Each half is a SipHash-1-3 of (render counter, time, thread, half) under a
/// fresh [`RandomState`]. `RandomState` keys come from the operating system's
/// random source (once per thread, then stepped per instance), so the output
/// is unpredictable to anyone who cannot read this process's memory. The
/// counter and the clock only make two secrets of one process differ even if
/// the keys were to repeat; they add no secrecy of their own.
fn hashed_secret() -> String {
    let render = RENDERS.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos())
        .unwrap_or_default();
    let thread = std::thread::current().id();
    let mut secret = String::with_capacity(32);
    for half in 0u8..2 {
        let hash = RandomState::new().hash_one((render, nanos, thread, half));
        secret.push_str(&format!("{hash:016x}"));
    }
    secret
}

/// The role names a template may use: every role but `tool`, whose messages
/// answer a tool call id and so come only from the history.
const TEMPLATE_ROLES: [&str; 4] = ["system", "developer", "user", "assistant"];

impl Markers {
    /// `role(name)` as a template calls it: the marker that starts a
    /// message. Errors are sentences for the template author: an unknown
    /// name, with the closest valid one, or `tool`.
    pub(crate) fn template_role(&self, name: &str) -> Result<String, String> {
        template_role(name).map(|role| self.role(role))
    }

    /// `role(name, attributes)`: the message also gets the fields of
    /// `attributes`, a JSON object's text (what a Prompty role line's
    /// `[name="Alice"]` becomes).
    pub(crate) fn template_role_with(
        &self,
        name: &str,
        attributes: &str,
    ) -> Result<String, String> {
        let role = template_role(name)?;
        match serde_json::from_str::<Value>(attributes) {
            Ok(Value::Object(attributes)) => Ok(self.role_with(role, &attributes)),
            _ => Err(format!(
                "the attributes of role(\"{name}\", …) must be a JSON object's text, such as '{{\"name\": \"Alice\"}}'"
            )),
        }
    }
}

fn template_role(name: &str) -> Result<Role, String> {
    match Role::parse(name) {
        Some(Role::Tool) => Err(
            "role \"tool\" cannot be written by a template: tool results answer a tool call id and come from the history"
                .to_string(),
        ),
        Some(role) => Ok(role),
        None => Err(match closest(name, TEMPLATE_ROLES) {
            Some(near) => format!("unknown role \"{name}\": did you mean \"{near}\"?"),
            None => format!(
                "unknown role \"{name}\": use one of \"system\", \"developer\", \"user\", \"assistant\""
            ),
        }),
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod lazy_secret {
    use super::*;

    /// The secret is made on first use; clones made before that still
    /// share it, so markers emitted through the copy of the render's scope
    /// that Jinja's filters hold split with the render's own `Markers`.
    #[test]
    fn clones_share_the_lazily_made_secret() {
        let markers = Markers::new();
        let clone = markers.clone();
        let output = format!("{}a{}b", clone.role(Role::System), markers.role(Role::User));
        let split = markers.split(&output, Role::User).unwrap();
        assert_eq!(split.text, "ab");
        assert_eq!(split.items.len(), 2);
    }
}
