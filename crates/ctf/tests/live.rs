//! The live reader against a relayd of our own (`relay/`): fixture traces
//! served over the viewer protocol print exactly as the same traces read
//! from disk, whatever the relayd's pacing (metadata in pieces, beacons,
//! late streams, RETRY), and hostile relayds give a clear error naming the
//! relayd and the command, quickly, without allocating what they claim.

mod relay;

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use relay::{serve, Hostile, Script};
use tracemux_ctf::live::session::SessionOptions;
use tracemux_ctf::live::{LiveSession, LiveUrl, Options};
use tracemux_ctf::text::{report, report_live, PacketSource, TextOptions};

fn fixture(name: &str) -> PathBuf {
    tracemux_testkit::fixtures()
        .join("ctf")
        .join(name)
        .join("trace")
}

fn text_opts() -> TextOptions {
    TextOptions {
        timezone: Some("UTC".into()),
        threads: Some(1),
        ..TextOptions::default()
    }
}

fn options(timeout: Duration) -> SessionOptions {
    SessionOptions {
        conn: Options {
            timeout,
            ..Options::default()
        },
        retry: Duration::from_millis(5),
        stall: Duration::from_secs(10),
        ..SessionOptions::default()
    }
}

/// Print the session served with `script`: (stdout, stderr) or the error.
fn live(name: &str, script: Script, timeout: Duration) -> Result<(Vec<u8>, Vec<u8>), String> {
    let (host, sess) = (script.host.clone(), script.session.clone());
    let port = serve(&fixture(name), script);
    let url = LiveUrl::parse(&format!("net://127.0.0.1:{port}/host/{host}/{sess}")).unwrap();
    let s = LiveSession::open(&url, options(timeout)).map_err(|e| e.to_string())?;
    let cell = RefCell::new(s);
    let src: &RefCell<dyn PacketSource> = &cell;
    let (mut out, mut warn) = (Vec::new(), Vec::new());
    struct W<'a>(&'a mut Vec<u8>);
    impl tracemux_ctf::text::TextOut for W<'_> {
        fn block(&mut self, b: &mut Vec<u8>) -> std::io::Result<()> {
            self.0.append(b);
            Ok(())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    report_live(src, &text_opts(), &mut W(&mut out), &mut warn).map_err(|e| e.to_string())?;
    Ok((out, warn))
}

fn disk(name: &str) -> (Vec<u8>, Vec<u8>) {
    let (mut out, mut warn) = (Vec::new(), Vec::new());
    report(&[fixture(name)], &text_opts(), &mut out, &mut warn).unwrap();
    (out, warn)
}

/// babeltrace2 names live traces "(unknown)" and streams "stream-ID".
fn unnamed(w: &[u8]) -> String {
    String::from_utf8_lossy(w)
        .lines()
        .map(|l| {
            let l = match (l.find("in trace \""), l.find("within stream \"")) {
                (Some(a), Some(b)) => {
                    let end = l[b + 15..].find('"').map_or(l.len(), |e| b + 15 + e + 1);
                    format!(
                        "{}in trace T (UUID{}within stream S{}",
                        &l[..a],
                        &l[a..b].split(" (UUID").nth(1).unwrap_or(""),
                        &l[end..]
                    )
                }
                _ => l.to_string(),
            };
            l + "\n"
        })
        .collect()
}

fn same_as_disk(name: &str, script: Script) {
    let what = format!("{name} {script:?}");
    let stale_ok = script.beacons;
    let (out, warn) =
        live(name, script, Duration::from_secs(10)).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (want, want_warn) = disk(name);
    assert!(!want.is_empty());
    if !stale_ok {
        assert_eq!(unnamed(&warn), unnamed(&want_warn), "{what}: warnings");
    } else {
        // babeltrace2's lttng-live moves the beginning of a discarded-data
        // range that begins before the stream's last beacon to the beacon
        // (and the warning with it): the rest of each warning is the same.
        let begins = |w: &[u8]| {
            let mut v: Vec<String> = unnamed(w)
                .lines()
                .map(|l| match (l.find("between ["), l.find("] and [")) {
                    (Some(a), Some(b)) => format!("{}{}", &l[..a], &l[b..]),
                    _ => l.to_string(),
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(begins(&warn), begins(&want_warn), "{what}: warnings");
    }
    if !stale_ok {
        assert!(
            out == want,
            "{what}: {}",
            tracemux_testkit::first_diff(&want, &out)
        );
        return;
    }
    // A beacon in the middle of a batch ends the batch early: babeltrace2's
    // stale strings (the value an empty string shows) may then differ, as
    // its own live output differs from its output of the trace. Every other
    // byte is the same: only the texts of strings may differ.
    let (w, g) = (
        String::from_utf8_lossy(&want),
        String::from_utf8_lossy(&out),
    );
    let (w, g): (Vec<&str>, Vec<&str>) = (w.lines().collect(), g.lines().collect());
    assert_eq!(w.len(), g.len(), "{what}: line count");
    for (i, (a, b)) in w.iter().zip(&g).enumerate() {
        if a != b {
            assert!(
                tracemux_testkit::without_strings(a) == tracemux_testkit::without_strings(b),
                "{what}: line {}:\n  want: {a}\n  got:  {b}",
                i + 1
            );
        }
    }
}

#[test]
fn plain_sessions_print_as_the_traces_on_disk() {
    for name in ["lttng-ust-uid", "lttng-ust-pid", "lttng-ust-discard-small"] {
        same_as_disk(name, Script::default());
    }
}

#[test]
fn protocol_2_4_and_2_15() {
    for minor in [4, 15] {
        same_as_disk(
            "lttng-ust-uid",
            Script {
                minor,
                ..Script::default()
            },
        );
    }
}

#[test]
fn metadata_in_pieces_beacons_late_streams_retries() {
    for name in ["lttng-ust-uid", "lttng-ust-pid", "lttng-ust-discard-small"] {
        same_as_disk(
            name,
            Script {
                metadata_pieces: 9,
                ..Script::default()
            },
        );
        same_as_disk(
            name,
            Script {
                late_streams: true,
                retries: 3,
                ..Script::default()
            },
        );
        same_as_disk(
            name,
            Script {
                beacons: true,
                ..Script::default()
            },
        );
        same_as_disk(
            name,
            Script {
                beacons: true,
                late_streams: true,
                metadata_pieces: 4,
                retries: 1,
                minor: 15,
                ..Script::default()
            },
        );
    }
}

#[test]
fn a_missing_session_ends_quietly() {
    let port = serve(&fixture("lttng-ust-uid"), Script::default());
    let url = LiveUrl::parse(&format!("net://127.0.0.1:{port}/host/testhost/other")).unwrap();
    let s = LiveSession::open(&url, options(Duration::from_secs(5))).unwrap();
    let cell = RefCell::new(s);
    let src: &RefCell<dyn PacketSource> = &cell;
    let (mut out, mut warn) = (Vec::new(), Vec::new());
    struct W<'a>(&'a mut Vec<u8>);
    impl tracemux_ctf::text::TextOut for W<'_> {
        fn block(&mut self, b: &mut Vec<u8>) -> std::io::Result<()> {
            self.0.append(b);
            Ok(())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    report_live(src, &text_opts(), &mut W(&mut out), &mut warn).unwrap();
    assert!(out.is_empty() && warn.is_empty());
}

#[test]
fn hostile_relayds_give_clear_errors() {
    let cases: &[(Hostile, &str)] = &[
        (Hostile::HugeSessions, "LIST_SESSIONS: 4294967295 sessions"),
        (Hostile::HugeStreams, "ATTACH_SESSION: 1073741824 streams"),
        (Hostile::HugePacket, "GET_NEXT_INDEX: stream"),
        (
            Hostile::HugeMetadata,
            "GET_METADATA: metadata reply of 1099511627776 bytes",
        ),
        (
            Hostile::WrongMajor,
            "CONNECT: incompatible protocol version 3.",
        ),
        (Hostile::ShortPacket, "GET_PACKET:"),
        (
            Hostile::Truncate(1),
            "CONNECT: connection closed by the relayd",
        ),
        (
            Hostile::Truncate(2),
            "LIST_SESSIONS: connection closed by the relayd",
        ),
        (
            Hostile::Truncate(3),
            "ATTACH_SESSION: connection closed by the relayd",
        ),
        (
            Hostile::Truncate(4),
            "GET_NEXT_INDEX: connection closed by the relayd",
        ),
        (
            Hostile::Truncate(5),
            "GET_PACKET: connection closed by the relayd",
        ),
        (
            Hostile::Truncate(6),
            "GET_METADATA: connection closed by the relayd",
        ),
        (Hostile::Stall(2), "LIST_SESSIONS: no complete reply within"),
        (
            Hostile::Stall(4),
            "GET_NEXT_INDEX: no complete reply within",
        ),
        (Hostile::Stall(5), "GET_PACKET: no complete reply within"),
    ];
    for &(h, want) in cases {
        let minor = if h == Hostile::LongName { 15 } else { 13 };
        let t = Instant::now();
        let script = Script {
            hostile: Some(h),
            minor,
            ..Script::default()
        };
        let e = match live("lttng-ust-uid", script, Duration::from_millis(700)) {
            Ok(_) => panic!("{h:?}: no error"),
            Err(e) => e,
        };
        assert!(e.contains("lttng-relayd at 127.0.0.1:"), "{h:?}: {e}");
        assert!(e.contains(want), "{h:?}: {e}");
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{h:?}: took {:?}",
            t.elapsed()
        );
    }
    let e = live(
        "lttng-ust-uid",
        Script {
            hostile: Some(Hostile::LongName),
            minor: 15,
            ..Script::default()
        },
        Duration::from_millis(700),
    )
    .unwrap_err();
    assert!(
        e.contains("LIST_SESSIONS") && e.contains("host name of 4294967295 bytes"),
        "{e}"
    );
}

#[test]
fn a_slow_relayd_is_followed_to_the_end() {
    // (every reply 2 ms late: slower than the client's polls, within its deadline)
    same_as_disk(
        "lttng-ust-uid",
        Script {
            delay: Some(Duration::from_millis(2)),
            beacons: true,
            ..Script::default()
        },
    );
}

/// JSON lines of every record of `src`, until `stop` says enough.
fn json_records(next: &mut dyn FnMut(&mut Vec<u8>) -> bool) -> Vec<u8> {
    let mut out = Vec::new();
    while next(&mut out) {}
    out
}

/// The records of a live session come as they arrive, before the session
/// ends: against a relayd that keeps the session open once it has sent
/// every packet, every record of the trace on disk is read (the same
/// records, in the same order), and the session is still going on.
#[test]
fn records_stream_before_the_session_ends() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use tracemux_core::model::{Record, RecordSource};
    use tracemux_ctf::live::LiveRecords;
    for name in ["lttng-ust-uid", "lttng-ust-pid", "lttng-ust-discard-small"] {
        // on disk
        let loader = tracemux_ctf::fs::ReadLoader;
        let traces = tracemux_ctf::source::open(&[fixture(name)], &loader).unwrap();
        let mut disk = tracemux_ctf::source::CtfSource::new(&traces, &loader, false).unwrap();
        let mut w = tracemux_render::jsonl::JsonWriter::default();
        let mut want = Vec::new();
        let mut count = 0;
        let meta = disk.meta().clone();
        while let Some(r) = disk.next_record().unwrap() {
            match r {
                Record::Event(ev) => w.event(&mut want, &meta, &ev),
                Record::Lost(l) => tracemux_render::jsonl::write_lost(&mut want, &meta, &l),
                Record::Damage(e) => panic!("{name}: {e}"),
            }
            count += 1;
        }
        // live, from a session that does not end
        let drained = Arc::new(AtomicBool::new(false));
        let script = Script {
            endless: Some(drained.clone()),
            ..Script::default()
        };
        let port = serve(&fixture(name), script);
        let url = LiveUrl::parse(&format!("net://127.0.0.1:{port}/host/testhost/s")).unwrap();
        let s = LiveSession::open(&url, options(Duration::from_secs(10))).unwrap();
        let mut live = LiveRecords::new(s, true);
        let mut w = tracemux_render::jsonl::JsonWriter::default();
        let mut n = 0;
        let got = json_records(&mut |out| {
            if n == count {
                return false;
            }
            let (r, meta) = live.next_with_meta().unwrap().expect("a record");
            match r {
                Record::Event(ev) => w.event(out, meta, &ev),
                Record::Lost(l) => tracemux_render::jsonl::write_lost(out, meta, &l),
                Record::Damage(e) => panic!("{name}: {e}"),
            }
            n += 1;
            true
        });
        assert!(count > 100, "{name}");
        assert!(
            got == want,
            "{name}: {}",
            tracemux_testkit::first_diff(&want, &got)
        );
        // (the session goes on: its streams are quiet, not ended)
        assert!(live.take_error().is_none());
        live.source_mut().detach();
    }
}
