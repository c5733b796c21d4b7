//! Print the IR of a CTF 1.8 metadata file (a debugging aid):
//! `cargo run -p tracemux-ctf --example ctf_ir -- path/to/metadata`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: ctf_ir METADATA");
        std::process::exit(2);
    };
    let data = match std::fs::read(&path) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    match tracemux_ctf::tsdl::parse_metadata(&data) {
        Ok(tc) => println!("{tc:#?}"),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    }
}
