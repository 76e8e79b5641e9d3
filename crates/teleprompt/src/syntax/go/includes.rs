//! Templates from other files, as Go's `ParseFiles`/`ParseGlob` make
//! them: each file is a template named by its file name, and every
//! `define` of the set can be called from any template of it.
//!
//! When the prompt loads, a `{{template "NAME"}}` that no `define` of the
//! set names (the prompt's own, and those of the files loaded so far)
//! resolves, in this order:
//!
//! 1. to the file NAME — a relative path inside the include root, looked
//!    for beside the including file first, then at the root, exactly as
//!    written (extension included, as Go names a file's template): its
//!    body is the template, and its `define`s join the set;
//! 2. else to the one Go file of the include root that defines NAME
//!    (`define` or `block`): its `define`s join the set. The Go files of
//!    the root are its `.gotmpl` and `.tmpl` files (and Sortie's
//!    `WORKFLOW.md`), and its `.md`, `.prompt` and `.txt` files whose
//!    front matter says `syntax: go`, listed as a [`crate::Library`] lists
//!    them (`.gitignore` and hidden files skipped); at most
//!    [`MAX_FILES`] of them are read, and the listing stops with an error
//!    past [`MAX_SCANNED_ENTRIES`] entries. A file that cannot be read
//!    there (not UTF-8, too large, a link out of the root) is skipped; one
//!    that does not parse is an error when its text holds the name (it may
//!    define it), and skipped otherwise. The root is looked through only
//!    for a name that nothing read so far defines (an empty definition
//!    counts): a prompt that needs no other file reads none.
//!
//! A file that opens with front matter has it read and left out, as when
//! the file loads as a prompt (its body is the template), and a file
//! whose front matter or extension names another syntax is not a Go
//! template; any other file is used as it is. Files are read once each,
//! however many templates name them, so files that include each other
//! load (and their templates may call each other at render, bounded by
//! the call depth limit).
//!
//! Which definition a name gets: a definition that is empty (spaces and
//! comments only) never replaces one that is not, as in Go; among the
//! others, the prompt's own wins (the prompt is the page that fills the
//! `block`s of a layout file, like the file Go parses last), and two
//! other files defining one name are an error naming both (Go would keep
//! whichever it parsed last, which a prompt's reader cannot see).

use std::collections::{HashMap, HashSet, VecDeque};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ast::*;
use super::parse;
use crate::diagnostics::{Error, TemplateError};
use crate::document::include_root::{too_deep, Includes, MAX_FILES};
use crate::document::Document;
use crate::options::Syntax;
use crate::syntax::included::Placements;

/// The most directory entries the scan for `define`s visits.
const MAX_SCANNED_ENTRIES: usize = 100 * MAX_FILES;

/// The files a template loaded, and the combined source.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// The body followed by each file's body.
    pub source: String,
    pub placed: Placements,
    /// The files, in the order they were read.
    pub files: Vec<File>,
    /// Calls that name a file: the start of the call's quoted name in
    /// `source`, and the file.
    pub sites: HashMap<usize, usize>,
    /// Calls whose name nothing resolved (by the start of the quoted
    /// name): what was looked for (shared by the calls of one name).
    pub misses: HashMap<usize, Arc<str>>,
}

/// A file read as Go templates, its tree placed in the combined source.
#[derive(Debug)]
pub(crate) struct File {
    /// The path in the include root (the template's name when a call
    /// names the file).
    pub name: String,
    /// Its tree, spans in the combined source.
    pub tree: Tree,
    /// Whether a call names the file itself (its body is a template).
    pub called: bool,
    /// The names calls gave the file (usually one).
    pub called_as: Vec<String>,
}

/// Reads the files whose templates `tree` (parsed from `body`) calls and
/// does not define, and the ones those call, from `includes` (see the
/// module's documentation). `max_bytes` bounds the body and every file
/// read together.
pub(crate) fn load(
    tree: &Tree,
    body: &str,
    includes: Option<&Includes>,
    max_nesting: usize,
    max_bytes: usize,
    max_depth: usize,
) -> Result<Loaded, TemplateError> {
    let mut loader = Loader {
        max_depth,
        depths: Vec::new(),
        depth: 0,
        loaded: Loaded {
            source: body.to_string(),
            ..Loaded::default()
        },
        max_nesting,
        max_bytes,
        by_path: HashMap::new(),
        defined: tree.defines.iter().map(|d| d.name.clone()).collect(),
        queue: VecDeque::new(),
        scan: None,
        looked_up: HashMap::new(),
        missed: HashMap::new(),
    };
    let Some(includes) = includes else {
        return Ok(loader.loaded);
    };
    loader.queue.push_back((None, includes.clone()));
    let mut pending: Vec<Pending> = Vec::new();
    loop {
        while let Some((from, includes)) = loader.queue.pop_front() {
            // The files these calls read are a level deeper.
            loader.depth = from
                .and_then(|index| loader.depths.get(index).copied())
                .unwrap_or(0)
                + 1;
            let mut calls = Vec::new();
            match from {
                None => calls_in(&tree.root, &tree.defines, &mut calls),
                Some(index) => {
                    if let Some(file) = loader.loaded.files.get(index) {
                        calls_in(&file.tree.root, &file.tree.defines, &mut calls);
                    }
                }
            }
            for call in calls {
                if loader.defined.contains(&call.name) {
                    continue;
                }
                if let Some(tried) = loader.by_file(&call, &includes)? {
                    pending.push(Pending {
                        call,
                        includes: includes.clone(),
                        tried,
                        depth: loader.depth,
                    });
                }
            }
        }
        // Names no file is named by: a `define` in another Go file.
        for waiting in std::mem::take(&mut pending) {
            if !loader.defined.contains(&waiting.call.name) {
                loader.depth = waiting.depth;
                loader.by_define(&waiting)?;
            }
        }
        if loader.queue.is_empty() {
            break;
        }
    }
    Ok(loader.loaded)
}

/// A `{{template}}` call: its name and where it is.
struct Call {
    name: String,
    /// The quoted name.
    name_span: Range<usize>,
    /// The whole action.
    span: Range<usize>,
}

/// A call no file of its name resolved.
struct Pending {
    call: Call,
    /// Where its file names resolve.
    includes: Includes,
    /// The files tried.
    tried: Vec<PathBuf>,
    /// How deep a file it reads would be.
    depth: usize,
}

struct Loader {
    loaded: Loaded,
    /// The deepest a file may be named (`max_call_depth`).
    max_depth: usize,
    /// How deep each file of `loaded.files` is (1: called by the body).
    depths: Vec<usize>,
    /// How deep the files read now are.
    depth: usize,
    max_nesting: usize,
    max_bytes: usize,
    /// The files read, by their path in the root.
    by_path: HashMap<PathBuf, usize>,
    /// Every name the set defines so far.
    defined: HashSet<String>,
    /// Files whose calls are still to resolve (`None`: the body), with
    /// where their names resolve.
    queue: VecDeque<(Option<usize>, Includes)>,
    /// The Go files of the root, listed when a name first needs them.
    scan: Option<Scan>,
    /// Names looked for as files, by the folder they were looked for
    /// from: the file found, if any (a name called many times is looked
    /// for once).
    looked_up: HashMap<(PathBuf, String), Option<usize>>,
    /// Names nothing resolved, by the folder they were looked for from:
    /// what was looked for.
    missed: HashMap<(PathBuf, String), Arc<str>>,
}

impl Loader {
    /// A parse error at `at` (a span of the combined source), placed.
    fn error_at(&self, at: &Range<usize>, message: String) -> TemplateError {
        self.place(TemplateError::parse(Some(at.clone()), message))
    }

    /// `error` (spans in the combined source), placed.
    fn place(&self, error: TemplateError) -> TemplateError {
        self.loaded.placed.place(error)
    }

    /// Resolves `call` to the file of its name: `Some(files tried)` when
    /// there is none.
    fn by_file(
        &mut self,
        call: &Call,
        includes: &Includes,
    ) -> Result<Option<Vec<PathBuf>>, TemplateError> {
        if call.name.is_empty() || call.name.contains('\0') {
            return Ok(Some(Vec::new()));
        }
        let candidates = includes
            .template_candidates(&call.name)
            .map_err(|message| self.error_at(&call.span, message))?;
        let key = (includes.dir().to_path_buf(), call.name.clone());
        let index = match self.looked_up.get(&key) {
            Some(Some(index)) => *index,
            Some(None) => return Ok(Some(candidates)),
            None => {
                let index = self.read_file(call, includes, &candidates)?;
                self.looked_up.insert(key, index);
                match index {
                    Some(index) => index,
                    None => return Ok(Some(candidates)),
                }
            }
        };
        self.loaded.sites.insert(call.name_span.start, index);
        if let Some(file) = self.loaded.files.get_mut(index) {
            file.called = true;
            if !file.called_as.contains(&call.name) {
                file.called_as.push(call.name.clone());
            }
        }
        Ok(None)
    }

    /// Reads the first of `candidates` for `call`, unless it was read
    /// already: the file, `None` when there is none.
    fn read_file(
        &mut self,
        call: &Call,
        includes: &Includes,
        candidates: &[PathBuf],
    ) -> Result<Option<usize>, TemplateError> {
        let (relative, found) = match includes.read_first(candidates) {
            Ok(Some(found)) => found,
            Ok(None) => return Ok(None),
            Err(message) => return Err(self.error_at(&call.span, message)),
        };
        Ok(Some(match self.by_path.get(&relative) {
            Some(&index) => index,
            None => {
                let document = go_document(&found.origin, &found.text)
                    .map_err(|error| self.elsewhere(error, &call.span))?;
                if let Some(message) = not_go(&document, &relative) {
                    return Err(self.place(
                        TemplateError::parse(Some(call.span.clone()), message)
                            .with_kind("unresolved-include"),
                    ));
                }
                let tree = parse::parse_nested(&document.body, self.max_nesting)
                    .map_err(|error| self.elsewhere(document.locate(error), &call.span))?;
                self.add(relative, document, tree, includes, &call.span)?
            }
        }))
    }

    /// Resolves a call no file is named by to the one Go file of the root
    /// that defines its name, or notes what was looked for.
    fn by_define(&mut self, waiting: &Pending) -> Result<(), TemplateError> {
        let call = &waiting.call;
        let key = (waiting.includes.dir().to_path_buf(), call.name.clone());
        if let Some(miss) = self.missed.get(&key) {
            self.loaded
                .misses
                .insert(call.name_span.start, miss.clone());
            return Ok(());
        }
        if self.scan.is_none() {
            let scan = Scan::list(&waiting.includes, self.max_nesting)
                .map_err(|message| self.error_at(&call.span, message))?;
            self.scan = Some(scan);
        }
        let Some(scan) = &self.scan else {
            return Ok(());
        };
        let mut full = Vec::new();
        let mut empty = Vec::new();
        for (index, scanned) in scan.files.iter().enumerate() {
            match &scanned.kind {
                Kind::Go(go) => {
                    if self.by_path.contains_key(&scanned.path) {
                        continue;
                    }
                    match go.names.iter().find(|(name, _)| *name == call.name) {
                        Some((_, true)) => full.push(index),
                        Some((_, false)) => empty.push(index),
                        None => {}
                    }
                }
                Kind::Broken { text, error } => {
                    // It may define the name: say why it cannot be read.
                    if !call.name.is_empty() && text.contains(call.name.as_str()) {
                        return Err(self.elsewhere(error.clone(), &call.span));
                    }
                }
                Kind::Taken => {}
            }
        }
        let chosen = match (full.as_slice(), empty.first()) {
            ([one], _) | ([], Some(one)) => *one,
            ([first, second, ..], _) => {
                let origin = |index: &usize| {
                    scan.files
                        .get(*index)
                        .map_or(String::new(), |scanned| scanned.path.display().to_string())
                };
                let message = format!(
                    "template {:?} is defined in more than one file of the include root: {} and {}",
                    call.name,
                    origin(first),
                    origin(second)
                );
                return Err(self.place(
                    TemplateError::parse(Some(call.span.clone()), message)
                        .with_kind("duplicate-template")
                        .suggest(Some(
                            "rename one of them, or define it in this prompt (the prompt's definition wins)"
                                .to_string(),
                        )),
                ));
            }
            ([], None) => {
                let miss: Arc<str> =
                    describe_miss(&call.name, &waiting.tried, scan, &waiting.includes).into();
                self.loaded
                    .misses
                    .insert(call.name_span.start, miss.clone());
                self.missed.insert(key, miss);
                return Ok(());
            }
        };
        let Some(scanned) = self
            .scan
            .as_mut()
            .and_then(|scan| scan.files.get_mut(chosen))
        else {
            return Ok(());
        };
        let path = scanned.path.clone();
        let kind = std::mem::replace(&mut scanned.kind, Kind::Taken);
        let Kind::Go(go) = kind else {
            return Ok(());
        };
        let GoFile { document, tree, .. } = *go;
        let includes = waiting.includes.clone();
        self.add(path, document, tree, &includes, &call.span)?;
        Ok(())
    }

    /// Adds a file read for the call at `site`: its body to the combined
    /// source, its tree (moved there) to the files, its `define`s to the
    /// set, and its calls to resolve.
    fn add(
        &mut self,
        relative: PathBuf,
        document: Document,
        mut tree: Tree,
        includes: &Includes,
        site: &Range<usize>,
    ) -> Result<usize, TemplateError> {
        if self.loaded.files.len() >= MAX_FILES {
            return Err(self.error_at(
                site,
                format!("more than {MAX_FILES} files are included: the most one prompt may read"),
            ));
        }
        if self.depth > self.max_depth {
            return Err(self.error_at(site, too_deep(self.max_depth)));
        }
        let size = self.loaded.source.len() + document.body.len();
        if size > self.max_bytes {
            return Err(self.error_at(
                site,
                format!(
                    "with {} the prompt and the files it includes hold {size} bytes, more than {} (the limit max_template_bytes)",
                    relative.display(),
                    self.max_bytes
                ),
            ));
        }
        let base = self.loaded.source.len();
        self.loaded.source.push_str(&document.body);
        shift_tree(&mut tree, base);
        self.defined
            .extend(tree.defines.iter().map(|define| define.name.clone()));
        let index = self.loaded.files.len();
        self.loaded
            .placed
            .push(base..self.loaded.source.len(), document, Some(site.clone()));
        self.loaded.files.push(File {
            name: relative.display().to_string(),
            tree,
            called: false,
            called_as: Vec::new(),
        });
        self.depths.push(self.depth);
        self.queue
            .push_back((Some(index), includes.beside(&relative)));
        self.by_path.insert(relative, index);
        Ok(index)
    }

    /// `error`, placed in a file read for the call at `site`.
    fn elsewhere(&self, error: Error, site: &Range<usize>) -> TemplateError {
        self.loaded.placed.included_at(error, site.clone())
    }
}

/// A Go file of the root with `define`s.
#[derive(Debug)]
struct GoFile {
    document: Document,
    tree: Tree,
    /// The names it defines, each with whether its body is more than
    /// spaces and comments.
    names: Vec<(String, bool)>,
}

/// The Go files of the include root, read when a name needs them.
#[derive(Debug)]
struct Scan {
    files: Vec<Scanned>,
    /// Every Go file listed, for suggestions.
    paths: Vec<PathBuf>,
}

#[derive(Debug)]
struct Scanned {
    path: PathBuf,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    /// A Go file with `define`s.
    Go(Box<GoFile>),
    /// A Go file that does not parse: its text (to see whether it
    /// mentions a name) and its error.
    Broken { text: String, error: Error },
    /// Loaded already.
    Taken,
}

impl Scan {
    /// Lists and reads the Go files of `includes`' root.
    fn list(includes: &Includes, max_nesting: usize) -> Result<Scan, String> {
        let root = includes.root();
        let mut scan = Scan {
            files: Vec::new(),
            paths: Vec::new(),
        };
        let mut read = 0usize;
        let walker = ignore::WalkBuilder::new(root)
            .require_git(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        for (visited, entry) in walker.enumerate() {
            if visited >= MAX_SCANNED_ENTRIES {
                return Err(format!(
                    "the include root holds more than {MAX_SCANNED_ENTRIES} entries: too many to look for a define in; define the template in this prompt or in a file named by {{{{template}}}}"
                ));
            }
            // An entry that cannot be listed is not a file to read.
            let Ok(entry) = entry else { continue };
            let kind = entry.file_type();
            if !kind.is_some_and(|kind| kind.is_file() || kind.is_symlink()) {
                continue;
            }
            let Ok(relative) = entry.path().strip_prefix(root) else {
                continue;
            };
            let by_name = Syntax::from_path(relative);
            let text_file = crate::document::kind::has_text_extension(relative);
            if by_name != Some(Syntax::Go) && !text_file {
                continue;
            }
            read += 1;
            if read > MAX_FILES {
                return Err(format!(
                    "the include root holds more than {MAX_FILES} files that may be Go templates (.gotmpl, .tmpl, .md, .prompt, .txt): too many to look for a define in; define the template in this prompt or in a file named by {{{{template}}}}, or use a smaller include root"
                ));
            }
            // A file that cannot be read (a link out of the root, not
            // UTF-8, too large) defines nothing the prompt can use.
            let Ok(Some((relative, found))) = includes.read_first(&[relative.to_path_buf()]) else {
                continue;
            };
            if by_name != Some(Syntax::Go) && !opens_with_front_matter(&found.text) {
                continue;
            }
            let document = match go_document(&found.origin, &found.text) {
                Ok(document) if not_go(&document, &relative).is_some() => continue,
                Ok(document) => document,
                // Not Go, or front matter that does not read: only a
                // file that says it is Go is one.
                Err(error) if by_name == Some(Syntax::Go) => {
                    scan.paths.push(relative.clone());
                    scan.files.push(Scanned {
                        path: relative,
                        kind: Kind::Broken {
                            text: found.text,
                            error,
                        },
                    });
                    continue;
                }
                Err(_) => continue,
            };
            // A text file is Go only when it says so.
            if text_file && !says_go(&document) {
                continue;
            }
            scan.paths.push(relative.clone());
            if !document.body.contains("define") && !document.body.contains("block") {
                continue;
            }
            let kind = match parse::parse_nested(&document.body, max_nesting) {
                Ok(tree) => {
                    let names = tree
                        .defines
                        .iter()
                        .map(|define| {
                            let full = !super::lower::is_empty(&define.list, &document.body);
                            (define.name.clone(), full)
                        })
                        .collect();
                    Kind::Go(Box::new(GoFile {
                        document,
                        tree,
                        names,
                    }))
                }
                Err(error) => Kind::Broken {
                    error: document.locate(error),
                    text: document.body,
                },
            };
            scan.files.push(Scanned {
                path: relative,
                kind,
            });
        }
        Ok(scan)
    }
}

/// What was looked for a name nothing resolves, for the error's help.
fn describe_miss(name: &str, tried: &[PathBuf], scan: &Scan, includes: &Includes) -> String {
    let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
    let files = match tried.as_slice() {
        [] => String::new(),
        [one] => format!("no file {one}, "),
        more => format!("no file {}, ", more.join(" or ")),
    };
    // `{{template "persona"}}` for `persona.gotmpl`: Go names a file's
    // template with its extension.
    let with_extension = [includes.dir(), Path::new("")].iter().find_map(|dir| {
        scan.paths.iter().find(|path| {
            path.parent() == Some(dir) && path.file_stem().and_then(|s| s.to_str()) == Some(name)
        })
    });
    match with_extension.and_then(|path| path.file_name()) {
        Some(file) => format!(
            "did you mean \"{}\"? A file's template is named by its file name, extension included ({files}and no Go file of the include root defines {name:?})",
            file.to_string_lossy()
        ),
        None => format!(
            "define it with {{{{define {name:?}}}}}…{{{{end}}}} here or in a Go file of the include root (.gotmpl, .tmpl, or front matter `syntax: go`), or put it in a file of that name ({files}and no Go file of the include root defines it)"
        ),
    }
}

/// A file read as a Go template: its front matter (when it opens with
/// one) read and left out.
fn go_document(origin: &str, text: &str) -> Result<Document, Error> {
    Document::parse(origin, text)
}

/// Why `document` (at `relative`) is not a Go template, if it is not:
/// its front matter or, without a `syntax` key, its extension names
/// another syntax.
fn not_go(document: &Document, relative: &Path) -> Option<String> {
    let said = document.front_matter.get(crate::document::key::SYNTAX);
    let syntax = match said {
        Some(serde_json::Value::String(name)) => name.parse::<Syntax>().ok(),
        Some(_) => None,
        None => Syntax::from_path(relative).or(Some(Syntax::Go)),
    };
    if syntax == Some(Syntax::Go) {
        return None;
    }
    let why = match said {
        Some(value) => format!("its front matter says `syntax: {}`", plain(value)),
        None => "its extension names another syntax".to_string(),
    };
    Some(format!(
        "{} is not a Go template ({why}): only Go templates can be called with {{{{template}}}}",
        relative.display()
    ))
}

fn plain(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Whether a document's front matter says `syntax: go`.
fn says_go(document: &Document) -> bool {
    matches!(
        document.front_matter.get(crate::document::key::SYNTAX),
        Some(serde_json::Value::String(name)) if name.parse::<Syntax>() == Ok(Syntax::Go)
    )
}

fn opens_with_front_matter(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.starts_with("---\n") || text.starts_with("---\r\n") || text.starts_with("--- ")
}

/// The `{{template}}` calls of a tree (`{{block}}`s define their name).
fn calls_in(root: &ListNode, defines: &[DefineNode], out: &mut Vec<Call>) {
    fn list(list: &ListNode, out: &mut Vec<Call>) {
        for node in &list.nodes {
            match node {
                Node::Template(call) => out.push(Call {
                    name: call.name.clone(),
                    name_span: call.name_span.clone(),
                    span: call.span.clone(),
                }),
                Node::If(branch) | Node::Range(branch) | Node::With(branch) => {
                    list_of(branch, out);
                }
                _ => {}
            }
        }
    }
    fn list_of(branch: &BranchNode, out: &mut Vec<Call>) {
        list(&branch.list, out);
        if let Some(other) = &branch.else_list {
            list(other, out);
        }
    }
    list(root, out);
    for define in defines {
        list(&define.list, out);
    }
}

/// Moves every span of `tree` by `by` bytes.
fn shift_tree(tree: &mut Tree, by: usize) {
    shift_list(&mut tree.root, by);
    for define in &mut tree.defines {
        shift(&mut define.span, by);
        shift(&mut define.name_span, by);
        shift_list(&mut define.list, by);
    }
}

fn shift_list(list: &mut ListNode, by: usize) {
    shift(&mut list.span, by);
    for node in &mut list.nodes {
        match node {
            Node::Text(text) => shift(&mut text.span, by),
            Node::Comment(span) | Node::Break(span) | Node::Continue(span) => shift(span, by),
            Node::Action(action) => {
                shift(&mut action.span, by);
                shift_pipe(&mut action.pipe, by);
            }
            Node::If(branch) | Node::Range(branch) | Node::With(branch) => {
                shift(&mut branch.span, by);
                shift_pipe(&mut branch.pipe, by);
                shift_list(&mut branch.list, by);
                if let Some(other) = &mut branch.else_list {
                    shift_list(other, by);
                }
            }
            Node::Template(call) | Node::Block(call) => {
                shift(&mut call.span, by);
                shift(&mut call.name_span, by);
                if let Some(pipe) = &mut call.pipe {
                    shift_pipe(pipe, by);
                }
            }
        }
    }
}

fn shift_pipe(pipe: &mut PipeNode, by: usize) {
    shift(&mut pipe.span, by);
    for variable in &mut pipe.decl {
        shift_variable(variable, by);
    }
    for command in &mut pipe.cmds {
        shift(&mut command.span, by);
        for arg in &mut command.args {
            shift_arg(arg, by);
        }
    }
}

fn shift_variable(variable: &mut VariableNode, by: usize) {
    shift(&mut variable.span, by);
    shift_idents(&mut variable.fields, by);
}

fn shift_idents(idents: &mut [Ident], by: usize) {
    for ident in idents {
        shift(&mut ident.span, by);
    }
}

fn shift_arg(arg: &mut Arg, by: usize) {
    match arg {
        Arg::Dot(span) | Arg::Nil(span) | Arg::Bool(_, span) => shift(span, by),
        Arg::Number(number) => shift(&mut number.span, by),
        Arg::String(string) => shift(&mut string.span, by),
        Arg::Field(field) => {
            shift(&mut field.span, by);
            shift_idents(&mut field.idents, by);
        }
        Arg::Variable(variable) => shift_variable(variable, by),
        Arg::Identifier(ident) => shift(&mut ident.span, by),
        Arg::Chain(chain) => {
            shift(&mut chain.span, by);
            shift_arg(&mut chain.node, by);
            shift_idents(&mut chain.fields, by);
        }
        Arg::Pipe(pipe) => shift_pipe(pipe, by),
    }
}

fn shift(span: &mut Range<usize>, by: usize) {
    *span = span.start.saturating_add(by)..span.end.saturating_add(by);
}
