//! Several traces of any formats as one timeline: each input's clock from
//! what its file says, each input placed on the first input's clock
//! ([`tracemux_core::timeline::align`]: same clock, an offset estimated
//! from events both see, or one the user gives), then merged by time
//! ([`tracemux_core::merge::Timeline`]).

use std::path::{Path, PathBuf};

use tracemux_core::merge::Timeline;
use tracemux_core::model::RecordSource;
use tracemux_core::timeline::{align, ClockDomain, InputInfo, Samples};
use tracemux_tracedat::{OptionId, TraceDat};

use crate::error::{Error, Result};
use crate::kind::{map, sniff, Kind};
use crate::source::{one, OpenOptions};

/// Whether `paths` are read as a timeline of several inputs (several
/// traces, not all CTF: several CTF traces merge as babeltrace2 merges
/// them).
pub fn is_timeline(paths: &[PathBuf]) -> Result<bool> {
    if paths.len() < 2 {
        return Ok(false);
    }
    for p in paths {
        if !matches!(sniff(p)?, Kind::Ctf { .. }) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether `paths` are traces of more than one format (several traces of
/// one format may be kept apart: Parquet's partitions).
pub fn mixed_formats(paths: &[PathBuf]) -> Result<bool> {
    let mut first: Option<String> = None;
    for p in paths {
        let k = sniff(p)?.name();
        if *first.get_or_insert_with(|| k.clone()) != k {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The name of an input in messages, in `--clock-offset` and in each
/// event's `input`: its path as given.
pub fn input_name(p: &Path) -> String {
    p.display().to_string()
}

/// The clock of the trace at `p` and its description.
fn domain_of(p: &Path, opts: &OpenOptions<'_>) -> Result<ClockDomain> {
    let quiet = OpenOptions {
        on_note: None,
        clock_offsets: &[],
        ..*opts
    };
    let d = one(&[p.to_path_buf()], &quiet, |src| {
        Ok::<_, Error>(ClockDomain::of(src.meta()))
    })?;
    if matches!(sniff(p)?, Kind::TraceDat) {
        return Ok(d.corrected(&tracedat_corrections(p, opts.strict)?));
    }
    Ok(d)
}

/// The clock corrections a trace.dat's options make its reader apply.
fn tracedat_corrections(p: &Path, strict: bool) -> Result<Vec<&'static str>> {
    let data = map(p)?;
    let t = TraceDat::parse(&data, strict).map_err(|e| Error::trace(p, e))?;
    Ok([
        (OptionId::TSC2NSEC, "TSC2NSEC"),
        (OptionId::DATE, "DATE"),
        (OptionId::OFFSET, "OFFSET"),
        (OptionId::TIME_SHIFT, "TIME_SHIFT"),
    ]
    .into_iter()
    .filter(|(id, _)| t.options.iter().any(|o| o.id == *id))
    .map(|(_, n)| n)
    .collect())
}

/// Each input's place on the timeline: its clock, shift and how it was
/// found. Fails, naming `--clock-offset`, when an input cannot be placed.
pub fn plan(paths: &[PathBuf], opts: &OpenOptions<'_>) -> Result<Vec<InputInfo>> {
    let names: Vec<String> = paths.iter().map(|p| input_name(p)).collect();
    let mut given = vec![None; paths.len()];
    for (k, ns) in opts.clock_offsets {
        let at = names.iter().position(|n| n == k).or_else(|| {
            let want = Path::new(k).canonicalize().ok()?;
            paths
                .iter()
                .position(|p| p.canonicalize().ok().as_ref() == Some(&want))
        });
        match at {
            Some(i) => given[i] = Some(*ns),
            None => {
                return Err(Error::Refused(format!(
                    "--clock-offset {k}={ns}: {k} is none of the inputs ({})",
                    names.join(", ")
                )))
            }
        }
    }
    let mut domains = Vec::with_capacity(paths.len());
    for p in paths {
        domains.push(domain_of(p, opts)?);
    }
    let quiet = OpenOptions {
        on_note: None,
        clock_offsets: &[],
        ..*opts
    };
    let mut failure: Option<Error> = None;
    let mut samples = |i: usize| -> Option<Samples> {
        let p = &paths[i];
        match one(std::slice::from_ref(p), &quiet, |src| {
            Samples::collect(src).map_err(|e| Error::trace(p, e))
        }) {
            Ok(s) => Some(s),
            Err(e) => {
                failure.get_or_insert(e);
                None
            }
        }
    };
    let placed = align(&names, &domains, &given, &mut samples);
    if let Some(e) = failure {
        return Err(e);
    }
    let placed = placed.map_err(|u| Error::Refused(u.message))?;
    Ok(names
        .into_iter()
        .zip(domains)
        .zip(placed)
        .map(|((name, clock), (shift_ns, alignment))| InputInfo {
            name,
            format: None,
            clock,
            streams: 0..0,
            shift_ns,
            alignment,
        })
        .collect())
}

/// Open `paths` as one timeline and hand it to `f`.
pub fn with_timeline<T, E: From<Error>>(
    paths: &[PathBuf],
    opts: &OpenOptions<'_>,
    f: impl FnOnce(&mut dyn RecordSource) -> Result<T, E>,
) -> Result<T, E> {
    let infos = plan(paths, opts)?;
    let mut f = Some(f);
    let mut call = |src: &mut dyn RecordSource| match f.take() {
        Some(f) => f(src),
        None => Err(Error::Refused("timeline opened twice".into()).into()),
    };
    nested(paths, opts, &infos, Vec::new(), &mut call)
}

/// Open the inputs one inside the other (each source borrows its mapped
/// files, which live in the frame that opened them), then merge.
fn nested<'a, T, E: From<Error>>(
    paths: &[PathBuf],
    opts: &OpenOptions<'_>,
    infos: &[InputInfo],
    open: Vec<&'a mut (dyn RecordSource + 'a)>,
    f: &mut dyn FnMut(&mut dyn RecordSource) -> Result<T, E>,
) -> Result<T, E> {
    let k = open.len();
    if k == paths.len() {
        let inputs = open.into_iter().zip(infos.iter().cloned()).collect();
        let mut t = Timeline::new(inputs);
        return f(&mut t);
    }
    one(&paths[k..k + 1], opts, move |src| {
        let mut v: Vec<&mut dyn RecordSource> = open
            .into_iter()
            .map(|s| s as &mut dyn RecordSource)
            .collect();
        v.push(src);
        nested(paths, opts, infos, v, f)
    })
}
