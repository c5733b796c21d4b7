//! `convert` of the formats whose reader runs on its own thread (CTF,
//! uftrace, LTT) writes the bytes the serial conversion writes
//! (`TRACEMUX_THREADS=1`): every such fixture into JSON lines, Perfetto,
//! Chrome JSON and CTF, with batches of a few events so that every fixture
//! crosses many batch boundaries; and a damaged recording gives the same
//! output and warnings, and with `--strict` the same error. JSON lines
//! (formatted on several threads) of every trace.dat fixture too. Parquet,
//! whose encoder has a thread of its own, the same rows with it inline.

mod common;
use common::*;

use std::path::Path;
use std::process::{Command, Output};

fn convert_with(threads: &str, src: &Path, to: &str, out: &Path, strict: bool) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tracemux"));
    c.env("TZ", "UTC")
        .env("TRACEMUX_THREADS", threads)
        .env("TRACEMUX_BATCH", "3")
        .args(["convert", "-q", "--force"]);
    if strict {
        c.arg("--strict");
    }
    c.arg(src)
        .args(["--to", to, "-o"])
        .arg(out)
        .output()
        .expect("tracemux runs")
}

#[test]
fn the_reader_on_its_own_thread_gives_the_serial_bytes() {
    let scratch = Scratch::new("convert-threads");
    // (name, trace, --strict, only into JSON lines)
    let mut srcs: Vec<_> = every_fixture(scratch.0.as_path())
        .into_iter()
        .map(|(n, p, k)| (n, p, false, matches!(k, FixtureKind::TraceDat)))
        .collect();
    // damage: a uftrace task file and a CTF stream file cut short, and a
    // run of garbage in the middle of another CTF stream
    let uf = scratch.0.as_path().join("uftrace-cut");
    copy_dir(
        &repo_root().join("tests/fixtures/uftrace/corpus/pg-basic/uftrace.data"),
        &uf,
    );
    cut(&uf.join("1369.dat"), 5000);
    let ctf = scratch.0.as_path().join("ctf-cut");
    copy_dir(
        &repo_root().join("tests/fixtures/ctf/lttng-ust-uid/trace"),
        &ctf,
    );
    let streams = ctf.join("ust/uid/0/64-bit");
    let len = std::fs::metadata(streams.join("ch0_0")).unwrap().len();
    cut(&streams.join("ch0_0"), len * 2 / 3);
    let mut b = std::fs::read(streams.join("ch0_1")).unwrap();
    let mid = b.len() / 2;
    b[mid..mid + 64].fill(0xa5);
    std::fs::write(streams.join("ch0_1"), b).unwrap();
    // and a trace.dat with a page of garbage in its CPU data
    let dat = scratch.0.as_path().join("damaged.dat");
    let mut b =
        std::fs::read(repo_root().join("tests/fixtures/tracedat/v6-sched-irq-timer/trace.dat"))
            .unwrap();
    let mid = b.len() * 3 / 4;
    b[mid..mid + 4096].fill(0xa5);
    std::fs::write(&dat, b).unwrap();
    for (n, p, only_jsonl) in [
        ("damaged-uftrace", uf, false),
        ("damaged-ctf", ctf, false),
        ("damaged-tracedat", dat, true),
    ] {
        srcs.push((n.to_string(), p.clone(), false, only_jsonl));
        srcs.push((format!("{n}-strict"), p, true, only_jsonl));
    }
    assert!(srcs.len() > 20, "{} sources", srcs.len());
    let mut fails = Vec::new();
    let mut compared = 0;
    for (name, src, strict, only_jsonl) in &srcs {
        let outputs: &[&str] = if *only_jsonl {
            &["jsonl"]
        } else {
            &["jsonl", "perfetto", "chrome", "ctf"]
        };
        for &to in outputs {
            let one_out = scratch.0.as_path().join(format!("{name}.1.{to}"));
            let two_out = scratch.0.as_path().join(format!("{name}.2.{to}"));
            let one = convert_with("1", src, to, &one_out, *strict);
            let two = convert_with("2", src, to, &two_out, *strict);
            compared += 1;
            let a = contents(&one_out);
            let b = contents(&two_out);
            if a != b || one.stderr != two.stderr || one.status != two.status {
                fails.push(format!(
                    "{name} --to {to}: {} / stderr {:?} vs {:?}",
                    tracemux_testkit::first_diff(&a, &b),
                    String::from_utf8_lossy(&one.stderr),
                    String::from_utf8_lossy(&two.stderr)
                ));
            }
        }
    }
    assert_no_failures(&fails, &format!("of {compared} conversions differ"));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

fn cut(file: &Path, len: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.set_len(len).unwrap();
}

/// A directory under the system's temporary directory, removed at the end.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("tracemux-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A file's bytes, or a directory's files (names and bytes, in order).
fn contents(p: &Path) -> Vec<u8> {
    if !p.is_dir() {
        return std::fs::read(p).unwrap_or_default();
    }
    let mut out = Vec::new();
    for e in tracemux_testkit::sorted_entries(p) {
        out.extend_from_slice(e.file_name().unwrap().to_string_lossy().as_bytes());
        out.push(0);
        out.extend(contents(&e));
    }
    out
}

/// An output that is a device or a pipe (`-o /dev/null`) is written where
/// it is, not replaced by a file renamed over it (which would turn
/// /dev/null into a file for the whole machine): here a FIFO, read on
/// another thread, stays a FIFO and gets what a file gets.
#[cfg(unix)]
#[test]
fn a_pipe_output_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let scratch = Scratch::new("convert-fifo");
    let src = repo_root().join("tests/fixtures/tracedat/v6-sched-irq-timer/trace.dat");
    let file = scratch.0.join("out.jsonl");
    let o = convert_with("1", &src, "jsonl", &file, false);
    assert!(o.status.success());
    let want = std::fs::read(&file).unwrap();
    let fifo = scratch.0.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("no mkfifo here: not checked");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    // no --force needed: nothing is replaced
    let o = Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .args(["convert", "-q"])
        .arg(&src)
        .args(["--to", "jsonl", "-o"])
        .arg(&fifo)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = reader.join().unwrap();
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(got, want);
}

/// Parquet's encoder runs on a thread of its own, or inline on the
/// reader's thread when one thread is allowed (a Spark task given one
/// core): the same rows in every table, and the same other files, from
/// every fixture of every format and for a shared dataset of several
/// traces with small files. (Not the same bytes: with the thread, where
/// row groups end depends on when the encoder answers, from run to run.)
#[test]
fn parquet_inline_encoder_writes_the_threaded_rows() {
    let scratch = Scratch::new("parquet-threads");
    let fixtures = every_fixture(scratch.0.as_path());
    let mut fails = Vec::new();
    let mut compared = 0;
    let mut run = |name: &str, args: &[&std::ffi::OsStr]| {
        let mut outs = Vec::new();
        for threads in ["1", "2"] {
            let out = scratch.0.as_path().join(format!("{name}.{threads}.pq"));
            let o = Command::new(env!("CARGO_BIN_EXE_tracemux"))
                .env("TZ", "UTC")
                .env("TRACEMUX_THREADS", threads)
                .args(["convert", "-q", "--force"])
                .args(args)
                .args(["--to", "parquet", "-o"])
                .arg(&out)
                .output()
                .expect("tracemux runs");
            outs.push((tables(&out), o));
        }
        compared += 1;
        let (a, one) = &outs[0];
        let (b, two) = &outs[1];
        if a != b || one.stderr != two.stderr || one.status != two.status {
            fails.push(format!(
                "{name}: {} / stderr {:?} vs {:?}",
                first_table_differing(a, b),
                String::from_utf8_lossy(&one.stderr),
                String::from_utf8_lossy(&two.stderr)
            ));
        }
    };
    for (name, src, _) in &fixtures {
        run(name, &[src.as_os_str()]);
    }
    // several traces into shared files that roll at 64 kB
    let mut args: Vec<&std::ffi::OsStr> = fixtures
        .iter()
        .take(12)
        .map(|(_, p, _)| p.as_os_str())
        .collect();
    args.extend(["--layout", "shared", "--file-size", "65536"].map(std::ffi::OsStr::new));
    run("shared", &args);
    assert!(compared > 20, "{compared} conversions");
    assert_no_failures(&fails, &format!("of {compared} conversions differ"));
}

/// A Parquet output: each table's rows (all its files, in order, as one
/// batch per run of one schema) and every other file's bytes, by their paths in the output.
fn tables(dir: &Path) -> Vec<(String, Vec<arrow_array::RecordBatch>, Vec<u8>)> {
    use std::collections::BTreeMap;
    type Tables = BTreeMap<String, (Vec<arrow_array::RecordBatch>, Vec<u8>)>;
    fn walk(d: &Path, base: &Path, t: &mut Tables) {
        for e in tracemux_testkit::sorted_entries(d) {
            if e.is_dir() {
                walk(&e, base, t);
                continue;
            }
            let rel = e.strip_prefix(base).unwrap().display().to_string();
            if !rel.ends_with(".parquet") {
                t.insert(rel, (Vec::new(), std::fs::read(&e).unwrap()));
                continue;
            }
            // the table: the folder of part-N files, else the file's name
            // without its numbers
            let name = e.file_name().unwrap().to_string_lossy();
            let key = match name.starts_with("part-") {
                true => Path::new(&rel).parent().unwrap().display().to_string(),
                false => rel.replace(|c: char| c.is_ascii_digit(), ""),
            };
            let f = std::fs::File::open(&e).unwrap();
            let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
                .unwrap()
                .build()
                .unwrap();
            let batches = &mut t.entry(key).or_default().0;
            batches.extend(reader.map(|b| b.unwrap()));
        }
    }
    let mut t = Tables::new();
    if dir.is_dir() {
        walk(dir, dir, &mut t);
    }
    t.into_iter()
        .map(|(k, (batches, bytes))| {
            // runs of one schema (a shared table's traces may differ) as
            // one batch each
            let mut runs: Vec<Vec<arrow_array::RecordBatch>> = Vec::new();
            for b in batches {
                match runs.last_mut() {
                    Some(r) if r[0].schema() == b.schema() => r.push(b),
                    _ => runs.push(vec![b]),
                }
            }
            let rows = runs
                .iter()
                .map(|r| arrow_select::concat::concat_batches(&r[0].schema(), r).unwrap())
                .collect();
            (k, rows, bytes)
        })
        .collect()
}

type Tables = [(String, Vec<arrow_array::RecordBatch>, Vec<u8>)];

/// The first table or file that differs between two outputs.
fn first_table_differing(a: &Tables, b: &Tables) -> String {
    let names = |t: &Tables| t.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    if names(a) != names(b) {
        return format!("tables {:?} vs {:?}", names(a), names(b));
    }
    a.iter()
        .zip(b)
        .find(|(x, y)| x != y)
        .map_or_else(String::new, |(x, _)| format!("{} differs", x.0))
}
