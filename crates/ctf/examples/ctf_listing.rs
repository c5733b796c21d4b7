//! Print yactfr's element listing of one CTF 1.8 stream file (a debugging
//! aid): `cargo run -p tracemux-ctf --example ctf_listing -- TRACE_DIR/metadata TRACE_DIR/stream`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 2 {
        eprintln!("usage: ctf_listing METADATA STREAM");
        std::process::exit(2);
    }
    let meta = std::fs::read(&args[0]).expect("metadata");
    let data = std::fs::read(&args[1]).expect("stream");
    let tc = match tracemux_ctf::tsdl::parse_metadata(&meta) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let prog = tracemux_ctf::decode::Program::compile(&tc).expect("compile");
    let mut l = tracemux_ctf::listing::Listing::new(&tc);
    let r = tracemux_ctf::stream::decode_file(&prog, tc.uuid, &data, &mut l);
    if let Err(e) = &r {
        let bit = e.packet_offset * 8 + e.error.bit;
        l.error(bit, &e.error.to_string());
    }
    print!("{}", l.out);
}
