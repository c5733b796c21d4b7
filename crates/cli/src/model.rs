//! The common event model as the commands use it: any trace opened as a
//! source ([`with_source`], over [`tracemux_open::with_source`]), and the
//! printers of the model's styles ([`print_model`]).

use std::path::Path;

use anyhow::{bail, Result};
use tracemux_core::model::RecordSource;

use crate::out::{warn, Out, Outcome};

/// Open `paths` as one source of the model and hand it to `f`; what was
/// forgiven while opening is said on stderr.
pub fn with_source(
    paths: &[std::path::PathBuf],
    strict: bool,
    f: impl FnOnce(&mut dyn RecordSource) -> Result<Outcome>,
) -> Result<Outcome> {
    let note = |m: &str| eprintln!("tracemux: warning: {m}");
    let opts = tracemux_open::OpenOptions {
        strict,
        on_note: Some(&note),
    };
    tracemux_open::with_source(paths, &opts, f)
}

/// The printers of the common model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelStyle {
    /// JSON lines (`schema/jsonl.schema.json`).
    Json,
    /// babeltrace2's text style.
    Babeltrace,
    /// trace-cmd report's line layout, fields as ` name=value`.
    TraceCmd,
}

/// Print every record of `src` on stdout in `style`; damage is reported on
/// stderr (an error with `strict`).
pub fn print_model(
    src: &mut dyn RecordSource,
    style: ModelStyle,
    path: &Path,
    strict: bool,
) -> Result<Outcome> {
    use tracemux_core::model::Record;
    let mut out = Out::new();
    let mut outcome = Outcome::Ok;
    // (the records borrow the source, so its description is copied once)
    let meta = src.meta().clone();
    let mut bt = tracemux_render::babeltrace::BabeltracePrinter::new();
    let mut tc = tracemux_render::tracecmd::TraceCmdPrinter::new(
        &meta,
        tracemux_core::model::TimeFormat::Usecs,
    );
    loop {
        let rec = match src.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                out.flush()?;
                bail!("{}: {}", path.display(), e);
            }
        };
        match (rec, style) {
            (Record::Event(ev), ModelStyle::Json) => {
                tracemux_render::jsonl::write_event(out.buf(), &meta, &ev)
            }
            (Record::Event(ev), ModelStyle::Babeltrace) => bt.write_event(out.buf(), &meta, &ev),
            (Record::Event(ev), ModelStyle::TraceCmd) => {
                tc.write_pretty(out.buf(), &meta, &ev, None);
            }
            (Record::Lost(l), ModelStyle::Json) => {
                tracemux_render::jsonl::write_lost(out.buf(), &meta, &l)
            }
            (Record::Lost(l), ModelStyle::Babeltrace) => bt.write_lost(out.buf(), &l),
            (Record::Lost(l), ModelStyle::TraceCmd) => tc.write_lost(out.buf(), &meta, &l),
            (Record::Damage(e), _) => {
                out.flush()?;
                if strict {
                    bail!("{}: {}", path.display(), e);
                }
                warn(path, &e);
                outcome = Outcome::Damaged;
            }
        }
        out.maybe_flush()?;
    }
    out.flush()?;
    Ok(outcome)
}
