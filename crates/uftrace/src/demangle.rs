//! C++ symbol demangling as uftrace does it (`--demangle full|simple|no`).
//!
//! uftrace demangles symbol names when it loads the `.sym` files, so every
//! printed name goes through the selected mode:
//! - `no`: names as stored;
//! - `simple` (the default): the qualified name without parameter lists
//!   and template arguments (`ns::Class::method`);
//! - `full`: the complete demangled signature, exactly as libstdc++'s
//!   `__cxa_demangle` writes it (uftrace 0.13 calls it for every symbol
//!   name; what it rejects stays as stored). The parser is in
//!   `demangle/parse.rs`, the printer in `demangle/print.rs`; `simple` walks
//!   the same grammar in `demangle/simple.rs`.

mod parse;
mod print;
mod simple;

/// Demangling mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Demangle {
    No,
    #[default]
    Simple,
    Full,
    /// `full` as uftrace 0.15+ does it: only names that start with `_Z` go
    /// to `__cxa_demangle` (0.13 also gives it `_GLOBAL__I_` names and bare
    /// types). [`crate::UftraceData::open`] picks it for `Full` when the
    /// printers follow the newer uftrace.
    FullMangled,
}

impl Demangle {
    /// Parse `full`, `simple` or `no` (uftrace's `--demangle` values).
    pub fn parse(s: &str) -> Option<Demangle> {
        match s {
            "full" => Some(Demangle::Full),
            "simple" => Some(Demangle::Simple),
            "no" | "none" => Some(Demangle::No),
            _ => None,
        }
    }
}

/// Demangle `name` in `mode`; names that are not mangled come back as is.
pub fn demangle(name: &str, mode: Demangle) -> String {
    let d = match mode {
        Demangle::No => None,
        Demangle::Full => full(name),
        Demangle::FullMangled if name.starts_with("_Z") => full(name),
        Demangle::FullMangled => None,
        // uftrace's simple demangler also takes `_GLOBAL__sub_I_` + a mangled
        // name (the static initialisation function GCC names after the
        // file's first global), and keeps the prefix
        Demangle::Simple if name.starts_with("_Z") || name.starts_with("_GLOBAL__sub_I_") => {
            simple::demangle(name)
        }
        Demangle::Simple => None,
    };
    d.unwrap_or_else(|| name.to_string())
}

/// What `__cxa_demangle` makes of `name`: a mangled name (`_Z...`, with
/// clone suffixes like `.cold`), a `_GLOBAL__I_` constructor name, or a
/// bare type (`i` is `int`, as libstdc++ accepts types too); `None` when
/// it rejects it. Never panics; work and output are bounded.
pub fn full(name: &str) -> Option<String> {
    let mut p = parse::Parser::new(name.as_bytes());
    let root = match p.top() {
        Some(r) if p.at_end() => r,
        _ if p.unresolved < 0 => {
            // retry `sr` names with the older mangling
            p = parse::Parser::new(name.as_bytes());
            p.unresolved = 0;
            let r = p.top()?;
            if !p.at_end() {
                return None;
            }
            r
        }
        _ => return None,
    };
    print::print(&p.nodes, root)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (input, libstdc++ output) pairs of tests/fixtures/uftrace/demangle.
    fn reference() -> Vec<(String, String)> {
        let p = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/uftrace/demangle/expected.tsv.zst"
        );
        let raw = zstd::decode_all(std::fs::File::open(p).expect("fixture")).expect("zstd");
        let text = String::from_utf8(raw).expect("utf-8");
        text.lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn full_matches_cxa_demangle() {
        let refs = reference();
        assert!(refs.len() > 4000);
        let mut bad = Vec::new();
        for (input, want) in &refs {
            let got = demangle(input, Demangle::Full);
            if &got != want {
                bad.push(format!("{input}\n   got: {got}\n  want: {want}"));
            }
        }
        assert!(
            bad.is_empty(),
            "{} of {} differ:\n{}",
            bad.len(),
            refs.len(),
            bad[..bad.len().min(10)].join("\n")
        );
    }

    #[test]
    fn no_mode_and_simple_mode_are_unchanged() {
        assert_eq!(demangle("_ZN3foo3barEv", Demangle::No), "_ZN3foo3barEv");
        assert_eq!(demangle("i", Demangle::Simple), "i");
    }

    /// The special names of the GNU toolchain, with uftrace 0.13's own
    /// outputs (tests/fixtures/uftrace/recorded/cxx-special-names, replay
    /// with --demangle=simple/full/no): (name, simple, full).
    const SPECIAL: &[(&str, &str, &str)] = &[
        // static initialisation: simple mode demangles after the prefix,
        // libstdc++ rejects the name
        (
            "_GLOBAL__sub_I__ZNK3srv6Server17framebufferHeightEv",
            "_GLOBAL__sub_I_srv::Server::framebufferHeight",
            "_GLOBAL__sub_I__ZNK3srv6Server17framebufferHeightEv",
        ),
        // ... and of what follows the prefix only a mangled name
        (
            "_GLOBAL__sub_I_plain_c_name",
            "_GLOBAL__sub_I_plain_c_name",
            "_GLOBAL__sub_I_plain_c_name",
        ),
        (
            "_GLOBAL__sub_I__Zbad",
            "_GLOBAL__sub_I__Zbad",
            "_GLOBAL__sub_I__Zbad",
        ),
        // init_priority forms and the destruction functions: as stored
        (
            "_GLOBAL__sub_I.00101__ZNK3srv6Server17framebufferHeightEv",
            "_GLOBAL__sub_I.00101__ZNK3srv6Server17framebufferHeightEv",
            "_GLOBAL__sub_I.00101__ZNK3srv6Server17framebufferHeightEv",
        ),
        (
            "_GLOBAL__sub_I_00200_1__ZN5names4prioEv",
            "_GLOBAL__sub_I_00200_1__ZN5names4prioEv",
            "_GLOBAL__sub_I_00200_1__ZN5names4prioEv",
        ),
        (
            "_GLOBAL__sub_D__ZNK3srv6Server17framebufferHeightEv",
            "_GLOBAL__sub_D__ZNK3srv6Server17framebufferHeightEv",
            "_GLOBAL__sub_D__ZNK3srv6Server17framebufferHeightEv",
        ),
        (
            "_GLOBAL__sub_D.00101__ZNK3srv6Server17framebufferHeightEv",
            "_GLOBAL__sub_D.00101__ZNK3srv6Server17framebufferHeightEv",
            "_GLOBAL__sub_D.00101__ZNK3srv6Server17framebufferHeightEv",
        ),
        // older GCC / collect2: only libstdc++ knows them
        (
            "_GLOBAL__I__ZN5names6legacyEv",
            "_GLOBAL__I__ZN5names6legacyEv",
            "global constructors keyed to names::legacy()",
        ),
        (
            "_GLOBAL__D__ZN5names6legacyEv",
            "_GLOBAL__D__ZN5names6legacyEv",
            "global destructors keyed to names::legacy()",
        ),
        (
            "_GLOBAL__I_special.cc",
            "_GLOBAL__I_special.cc",
            "global constructors keyed to special.cc",
        ),
        // clones: simple mode drops the suffixes, full mode names them
        (
            "_ZL5powerii.constprop.0",
            "power",
            "power(int, int) [clone .constprop.0]",
        ),
        (
            "_ZL6only_cRK3Bigi.isra.0",
            "only_c",
            "only_c(Big const&, int) [clone .isra.0]",
        ),
        (
            "_ZN12_GLOBAL__N_16helperEi.constprop.0.isra.0",
            "_GLOBAL__N_1::helper",
            "(anonymous namespace)::helper(int) [clone .constprop.0] [clone .isra.0]",
        ),
        (
            "_ZN5names4workEi.part.0.cold",
            "names::work",
            "names::work(int) [clone .part.0] [clone .cold]",
        ),
        (
            "_ZN5names5localEv.lto_priv.0",
            "names::local",
            "names::local() [clone .lto_priv.0]",
        ),
        ("plain_c.isra.0", "plain_c.isra.0", "plain_c.isra.0"),
        (
            "_ZN12_GLOBAL__N_16hiddenEi",
            "_GLOBAL__N_1::hidden",
            "(anonymous namespace)::hidden(int)",
        ),
        // a suffix after a special name's type is not a name: kept as is
        (
            "_ZTVN5names4BaseE.localalias",
            "_ZTVN5names4BaseE.localalias",
            "vtable for names::Base [clone .localalias]",
        ),
    ];

    #[test]
    fn special_names_as_uftrace_shows_them() {
        for (name, simple, full) in SPECIAL {
            assert_eq!(demangle(name, Demangle::Simple), *simple, "simple {name}");
            assert_eq!(demangle(name, Demangle::Full), *full, "full {name}");
            assert_eq!(demangle(name, Demangle::No), *name, "no {name}");
        }
        // libstdc++ demangles only the encoding after _GLOBAL__I_: a clone
        // suffix there is dropped (uftrace 0.13, --demangle=full)
        assert_eq!(
            demangle("_GLOBAL__I__ZN5names6legacyEv.cold", Demangle::Full),
            "global constructors keyed to names::legacy()"
        );
    }

    /// Every prefix and a byte-flipped variant of each reference name:
    /// no panic, and the bare prefix `_Z` is kept as is.
    #[test]
    fn damaged_names_do_not_panic() {
        for (input, _) in reference().iter().step_by(7) {
            let b = input.as_bytes();
            for n in 0..b.len() {
                if input.is_char_boundary(n) {
                    let _ = full(&input[..n]);
                }
                let mut m = b.to_vec();
                m[n] = match m[n] {
                    b'0'..=b'8' => m[n] + 1,
                    b'E' => b'I',
                    b'I' => b'E',
                    b'S' => b'T',
                    c => c ^ 0x20,
                };
                if let Ok(s) = std::str::from_utf8(&m) {
                    let _ = full(s);
                }
            }
        }
        assert_eq!(full("_Z"), None);
    }

    /// Deep nesting gives up instead of exhausting the stack.
    #[test]
    fn deep_nesting_is_bounded() {
        for unit in ["P", "A1_", "FP", "N1aI", "Z1fvE", "IXplL"] {
            let name = format!("_Z1f{}i", unit.repeat(50_000));
            assert_eq!(full(&name), None, "{unit}");
        }
        let t = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(|| full(&format!("_Z1f{}i", "P".repeat(2000))))
            .unwrap();
        assert_eq!(t.join().unwrap(), None);
        // within the limits, on a 2 MB stack (a test thread's)
        let t = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(|| {
                let ptr = full(&format!("_Z1f{}i", "P".repeat(1000))).map(|s| s.len());
                let ns = full(&format!("_ZN{}1fEv", "1a".repeat(1000))).map(|s| s.len());
                (ptr, ns)
            })
            .unwrap();
        assert_eq!(t.join().unwrap(), (Some(1000 + 6), Some(3 * 1000 + 3)));
    }

    /// Substitutions that double the output at each step stop at the
    /// output limit.
    #[test]
    fn exponential_output_is_bounded() {
        fn seq(i: usize) -> String {
            // S_ = 0, S0_ = 1, ... (base 36, upper case)
            if i == 0 {
                return "S_".into();
            }
            let mut n = i - 1;
            let mut d = Vec::new();
            loop {
                d.push(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[n % 36]);
                n /= 36;
                if n == 0 {
                    break;
                }
            }
            d.reverse();
            format!("S{}_", String::from_utf8(d).unwrap())
        }
        // St4pair is candidate 2k, pair<X, X> candidate 2k + 1
        let mut name = String::from("_Z1fSt4pairIiiE");
        for k in 1..40 {
            let last = seq(2 * k - 1);
            name.push_str(&format!("St4pairI{last}{last}E"));
        }
        assert_eq!(full(&name), None);
        // a few levels still print
        assert!(full("_Z1fSt4pairIiiESt4pairIS0_S0_E").is_some());
    }
}
