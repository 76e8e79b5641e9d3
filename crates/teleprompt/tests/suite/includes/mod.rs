//! Templates that read other files of the include root, per syntax: Go's
//! `{{template}}` of files ([`go`]), Jinja's `include`, `import` and
//! `extends` ([`jinja`]), pongo2's `include`, `extends`, `import` and
//! `ssi` ([`django`]), and Handlebars partials ([`handlebars`]).

mod django;
mod go;
mod handlebars;
mod jinja;
