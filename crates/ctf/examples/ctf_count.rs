//! Count the event records of CTF traces (decode only; a benchmark and
//! debugging aid): `cargo run -p tracemux-ctf --example ctf_count -- TRACE...`.

fn main() {
    let paths: Vec<std::path::PathBuf> = std::env::args().skip(1).map(Into::into).collect();
    match tracemux_ctf::stats::count(&paths, false) {
        Ok(c) => {
            println!("{} events", c.events);
            for s in &c.streams {
                println!(
                    "  {} (class {}, id {}): {} packets, {} events, {} discarded events, {} discarded packets",
                    s.name, s.stream_class_id, s.stream_id, s.packets, s.events, s.discarded_events, s.discarded_packets
                );
            }
            for d in &c.damage {
                eprintln!("damage: {d}");
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
