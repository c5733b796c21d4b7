//! What a source says of how far it has read (`RecordSource::progress`,
//! the progress bar of `convert`): on fixtures of every format that
//! counts its bytes, it never goes back, never passes its total, and
//! reaches the total at the end.

use std::path::{Path, PathBuf};

use tracemux_core::model::{Progress, RecordSource};
use tracemux_open::{with_source, OpenOptions};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// Every reading of `paths`' progress, one per record.
fn readings(paths: &[PathBuf]) -> Vec<Progress> {
    with_source(
        paths,
        &OpenOptions::default(),
        |src: &mut dyn RecordSource| {
            let mut seen = vec![src.progress().expect("a total before the first record")];
            loop {
                let more = src.next_record()?.is_some();
                seen.push(src.progress().expect("a total while reading"));
                if !more {
                    return Ok::<_, tracemux_open::Error>(seen);
                }
            }
        },
    )
    .unwrap_or_else(|e| panic!("{paths:?}: {e}"))
}

fn check(paths: &[PathBuf]) {
    let seen = readings(paths);
    let total = seen[0].total;
    assert!(total > 0, "{paths:?}: no bytes to read");
    for w in seen.windows(2) {
        assert_eq!(w[1].total, total, "{paths:?}: the total changed");
        assert!(w[1].done >= w[0].done, "{paths:?}: went back: {w:?}");
    }
    assert!(
        seen.iter().all(|p| p.done <= total),
        "{paths:?}: past the total"
    );
    let last = seen[seen.len() - 1];
    assert_eq!(last.done, total, "{paths:?}: not all read at the end");
    assert!(
        seen[0].done < total,
        "{paths:?}: all read before the first record"
    );
}

#[test]
fn tracedat_progress() {
    for d in ["v6-sched-irq-timer", "v7-instance-B", "v7-clock-mono-raw"] {
        check(&[fixtures().join("tracedat").join(d).join("trace.dat")]);
    }
}

#[test]
fn ctf_progress() {
    for d in [
        "lttng-ust-uid",
        "lttng-ust-switch-timer-tracefiles",
        "lttng-ust-pid",
    ] {
        check(&[fixtures().join("ctf").join(d)]);
    }
}

#[test]
fn uftrace_progress() {
    for d in ["corpus/pg-basic", "corpus/pg-args-retval"] {
        check(&[fixtures().join("uftrace").join(d).join("uftrace.data")]);
    }
}

#[test]
fn perf_progress() {
    for d in ["tp-sched", "zstd", "pipe"] {
        check(&[fixtures().join("perf").join(d).join("perf.data")]);
    }
}

#[test]
fn timeline_progress_adds_up_its_inputs() {
    let dir = fixtures().join("timeline/mono");
    let inputs: Vec<PathBuf> = ["trace.dat", "lttng", "uftrace.data"]
        .iter()
        .map(|p| dir.join(p))
        .collect();
    let each: u64 = inputs
        .iter()
        .map(|p| readings(std::slice::from_ref(p))[0].total)
        .sum();
    check(&inputs);
    assert_eq!(readings(&inputs)[0].total, each);
}
