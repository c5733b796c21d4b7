//! `uftrace info` and `uftrace info --task` output.

use std::fmt::Display;
use std::io::{self, Write};
use std::path::Path;

use tracemux_core::localtime::Zone;

use crate::header::{feat, info_bit, FileHeader, InfoSections};
use crate::perf::PerfReader;
use crate::task::Sessions;

/// What `info` needs: header, sections, tasks of `task.txt` (without
/// loading symbols) with comm names and first times updated from the perf
/// files, as uftrace does.
struct InfoData {
    header: FileHeader,
    info: InfoSections,
    sessions: Sessions,
}

fn load(dir: &Path, warn: &mut dyn Write) -> io::Result<InfoData> {
    let raw = std::fs::read(dir.join("info"))?;
    let header = FileHeader::parse(&raw)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("info: {e}")))?;
    if header.feat_mask & !feat::KNOWN != 0 {
        writeln!(
            warn,
            "uftrace: info: unknown feature bits {:#x} at offset 0x10",
            header.feat_mask & !feat::KNOWN
        )?;
    }
    let start = (header.header_size as usize).clamp(40, raw.len().max(40));
    let (info, err) = InfoSections::parse(
        raw.get(start..).unwrap_or(&[]),
        start as u64,
        header.info_mask,
    );
    if let Some(e) = err {
        writeln!(warn, "uftrace: info: {e}")?;
    }
    let mut sessions = Sessions::default();
    if let Ok(t) = std::fs::read(dir.join("task.txt")) {
        let t = String::from_utf8_lossy(&t);
        if let Some(off) = sessions.parse(&t, false) {
            writeln!(warn, "uftrace: task.txt: malformed line at offset {off:#x}")?;
        }
    }
    if header.feat_mask & feat::PERF_EVENT != 0 {
        update_from_perf(dir, &header, &info, &mut sessions);
    }
    Ok(InfoData {
        header,
        info,
        sessions,
    })
}

/// Lower each task's first time to its earliest perf event and take the
/// last comm seen (uftrace's `update_perf_task_comm`).
fn update_from_perf(dir: &Path, header: &FileHeader, info: &InfoSections, sessions: &mut Sessions) {
    for n in crate::data::perf_files(dir) {
        let Ok(bytes) = std::fs::read(dir.join(&n)) else {
            continue;
        };
        let mut r = PerfReader::new(&bytes, header.endian);
        while let Some(ev) = r.next_event() {
            if !info.tids.contains(&ev.tid) || !dir.join(format!("{}.dat", ev.tid)).exists() {
                continue;
            }
            let Some(t) = sessions.find_task_mut(ev.tid) else {
                continue;
            };
            if t.stamp == 0 || t.stamp > ev.time {
                t.stamp = ev.time;
            }
            if let Some(c) = ev.comm() {
                t.comm = String::from_utf8_lossy(&c[..c.len().min(16)]).into_owned();
            }
        }
    }
}

fn signal_name(sig: i32) -> String {
    const NAMES: [&str; 32] = [
        "Unknown signal 0",
        "Hangup",
        "Interrupt",
        "Quit",
        "Illegal instruction",
        "Trace/breakpoint trap",
        "Aborted",
        "Bus error",
        "Floating point exception",
        "Killed",
        "User defined signal 1",
        "Segmentation fault",
        "User defined signal 2",
        "Broken pipe",
        "Alarm clock",
        "Terminated",
        "Stack fault",
        "Child exited",
        "Continued",
        "Stopped (signal)",
        "Stopped",
        "Stopped (tty input)",
        "Stopped (tty output)",
        "Urgent I/O condition",
        "CPU time limit exceeded",
        "File size limit exceeded",
        "Virtual timer expired",
        "Profiling timer expired",
        "Window changed",
        "I/O possible",
        "Power failure",
        "Bad system call",
    ];
    match NAMES.get(sig as usize) {
        Some(n) => n.to_string(),
        None if (34..=64).contains(&sig) => format!("Real-time signal {}", sig - 34),
        None => format!("Unknown signal {sig}"),
    }
}

fn exit_status_text(status: i32) -> String {
    if status == 1 << 16 {
        return "terminated by finish trigger".into();
    }
    let low = status & 0x7f;
    if low == 0 {
        format!("exited with code: {}", (status >> 8) & 0xff)
    } else if ((low + 1) as i8 >> 1) > 0 {
        format!("terminated by signal: {low} ({})", signal_name(low))
    } else {
        format!("unknown exit status: {status}")
    }
}

/// C `ctime(3)` text of a file time in the process's local time zone
/// (`TZ`, else `/etc/localtime`), as uftrace prints the modification time
/// of `info` when the recording has no record date.
fn ctime(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    Zone::local()
        .localtime(secs)
        .map(|tm| tm.ctime())
        .unwrap_or_default()
}

/// Write `uftrace info` for `dir`.
pub fn info(dir: &Path, out: &mut dyn Write, warn: &mut dyn Write) -> io::Result<()> {
    let d = load(dir, warn)?;
    let mask = d.header.info_mask;
    let i = &d.info;
    if mask == 0 {
        return Ok(());
    }
    let s = |o: &Option<String>| o.clone().unwrap_or_else(|| "(null)".into());
    let mut w = io::BufWriter::new(out);
    let kv = |w: &mut dyn Write, k: &str, v: &str| writeln!(w, "# {k:<20}: {v}");
    // `A / B (WHAT)`
    let pair = |w: &mut dyn Write, k: &str, a: &dyn Display, b: &dyn Display, what: &str| {
        kv(w, k, &format!("{a} / {b} ({what})"))
    };
    // one text line when the section `bit` was recorded
    let text = |w: &mut dyn Write, bit: u64, k: &str, v: &Option<String>| {
        if mask & bit != 0 {
            kv(w, k, &s(v))
        } else {
            Ok(())
        }
    };
    writeln!(w, "# system information")?;
    writeln!(w, "# ==================")?;
    text(
        &mut w,
        info_bit::VERSION,
        "program version",
        &i.uftrace_version,
    )?;
    if mask & info_bit::RECORD_DATE != 0 {
        kv(&mut w, "recorded on", &s(&i.record_date))?;
    } else {
        let t = std::fs::metadata(dir.join("info"))
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        kv(&mut w, "recorded on", &ctime(t))?;
    }
    text(&mut w, info_bit::CMDLINE, "cmdline", &i.cmdline)?;
    if mask & info_bit::CPUINFO != 0 {
        kv(&mut w, "cpu info", &s(&i.cpu.desc))?;
        let (online, possible) = (&i.cpu.online, &i.cpu.possible);
        pair(
            &mut w,
            "number of cpus",
            online,
            possible,
            "online / possible",
        )?;
    }
    text(&mut w, info_bit::MEMINFO, "memory info", &i.meminfo)?;
    if mask & info_bit::LOADINFO != 0 {
        kv(
            &mut w,
            "system load",
            &format!(
                "{:.2} / {:.2} / {:.2} (1 / 5 / 15 min)",
                i.load[0] as f64, i.load[1] as f64, i.load[2] as f64
            ),
        )?;
    }
    if mask & info_bit::OSINFO != 0 {
        kv(&mut w, "kernel version", &s(&i.os.kernel))?;
        kv(&mut w, "hostname", &s(&i.os.hostname))?;
        kv(&mut w, "distro", &s(&i.os.distro))?;
    }
    writeln!(w, "#")?;
    writeln!(w, "# process information")?;
    writeln!(w, "# ===================")?;
    if mask & info_bit::TASKINFO != 0 {
        kv(&mut w, "number of tasks", &i.nr_tid.to_string())?;
        let mut list = String::new();
        for (k, tid) in i.tids.iter().take(i.nr_tid.max(0) as usize).enumerate() {
            if k > 0 {
                list.push_str(", ");
            }
            let comm = d.sessions.find_task(*tid).map_or("", |t| t.comm.as_str());
            list.push_str(&format!("{tid}({comm})"));
        }
        kv(&mut w, "task list", &list)?;
    }
    text(&mut w, info_bit::EXE_NAME, "exe image", &i.exename)?;
    if mask & info_bit::EXE_BUILD_ID != 0 {
        let bid: String = i.build_id.iter().map(|b| format!("{b:02x}")).collect();
        kv(&mut w, "build id", &bid)?;
    }
    if mask & info_bit::ARG_SPEC != 0 {
        if let Some(a) = &i.argspec {
            kv(&mut w, "arguments", a)?;
        }
        if let Some(r) = &i.retspec {
            kv(&mut w, "return values", r)?;
        }
        if i.auto_args_enabled {
            kv(&mut w, "auto-args", "true")?;
        }
    }
    if mask & info_bit::PATTERN_TYPE != 0 {
        kv(&mut w, "pattern", i.pattern.name())?;
    }
    if mask & info_bit::EXIT_STATUS != 0 {
        kv(&mut w, "exit status", &exit_status_text(i.exit_status))?;
    }
    text(
        &mut w,
        info_bit::RECORD_DATE,
        "elapsed time",
        &i.elapsed_time,
    )?;
    if mask & info_bit::USAGEINFO != 0 {
        kv(
            &mut w,
            "cpu time",
            &format!(
                "{:.3} / {:.3} sec (sys / user)",
                i.usage.stime, i.usage.utime
            ),
        )?;
        pair(
            &mut w,
            "context switch",
            &i.usage.vctxsw,
            &i.usage.ictxsw,
            "voluntary / involuntary",
        )?;
        kv(&mut w, "max rss", &format!("{} KB", i.usage.maxrss))?;
        pair(
            &mut w,
            "page fault",
            &i.usage.major_fault,
            &i.usage.minor_fault,
            "major / minor",
        )?;
        pair(
            &mut w,
            "disk iops",
            &i.usage.rblock,
            &i.usage.wblock,
            "read / write",
        )?;
    }
    if let Ok(note) = std::fs::read(dir.join("note.txt")) {
        writeln!(w, "#")?;
        writeln!(w, "# extra note information")?;
        writeln!(w, "# ======================")?;
        let end = note.iter().position(|&b| b == 0).unwrap_or(note.len());
        w.write_all(&note[..end])?;
    }
    writeln!(w)?;
    w.flush()
}

/// Write `uftrace info --task` for `dir`.
pub fn info_task(dir: &Path, out: &mut dyn Write, warn: &mut dyn Write) -> io::Result<()> {
    let d = load(dir, warn)?;
    let mut w = io::BufWriter::new(out);
    let flavor = crate::Flavor::of_recording(d.info.uftrace_version.as_deref());
    let tl = flavor.tid_len();
    let tid_head = if flavor.newer() {
        "   TID   "
    } else {
        "  TID  "
    };
    writeln!(
        w,
        "#{:>23}  {:>5}  {:>w$}  {:<16}  DATA SIZE",
        "TIMESTAMP     ",
        "FLAGS",
        tid_head,
        "TASK",
        w = tl + 2
    )?;
    for t in &d.sessions.tasks {
        let size = std::fs::metadata(dir.join(format!("{}.dat", t.tid))).map_or(0, |m| m.len());
        let mut flags = *b"     ";
        if t.tid == t.pid {
            flags[0] = b'F';
        }
        if t.srefs
            .iter()
            .any(|r| d.sessions.sessions[r.session].tid == t.tid)
        {
            flags[1] = b'S';
        }
        write!(
            w,
            " {:>13}.{:09}  {}  [{:>tl$}]  {:<16} ",
            t.stamp / 1_000_000_000,
            t.stamp % 1_000_000_000,
            String::from_utf8_lossy(&flags),
            t.tid,
            t.comm
        )?;
        if size != 0 {
            let kb = size / 1024;
            let rem = (kb % 1024).min(999);
            writeln!(w, " {:>5}.{:03} MB", kb / 1024, rem)?;
        } else {
            writeln!(w)?;
        }
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_texts() {
        assert_eq!(exit_status_text(0), "exited with code: 0");
        assert_eq!(exit_status_text(3 << 8), "exited with code: 3");
        assert_eq!(
            exit_status_text(11),
            "terminated by signal: 11 (Segmentation fault)"
        );
        assert_eq!(exit_status_text(1 << 16), "terminated by finish trigger");
    }
}
