//! The `teleprompt` command as a user runs it, one snapshot file a command:
//! `tests/cmd/<area>/<case>.toml` holds the arguments, stdin, expected
//! stdout and stderr and exit status (see tests/README.md). Bless changed
//! output with `TRYCMD=overwrite cargo test -p teleprompt-cli --test cmd`.

use std::path::Path;

#[test]
fn cmd() {
    let bin = Path::new(env!("CARGO_BIN_EXE_teleprompt"));
    // Output is not a terminal, so reports are plain unless the caller's
    // environment has CLICOLOR_FORCE (any value but empty): NO_COLOR wins
    // over it, whatever the caller's environment. TERM matters only on a
    // terminal.
    trycmd::TestCases::new()
        .register_bin("teleprompt", bin)
        .env("NO_COLOR", "1")
        // `render` tells a prompt the operating system it runs on.
        .insert_var("[OS]", std::env::consts::OS)
        .expect("a valid variable")
        .case("tests/cmd/**/*.toml")
        // Run below, where the colour variables are each case's own.
        .skip("tests/cmd/colour/*.toml")
        // A case's own TOML data files are not cases.
        .skip("tests/cmd/**/*.in/**/*.toml")
        .skip("tests/cmd/**/*.out/**/*.toml")
        .run();
    // Colour: each case sets or removes NO_COLOR, CLICOLOR and
    // CLICOLOR_FORCE itself.
    trycmd::TestCases::new()
        .register_bin("teleprompt", bin)
        .case("tests/cmd/colour/*.toml")
        .run();
}
