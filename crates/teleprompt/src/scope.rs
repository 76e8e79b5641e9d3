//! One render's scope: what a render carries besides its template and its
//! data. The clock (Jinja's `strftime_now`), the budget (bytes printed and
//! built so far, against the template's limits), the role markers that
//! `role()`, `history()`, `media()` and `{% generation %}` print, and
//! when the host wants it stopped ([`Stop`]: a deadline, a cancel token).
//!
//! The caller makes one per render ([`RenderScope::new`]) and hands it
//! down: the engine takes it as an argument; minijinja calls Jinja's
//! filters and functions without it, so a Jinja render sets it for them
//! while it runs (`syntax::jinja::current`). After the render, the caller
//! cuts the output at the scope's markers.

use std::time::Instant;

use jiff::Zoned;

use crate::limits::{Exceeded, Limits};
use crate::messages::Markers;
use crate::options::CancelToken;

/// The scope of one render.
#[derive(Debug)]
pub(crate) struct RenderScope {
    /// The current time, in the time zone the host chose.
    now: Zoned,
    /// Bytes printed and built so far, and the limits they are held to.
    pub(crate) budget: Budget,
    /// This render's markers, with their secret.
    markers: Markers,
    /// When the host wants the render stopped.
    pub(crate) stop: Stop,
    /// What wrote each stretch of the output, when the host asked for a
    /// source map (`None`: nothing is recorded).
    pub(crate) trace: Option<Box<Trace>>,
}

impl RenderScope {
    /// The scope of a render at `now`, held to `limits` (the template's),
    /// with fresh markers.
    pub(crate) fn new(now: Zoned, limits: Limits) -> RenderScope {
        RenderScope {
            now,
            budget: Budget::new(limits),
            markers: Markers::new(),
            stop: Stop::default(),
            trace: None,
        }
    }

    /// The scope, recording a source map ([`Trace`]) when `trace`.
    pub(crate) fn with_trace(mut self, trace: bool) -> RenderScope {
        self.trace = trace.then(Box::default);
        self
    }

    /// The scope, stopped as `stop` says.
    pub(crate) fn with_stop(mut self, stop: Stop) -> RenderScope {
        self.stop = stop;
        self
    }

    /// The scope for Jinja's filters while a render runs on minijinja: the
    /// same clock and markers, with the budget lent (see
    /// [`RenderScope::take_back`]).
    pub(crate) fn lend(&mut self) -> RenderScope {
        RenderScope {
            now: self.now.clone(),
            budget: self.budget,
            markers: self.markers.clone(),
            stop: self.stop.clone(),
            trace: None,
        }
    }

    /// What the scope [`RenderScope::lend`] made spent.
    pub(crate) fn take_back(&mut self, lent: RenderScope) {
        self.budget = lent.budget;
    }

    /// A scope at the Unix epoch, in UTC (for the tests, which render at a
    /// fixed time).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn at_epoch(limits: Limits) -> RenderScope {
        RenderScope::new(
            jiff::Timestamp::UNIX_EPOCH.to_zoned(jiff::tz::TimeZone::UTC),
            limits,
        )
    }

    /// A fresh scope at the epoch, held to `limits`, with the markers (the
    /// secret) of this one: for the second of two renders whose texts the
    /// tests and the fuzz hook compare (the direct path and minijinja).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn again_at_epoch(&self, limits: Limits) -> RenderScope {
        RenderScope {
            markers: self.markers.clone(),
            ..RenderScope::at_epoch(limits)
        }
    }

    /// The render's time.
    pub(crate) fn now(&self) -> &Zoned {
        &self.now
    }

    /// The render's markers, to cut its output at.
    pub(crate) fn markers(&self) -> &Markers {
        &self.markers
    }

    /// `role(name)`: the marker that starts a message. The error is a
    /// sentence for the template's author (an unknown role, `tool`).
    pub(crate) fn role(&self, name: &str) -> Result<String, String> {
        self.room_for_a_message()?;
        self.markers.template_role(name)
    }

    /// Fails once the render has made as many messages and media parts
    /// as one list may hold (`max_items`): 16 MiB of role lines would
    /// otherwise make two million messages, gigabytes of them.
    fn room_for_a_message(&self) -> Result<(), String> {
        let most = self.budget.limits().max_items;
        if self.markers.made() >= most {
            return Err(Exceeded::Messages(most).to_string());
        }
        Ok(())
    }

    /// `role(name, attributes)`: a message with fields besides its role
    /// (a Prompty role line's attributes, as a JSON object's text).
    pub(crate) fn role_with(&self, name: &str, attributes: &str) -> Result<String, String> {
        self.room_for_a_message()?;
        self.markers.template_role_with(name, attributes)
    }

    /// `history()`: the marker that places the conversation history.
    pub(crate) fn history(&self) -> String {
        self.markers.history()
    }

    /// `cache_breakpoint()`: the marker of a provider's cache breakpoint.
    pub(crate) fn cache_breakpoint(&self) -> Result<String, String> {
        self.room_for_a_message()?;
        Ok(self.markers.cache_breakpoint())
    }

    /// `media(url, content_type)`: the marker of a media part.
    pub(crate) fn media(&self, url: &str, content_type: &str) -> Result<String, String> {
        self.room_for_a_message()?;
        self.markers
            .media(url, content_type)
            .map_err(|error| error.to_string())
    }

    /// Dotprompt's `section(name)`: the marker of a part the host fills.
    pub(crate) fn section(&self, name: &str) -> Result<String, String> {
        self.room_for_a_message()?;
        self.markers
            .section(name)
            .map_err(|error| error.to_string())
    }

    /// The marker that starts a budget section (`{% section "docs" %}`).
    pub(crate) fn section_start(
        &self,
        spec: &crate::messages::SectionSpec,
    ) -> Result<String, String> {
        self.room_for_a_message()?;
        Ok(self.markers.section_start(spec))
    }

    /// The marker that ends a budget section.
    pub(crate) fn section_end(&self) -> String {
        self.markers.section_end()
    }

    /// `text` between generation markers (a `{% generation %}` block).
    pub(crate) fn generation(&self, text: &str) -> String {
        self.markers.generation(text)
    }
}

/// What wrote each stretch of a render's output, in output order: the
/// evaluator notes every text and value it prints (a render on
/// minijinja: the spans minijinja records). Turned into a
/// [`crate::messages::SourceMap`] after the render.
#[derive(Debug, Default)]
pub(crate) struct Trace {
    pub(crate) chunks: Vec<Chunk>,
    /// The templates chunks of a render on minijinja name besides the
    /// one rendered (its includes), by [`Chunk::file`].
    pub(crate) files: Vec<std::sync::Arc<str>>,
    /// The output passed 4 GiB, past what a chunk can say, or the render
    /// noted [`Trace::MAX_CHUNKS`]: the chunks stop there.
    pub(crate) cut: bool,
}

/// One stretch of the output and what wrote it (offsets kept in 32 bits:
/// a render notes thousands).
#[derive(Clone, Debug)]
pub(crate) struct Chunk {
    out: [u32; 2],
    span: [u32; 2],
    /// The template it is in: 0 for the template rendered, else an
    /// included one (a render on minijinja), `Trace::files[file - 1]`.
    pub(crate) file: u32,
    pub(crate) wrote: Wrote,
}

impl Chunk {
    /// Its bytes in the output.
    pub(crate) fn out(&self) -> std::ops::Range<usize> {
        self.out[0] as usize..self.out[1] as usize
    }

    /// The bytes of the template's source that wrote it.
    pub(crate) fn span(&self) -> std::ops::Range<usize> {
        self.span[0] as usize..self.span[1] as usize
    }
}

/// What kind of source wrote a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wrote {
    /// Literal text of the template.
    Text,
    /// A printed value, with where it is in the data when the value
    /// printed is the data's own.
    Value(Option<DataAt>),
}

/// Where a printed value is in the data, by address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DataAt {
    /// A JSON value of the data.
    Node(usize),
    /// Text inside one of the data's strings.
    Text(usize),
}

impl Trace {
    /// The most chunks a render notes (about 40 MB of them): an output of
    /// millions of one-byte values would otherwise make a trace many times
    /// its own size. Past it the map says nothing of the rest (`fixed`
    /// segments without a span).
    pub(crate) const MAX_CHUNKS: usize = 1 << 20;

    /// Moves the chunks from `first` on past the indentation a standalone
    /// Handlebars partial added (`inserted`: each indentation's place in
    /// the output before and after, `len` bytes each), and notes the
    /// indentation as text of `span`.
    pub(crate) fn indent(
        &mut self,
        first: usize,
        inserted: &[(usize, usize)],
        len: usize,
        span: std::ops::Range<usize>,
    ) {
        if inserted.is_empty() || first >= self.chunks.len() {
            return;
        }
        // How far a position `at` of the unindented output moves: one
        // indentation per line start at or before it (`after`: a chunk's
        // end moves only past the indentations inside it).
        let moved = |at: usize, end: bool| {
            let before = inserted.partition_point(|&(was, _)| was < at || (!end && was == at));
            at + before * len
        };
        let chunks = self.chunks.split_off(first);
        let mut indents = inserted.iter().peekable();
        for chunk in chunks {
            let (out, chunk_span) = (chunk.out(), chunk.span());
            let start = moved(out.start, false);
            while let Some(&&(_, at)) = indents.peek() {
                if at >= start {
                    break;
                }
                self.push(at..at + len, span.clone(), Wrote::Text);
                indents.next();
            }
            let end = moved(out.end, true);
            // A chunk with line breaks inside is cut at its indentations.
            let mut from = start;
            while let Some(&&(_, at)) = indents.peek() {
                if at >= end {
                    break;
                }
                self.push(from..at, chunk_span.clone(), chunk.wrote);
                self.push(at..at + len, span.clone(), Wrote::Text);
                from = at + len;
                indents.next();
            }
            self.push(from..end, chunk_span, chunk.wrote);
        }
        for &(_, at) in indents {
            self.push(at..at + len, span.clone(), Wrote::Text);
        }
    }

    /// Notes that `out` of the output came from `span` of the source.
    pub(crate) fn push(
        &mut self,
        out: std::ops::Range<usize>,
        span: std::ops::Range<usize>,
        wrote: Wrote,
    ) {
        self.push_in(None, out, span, wrote);
    }

    /// [`Trace::push`] for a span of the template `file` names.
    pub(crate) fn push_in(
        &mut self,
        file: Option<std::sync::Arc<str>>,
        out: std::ops::Range<usize>,
        span: std::ops::Range<usize>,
        wrote: Wrote,
    ) {
        if out.is_empty() || self.cut {
            return;
        }
        if self.chunks.len() >= Trace::MAX_CHUNKS {
            self.cut = true;
            return;
        }
        let (Ok(start), Ok(end)) = (u32::try_from(out.start), u32::try_from(out.end)) else {
            self.cut = true;
            return;
        };
        let file = match file {
            None => 0,
            Some(name) => match self.files.iter().position(|known| *known == name) {
                Some(at) => at + 1,
                None => {
                    self.files.push(name);
                    self.files.len()
                }
            },
        };
        let narrow = |at: usize| u32::try_from(at).unwrap_or(u32::MAX);
        self.chunks.push(Chunk {
            out: [start, end],
            span: [narrow(span.start), narrow(span.end)],
            file: u32::try_from(file).unwrap_or(u32::MAX),
            wrote,
        });
    }

    /// The name of the template `chunk` is in (`None`: the one rendered).
    pub(crate) fn file_of(&self, chunk: &Chunk) -> Option<&std::sync::Arc<str>> {
        self.files.get((chunk.file as usize).checked_sub(1)?)
    }
}

/// What one render has printed and built, against its limits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// Bytes printed by Jinja's `{{ … }}` so far, captured output
    /// (`{% set %}` blocks, macros, filter blocks) included. (The engine
    /// bounds its output by the output's length.)
    printed: usize,
    /// Bytes of text functions, helpers, filters and operators have built.
    built: usize,
    /// Steps of work Jinja's filters did on minijinja (items walked, 64
    /// bytes of text read per step), held to `max_steps`.
    work: u64,
    limits: Limits,
}

impl Budget {
    /// Nothing spent yet, held to `limits`.
    pub(crate) fn new(limits: Limits) -> Budget {
        Budget {
            printed: 0,
            built: 0,
            work: 0,
            limits,
        }
    }

    /// The limits the render is held to.
    #[inline]
    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Counts `bytes` more printed; an error once the render has printed
    /// more than `max_output`.
    #[inline]
    pub(crate) fn spend(&mut self, bytes: usize) -> Result<(), Exceeded> {
        self.printed = self.printed.saturating_add(bytes);
        if self.printed > self.limits.max_output {
            return Err(Exceeded::Output(self.limits.max_output));
        }
        Ok(())
    }

    /// Whether one text of `bytes` may be built (`max_value_bytes`).
    #[inline]
    pub(crate) fn fits(&self, bytes: usize) -> Result<(), Exceeded> {
        if bytes > self.limits.max_value_bytes {
            return Err(Exceeded::Value(self.limits.max_value_bytes));
        }
        Ok(())
    }

    /// Counts a text of `bytes` built: one text may be at most
    /// `max_value_bytes`, all of them together 16 × `max_output` (a value
    /// grown a little on every pass of a long loop is copied each time:
    /// the total stops it before the copying takes minutes).
    #[inline]
    pub(crate) fn build(&mut self, bytes: usize) -> Result<(), Exceeded> {
        self.fits(bytes)?;
        self.built = self.built.saturating_add(bytes);
        let most = self.limits.max_built_bytes();
        if self.built > most {
            return Err(Exceeded::Built(most));
        }
        Ok(())
    }

    /// Counts `steps` of work a filter did; an error past `max_steps`.
    pub(crate) fn work(&mut self, steps: usize) -> Result<(), Exceeded> {
        let steps = u64::try_from(steps).unwrap_or(u64::MAX);
        self.work = self.work.saturating_add(steps);
        if self.work > self.limits.max_steps {
            return Err(Exceeded::Steps(self.limits.max_steps));
        }
        Ok(())
    }

    /// The most bytes a text may have now: what the render may still
    /// print, or the size one value may have if that is less, with the
    /// bound that sets it.
    pub(crate) fn room(&self) -> (usize, Exceeded) {
        let printable = self.limits.max_output.saturating_sub(self.printed);
        if printable <= self.limits.max_value_bytes {
            (printable, Exceeded::Output(self.limits.max_output))
        } else {
            (
                self.limits.max_value_bytes,
                Exceeded::Value(self.limits.max_value_bytes),
            )
        }
    }
}

/// Bytes of text an operation reads that count as one step, in every
/// evaluator (the engine's `tick_work`, Jinja's filters and data reads on
/// minijinja; minijinja's fuel counts 64 bytes built as one instruction
/// too).
pub(crate) const BYTES_PER_STEP: usize = 64;

/// When the host wants a render stopped: a deadline, a cancel token
/// (`RenderOptions::deadline`, `RenderOptions::cancel`). The evaluators
/// ask [`Stop::check`] every so often (the engine every
/// [`Stop::EVERY`] steps; a render on minijinja as it reads the data,
/// prints, and calls teleprompt's filters), so a render stops within a
/// few milliseconds of its deadline.
#[derive(Clone, Debug, Default)]
pub(crate) struct Stop {
    cancel: Option<CancelToken>,
    /// The deadline, and how many milliseconds after the render's start
    /// it was (for the error).
    deadline: Option<(Instant, u64)>,
}

impl Stop {
    /// How many steps (or checks) pass between two looks at the clock
    /// and the token: a look costs about as much as 20 steps.
    pub(crate) const EVERY: u64 = 256;

    /// Stopped at `deadline` or when `cancel` is cancelled.
    pub(crate) fn new(deadline: Option<Instant>, cancel: Option<CancelToken>) -> Stop {
        let deadline = deadline.map(|at| {
            let millis = at.saturating_duration_since(Instant::now()).as_millis();
            (at, u64::try_from(millis).unwrap_or(u64::MAX))
        });
        Stop { cancel, deadline }
    }

    /// Whether the host may stop the render at all.
    #[inline]
    pub(crate) fn is_armed(&self) -> bool {
        self.cancel.is_some() || self.deadline.is_some()
    }

    /// An error once the token is cancelled or the deadline has passed.
    pub(crate) fn check(&self) -> Result<(), Exceeded> {
        if self.cancel.as_ref().is_some_and(CancelToken::is_cancelled) {
            return Err(Exceeded::Cancelled);
        }
        match self.deadline {
            Some((at, millis)) if Instant::now() >= at => Err(Exceeded::Deadline(millis)),
            _ => Ok(()),
        }
    }
}
