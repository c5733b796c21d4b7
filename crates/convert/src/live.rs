//! A trace that arrives while it is converted (a live LTTng session, a
//! CTF directory being written): its records stream into the sink as the
//! muxer of [`tracemux_ctf::live::LiveRecords`] hands them out, each with
//! the metadata as it is then (classes and streams that appear later are
//! added to it, the sinks take them as a reader's later classes). The
//! output is written under its temporary name and renamed when the source
//! ends (or is interrupted: what arrived is a complete output).
//!
//! CTF output with nothing selected is not converted here: the packets
//! are written down as they arrive (`tracemux_ctf::live::spool`), as a
//! finished CTF trace is copied.

use crate::{Error, Result};
use tracemux_ctf::live::LiveRecords;
use tracemux_ctf::text::PacketSource;

use crate::{feed, into_place, is_special, make_sink, remove, temp_name};
use crate::{Hooks, Options, Summary, To};

/// Convert what `records` delivers as `o` says (`o.inputs[0]` names the
/// source in messages); `partition`: the name of the Parquet partition
/// (with `o.partition`).
pub fn run_live<S: PacketSource>(
    o: &Options,
    records: &mut LiveRecords<S>,
    partition: Option<&str>,
    hooks: &dyn Hooks,
) -> Result<Summary> {
    if matches!(o.to, To::Tracedat) {
        return Err(Error::Refused(
            "--to tracedat: a trace.dat is written from a trace.dat, not from a live session"
                .into(),
        ));
    }
    let in_place = is_special(&o.output);
    if o.output.exists() && !o.force && !in_place {
        return Err(crate::files::exists(&o.output));
    }
    let tmp = if in_place {
        o.output.clone()
    } else {
        temp_name(&o.output)
    };
    remove(&tmp);
    let mut summary = Summary::default();
    let res = convert(o, records, &tmp, partition, &mut summary, hooks);
    hooks.finished();
    if let Err(e) = res {
        remove(&tmp);
        return Err(e);
    }
    if !in_place {
        into_place(&tmp, &o.output)?;
    }
    Ok(summary)
}

fn convert<S: PacketSource>(
    o: &Options,
    records: &mut LiveRecords<S>,
    tmp: &std::path::Path,
    partition: Option<&str>,
    summary: &mut Summary,
    hooks: &dyn Hooks,
) -> Result<()> {
    let input = o.inputs.first().cloned().unwrap_or_default();
    let name = input.display().to_string();
    // the sink is made for the metadata known at the first record: every
    // stream that sent data by then, and the classes received
    records.wait_first().map_err(|e| Error::input(&name, e))?;
    if records.meta().streams.is_empty() {
        return Err(Error::Refused(format!("{name}: no data stream received")));
    }
    let meta = records.meta().clone();
    // a live session is one trace: a Hive partition at most
    let part = partition.filter(|_| o.partition).map(|name| crate::Part {
        name: name.to_string(),
        #[cfg(feature = "parquet")]
        shared: None,
    });
    let mut sink = make_sink(o, &meta, tmp, part.as_ref())?;
    hooks.started();
    loop {
        let next = records
            .next_with_meta()
            .map_err(|e| Error::input(&name, e))?;
        let Some((rec, meta)) = next else { break };
        if feed(o, rec, meta, &mut sink, summary, hooks, &input)?
            && summary.events % crate::PROGRESS_EVERY == 0
        {
            hooks.progress(summary.events, None)?;
        }
    }
    sink.finish(records.meta())
}

/// Whether [`spool_live`] is the conversion `o` asks for: CTF output with
/// nothing selected and nothing to write anew.
pub fn spools(o: &Options) -> bool {
    let selecting = o.begin.is_some() || o.end.is_some() || !o.events.is_empty();
    matches!(o.to, To::Ctf | To::Ctf2) && !selecting && !o.reencode
}

/// A live session into a CTF directory with nothing selected: its
/// packets written as they arrive, with each trace's metadata as received
/// (CTF 2: translated once the session ends), as a finished trace is
/// copied.
pub fn spool_live(o: &Options, session: &mut tracemux_ctf::live::LiveSession) -> Result<Summary> {
    let in_place = is_special(&o.output);
    if in_place {
        return Err(Error::Refused(format!(
            "{}: a CTF trace is a directory",
            o.output.display()
        )));
    }
    if o.output.exists() && !o.force {
        return Err(crate::files::exists(&o.output));
    }
    let tmp = temp_name(&o.output);
    remove(&tmp);
    let name = o.inputs.first().cloned().unwrap_or_default();
    let res = tracemux_ctf::live::spool::spool(session, &tmp)
        .map_err(|e| Error::input(name.display(), e))
        .and_then(|s| {
            if s.packets == 0 {
                return Err(Error::Refused(format!(
                    "{}: no packet received",
                    name.display()
                )));
            }
            if o.to == To::Ctf2 {
                to_ctf2(&tmp)?;
            }
            Ok(s)
        });
    let s = match res {
        Ok(s) => s,
        Err(e) => {
            remove(&tmp);
            return Err(e);
        }
    };
    into_place(&tmp, &o.output)?;
    Ok(Summary {
        copied: Some(crate::CopySummary {
            traces: s.traces,
            files: s.streams,
            bytes: s.bytes,
        }),
        ..Summary::default()
    })
}

/// Every trace's metadata under `dir` rewritten as CTF 2.
fn to_ctf2(dir: &std::path::Path) -> Result<()> {
    let found = tracemux_ctf::fs::discover(&[dir.to_path_buf()])?;
    for f in found {
        let p = f.dir.join("metadata");
        let bytes = std::fs::read(&p).map_err(|e| Error::input(p.display(), e))?;
        let (tc, _) = tracemux_ctf::fs::parse_metadata_bytes(&bytes, &p, false)?;
        let m = tracemux_ctf::ctf2::write_metadata(&tc)?;
        std::fs::write(&p, m).map_err(|e| Error::file(&p, "write", e))?;
    }
    Ok(())
}
