//! Templates that read other files of the include root, per syntax: Go's
//! `{{template}}` of files ([`go`]), Jinja's `include`, `import` and
//! `extends` ([`jinja`]), and Handlebars partials ([`handlebars`]).

mod go;
mod handlebars;
mod jinja;
