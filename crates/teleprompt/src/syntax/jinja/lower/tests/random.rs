//! Random differential tests: generated templates and prompt-like bodies
//! (`TELEPROMPT_CASES` of them) each render alike on the direct path and
//! on minijinja alone.

use super::*;

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'t, T>(&mut self, items: &'t [T]) -> &'t T {
        &items[(self.next() % items.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn value(rng: &mut Rng, depth: u32) -> Value {
    let scalars = [
        json!("text"),
        json!(""),
        json!("  Mixed Case  "),
        json!("ΣΊΣΥΦΟΣ"),
        json!(0),
        json!(7),
        json!(-3),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(1.5),
        json!(2.0),
        json!(true),
        json!(false),
        Value::Null,
    ];
    match rng.next() % if depth > 2 { 1 } else { 4 } {
        0 => rng.pick(&scalars).clone(),
        1 => Value::Array((0..rng.next() % 4).map(|_| value(rng, depth + 1)).collect()),
        2 => Value::Array(
            (0..rng.next() % 4)
                .map(|_| rng.pick(&[json!("a"), json!("b"), json!(5)]).clone())
                .collect(),
        ),
        _ => {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.next() % 4 {
                map.insert(rng.pick(&KEYS).to_string(), value(rng, depth + 1));
            }
            Value::Object(map)
        }
    }
}

const KEYS: [&str; 6] = ["a", "b", "name", "items", "flag", "n"];

fn expr(rng: &mut Rng, names: &[String], depth: u32) -> String {
    let leaf = |rng: &mut Rng| -> String {
        let name = rng.pick(names).clone();
        match rng.next() % 6 {
            0 => format!("{name}.{}", rng.pick(&KEYS)),
            1 => format!("{name}[{}]", rng.next() % 3),
            2 => format!("{name}[\"{}\"]", rng.pick(&KEYS)),
            3 => rng
                .pick(&["'x'", "3", "true", "none", "''", "0"])
                .to_string(),
            _ => name,
        }
    };
    if depth > 2 {
        return leaf(rng);
    }
    match rng.next() % 24 {
        0 => format!("not {}", expr(rng, names, depth + 1)),
        13 => format!(
            "{{'k': {}, 'j': {}}}.{}",
            expr(rng, names, depth + 1),
            expr(rng, names, depth + 1),
            rng.pick(&["k", "j", "x"])
        ),
        14 => format!(
            "[{}, {}]{}",
            expr(rng, names, depth + 1),
            leaf(rng),
            rng.pick(&[" | length", "[1]", "[-1]", "[:1] | join"])
        ),
        15 => format!("{} | default({}, true)", leaf(rng), leaf(rng)),
        16 => format!("{} | replace('a', 'b')", leaf(rng)),
        17 => format!("({} in [{}, 'x', 3])", leaf(rng), leaf(rng)),
        18 => format!(
            "{} | {}",
            leaf(rng),
            rng.pick(&[
                "min",
                "max(case_sensitive=true)",
                "unique | join(',')",
                "unique(true) | length",
                "sort | join(',')",
                "sort(reverse=true) | join",
                "sort(attribute='n') | length",
                "sort(false, true, 'name') | tojson",
            ])
        ),
        19 => format!(
            "[{}, {}] | {}",
            expr(rng, names, depth + 1),
            leaf(rng),
            rng.pick(&["min", "max", "unique | join(',')", "sort | join"])
        ),
        20 => format!(
            "{}.format({}, {})",
            rng.pick(&["'<{}>'", "'{1}{0}{1}'", "'é{0}'", "''"]),
            leaf(rng),
            leaf(rng)
        ),
        1 | 10 => format!(
            "({} {} {})",
            expr(rng, names, depth + 1),
            rng.pick(&["and", "or", "==", "!=", "<", ">=", "<=", "~", "+", "in", "not in"]),
            expr(rng, names, depth + 1)
        ),
        11 => format!(
            "{} {}",
            leaf(rng),
            rng.pick(&["is defined", "is not defined", "is none", "is undefined"])
        ),
        12 => format!(
            "({} if {} else {})",
            expr(rng, names, depth + 1),
            expr(rng, names, depth + 1),
            expr(rng, names, depth + 1)
        ),
        2 => format!(
            "{} | {}",
            leaf(rng),
            rng.pick(&[
                "lower",
                "upper",
                "trim",
                "length",
                "join(', ')",
                "join",
                "default('dflt')",
                "d(7)"
            ])
        ),
        _ => leaf(rng),
    }
}

fn stmts(rng: &mut Rng, names: &mut Vec<String>, depth: u32, in_loop: bool) -> String {
    let mut out = String::new();
    for _ in 0..1 + rng.next() % 3 {
        // `@m`: a macro `m(p)` is defined (see `random_templates_render_alike`).
        let mut visible: Vec<String> = names.iter().filter(|n| *n != "@m").cloned().collect();
        if in_loop {
            visible
                .extend(["loop.index", "loop.last", "loop.first", "loop.length"].map(String::from));
        }
        match rng.next() % if depth > 2 { 2 } else { 8 } {
            7 if names.iter().any(|n| n == "@m") => {
                out.push_str(&format!("{{{{ m({}) }}}}", expr(rng, &visible, 1)))
            }
            0 => {
                let text: &&str = rng.pick(&["text ", "\n", " - "]);
                out.push_str(text)
            }
            1 => out.push_str(&format!("{{{{ {} }}}}", expr(rng, &visible, 0))),
            2 => out.push_str(&format!(
                "{{% if {} %}}{}{{% else %}}{}{{% endif %}}",
                expr(rng, &visible, 0),
                stmts(rng, names, depth + 1, in_loop),
                stmts(rng, names, depth + 1, in_loop)
            )),
            3 | 4 => {
                let var = format!("v{depth}");
                let list = expr(rng, &visible, 2);
                names.push(var.clone());
                let body = stmts(rng, names, depth + 1, true);
                names.pop();
                let control = match rng.next() % 6 {
                    0 => "{% if loop.index > 1 %}{% break %}{% endif %}",
                    1 => "{% continue %}",
                    _ => "",
                };
                out.push_str(&format!(
                    "{{% for {var} in {list} %}}{body}{control}{{% else %}}empty{{% endfor %}}"
                ));
            }
            6 => {
                // A `set` block (of a body without `set`s: those are
                // minijinja's).
                let name = rng.pick(&["s", "t"]);
                let body = format!(
                    "{{{{ {} }}}}-{{% if {} %}}y{{% endif %}}",
                    expr(rng, &visible, 1),
                    expr(rng, &visible, 1)
                );
                out.push_str(&format!("{{% set {name} %}}{body}{{% endset %}}"));
            }
            _ => {
                // `set` anywhere: in `if`s and loops too, of names
                // read before and after.
                let value = expr(rng, &visible, 1);
                let name = rng.pick(&["s", "t"]);
                out.push_str(&format!("{{% set {name} = {value} %}}"));
            }
        }
    }
    out
}

/// How many random cases a test draws: `TELEPROMPT_CASES`, else
/// `default`.
fn cases(default: usize) -> usize {
    std::env::var("TELEPROMPT_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// Random templates of what the direct path lowers, over random data:
/// each renders the same with it and on minijinja alone.
#[test]
fn random_templates_render_alike() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut direct, cases) = (0, cases(3000));
    for _ in 0..cases {
        let mut map = serde_json::Map::new();
        for key in KEYS {
            if rng.chance(80) {
                map.insert(key.to_string(), value(&mut rng, 0));
            }
        }
        // A third of the cases are chat templates, over messages of
        // random fields (some null, as OpenAI's `content` beside
        // `tool_calls`).
        let chat = rng.chance(33);
        if chat {
            let messages: Vec<Value> = (0..rng.next() % 4)
                .map(|_| {
                    let mut message = serde_json::Map::new();
                    for key in KEYS {
                        if rng.chance(60) {
                            let field = match rng.chance(30) {
                                true => Value::Null,
                                false => value(&mut rng, 2),
                            };
                            message.insert(key.to_string(), field);
                        }
                    }
                    Value::Object(message)
                })
                .collect();
            map.insert("messages".to_string(), Value::Array(messages));
        }
        let data = Value::Object(map);
        let mut names: Vec<String> = KEYS
            .iter()
            .chain(&["s", "t"])
            .chain(if chat { &["messages"][..] } else { &[][..] })
            .map(|key| key.to_string())
            .collect();
        let mut body = stmts(&mut rng, &mut names, 0, false);
        // A macro reading its parameter, the data and the top's names
        // (`s`, `t`: set before it, after it, in `if`s and loops),
        // called from anywhere after it.
        if rng.chance(30) {
            let mut inner = names.clone();
            inner.push("p".into());
            let def = stmts(&mut rng, &mut inner, 1, false);
            body.push_str(&format!("{{% macro m(p) %}}{def}{{% endmacro %}}"));
            names.push("@m".into());
            let after = stmts(&mut rng, &mut names, 0, false);
            body.push_str(&after);
        }
        let strictness = *rng.pick(&[Strictness::Strict, Strictness::Semi, Strictness::Lenient]);
        let jinja = crate::options::JinjaOptions::new()
            .with_trim_blocks(rng.chance(50))
            .with_lstrip_blocks(rng.chance(50))
            .with_keep_trailing_newline(rng.chance(50));
        if agree_with(&body, &data, (strictness, chat), jinja) {
            direct += 1;
        }
    }
    // The test means something only if many render directly (most
    // random reads fail a strict render).
    assert!(direct > cases / 16, "{direct} of {cases} rendered directly");
}

/// A prompt-shaped template of valid reads only: names of the data,
/// loops over its lists, `loop.*`, and `set`s of two names in every
/// place (in `if`s, in loops, before and after reads).
fn prompt_like(rng: &mut Rng, depth: u32, element: Option<&str>, out: &mut String) {
    for _ in 0..1 + rng.next() % 4 {
        let mut reads = vec![
            "name",
            "n",
            "flag",
            "s",
            "t",
            "items[0].a",
            "ns.c",
            "ns.t",
            "items[ns.c % 3].a",
            "items[-1 - n % 2]['n']",
        ];
        let element_reads;
        if let Some(v) = element {
            element_reads = [format!("{v}.a"), format!("{v}.n"), format!("{v}.flag")];
            reads.extend(element_reads.iter().map(String::as_str));
            reads.extend(["loop.index", "loop.last", "loop.first"]);
        }
        let read = |rng: &mut Rng| -> String {
            let base = rng.pick(&reads).to_string();
            match rng.next() % 18 {
                0 => format!("{base} ~ '/'"),
                1 => format!("{base} | default('d')"),
                2 => format!("({base} - 1) * 3 // 2 % 4"),
                3 => format!("{base} is string"),
                4 => format!("{base} is number"),
                5 => format!("({base} ~ ' x ').strip()"),
                6 => format!("({base} ~ '').startswith('A')"),
                7 => format!("{base} | tojson"),
                8 => format!("({base} ~ ' a').split(' ')[-1]"),
                9 => format!("{{'k': {base}, 'j': 1}}.k"),
                10 => format!("[{base}, 'x'][loop.index0 % 2 if loop is defined else 0]"),
                11 => format!("{base} | default('e', true)"),
                12 => format!("({base} ~ '') | replace('a', 'b')"),
                _ => base,
            }
        };
        match rng.next() % if depth > 2 { 3 } else { 7 } {
            0 => {
                let text: &&str = rng.pick(&[" ", "\n", "-"]);
                out.push_str(text);
            }
            1 => out.push_str(&format!("{{{{ {} }}}}", read(rng))),
            2 => {
                let name = rng.pick(&["s", "t"]);
                let value = read(rng);
                match rng.chance(25) {
                    true => out.push_str(&format!(
                        "{{% set {name} %}}<{{{{ {value} }}}}>{{% endset %}}"
                    )),
                    false => out.push_str(&format!("{{% set {name} = {value} %}}")),
                }
            }
            3 => {
                out.push_str(&format!("{{% if {} %}}", read(rng)));
                prompt_like(rng, depth + 1, element, out);
                out.push_str("{% else %}");
                prompt_like(rng, depth + 1, element, out);
                out.push_str("{% endif %}");
            }
            6 => match rng.next() % 2 {
                0 => out.push_str("{% set ns.c = ns.c + 1 %}"),
                _ => out.push_str(&format!("{{% set ns.t = ns.t ~ {} %}}", read(rng))),
            },
            _ => {
                let v = format!("v{depth}");
                let list = match element {
                    Some(outer) if rng.chance(50) => format!("{outer}.items"),
                    _ => "items".to_string(),
                };
                out.push_str(&format!("{{% for {v} in {list} %}}"));
                if list.ends_with(".items") {
                    // A list of strings: no keys to read from its items.
                    out.push_str(&format!("{{{{ {v} }}}}"));
                    prompt_like(rng, depth + 1, element, out);
                } else {
                    prompt_like(rng, depth + 1, Some(&v), out);
                }
                out.push_str("{% endfor %}");
            }
        }
    }
}

/// Many prompt-shaped templates over data that has what they read
/// (`TELEPROMPT_CASES` of them, 2000 by default):
/// each renders the same as on minijinja; about a third render
/// directly (the others read a name a loop assigns before it does).
#[test]
fn random_prompts_render_alike() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let item =
        |name: &str, n: i64| json!({"a": name, "n": n, "flag": n % 2 == 0, "items": [name, "z"]});
    let data = json!({"name": "Ada", "n": 5, "flag": true, "s": "data's s", "t": 0,
                      "items": [item("p", 1), item("q", 2), item("r", 3)]});
    let (mut direct, cases) = (0, cases(2000));
    for _ in 0..cases {
        let mut body = String::from("{% set ns = namespace(c=0, t='') %}");
        prompt_like(&mut rng, 0, None, &mut body);
        let strictness = [Strictness::Strict, Strictness::Semi, Strictness::Lenient]
            [usize::from(body.len() % 3 == 0) + usize::from(body.len() % 3 == 1) * 2];
        if agree(&body, &data, strictness) {
            direct += 1;
        }
    }
    println!("{direct} of {cases} rendered directly");
    assert!(direct > cases / 5, "{direct} of {cases} rendered directly");
}
