//! `report net://...`: a live LTTng session through lttng-relayd, printed
//! as `babeltrace2 --input-format=lttng-live URL` prints it (or, without a
//! session in the URL, the relayd's session list as babeltrace2 prints it).
//! Ctrl-C ends the session cleanly: what was received is printed.

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use tracemux_ctf::live::session::SessionOptions;
use tracemux_ctf::live::{list_sessions, LiveRecords, LiveSession, LiveUrl, NotFound, Options};
use tracemux_ctf::text::{PacketSource, TextOptions};

use crate::out::{Out, Outcome};

/// Set once by Ctrl-C (SIGINT) or SIGTERM; the live sources poll it.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let f = Arc::new(AtomicBool::new(false));
        let g = f.clone();
        // (a second handler cannot be installed: then Ctrl-C kills, as before)
        let _ = ctrlc::set_handler(move || g.store(true, Ordering::Relaxed));
        f
    })
    .clone()
}

/// Timeouts from the environment (`TRACEMUX_LIVE_TIMEOUT` seconds), for
/// tests of slow relayds.
fn conn_options() -> Options {
    let mut o = Options::default();
    if let Some(s) = std::env::var("TRACEMUX_LIVE_TIMEOUT")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s > 0.0 && *s < 1e6)
    {
        o.timeout = std::time::Duration::from_secs_f64(s);
    }
    o
}

/// Print the session `url` names (or list the relayd's sessions).
pub fn report(url: &str, text: &TextOptions, not_found: NotFound) -> Result<Outcome> {
    let url = LiveUrl::parse(url)?;
    let conn = conn_options();
    if url.target.is_none() {
        let lines = list_sessions(&url, conn)?;
        let mut out = Out::new();
        for l in lines {
            let _ = write!(out.buf(), "{l}");
        }
        out.flush()?;
        return Ok(Outcome::Ok);
    }
    let opts = SessionOptions {
        conn,
        not_found,
        clock_offset: (text.clock_offset_s, text.clock_offset_ns),
        interrupt: Some(interrupt_flag()),
        debug: std::env::var_os("TRACEMUX_LIVE_DEBUG").is_some(),
        ..SessionOptions::default()
    };
    let session = LiveSession::open(&url, opts).with_context(|| url.text.clone())?;
    let cell = RefCell::new(session);
    let mut out = Out::new();
    let mut warn = StderrAfterOut;
    let src: &RefCell<dyn PacketSource> = &cell;
    let res = tracemux_ctf::text::report_live(src, text, &mut out, &mut warn);
    out.flush()?;
    cell.borrow_mut().detach();
    if out.closed() {
        return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe).into());
    }
    let s = res.with_context(|| url.text.clone())?;
    Ok(Outcome::damaged_if(s.damaged > 0))
}

/// The session `url` names, opened for reading to its end.
fn open_session(url: &LiveUrl) -> Result<LiveSession> {
    let opts = SessionOptions {
        conn: conn_options(),
        interrupt: Some(interrupt_flag()),
        debug: std::env::var_os("TRACEMUX_LIVE_DEBUG").is_some(),
        ..SessionOptions::default()
    };
    LiveSession::open(url, opts).with_context(|| url.text.clone())
}

/// `convert net://...`: the session streamed into the output as it
/// arrives, until it ends (or Ctrl-C: what arrived is a complete output).
pub fn convert(
    url: &str,
    o: &tracemux_convert::Options,
    hooks: &dyn tracemux_convert::Hooks,
) -> Result<tracemux_convert::Summary> {
    let url = LiveUrl::parse(url)?;
    if url.target.is_none() {
        anyhow::bail!(
            "{}: names no session (net://HOST[:PORT]/host/HOSTNAME/SESSION)",
            url.text
        );
    }
    let mut session = open_session(&url)?;
    if tracemux_convert::spools(o) {
        let res = tracemux_convert::spool_live(o, &mut session);
        session.detach();
        return Ok(res?);
    }
    let mut records = LiveRecords::new(session, o.strict);
    let res = tracemux_convert::run_live(
        o,
        &mut records,
        url.target.as_ref().map(|t| t.1.as_str()),
        hooks,
    );
    records.source_mut().detach();
    Ok(res?)
}

/// `report --follow DIR`: the CTF traces under DIR as they are written.
pub fn follow(dir: &std::path::Path, text: &TextOptions, idle: Option<f64>) -> Result<Outcome> {
    use tracemux_ctf::follow::{FollowDir, FollowOptions};
    let idle = match idle {
        Some(s) if (0.0..1e9).contains(&s) => Some(std::time::Duration::from_secs_f64(s)),
        Some(s) => anyhow::bail!("--follow-idle {s}: not a number of seconds"),
        None => None,
    };
    let opts = FollowOptions {
        idle,
        interrupt: Some(interrupt_flag()),
        clock_offset: (text.clock_offset_s, text.clock_offset_ns),
        ..FollowOptions::default()
    };
    let f = FollowDir::new(dir, opts).with_context(|| dir.display().to_string())?;
    let cell = RefCell::new(f);
    let mut out = Out::new();
    let mut warn = StderrAfterOut;
    let src: &RefCell<dyn PacketSource> = &cell;
    let res = tracemux_ctf::text::report_live(src, text, &mut out, &mut warn);
    out.flush()?;
    if out.closed() {
        return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe).into());
    }
    let s = res.with_context(|| dir.display().to_string())?;
    Ok(Outcome::damaged_if(s.damaged > 0))
}

/// Warnings of a live report: straight to stderr (the printer hands its
/// lines to stdout first).
struct StderrAfterOut;

impl Write for StderrAfterOut {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        std::io::stderr().write_all(b)?;
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
