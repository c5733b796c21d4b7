//! `babeltrace2`-style text output of CTF traces (a debugging aid for the
//! library; the `tracemux` binary is the real front end):
//! `cargo run -p tracemux-ctf --example ctf_report -- [OPTIONS] TRACE...`.

use std::io::Write;
use std::path::PathBuf;

fn main() {
    let mut o = tracemux_ctf::text::TextOptions::default();
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let (k, v) = match a.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        let mut val = || v.clone().or_else(|| args.next()).unwrap_or_default();
        match k.as_str() {
            k if o.set_flag(k) => {}
            "--strict" => o.strict = true,
            "--names" => o.set_names(&val()).expect("names"),
            "--fields" => o.set_fields(&val()).expect("fields"),
            "--begin" | "-b" => o.begin = Some(val()),
            "--end" | "-e" => o.end = Some(val()),
            "--clock-offset" => o.clock_offset_s = val().parse().expect("seconds"),
            "--clock-offset-ns" => o.clock_offset_ns = val().parse().expect("ns"),
            _ => paths.push(PathBuf::from(a)),
        }
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut err = std::io::stderr();
    match tracemux_ctf::text::report(&paths, &o, &mut out, &mut err) {
        Ok(_) => {}
        Err(e) => {
            let _ = out.flush();
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
