//! What a template reads of its data (`Prompt::inputs`, `teleprompt
//! inspect`), per syntax: the paths and lists it walks, found on the parse
//! tree, without the prompt context's own namespaces.

use serde_json::{json, Value};
use teleprompt::{LoadOptions, Prompt, Syntax};

fn picoschema(syntax: Syntax, body: &str) -> Value {
    let options = LoadOptions::new().with_syntax(syntax);
    Prompt::from_source("p", body, &options)
        .unwrap_or_else(|error| panic!("{}", error.report()))
        .inputs()
        .expect("analysed")
        .to_picoschema()
}

#[test]
fn go_paths_follow_dot_into_range_with_variables_and_defines() {
    let body = r#"{{ .issue.title }} (turn {{ .run.turn_number }}, attempt {{ .attempt }})
{{ range .issue.blockers }}{{ .identifier }} {{ $.issue.url }}{{ end }}
{{ range $i, $label := .issue.labels }}{{ $label.name }}{{ end }}
{{ with .issue.parent }}{{ .identifier }}{{ end }}
{{ $p := .project }}{{ $p.key }}
{{ define "who" }}{{ .login }}{{ end }}{{ template "who" .assignee }}
{{ if .notes }}{{ len .notes }}{{ else }}{{ .fallback }}{{ end }}"#;
    assert_eq!(
        picoschema(Syntax::Go, body),
        json!({
            "assignee(object)": {"login": "any"},
            "fallback": "any",
            "issue(object)": {
                "blockers(array)": {"identifier": "any"},
                "labels(array)": {"name": "any"},
                "parent(object)": {"identifier": "any"},
                "title": "any",
                "url": "any",
            },
            "notes": "any",
            "project(object)": {"key": "any"},
        })
    );
}

#[test]
fn handlebars_paths_follow_each_with_parents_root_and_block_params() {
    let body = r#"{{title}} {{json meta}}
{{#each items}}{{name}} {{../owner.name}} {{@root.title}} {{@index}}{{/each}}
{{#each groups as |group|}}{{#each group.members as |m|}}{{m.email}}{{/each}}{{/each}}
{{#with author}}{{login}}{{/with}}
{{#if flag}}{{concat first " " last}}{{/if}}"#;
    assert_eq!(
        picoschema(Syntax::Handlebars, body),
        json!({
            "author(object)": {"login": "any"},
            "first": "any",
            "flag": "any",
            "groups(array)": {"members(array)": {"email": "any"}},
            "items(array)": {"name": "any"},
            "last": "any",
            "meta": "any",
            "owner(object)": {"name": "any"},
            "title": "any",
        })
    );
}

#[test]
fn jinja_paths_leave_out_locals_functions_and_namespaces() {
    let body = "{% set greeting = 'Hi' %}{{ greeting }} {{ user.name }}\n\
                {% for doc in documents %}{{ loop.index }} {{ doc.title }}{% endfor %}\n\
                {{ range(3)|list }} {{ system.current_date }} {% if tools is defined %}{{ tools|tojson }}{% endif %}";
    assert_eq!(
        picoschema(Syntax::Jinja, body),
        json!({
            "documents(array)": {"title": "any"},
            "tools": "any",
            "user(object)": {"name": "any"},
        })
    );
}

#[test]
fn a_template_that_uses_its_whole_data_says_so() {
    let options = LoadOptions::new().with_syntax(Syntax::Go);
    let prompt = Prompt::from_source("p", "{{ toJSON . }}", &options).unwrap();
    assert!(prompt.inputs().unwrap().reads_whole());
    let prompt = Prompt::from_source("p", "{{ .a }}", &options).unwrap();
    assert!(!prompt.inputs().unwrap().reads_whole());
}
