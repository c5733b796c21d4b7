//! Replay a uftrace data directory (development helper):
//! `cargo run -p tracemux-uftrace --example ufreplay -- DIR [replay args]`.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest: Vec<&str> = args[1..].iter().map(|s| s.as_str()).collect();
    let opts = tracemux_uftrace::replay::ReplayOptions::from_args(&rest).unwrap();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut err = std::io::stderr();
    if let Err(e) = tracemux_uftrace::replay::replay(args[0].as_ref(), &opts, &mut out, &mut err) {
        eprintln!("ufreplay: {e}");
        std::process::exit(1);
    }
}
