//! What users read besides `--help`: shell completions, the manual page,
//! and the options of every format in one place (`tracemux formats`, also
//! `tracemux help formats`). All three are generated from the clap
//! definitions when asked for, so they cannot drift from what the parser
//! accepts.
//!
//! Colour: clap styles help and errors only when the stream is a terminal
//! and `NO_COLOR` is unset; nothing here adds colour of its own.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::Result;
use clap::{Arg, Args, Command, CommandFactory};
use clap_complete::Shell;
use clap_mangen::roff::{roman, Roff};
use tracemux_core::model::Format;

use crate::out::{Out, Outcome};

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The subcommands whose options depend on the trace's format (see
/// `native.rs`), in the order they are listed.
const PER_FORMAT: &[&str] = &["report", "info", "dump", "stats"];

/// `tracemux help formats` is `tracemux formats` (clap's own `help`
/// subcommand only knows subcommands).
pub fn help_topic(mut argv: Vec<OsString>) -> Vec<OsString> {
    if argv.len() == 3 && argv[1] == "help" && argv[2] == "formats" {
        argv.remove(1);
    }
    argv
}

/// `tracemux completions SHELL`: the completion script on stdout.
/// `cli` is the trace-cmd-style command line (`main.rs`'s `Cli`).
pub fn completions(a: &CompletionsArgs, mut cli: Command) -> Result<Outcome> {
    let mut out = Out::new();
    clap_complete::generate(a.shell, &mut cli, "tracemux", &mut out);
    out.flush()?;
    Ok(Outcome::Ok)
}

/// `tracemux man`: the manual page, as roff, on stdout
/// (`tracemux man | man -l -`).
pub fn man(cli: Command) -> Result<Outcome> {
    let mut out = Out::new();
    out.buf().extend_from_slice(&man_page(cli)?);
    out.flush()?;
    Ok(Outcome::Ok)
}

/// `tracemux formats`: every option of every format.
pub fn formats(cli: Command) -> Result<Outcome> {
    let mut out = Out::new();
    out.write_all(formats_text(cli).as_bytes())?;
    out.flush()?;
    Ok(Outcome::Ok)
}

fn man_page(cli: Command) -> Result<Vec<u8>> {
    let text = formats_text(cli.clone());
    let m = clap_mangen::Man::new(cli);
    let mut page = Vec::new();
    m.render_title(&mut page)?;
    m.render_name_section(&mut page)?;
    m.render_synopsis_section(&mut page)?;
    m.render_description_section(&mut page)?;
    m.render_subcommands_section(&mut page)?;
    let mut r = Roff::new();
    r.control("SH", ["OPTIONS BY FORMAT"]);
    r.control("nf", []);
    for line in text.lines() {
        r.text([roman(line)]);
    }
    r.control("fi", []);
    r.to_writer(&mut page)?;
    m.render_extra_section(&mut page)?;
    m.render_version_section(&mut page)?;
    Ok(page)
}

/// The options of each format's command line, subcommand by subcommand,
/// then those of the subcommands that take any format.
fn formats_text(cli: Command) -> String {
    let sets = [
        (Format::TraceDat, "trace-cmd's options", cli.clone()),
        (
            Format::Ctf,
            "babeltrace2's options",
            crate::ctf::CtfCli::command(),
        ),
        (
            Format::Uftrace,
            "uftrace's options",
            crate::uftrace::UftraceCli::command(),
        ),
        (
            Format::Ltt,
            "babeltrace2-like options",
            crate::ltt::LttCli::command(),
        ),
        (
            Format::Perf,
            "perf's options",
            crate::perf::PerfCli::command(),
        ),
    ];
    let mut s = String::from(
        "The options of report, info, dump and stats depend on the format of the\n\
         trace named (recognised by content); `tracemux SUBCOMMAND TRACE --help`\n\
         shows those that apply to TRACE.\n",
    );
    for (format, whose, cmd) in sets {
        let _ = writeln!(s, "\n{}: {whose}", format.describe(None));
        for sub in cmd.get_subcommands() {
            if PER_FORMAT.contains(&sub.get_name()) {
                subcommand(&mut s, sub);
            }
        }
    }
    s.push_str("\nAny format\n");
    for sub in cli.get_subcommands() {
        if !PER_FORMAT.contains(&sub.get_name()) && !sub.is_hide_set() {
            subcommand(&mut s, sub);
        }
    }
    s
}

fn subcommand(s: &mut String, sub: &Command) {
    let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
    let _ = writeln!(s, "  tracemux {}: {about}", sub.get_name());
    for arg in sub.get_arguments() {
        let id = arg.get_id().as_str();
        if arg.is_hide_set() || id == "help" || id == "version" {
            continue;
        }
        let flags = flags(arg);
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        if flags.len() < 30 {
            let _ = writeln!(s, "    {flags:<30}{help}");
        } else {
            let _ = writeln!(s, "    {flags}\n    {:<30}{help}", "");
        }
    }
}

/// `-i, --input <INPUT>`, `<TRACE>`.
fn flags(arg: &Arg) -> String {
    let value = || {
        arg.get_value_names()
            .and_then(|v| v.first())
            .map(|n| n.to_string())
            .unwrap_or_else(|| arg.get_id().as_str().to_uppercase())
    };
    if arg.is_positional() {
        return format!("<{}>", value());
    }
    let mut f = String::new();
    if let Some(c) = arg.get_short() {
        let _ = write!(f, "-{c}");
    }
    if let Some(l) = arg.get_long() {
        if !f.is_empty() {
            f.push_str(", ");
        }
        let _ = write!(f, "--{l}");
    }
    if arg.get_action().takes_values() {
        let _ = write!(f, " <{}>", value());
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli() -> Command {
        Command::new("tracemux")
            .version("1")
            .subcommand(Command::new("report").arg(Arg::new("trace")))
            .subcommand(Command::new("convert").about("Convert"))
    }

    #[test]
    fn help_formats_is_formats() {
        let v = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            help_topic(v(&["tracemux", "help", "formats"])),
            v(&["tracemux", "formats"])
        );
        assert_eq!(
            help_topic(v(&["tracemux", "help", "report"])),
            v(&["tracemux", "help", "report"])
        );
    }

    #[test]
    fn every_format_named() {
        let t = formats_text(cli());
        for f in [
            Format::TraceDat,
            Format::Ctf,
            Format::Uftrace,
            Format::Ltt,
            Format::Perf,
        ] {
            assert!(t.contains(&format!("\n{}: ", f.describe(None))), "{t}");
        }
        assert!(t.contains("  tracemux convert: Convert\n"), "{t}");
        let page = String::from_utf8(man_page(cli()).unwrap()).unwrap();
        assert!(page.contains(".SH \"OPTIONS BY FORMAT\""), "{page}");
    }
}
