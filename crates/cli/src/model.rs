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
    let noted = std::cell::Cell::new(false);
    let note = |m: &str| {
        noted.set(true);
        eprintln!("tracemux: warning: {m}")
    };
    let opts = tracemux_open::OpenOptions {
        strict,
        on_note: Some(&note),
        ..Default::default()
    };
    let outcome = tracemux_open::with_source(paths, &opts, f)?;
    // what CTF 2 forbids and was read on (a note) is damage too
    Ok(if noted.get() {
        Outcome::Damaged
    } else {
        outcome
    })
}

pub use tracemux_render::style::ModelStyle;

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
    let mut printer = tracemux_render::style::ModelPrinter::new(&meta, style);
    loop {
        let rec = match src.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                out.flush()?;
                bail!("{}: {}", path.display(), e);
            }
        };
        match rec {
            Record::Event(ev) => printer.event(out.buf(), &meta, &ev),
            Record::Lost(l) => printer.lost(out.buf(), &meta, &l),
            Record::Damage(e) => {
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
