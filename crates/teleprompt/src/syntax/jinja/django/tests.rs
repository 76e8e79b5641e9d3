//! The translation on its own: the Jinja text it makes.

use super::translate;

fn jinja(body: &str) -> String {
    translate(body)
        .map(|edited| edited.text)
        .unwrap_or_else(|error| format!("ERROR {error:?}"))
}

#[test]
fn colon_arguments_become_calls() {
    assert_eq!(
        jinja("{{ name|default:\"there\" }}"),
        "{{ name|default(\"there\") }}"
    );
    assert_eq!(jinja("{{ n|add:2|add:-1 }}"), "{{ n|add(2)|add(-1) }}");
    assert_eq!(
        jinja("{{ a|default:b.c[0]|upper }}"),
        "{{ a|default(b.c[0])|upper }}"
    );
    assert_eq!(jinja("text {x} {{ x }}"), "text {x} {{ x }}");
}

#[test]
fn loops() {
    assert_eq!(
        jinja("{% for x in xs reversed %}{{ forloop.Counter }}{% empty %}-{% endfor %}"),
        "{% for x in (xs)|__django_for(true, false, false) %}{{ loop.index }}{% else %}-{% endfor %}"
    );
    assert_eq!(
        jinja("{% for k, v in m sorted %}{% cycle 'a' 'b' %}{% endfor %}"),
        "{% for k, v in (m)|__django_for(false, true, true) %}{{ loop.cycle('a', 'b') }}{% endfor %}"
    );
}

#[test]
fn tags() {
    assert_eq!(
        jinja("{% ifequal a b %}y{% endifequal %}"),
        "{% if a == b %}y{% endif %}"
    );
    assert_eq!(
        jinja("{% with a=b c=d %}{% endwith %}"),
        "{% with a=b, c=d %}{% endwith %}"
    );
    assert_eq!(
        jinja("{% with b as a %}{% endwith %}"),
        "{% with a=b %}{% endwith %}"
    );
    assert_eq!(
        jinja("{% firstof a b \"x\" %}"),
        "{{ __django_firstof(a, b, \"x\") }}"
    );
    assert_eq!(jinja("{%- comment -%}x{% endcomment -%}"), "{#- -#}");
    assert_eq!(
        jinja("{% if a && !b || c <> d %}{% endif %}"),
        "{% if a  and   not b  or  c != d %}{% endif %}"
    );
    assert_eq!(
        jinja("{% autoescape off %}{% endautoescape %}"),
        "{% autoescape false %}{% endautoescape %}"
    );
}

#[test]
fn the_filter_list_names_every_registered_filter() {
    let registered: Vec<&str> = super::filters::names().collect();
    assert_eq!(registered, super::FILTERS);
}
