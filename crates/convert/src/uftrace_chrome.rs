//! [`To::Chrome`](crate::To::Chrome) of a uftrace recording with nothing
//! selected: the bytes of `uftrace dump --chrome` (`tracemux_uftrace::chrome`),
//! so that what uftrace users load today stays the same (apart from what
//! uftrace itself varies: its version string and the `recorded_time`, the
//! time of `uftrace.data/info` in the local time zone). With `--begin`,
//! `--end` or `--events` the events go through the model like every other
//! format's (`tracemux_export::chrome`).

use std::io::Write;
use std::path::Path;

use crate::{Error, Result};
use tracemux_uftrace::report::walk::WalkView;

use crate::files::{close, create};
use crate::options::{Hooks, Options, Summary};

/// Whether `o` converts one uftrace recording, selecting nothing.
pub(crate) fn applies(o: &Options) -> bool {
    let selecting = o.begin.is_some() || o.end.is_some() || !o.events.is_empty();
    !selecting
        && o.inputs.len() == 1
        && matches!(
            tracemux_open::sniff(&o.inputs[0]),
            Ok(tracemux_open::Kind::Uftrace)
        )
}

pub(crate) fn run(o: &Options, tmp: &Path, summary: &mut Summary, hooks: &dyn Hooks) -> Result<()> {
    let input = &o.inputs[0];
    let mut data =
        tracemux_open::open_uftrace(input, tracemux_uftrace::Demangle::Simple, o.strict)?;
    let opts = tracemux_uftrace::chrome::ChromeOptions {
        zone: tracemux_core::localtime::Zone::local(),
        ..Default::default()
    };
    let mut out = create(tmp)?;
    let mut warn = Vec::new();
    hooks.started();
    opts.write_view(&mut data, &mut out, &mut warn)
        .map_err(|e| Error::input(input.display(), e))?;
    hooks.finished();
    out.flush()?;
    close(out)?;
    for line in String::from_utf8_lossy(&warn).lines() {
        hooks.note(line);
    }
    summary.uftrace_chrome = true;
    Ok(())
}
