//! LTTng live: what a relayd replies. Byte 0 even: every reply parser of
//! `live::proto` on the rest. Byte 0 odd: a whole session (connect, list,
//! attach, metadata, indexes, packets, the live text printer) against a
//! loopback "relayd" that answers every request with the next bytes of the
//! input, then closes: no panic, no hang, no allocation beyond the limits.
#![no_main]

use std::cell::RefCell;
use std::io::{Read, Write};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use tracemux_ctf::live::session::SessionOptions;
use tracemux_ctf::live::{proto, LiveSession, LiveUrl, Options};
use tracemux_ctf::text::{report_live, PacketSource, TextOptions, TextOut};

struct Sink;
impl TextOut for Sink {
    fn block(&mut self, b: &mut Vec<u8>) -> std::io::Result<()> {
        b.clear();
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    if pick % 2 == 0 {
        proto::parse_any(rest);
        return;
    }
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let replies = rest.to_vec();
    let server = std::thread::spawn(move || {
        let Ok((mut s, _)) = l.accept() else { return };
        // Each request gets the next slice of the input (the length of
        // each slice is its first byte), then the connection closes.
        let mut at = 0;
        let mut h = [0u8; 16];
        while at < replies.len() && s.read_exact(&mut h).is_ok() {
            let size = u64::from_be_bytes(h[..8].try_into().unwrap()).min(64);
            let mut p = vec![0u8; size as usize];
            if s.read_exact(&mut p).is_err() {
                break;
            }
            let n = (replies[at] as usize * 8).min(replies.len() - at - 1);
            let _ = s.write_all(&replies[at + 1..at + 1 + n]);
            at += 1 + n;
        }
    });
    let url = LiveUrl::parse(&format!("net://127.0.0.1:{port}/host/h/s")).unwrap();
    let opts = SessionOptions {
        conn: Options {
            timeout: Duration::from_millis(200),
            ..Options::default()
        },
        retry: Duration::from_millis(1),
        stall: Duration::from_millis(200),
        ..SessionOptions::default()
    };
    if let Ok(s) = LiveSession::open(&url, opts) {
        let cell = RefCell::new(s);
        let src: &RefCell<dyn PacketSource> = &cell;
        let _ = report_live(src, &TextOptions::default(), &mut Sink, &mut std::io::sink());
    }
    let _ = server.join();
});
