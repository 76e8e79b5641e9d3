//! Hostile data: a text of tiny values, each of which takes at least 32
//! bytes in memory once parsed (about 37 times its text), ends at
//! [`MAX_DATA_VALUES`] with an error naming the bound, so parsed data never
//! holds more than a few hundred megabytes.

use std::time::Instant;

use teleprompt::data::{parse_text, Format, MAX_DATA_VALUES};
use teleprompt::ErrorClass;

/// `[0,0,…]` holding `zeros` zeros: `zeros + 1` values.
fn zeros(zeros: usize) -> String {
    let mut text = String::with_capacity(zeros * 2 + 2);
    text.push('[');
    for i in 0..zeros {
        if i > 0 {
            text.push(',');
        }
        text.push('0');
    }
    text.push(']');
    text
}

#[test]
fn data_of_more_values_than_the_bound_is_refused() {
    let _alone = crate::common::exclusive();
    // The most: the list and its items.
    let at_bound = zeros(MAX_DATA_VALUES - 1);
    let start = Instant::now();
    let value = parse_text(&at_bound, Some(Format::Json), "d.json").expect("at the bound");
    assert_eq!(value.as_array().map(Vec::len), Some(MAX_DATA_VALUES - 1));
    drop(value);
    let over = zeros(MAX_DATA_VALUES);
    let error = parse_text(&over, Some(Format::Json), "d.json").unwrap_err();
    assert_eq!(error.class(), ErrorClass::Input);
    let message = error.message().to_string();
    assert!(message.contains("MAX_DATA_VALUES"), "{message}");
    assert!(message.contains("4000000 values"), "{message}");
    assert!(
        start.elapsed() < 2 * super::budget(),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn yaml_data_counts_its_values_too() {
    // Deep and wide in one: maps of lists, each value counted once.
    let row = "- {a: 1, b: [x, y, z], c: null}\n";
    let rows = MAX_DATA_VALUES / 6 + 1;
    if cfg!(debug_assertions) {
        // The YAML reader is slow unoptimized: the small shape only,
        // checked below the bound.
        let text = row.repeat(1000);
        let value = parse_text(&text, Some(Format::Yaml), "d.yaml").expect("small");
        assert_eq!(value.as_array().map(Vec::len), Some(1000));
        return;
    }
    let _alone = crate::common::exclusive();
    let text = row.repeat(rows);
    let error = parse_text(&text, Some(Format::Yaml), "d.yaml").unwrap_err();
    assert!(
        error.message().contains("MAX_DATA_VALUES"),
        "{}",
        error.message()
    );
}
