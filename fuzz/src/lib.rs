//! What the fuzz targets share.

use teleprompt::{LoadOptions, Prompt};

/// Loads `text` as `teleprompt check` and `inspect` do: every error of a
/// file that does not load is reported, and a file that loads has its
/// warnings and read paths found. The prompt, when it loads.
pub fn load_as_check(origin: &str, text: &str, options: &LoadOptions) -> Option<Prompt> {
    let prompt = match Prompt::from_source(origin, text, options) {
        Ok(prompt) => prompt,
        Err(error) => {
            for error in error.all().iter().chain(error.warnings()) {
                let _ = error.report();
            }
            return None;
        }
    };
    for warning in prompt.warnings() {
        let _ = warning.report();
    }
    if let Some(inputs) = prompt.inputs() {
        let _ = (inputs.to_picoschema(), inputs.to_json_schema());
    }
    Some(prompt)
}
