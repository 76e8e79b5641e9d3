//! Examples driven through the library, where the CLI cannot fix every input
//! (the Forge workspace's environment differs per machine).

use std::path::Path;

use teleprompt::context::{Clock, Environment, Workspace};
use teleprompt::{Prompt, PromptContext};

fn expected(examples: &Path, path: &str) -> String {
    std::fs::read_to_string(examples.join(path)).expect("expected output exists")
}

/// Forge re-renders its system prompt every turn: same prompt, same
/// conversation, a new time and turn number.
#[test]
fn forge_system_prompt_two_turns() {
    let Some(examples) = crate::common::repository_file("examples") else {
        return;
    };
    let prompt = Prompt::from_file(examples.join("forge/system.hbs")).expect("loads");
    let workspace = Workspace::new(examples.join("forge/workspace"))
        .max_depth(2)
        .environment(Environment {
            os: "linux".into(),
            cwd: "/home/dev/inventory".into(),
            shell: "/bin/bash".into(),
            home: "/home/dev".into(),
        });
    let conversation = PromptContext::new()
        .workspace(workspace)
        .custom_rules("Always run `cargo test` before you commit.")
        .time_zone_named("Asia/Kolkata")
        .expect("a known zone")
        .max_turns(20);
    for (turn, now, file) in [
        (1, "2026-11-21T09:05:03Z", "forge/turn1.expected.txt"),
        (2, "2026-11-21T09:07:41Z", "forge/turn2.expected.txt"),
    ] {
        let context = conversation
            .clone()
            .turn(turn)
            .clock(Clock::parse(now).expect("a valid instant"));
        let rendered = prompt.render_turn(&context).expect("renders");
        if crate::common::blessing() {
            std::fs::write(examples.join(file), rendered.text()).expect("writable");
        }
        assert_eq!(rendered.text(), expected(&examples, file), "turn {turn}");
        let messages: Vec<_> = rendered.messages().collect();
        assert_eq!(messages.len(), 1);
        assert_eq!(
            messages[0].role,
            teleprompt::Role::System,
            "default_role: system"
        );
    }
}
