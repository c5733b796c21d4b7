//! `report --follow`: a fixture trace copied into a directory in pieces of
//! random sizes (its metadata half first) while tracemux follows it prints
//! what `report` prints of the finished copy: every line, in order, once;
//! the same warnings. (Only the texts of strings may differ, babeltrace2's
//! stale strings depending on where a stream had to wait.)

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn copy_in_pieces(src: &Path, dst: &Path, seed: u64) {
    let mut rng = tracemux_testkit::Rng(seed);
    std::fs::create_dir_all(dst).unwrap();
    let meta = std::fs::read(src.join("metadata")).unwrap();
    let half = meta.len() / 2;
    std::fs::write(dst.join("metadata"), &meta[..half]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let mut m = std::fs::OpenOptions::new()
        .append(true)
        .open(dst.join("metadata"))
        .unwrap();
    m.write_all(&meta[half..]).unwrap();
    drop(m);
    let names: Vec<String> = tracemux_testkit::sorted_entries(src)
        .into_iter()
        .filter(|p| p.is_file() && p.file_name().unwrap() != "metadata")
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let data: Vec<Vec<u8>> = names
        .iter()
        .map(|n| std::fs::read(src.join(n)).unwrap())
        .collect();
    let mut outs: Vec<std::fs::File> = names
        .iter()
        .map(|n| std::fs::File::create(dst.join(n)).unwrap())
        .collect();
    let mut pos = vec![0usize; names.len()];
    while pos.iter().zip(&data).any(|(p, d)| *p < d.len()) {
        for i in 0..names.len() {
            let n = (1 + rng.below(6000)) as usize;
            let end = (pos[i] + n).min(data[i].len());
            outs[i].write_all(&data[i][pos[i]..end]).unwrap();
            outs[i].flush().unwrap();
            pos[i] = end;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn follow(fixture: &str, seed: u64) {
    let root = tracemux_testkit::fixtures()
        .join("ctf")
        .join(fixture)
        .join("trace");
    let src = tracemux_testkit::sorted_entries(&root.join("ust/uid/0"))[0].clone();
    let tmp = std::env::temp_dir().join(format!(
        "tracemux-follow-{}-{fixture}-{seed}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .args(["report", "--follow", "--follow-idle", "2"])
        .arg(&tmp)
        .env("TZ", "UTC")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    copy_in_pieces(&src, &tmp.join("ust/uid/0/64-bit"), seed);
    let got = child.wait_with_output().unwrap();
    let want = Command::new(env!("CARGO_BIN_EXE_tracemux"))
        .arg("report")
        .arg(&tmp)
        .env("TZ", "UTC")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(
        got.status.success(),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&got.stderr),
        String::from_utf8_lossy(&want.stderr),
        "{fixture}: warnings"
    );
    let (g, w) = (
        String::from_utf8_lossy(&got.stdout),
        String::from_utf8_lossy(&want.stdout),
    );
    let (g, w): (Vec<&str>, Vec<&str>) = (g.lines().collect(), w.lines().collect());
    assert!(!w.is_empty());
    assert_eq!(g.len(), w.len(), "{fixture}: line count");
    for (i, (a, b)) in w.iter().zip(&g).enumerate() {
        assert_eq!(
            tracemux_testkit::without_strings(a),
            tracemux_testkit::without_strings(b),
            "{fixture}: line {}",
            i + 1
        );
    }
}

#[test]
fn a_trace_written_while_it_is_followed() {
    follow("lttng-ust-uid", 1);
    follow("lttng-ust-discard-small", 2);
}
