use teleprompt::{Data, LoadOptions, Prompt, RenderOptions};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).unwrap();
    let mode = args[2].as_str();
    let n: usize = args[3].parse().unwrap();
    let mut sections: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(m) = line.strip_prefix("=== ") {
            sections.push((m.to_string(), String::new()));
        } else if let Some(last) = sections.last_mut() {
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    let (pname, ptext) = sections
        .iter()
        .find(|(m, _)| m.starts_with("prompt "))
        .unwrap();
    let file = pname.trim_start_matches("prompt ").to_string();
    let want = args
        .get(4)
        .map(|s| format!("data {s}"))
        .unwrap_or("data ".into());
    let data_text = &sections
        .iter()
        .find(|(m, _)| m.starts_with(&want))
        .unwrap()
        .1;
    let mut json: serde_json::Value = serde_json::from_str(data_text).unwrap();
    for (k, v) in [
        ("tools", serde_json::Value::Null),
        ("documents", serde_json::Value::Null),
        ("add_generation_prompt", serde_json::Value::Bool(false)),
    ] {
        json.as_object_mut().unwrap().entry(k).or_insert(v);
    }
    let prompt = Prompt::from_source(&file, ptext, &LoadOptions::default()).unwrap();
    let options = RenderOptions::default();
    let kept = Data::new(json.clone());
    let mut total = 0;
    let start = std::time::Instant::now();
    for _ in 0..n {
        let r = match mode {
            "kept" => prompt.render_with(&kept, &options).unwrap(),
            "fresh" => prompt
                .render_with(&Data::new(json.clone()), &options)
                .unwrap(),
            _ => panic!(),
        };
        total += r.text().len();
    }
    eprintln!(
        "{} ns/render, {} bytes",
        start.elapsed().as_nanos() / n as u128,
        total / n
    );
}
