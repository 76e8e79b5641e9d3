//! The `teleprompt` command: render and check prompt files.

mod annotate;
mod batch;
mod choices;
mod diff;
mod input;
mod output;
mod report;

/// Tokenizing a `tokenizer.json` vocabulary and rendering allocate many
/// small values; mimalloc serves them about twice as fast as the system
/// allocator (bench/README.md, "Tokens").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{ErrorKind, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};
use teleprompt::context::Clock;
use teleprompt::limits::Limits;
use teleprompt::{
    prompt_files, Error, ErrorClass, Library, LoadOptions, OutputFormat, Prompt, PromptContext,
    RenderOptions, Strictness, Syntax,
};
use teleprompt_testing::{self as testing, Outcome, PromptTests};

/// Exit status for a document, template or data error, and for output
/// that cannot be written.
const EXIT_FAILURE: u8 = 1;
/// Exit status for a usage error: bad flags, an unreadable path.
const EXIT_USAGE: u8 = 2;

#[derive(Parser)]
#[command(
    name = "teleprompt",
    version = env!("TELEPROMPT_VERSION"),
    about = "Render, check and test prompt files for LLM agents",
    long_about = "Render, check and test prompt files for LLM agents.\n\n\
        A prompt file is optional YAML front matter between `---` lines, then a \
        template body in Jinja, Go text/template or Handlebars syntax.",
    after_help = "Examples:\n  \
        teleprompt render examples/rapida/assistant.j2 --data examples/rapida/data.yaml\n  \
        teleprompt check examples/\n  \
        teleprompt test examples/"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Colour of error reports and warnings on stderr: auto (when stderr
    /// is a terminal and NO_COLOR is not set), always or never.
    #[arg(long, global = true, value_name = "WHEN", value_enum, default_value_t = report::Color::Auto)]
    color: report::Color,
}

/// Whether reports on stderr are in colour: chosen once, from `--color`,
/// before the command runs.
static COLOR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// An error's report as stderr shows it: in colour where `--color` says.
fn error_report(error: &Error) -> String {
    report::painted(error, COLOR.get().copied().unwrap_or(false))
}

#[derive(Subcommand)]
enum Command {
    /// Render a prompt to stdout (or --output FILE).
    #[command(after_help = "Examples:\n  \
        teleprompt render task.j2 --data issue.json\n  \
        teleprompt render task.j2 --set issue.title='Fix login' --attempt 2\n  \
        teleprompt render chat.j2 --history history.json --turn 3 --format openai\n  \
        cat data.yaml | teleprompt render WORKFLOW.md --syntax go --data -\n  \
        teleprompt render tokenizer_config.json --data conversation.json --set add_generation_prompt=true\n  \
        teleprompt render template.jinja --syntax chat-template --history messages.json --now 2026-11-23T10:00:00Z\n\n\
        Hugging Face chat templates (tokenizer_config.json, chat_template.jinja, or any file with\n\
        --syntax chat-template) render as transformers' apply_chat_template does: the data holds\n\
        messages, tools, documents, add_generation_prompt and any extra keys; --history sets messages.\n\
        Values: --set wins over --data, which wins over the prompt's input.default.\n\
        Exit status: 0 rendered; 1 a document, template or data error, or output that cannot be\n\
        written (a closed stdout ends quietly); 2 a usage error.")]
    Render(Box<RenderArgs>),
    /// Load prompts and report every document and parse error, in all files.
    #[command(after_help = "Examples:\n  \
        teleprompt check prompts/\n  \
        teleprompt check WORKFLOW.md --syntax go\n  \
        teleprompt check prompts/ --format github --deny-warnings\n  \
        teleprompt check prompts/ --format sarif > teleprompt.sarif\n\n\
        In a directory, prompt files are files with a template extension \
        (.j2, .jinja, .django, .pongo2, .gotmpl, .tmpl, .hbs, .handlebars, .prompty), \
        tokenizer_config.json and chat_template.jinja, Semantic Kernel prompt YAML \
        (a top-level template_format), and .md, .prompt and .txt files that open \
        with front matter; .gitignore is honoured.\n\
        Formats: text (reports on stderr, in colour on a terminal unless NO_COLOR is set; \
        a summary on stdout), json ({\"valid\", \"errors\", \"warnings\"}), sarif (SARIF 2.1.0 \
        for code scanning), github (workflow annotations); the last three print on stdout.\n\
        Exit status: 0 all prompts load; 1 some prompt has errors (or warnings, with \
        --deny-warnings), or output that cannot be written; 2 a usage error or a path \
        that cannot be read.")]
    Check(CheckArgs),
    /// Print what a prompt's template reads of its data, as front matter
    /// `input.schema` to declare it.
    #[command(after_help = "Examples:\n  \
        teleprompt inspect WORKFLOW.md\n  \
        teleprompt inspect task.j2 --format json-schema\n\n\
        Go and Handlebars templates: every path, with its nesting and the lists walked by \
        range or #each; Jinja: the top-level names. Every input is `any`: give each its type. The prompt context's own \
        namespaces (system, run, attempt, …) are not inputs and are left out.\n\
        Exit status: 0 printed; 1 the prompt does not load; 2 a usage error.")]
    Inspect(InspectArgs),
    /// Run the prompts' tests: cases in front matter `tests:` or a sibling NAME.tests.yaml.
    #[command(after_help = "Examples:\n  \
        teleprompt test\n  \
        teleprompt test examples/ --syntax go\n  \
        teleprompt test prompts/triage.md --update\n\n\
        A case gives data (or a data file), turn, max_turns, attempt, now, time_zone, history\n\
        and context, and expects the text (expect), the conversation (expect_messages: a list\n\
        of role and content) or an error (expect_error: class, message_contains). A mismatch\n\
        shows a line diff: - expected, + actual.\n\
        --update writes what failing cases rendered into their expect / expect_messages (an\n\
        empty `expect:` is filled in), changing nothing else in the file.\n\
        Exit status: 0 every case passed (or was updated); 1 a case failed or a tests file\n\
        cannot be read; 2 a usage error.")]
    Test(TestArgs),
    /// Render every line of a JSON Lines file through one prompt, in
    /// parallel, one output line per input line, in order.
    #[command(after_help = "Examples:\n  \
        teleprompt batch task.j2 --input rows.jsonl --output out.jsonl\n  \
        teleprompt batch chat.j2 --input records.jsonl --rows-are records --format openai > out.jsonl\n  \
        teleprompt batch task.j2 --input rows.jsonl --output out.jsonl --resume\n\n\
        Each input line is the data of one render (an object), or with --rows-are records a\n\
        record {data, history, turn, max_turns, attempt, now, time_zone, labels, validate_history}.\n\
        Each output line is {\"index\": i, \"output\": …} (a string for --format text, JSON for the\n\
        others) or {\"index\": i, \"error\": {rule, code, class, message, file, line, …}}, in input order:\n\
        rows in = outputs + errors. A line that is not a JSON object (blank, malformed, not UTF-8,\n\
        longer than --max-data-bytes) is an error line of class input with its line number.\n\
        The input streams with at most 32 MiB of rows in flight, so memory stays flat however long it is.\n\
        --resume keeps the output's whole lines (rows 0, 1, 2, … in order), drops a partial last\n\
        line, and renders from the first row they lack, appending.\n\
        A progress bar shows on a terminal; a summary line ends on stderr.\n\
        Exit status: 0 every row rendered (or --allow-errors); 1 a row failed, the prompt does\n\
        not load, or output that cannot be written; 2 a usage error (an unreadable prompt or\n\
        input, an output that cannot be resumed).")]
    Batch(Box<batch::BatchArgs>),
    /// Render two versions of a prompt with the same data and show what
    /// changed as the model sees it: the messages and lines, the tokens,
    /// and the prefix a provider keeps cached.
    #[command(after_help = "Examples:\n  \
        teleprompt diff old/task.j2 task.j2 --data issue.json\n  \
        teleprompt diff HEAD~1:prompts/task.j2 prompts/task.j2 --data issue.json --format markdown\n  \
        teleprompt diff main:system.j2 system.j2 --history chat.json --tokenizer o200k_base\n\n\
        OLD and NEW are files, or REV:PATH for a git revision (PATH from the current folder; a\n\
        revision's includes are read from the working tree). Exit status: 0 whether or not they\n\
        differ; 1 a document, template or data error; 2 a usage error.")]
    Diff(Box<diff::DiffArgs>),
    /// Explain an error code (TP0101) or rule (parse/unknown-filter); without
    /// one, list every code.
    #[command(after_help = "Examples:\n  \
        teleprompt explain TP0101\n  \
        teleprompt explain parse/unknown-filter\n  \
        teleprompt explain\n\n\
        A text report names each error's code (error[TP0101]: …), JSON and SARIF its code\n\
        and rule, GitHub annotations its rule. Exit status: 0 explained; 2 no such code.")]
    Explain {
        /// The code or rule (default: list them all).
        #[arg(value_name = "CODE")]
        code: Option<String>,
    },
    /// Print a shell's completion script for teleprompt.
    #[command(after_help = "Examples:\n  \
        teleprompt completions bash > ~/.local/share/bash-completion/completions/teleprompt\n  \
        teleprompt completions zsh > ~/.zfunc/_teleprompt\n  \
        teleprompt completions fish > ~/.config/fish/completions/teleprompt.fish\n  \
        teleprompt completions powershell >> $PROFILE")]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print a manual page (roff): teleprompt's, or a command's.
    #[command(after_help = "Examples:\n  \
        teleprompt man | man -l -\n  \
        teleprompt man render > ~/.local/share/man/man1/teleprompt-render.1")]
    Man {
        /// The command whose page to print (default: teleprompt's own,
        /// which lists the commands).
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
    },
    /// Serve a folder of prompts over HTTP (JSON), reloading when files change.
    #[cfg(feature = "serve")]
    #[command(after_help = "Examples:\n  \
        teleprompt serve prompts/\n  \
        teleprompt serve prompts/ --listen 0.0.0.0:8080 --token \"$TOKEN\"\n  \
        curl -s localhost:8080/v1/prompts/task/render -d '{\"data\": {\"issue\": {\"title\": \"Fix it\"}}}'\n\n\
        Routes: POST /v1/prompts/NAME/render with {data, history, turn, max_turns, attempt, now,\n\
        time_zone, format, labels}; GET /v1/prompts; GET /v1/prompts/NAME; GET /healthz; GET /metrics.\n\
        A file that stops loading keeps serving its last good version; GET /v1/prompts shows the error.\n\
        Logs go to stderr (TELEPROMPT_LOG=debug shows every failed render). SIGTERM or Ctrl-C stops\n\
        taking connections and answers the requests in flight first.\n\
        Exit status: 0 stopped by a signal; 2 the folder cannot be read or the address bound.")]
    Serve(Box<ServeArgs>),
}

#[cfg(feature = "serve")]
#[derive(Args)]
struct ServeArgs {
    /// The folder of prompts.
    dir: PathBuf,
    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: std::net::SocketAddr,
    /// A bearer token every request but /healthz must carry.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "TELEPROMPT_TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,
    /// The largest request body, in bytes or with a K, M or G suffix.
    #[arg(long, value_name = "SIZE", default_value = "4M", value_parser = input::parse_size)]
    max_request_bytes: usize,
    /// How long a render may take before the request gets 503, in
    /// milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    render_timeout: u64,
    /// How long a connection may take to send a request's headers, from
    /// when it opens or from its last response (an idle connection closes
    /// after it too), in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    header_timeout: u64,
    /// How long a request's body may take to arrive once its headers have,
    /// in milliseconds (past it: 408).
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    body_timeout: u64,
    /// The most connections open at once; more wait to be accepted.
    #[arg(long, value_name = "N", default_value_t = 512)]
    max_connections: usize,
    /// The most renders in flight; more get 503 with Retry-After
    /// (default: 4 × the cores).
    #[arg(long, value_name = "N")]
    max_renders: Option<usize>,
    /// The memory renders and their responses in flight may reserve (each:
    /// twice the output bound plus 12 times its request body), in bytes or
    /// with a K, M or G suffix; more get 503 with Retry-After.
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = input::parse_size)]
    max_inflight_bytes: usize,
    /// How long a shutdown (SIGTERM, Ctrl-C) waits for the requests in
    /// flight before dropping them, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    shutdown_timeout: u64,
    /// Do not reload when files change.
    #[arg(long)]
    no_watch: bool,
    /// Logs: text or json (one object a line), on stderr.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
    #[command(flatten)]
    load: LoadArgs,
}

#[derive(Args)]
struct InspectArgs {
    /// The prompt file.
    file: PathBuf,
    /// picoschema (front matter YAML) or json-schema.
    #[arg(long, value_name = "FORMAT", default_value = "picoschema", value_parser = ["picoschema", "json-schema"])]
    format: String,
    /// A KEY=VALUE pair shown on every error (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = input::parse_label)]
    labels: Vec<(String, String)>,
    #[command(flatten)]
    load: LoadArgs,
}

#[derive(Args)]
struct LoadArgs {
    /// Syntax for files whose front matter and extension do not name one;
    /// for a .j2/.jinja file, chat-template or django says which Jinja it
    /// is.
    #[arg(long, value_name = "SYNTAX", value_parser = choices::syntax())]
    syntax: Option<Syntax>,
    /// What a missing value does (overrides the front matter).
    #[arg(long, value_name = "LEVEL", value_parser = choices::strictness())]
    strict: Option<Strictness>,
    /// Which chat template of a tokenizer_config.json that lists several
    /// (default: "default").
    #[arg(long, value_name = "NAME")]
    template_name: Option<String>,
    /// The largest prompt file read, in bytes or with a K, M or G suffix
    /// (KiB, MiB, GiB).
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = input::parse_size)]
    max_template_bytes: usize,
    /// Set a bound of a render: max_output, max_value_bytes, max_items,
    /// max_steps, max_call_depth or max_nesting (sizes take K, M or G:
    /// max_output=1M). A prompt's front matter `limits:` may lower them,
    /// never raise them. Repeatable.
    #[arg(long = "limit", value_name = "NAME=VALUE", value_parser = input::parse_limit)]
    limits: Vec<(String, String)>,
    /// The folder whose files a prompt may include (partials, Jinja
    /// includes, Go templates of other files). Default: the prompt file's
    /// folder; for `check DIR` and `serve DIR`, DIR.
    #[arg(long, value_name = "DIR")]
    include_root: Option<PathBuf>,
    /// Resolve a Prompty file's `${env:NAME}` references (in inputs,
    /// sample and template) from the environment. Off: they are errors.
    #[arg(long)]
    allow_env: bool,
    /// Resolve a Prompty file's `${file:path}` references (in inputs,
    /// sample and template) from files beside it, inside the include
    /// root. Off: they are errors.
    #[arg(long)]
    allow_files: bool,
    /// Count tokens with this tokenizer (o200k_base, cl100k_base, or a
    /// Hugging Face tokenizer.json), over a prompt's front matter
    /// `tokenizer:` (`--format tokens`).
    #[arg(long, value_name = "NAME|FILE", value_parser = parse_tokenizer)]
    tokenizer: Option<teleprompt::tokens::Tokenizer>,
}

impl LoadArgs {
    fn options(&self) -> LoadOptions {
        let mut limits = Limits {
            max_template_bytes: self.max_template_bytes,
            ..Limits::default()
        };
        for (name, value) in &self.limits {
            // Checked when the flag was parsed.
            let _ = limits.set_text(name, value);
        }
        let mut options = LoadOptions::new().with_limits(limits);
        options.syntax = self.syntax;
        options.strictness = self.strict;
        options.template_name = self.template_name.clone();
        options.include_root = self.include_root.clone();
        options.tokenizer = self.tokenizer.clone();
        options
            .with_env_references(self.allow_env)
            .with_file_references(self.allow_files)
    }
}

#[derive(Args)]
struct RenderArgs {
    /// The prompt file; `-` reads the template from stdin (Jinja unless
    /// its front matter or --syntax names another; it includes files from
    /// the current folder, or --include-root).
    #[arg(required_unless_present = "template", value_name = "FILE|-")]
    file: Option<PathBuf>,
    /// The template itself, instead of a file (Jinja unless its front
    /// matter or --syntax names another).
    #[arg(short, long, value_name = "TEXT", conflicts_with = "file")]
    template: Option<String>,
    /// Write the output to FILE instead of stdout: whole or not at all
    /// (written beside it, then renamed over it).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Say on stderr what the prompt's `budget:` did: the turn's tokens,
    /// its limit, and what was cut to fit.
    #[arg(long)]
    explain: bool,
    /// Output: text, or JSON for messages, openai, anthropic or bedrock; tokens:
    /// each message's token count and ids, one JSON line (needs a tokenizer);
    /// sourcemap: each message's text with the template span (and data path)
    /// of every stretch, as JSON.
    #[arg(short, long, value_name = "FORMAT", default_value = "text", value_parser = choices::render_format())]
    format: RenderFormat,
    /// Print the conversation with where each line came from in the
    /// margin: the template's line and column, and the data paths printed
    /// on it.
    #[arg(long, conflicts_with = "format")]
    annotate: bool,
    #[command(flatten)]
    turn: TurnArgs,
}

/// What a render of one turn reads: data, history, clock, workspace, and
/// the prompt's load options.
#[derive(Args)]
struct TurnArgs {
    /// Data as a JSON, YAML or TOML file (by extension: .json, .yaml,
    /// .yml, .toml; else JSON or YAML by content); `-` reads stdin.
    /// Repeatable: files merge in order, a later file's values over an
    /// earlier one's (maps key by key).
    #[arg(short, long, value_name = "PATH|-")]
    data: Vec<String>,
    /// Set a value: KEY=VALUE, VALUE parsed as JSON when it parses, else a
    /// string; dotted keys nest (issue.title=Fix). Repeatable.
    #[arg(short = 's', long = "set", value_name = "KEY=VALUE", value_parser = input::parse_assignment)]
    sets: Vec<input::Assignment>,
    /// The render context of a Dotprompt file, as a JSON or YAML file: its
    /// keys are the template's data variables (`{{@auth.uid}}`, `{{@state.step}}`).
    #[arg(long, value_name = "PATH")]
    context: Option<PathBuf>,
    /// Conversation history: a JSON array of OpenAI-style chat messages (or
    /// an object with a `messages` array); YAML by its extension.
    #[arg(long, value_name = "PATH")]
    history: Option<PathBuf>,
    /// Skip the tool-call checks on the history.
    #[arg(long)]
    no_history_check: bool,
    /// Turn number of the conversation: sets run.turn_number (1 = first turn).
    #[arg(long, value_name = "N")]
    turn: Option<u32>,
    /// Sets run.max_turns.
    #[arg(long, value_name = "N")]
    max_turns: Option<u32>,
    /// Retry number: sets attempt (0 or absent = first run, attempt is null).
    #[arg(long, value_name = "N")]
    attempt: Option<u32>,
    /// The current time for system.* values, RFC 3339 (default: now).
    #[arg(long, value_name = "RFC3339", value_parser = parse_now)]
    now: Option<Clock>,
    /// Time zone of system.local_datetime, an IANA name (default: UTC).
    #[arg(long, value_name = "ZONE", value_parser = parse_time_zone)]
    time_zone: Option<String>,
    /// Workspace directory for env.*, files and readme (read only when the
    /// prompt uses them; .gitignore is honoured). Only regular files inside
    /// DIR are read: a README that links out of it, or is a pipe or a
    /// device, is an error; links are listed, never followed.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// How deep `files` lists the workspace (1 = its own entries).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "workspace")]
    workspace_depth: usize,
    /// Attach KEY=VALUE to every error of this render (e.g. issue=PROJ-42). Repeatable.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = input::parse_label)]
    labels: Vec<(String, String)>,
    /// The largest data file read (--data, --history, --context, stdin), in
    /// bytes or with a K, M or G suffix (KiB, MiB, GiB).
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = input::parse_size)]
    max_data_bytes: usize,
    #[command(flatten)]
    load: LoadArgs,
}

#[derive(Args)]
struct CheckArgs {
    /// Prompt files and directories to check.
    #[arg(required = true, value_name = "FILE|DIR")]
    paths: Vec<PathBuf>,
    /// Report format: text, json, sarif or github.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = report::Format::Text)]
    format: report::Format,
    /// Fail (status 1) when there are warnings.
    #[arg(long)]
    deny_warnings: bool,
    /// Pass a folder that holds no prompt files (by default that is an
    /// error: a check of nothing is most likely a wrong path).
    #[arg(long)]
    allow_empty: bool,
    /// Attach KEY=VALUE to every error and warning (e.g. commit=abc123). Repeatable.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = input::parse_label)]
    labels: Vec<(String, String)>,
    #[command(flatten)]
    load: LoadArgs,
}

#[derive(Args)]
struct TestArgs {
    /// Prompt files, tests files and directories (default: the current directory).
    #[arg(value_name = "FILE|DIR")]
    paths: Vec<PathBuf>,
    /// Rewrite the expectations of failing cases with what they rendered.
    #[arg(long)]
    update: bool,
    /// Pass when there are no test cases (by default that is a failure: a
    /// test run of nothing is most likely a wrong path).
    #[arg(long)]
    allow_empty: bool,
    /// A KEY=VALUE pair shown on every error (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = input::parse_label)]
    labels: Vec<(String, String)>,
    #[command(flatten)]
    load: LoadArgs,
}

fn parse_now(text: &str) -> Result<Clock, String> {
    Clock::parse(text).map_err(|error| error.message().to_string())
}

/// A time zone name the time zone database knows (the name is kept: the
/// context looks it up again).
fn parse_time_zone(text: &str) -> Result<String, String> {
    PromptContext::new()
        .time_zone_named(text)
        .map(|_| text.to_string())
        .map_err(|error| error.message().to_string())
}

fn parse_tokenizer(value: &str) -> Result<teleprompt::tokens::Tokenizer, String> {
    teleprompt::tokens::Tokenizer::named_or_file(value)
}

/// What `render --format` writes: a shape of the conversation, or its
/// source map.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum RenderFormat {
    Shape(OutputFormat),
    SourceMap,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // Help and version go to stdout (status 0), usage errors to
            // stderr (status 2); help that cannot be written fails.
            let status = u8::try_from(error.exit_code()).unwrap_or(EXIT_USAGE);
            return match error.print() {
                Ok(()) => ExitCode::from(status),
                Err(_) => ExitCode::from(status.max(EXIT_FAILURE)),
            };
        }
    };
    let color = cli.color.on_stderr();
    let _ = COLOR.set(color);
    let outcome = match cli.command {
        Command::Render(args) => render(&args),
        Command::Diff(args) => diff::diff(&args),
        Command::Check(args) => check(&args, color),
        Command::Inspect(args) => inspect(&args),
        Command::Test(args) => test(&args),
        Command::Batch(args) => batch::batch(&args),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve(&args),
        Command::Explain { code } => explain_code(code.as_deref()),
        Command::Completions { shell } => completions(shell),
        Command::Man { command } => man(command.as_deref()),
    };
    match outcome {
        Ok(status) => status,
        Err(WriteFailed) => ExitCode::from(EXIT_FAILURE),
    }
}

/// `teleprompt explain [CODE]`.
fn explain_code(name: Option<&str>) -> Result<ExitCode, WriteFailed> {
    use teleprompt::diagnostics::codes::{explain, CODES};
    let Some(name) = name else {
        let list: String = CODES
            .iter()
            .map(|code| format!("{}  {:<28} {}\n", code.code, code.rule, code.title))
            .collect();
        print_out(&list)?;
        return Ok(ExitCode::SUCCESS);
    };
    let Some(code) = explain(name) else {
        print_err(&format!(
            "error: no code or rule {name:?} (`teleprompt explain` lists them)\n"
        ))?;
        return Ok(ExitCode::from(EXIT_USAGE));
    };
    let mut text = format!("{} {}: {}\n\n", code.code, code.rule, code.title);
    // The explanation, wrapped at 78 columns.
    let mut line = String::new();
    for word in code.explanation.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > 78 {
            text.push_str(&line);
            text.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    text.push_str(&line);
    text.push('\n');
    print_out(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `teleprompt completions SHELL`.
fn completions(shell: clap_complete::Shell) -> Result<ExitCode, WriteFailed> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "teleprompt", &mut script);
    print_out(&String::from_utf8_lossy(&script))?;
    Ok(ExitCode::SUCCESS)
}

/// `teleprompt man [COMMAND]`: teleprompt(1), or teleprompt-COMMAND(1).
fn man(name: Option<&str>) -> Result<ExitCode, WriteFailed> {
    let mut command = Cli::command();
    command.build();
    let page = match name {
        None => command,
        Some(name) => {
            let found = command
                .get_subcommands()
                .find(|sub| sub.get_name() == name && name != "help");
            let Some(found) = found else {
                let names: Vec<&str> = command
                    .get_subcommands()
                    .map(clap::Command::get_name)
                    .filter(|sub| *sub != "help")
                    .collect();
                print_err(&format!(
                    "error: no command {name:?}: the commands are {}\n",
                    names.join(", ")
                ))?;
                return Ok(ExitCode::from(EXIT_USAGE));
            };
            found.clone()
        }
    };
    let mut roff = Vec::new();
    let page =
        clap_mangen::Man::new(page).source(format!("teleprompt {}", env!("CARGO_PKG_VERSION")));
    if let Err(error) = page.render(&mut roff) {
        print_err(&format!("error: cannot make the manual page: {error}\n"))?;
        return Ok(ExitCode::from(EXIT_FAILURE));
    }
    print_out(&String::from_utf8_lossy(&roff))?;
    Ok(ExitCode::SUCCESS)
}

/// Stdout or stderr could not be written (a full disk, a closed pipe): the
/// command stops, with status 1.
struct WriteFailed;

/// Writes `text` to stdout. A failure is reported on stderr, except a
/// closed pipe (`| head`), which ends the command quietly.
fn print_out(text: &str) -> Result<(), WriteFailed> {
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
    written.map_err(|error| {
        if error.kind() != ErrorKind::BrokenPipe {
            // Nothing more can be done when stderr fails too.
            let _ = writeln!(std::io::stderr(), "error: cannot write the output: {error}");
        }
        WriteFailed
    })
}

/// Writes `text` to stderr.
fn print_err(text: &str) -> Result<(), WriteFailed> {
    let mut stderr = std::io::stderr().lock();
    stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.flush())
        .map_err(|_| WriteFailed)
}

/// Reports `error` on stderr and returns the matching status, which stays
/// the same when stderr cannot be written.
fn fail(error: &Error) -> ExitCode {
    let mut report = error_report(error);
    // A file that cannot be read needs no explaining.
    if error.class() != ErrorClass::Io {
        report.push('\n');
        report.push_str(&report::explain_hint("this error", error.code()));
    }
    let _ = print_err(&report);
    ExitCode::from(exit_status(error))
}

fn exit_status(error: &Error) -> u8 {
    match error.class() {
        ErrorClass::Io => EXIT_USAGE,
        _ => EXIT_FAILURE,
    }
}

/// The prompt of `render`: its file, stdin (`-`) or `--template`, and the
/// name it goes by in reports.
fn load_prompt(args: &RenderArgs) -> Result<(Prompt, String), Error> {
    let mut options = args.turn.load.options();
    let source = match (&args.template, &args.file) {
        (Some(template), _) => Some(("<template>", template.as_bytes().to_vec())),
        (None, Some(file)) if file.as_os_str() == "-" => {
            if args.turn.data.iter().any(|source| source == "-") {
                return Err(Error::new(
                    ErrorClass::Io,
                    "the template and the data cannot both come from stdin: give --data a file",
                ));
            }
            let bytes = teleprompt::limits::read_from(
                std::io::stdin().lock(),
                "<stdin>",
                options.limits.max_template_bytes,
                teleprompt::limits::Input::Template,
            )?;
            Some(("<stdin>", bytes))
        }
        (None, Some(file)) => {
            let prompt = Prompt::from_file_with(file, &options)?;
            return Ok((prompt, file.display().to_string()));
        }
        (None, None) => None,
    };
    let Some((origin, bytes)) = source else {
        return Err(Error::new(
            ErrorClass::Io,
            "give a prompt file, `-` or --template",
        ));
    };
    // A template without a file: Jinja unless it says otherwise, with the
    // current folder as its include root.
    options.syntax = options.syntax.or(Some(Syntax::Jinja));
    if options.include_root.is_none() {
        options.include_root = std::env::current_dir().ok();
    }
    let prompt = Prompt::from_bytes(origin, &bytes, &options)?;
    Ok((prompt, origin.to_string()))
}

fn render(args: &RenderArgs) -> Result<ExitCode, WriteFailed> {
    let labels = &args.turn.labels;
    let (prompt, shown) = match load_prompt(args) {
        Ok(loaded) => loaded,
        Err(error) => return Ok(fail(&report::labelled(error, labels))),
    };
    let mapped = args.annotate || args.format == RenderFormat::SourceMap;
    let rendered = match render_turn(&prompt, &args.turn, mapped) {
        Ok(rendered) => rendered,
        Err(error) => return Ok(fail(&report::labelled(error, labels))),
    };
    for warning in rendered.warnings() {
        print_err(&format!("warning: {warning}\n"))?;
    }
    if let Some(error) = rendered.recovered_error() {
        print_err(&error_report(error))?;
        print_err(
            "note: printed the unrendered template, as the prompt sets `on_error: original`\n",
        )?;
    }
    let map = rendered.source_map().filter(|_| mapped);
    let format = match (args.annotate, args.format, map) {
        (true, _, Some(map)) => {
            write_output(args, &annotate::annotate(map, &shown))?;
            return Ok(ExitCode::SUCCESS);
        }
        (false, RenderFormat::SourceMap, Some(map)) => {
            let mut json = serde_json::to_string_pretty(map).unwrap_or_default();
            json.push('\n');
            write_output(args, &json)?;
            return Ok(ExitCode::SUCCESS);
        }
        (_, RenderFormat::Shape(format), _) if !mapped => format,
        _ => {
            let error = Error::new(
                ErrorClass::Render,
                "a turn whose budget cut its sections has no source map",
            );
            return Ok(fail(&report::labelled(error, labels)));
        }
    };
    let output = match format {
        OutputFormat::Text => rendered.text().to_string(),
        format => match rendered.to_format(format) {
            Ok(value) => {
                // Token ids one to a line would bury the counts.
                let mut json = match format {
                    OutputFormat::Tokens => serde_json::to_string(&value),
                    _ => serde_json::to_string_pretty(&value),
                }
                .unwrap_or_default();
                json.push('\n');
                json
            }
            Err(error) => return Ok(fail(&report::labelled(error, labels))),
        },
    };
    write_output(args, &output)?;
    if args.explain {
        print_err(&explain(rendered.budget()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes what `render` made: to stdout, or with `--output` to its file,
/// whole or not at all (a temporary file beside it, renamed over it; a
/// failure leaves the file as it was and is reported).
fn write_output(args: &RenderArgs, text: &str) -> Result<(), WriteFailed> {
    let Some(path) = &args.output else {
        return print_out(text);
    };
    output::write_atomically(path, text.as_bytes()).map_err(|error| {
        let _ = print_err(&format!(
            "error: cannot write the output to {}: {error}\n",
            path.display()
        ));
        WriteFailed
    })
}

/// Renders one turn of `prompt` from the command line's data: a chat
/// template gets exactly what transformers gives it (the data: messages,
/// tools, …; no agent namespaces), any other prompt a turn's context.
/// With `source_map`, the render records one ([`teleprompt::Rendered::source_map`]).
fn render_turn(
    prompt: &Prompt,
    args: &TurnArgs,
    source_map: bool,
) -> Result<teleprompt::Rendered, Error> {
    // Only what the prompt may read of the data file is built.
    let reads = |name: &str| prompt.reads(name);
    let keep: input::Keep<'_> = Some(&reads);
    if prompt.syntax() == Syntax::ChatTemplate {
        let (data, clock) = input::build_chat_data(args, keep)?;
        let options = RenderOptions::new()
            .with_clock(clock)
            .with_source_map(source_map);
        return prompt.render_with(data, &options);
    }
    let context = input::build_context(args, keep)?;
    let mut options = RenderOptions::new()
        .with_validate_history(!args.no_history_check)
        .with_source_map(source_map);
    options.context = input::read_render_context(args.context.as_deref(), args.max_data_bytes)?;
    prompt.render_turn_with(&context, &options)
}

/// `render --explain`: what the budget did, for people.
fn explain(budget: Option<&teleprompt::tokens::Budget>) -> String {
    let Some(budget) = budget else {
        return "budget: the prompt has none (front matter `budget: {total: N}`)\n".to_string();
    };
    let mut out = format!(
        "budget: {} of {} tokens{}\n",
        budget.tokens,
        budget.total,
        if budget.cuts.is_empty() {
            ", nothing cut"
        } else {
            ""
        }
    );
    for section in &budget.sections {
        out.push_str(&format!(
            "  section \"{}\" (priority {}): {} tokens, {} of {} block(s)\n",
            section.name, section.priority, section.tokens, section.items, section.printed
        ));
    }
    for cut in &budget.cuts {
        let what = match cut.part.as_str() {
            "history" => format!("{} message(s) of the history", cut.messages),
            name => format!("the section \"{name}\""),
        };
        out.push_str(&format!(
            "  cut: {what}, {} tokens: {}\n",
            cut.tokens, cut.reason
        ));
    }
    out
}

#[cfg(feature = "serve")]
fn serve(args: &ServeArgs) -> Result<ExitCode, WriteFailed> {
    use teleprompt_serve::{Config, LogFormat};
    teleprompt_serve::init_logging(match args.log_format.as_str() {
        "json" => LogFormat::Json,
        _ => LogFormat::Text,
    });
    if args.token.as_deref() == Some("") {
        // Most likely `--token "$TOKEN"` with TOKEN unset: serving without
        // authentication is what leaving the flag out asks for.
        print_err(
            "error: the token is empty (is the variable it comes from unset?): \
             give a token, or leave --token out to serve without one\n",
        )?;
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let config = Config {
        load: args.load.options(),
        listen: args.listen,
        token: args.token.clone(),
        max_request_bytes: args.max_request_bytes,
        render_timeout: std::time::Duration::from_millis(args.render_timeout),
        watch: (!args.no_watch).then(|| std::time::Duration::from_millis(200)),
        header_timeout: std::time::Duration::from_millis(args.header_timeout),
        body_timeout: std::time::Duration::from_millis(args.body_timeout),
        max_connections: args.max_connections,
        max_inflight_bytes: args.max_inflight_bytes,
        shutdown_timeout: std::time::Duration::from_millis(args.shutdown_timeout),
        ..Config::new(&args.dir)
    };
    let config = Config {
        max_renders: args.max_renders.unwrap_or(config.max_renders),
        ..config
    };
    match teleprompt_serve::serve_until_signal(config) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(error) => {
            print_err(&format!("error: {error}\n"))?;
            Ok(ExitCode::from(EXIT_USAGE))
        }
    }
}

fn inspect(args: &InspectArgs) -> Result<ExitCode, WriteFailed> {
    let prompt = match Prompt::from_file_with(&args.file, &args.load.options()) {
        Ok(prompt) => prompt,
        Err(error) => return Ok(fail(&report::labelled(error, &args.labels))),
    };
    let Some(inputs) = prompt.inputs() else {
        print_err(&format!(
            "{}: the template could not be analysed\n",
            args.file.display()
        ))?;
        return Ok(ExitCode::from(EXIT_FAILURE));
    };
    if inputs.reads_whole() {
        print_err(
            "note: the template uses its whole data (`.` or `toJSON .`): it may read more than is listed\n",
        )?;
    }
    let text = if args.format == "json-schema" {
        let schema = inputs.to_json_schema();
        format!(
            "{}\n",
            serde_json::to_string_pretty(&schema).unwrap_or_default()
        )
    } else {
        let mut text = String::from("input:\n  schema:");
        if inputs.is_empty() || inputs.names().next().is_none() {
            text.push_str(" {}\n");
        } else {
            text.push('\n');
            picoschema_yaml(&mut text, &inputs.to_picoschema(), 4);
        }
        text
    };
    print_out(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Picoschema (nested maps of names to `any`) as block YAML.
fn picoschema_yaml(out: &mut String, value: &serde_json::Value, indent: usize) {
    let serde_json::Value::Object(map) = value else {
        return;
    };
    for (name, inner) in map {
        out.push_str(&" ".repeat(indent));
        out.push_str(name);
        match inner {
            serde_json::Value::Object(_) => {
                out.push_str(":\n");
                picoschema_yaml(out, inner, indent + 2);
            }
            other => out.push_str(&format!(": {}\n", other.as_str().unwrap_or("any"))),
        }
    }
}

fn check(args: &CheckArgs, color: bool) -> Result<ExitCode, WriteFailed> {
    let color = args.format == report::Format::Text && color;
    let mut stream = report::Stream::new(args.format, color, args.deny_warnings);
    // In text, a stderr that fails does not change the status, which is
    // the problems'; it fails the command only when the check passes.
    let mut stderr_failed = false;
    let mut write = |out: report::Out| -> Result<(), WriteFailed> {
        if !out.stderr.is_empty() && print_err(&out.stderr).is_err() {
            stderr_failed = true;
        }
        if !out.stdout.is_empty() {
            print_out(&out.stdout)?;
        }
        Ok(())
    };
    write(stream.head())?;
    find_problems(args, &mut stream, &mut write)?;
    let status = if stream.io() {
        // An unreadable path is a usage error; other problems fail the check.
        EXIT_USAGE
    } else if stream.valid() {
        0
    } else {
        EXIT_FAILURE
    };
    write(stream.tail())?;
    if status == 0 && stderr_failed {
        return Err(WriteFailed);
    }
    Ok(ExitCode::from(status))
}

/// Loads every prompt under the paths of `args`, handing each file's
/// findings to `stream` as it is checked (and what it gives to `write`):
/// load errors (every one of each file, up to the cap), malformed test
/// cases, name clashes, and the warnings of the prompts that load, each
/// with the labels of `--label`.
fn find_problems(
    args: &CheckArgs,
    stream: &mut report::Stream,
    write: &mut impl FnMut(report::Out) -> Result<(), WriteFailed>,
) -> Result<(), WriteFailed> {
    let options = args.load.options();
    let labels = &args.labels;
    for path in &args.paths {
        // A directory is a library: its files include from it, as
        // `Library` and `serve` have them.
        let mut options = options.clone();
        let files = if path.is_dir() {
            options.include_root.get_or_insert_with(|| path.clone());
            match prompt_files(path) {
                Ok(files) if files.is_empty() && !args.allow_empty => {
                    let error = Error::new(
                        ErrorClass::Io,
                        "no prompt files in this folder: nothing was checked \
                         (--allow-empty accepts an empty folder)",
                    )
                    .with_file(path.display().to_string());
                    write(stream.file(vec![error], Vec::new(), 0, labels))?;
                    continue;
                }
                Ok(files) => files,
                Err(error) => {
                    write(stream.file(vec![error], Vec::new(), 0, labels))?;
                    continue;
                }
            }
        } else {
            vec![path.clone()]
        };
        let mut loaded = Vec::new();
        for file in files {
            match Prompt::from_file_with(&file, &options) {
                Ok(prompt) => {
                    // Its test cases, read (not run): a malformed case is
                    // an error here too.
                    let errors = match testing::PromptTests::read(&file, &options) {
                        Err(error) => vec![error],
                        Ok(_) => Vec::new(),
                    };
                    let mut warnings = prompt.warnings();
                    // Rendered at two clocks and two turns: loaded lenient,
                    // so that data the probe lacks prints empty (a chat
                    // template has its own probe, in its warnings).
                    if prompt.syntax() != Syntax::ChatTemplate {
                        let lenient = options.clone().with_strictness(Strictness::Lenient);
                        warnings.extend(
                            Prompt::from_file_with(&file, &lenient)
                                .ok()
                                .and_then(|prompt| prompt.per_turn_warning()),
                        );
                    }
                    write(stream.file(errors, warnings, 0, labels))?;
                    loaded.push(prompt);
                }
                Err(error) => {
                    // Every error of the file (up to the cap), and its
                    // warnings when they could still be computed.
                    let warnings = error.warnings().to_vec();
                    let omitted = error.omitted();
                    write(stream.file(error.all(), warnings, omitted, labels))?;
                }
            }
        }
        stream.loaded(loaded.len());
        // Prompts of one directory form a library: their names must differ.
        if let Err(clashes) = Library::from_prompts(loaded) {
            write(stream.file(clashes.0, Vec::new(), 0, labels))?;
        }
    }
    Ok(())
}

fn test(args: &TestArgs) -> Result<ExitCode, WriteFailed> {
    let options = args.load.options();
    let paths = match args.paths.is_empty() {
        true => vec![PathBuf::from(".")],
        false => args.paths.clone(),
    };
    let found = match testing::prompts_to_test(&paths) {
        Ok(found) => found,
        Err(error) => return Ok(fail(&report::labelled(error, &args.labels))),
    };
    let (mut passed, mut failed, mut updated, mut broken) = (0, 0, 0, 0);
    for error in &found.unread {
        broken += 1;
        print_err(&format!(
            "{}\n",
            error_report(&report::labelled(error.clone(), &args.labels))
        ))?;
    }
    for file in found.prompts {
        // A file found in a directory has that directory as its root, as
        // in `check DIR`: its includes and its tests' data files (one
        // confinement rule) stay inside it.
        let mut options = options.clone();
        if options.include_root.is_none() {
            options.include_root = paths
                .iter()
                .find(|path| path.is_dir() && file.starts_with(path))
                .cloned();
        }
        let tests = match PromptTests::read(&file, &options) {
            // No cases: the prompt must still load.
            Ok(tests) if tests.cases.is_empty() => {
                if let Err(error) = Prompt::from_file_with(&file, &options) {
                    broken += 1;
                    print_err(&format!(
                        "{}\n",
                        error_report(&report::labelled(error, &args.labels))
                    ))?;
                }
                continue;
            }
            Ok(tests) => tests,
            Err(error) => {
                broken += 1;
                print_err(&format!(
                    "{}\n",
                    error_report(&report::labelled(error.clone(), &args.labels))
                ))?;
                continue;
            }
        };
        let prompt = Prompt::from_file_with(&file, &options);
        let results = tests.run(prompt.as_ref());
        let written = match args.update {
            true => {
                let updated = testing::update(&results);
                for error in &updated.errors {
                    print_err(&format!(
                        "{}\n",
                        error_report(&report::labelled(error.clone(), &args.labels))
                    ))?;
                }
                updated.cases
            }
            false => Vec::new(),
        };
        let shown = file.display();
        for result in &results {
            let name = &result.case.name;
            match &result.outcome {
                Outcome::Pass => {
                    passed += 1;
                    print_out(&format!("ok      {shown}: {name}\n"))?;
                }
                Outcome::Fail(_) if written.contains(&result.case.origin) => {
                    updated += 1;
                    print_out(&format!("updated {shown}: {name}\n"))?;
                }
                Outcome::Fail(mismatch) => {
                    failed += 1;
                    let report = mismatch.report();
                    let mut report: String =
                        report.lines().map(|line| format!("  {line}\n")).collect();
                    for (key, value) in &args.labels {
                        report.push_str(&format!("    = {key}: {value}\n"));
                    }
                    print_out(&format!("FAIL    {shown}: {name}\n{report}"))?;
                }
            }
        }
    }
    let mut summary = format!("{passed} passed, {failed} failed");
    if updated > 0 {
        summary.push_str(&format!(", {updated} updated"));
    }
    if broken > 0 {
        summary.push_str(&format!(
            ", {broken} file(s) that do not load or whose tests cannot be read"
        ));
    }
    let empty = passed + failed + updated + broken == 0;
    if empty {
        summary.push_str(" (no test cases found)");
    }
    print_out(&format!("{summary}\n"))?;
    if empty && !args.allow_empty {
        let shown: Vec<String> = paths
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        print_err(&format!(
            "error: no test cases in {}: nothing was tested (--allow-empty accepts that)\n",
            shown.join(", ")
        ))?;
        return Ok(ExitCode::from(EXIT_FAILURE));
    }
    Ok(match failed + broken {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::from(EXIT_FAILURE),
    })
}
