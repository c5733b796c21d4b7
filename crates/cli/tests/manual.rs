//! What users read besides the outputs: shell completions for every shell,
//! the manual page and `tracemux formats` are generated (non-empty, naming
//! the main subcommands and every format); piped output has no colour.

mod common;

use std::path::Path;

fn run(args: &[&str]) -> String {
    let out = common::tracemux(args, Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(
        out.status.success(),
        "tracemux {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

const SUBCOMMANDS: &[&str] = &["report", "info", "dump", "stats", "convert"];

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let text = run(&["completions", shell]);
        assert!(text.len() > 1000, "{shell}: {} bytes", text.len());
        for sub in SUBCOMMANDS {
            assert!(text.contains(sub), "{shell}: no {sub}");
        }
        assert!(text.contains("strict"), "{shell}: no options");
    }
}

#[test]
fn man_page() {
    let page = run(&["man"]);
    assert!(page.starts_with(".ie") || page.starts_with(".TH"), "{page}");
    assert!(page.contains(".TH tracemux 1"));
    for sub in SUBCOMMANDS {
        assert!(page.contains(&format!("tracemux\\-{sub}")), "no {sub}");
    }
    assert!(page.contains(".SH \"OPTIONS BY FORMAT\""));
    assert!(page.contains("EXAMPLES"));
}

#[test]
fn every_option_of_every_format_in_one_place() {
    let text = run(&["help", "formats"]);
    assert_eq!(text, run(&["formats"]));
    for head in [
        "\ntrace-cmd trace.dat: ",
        "\nCTF: ",
        "\nuftrace data: ",
        "\nlegacy LTT: ",
        "\nAny format\n",
    ] {
        assert!(text.contains(head), "no {head:?}");
    }
    // one option each that only that format's command line has
    for opt in [
        "--ts-offset",
        "--clock-gmt",
        "--output-fields",
        "--clock-cycles",
    ] {
        assert!(text.contains(opt), "no {opt}");
    }
}

#[test]
fn no_colour_when_piped() {
    for args in [&["--help"][..], &["formats"], &["report", "--help"]] {
        assert!(!run(args).contains('\x1b'), "{args:?}");
    }
    let out = common::tracemux(&["report", "--bogus"], Path::new("."));
    assert_eq!(out.status.code(), Some(2));
    assert!(!out.stderr.contains(&0x1b));
}
