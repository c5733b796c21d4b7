//! CTF 2 metadata: the JSON reader (its verdict and values must agree with
//! serde_json's), the lowering to the IR and its checks, the decoding
//! program, and the CTF 2 writer (what it writes must read back as the
//! same trace class).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracemux_ctf::ctf2::{self, json};

/// Our JSON value as a serde_json value (objects: last duplicate wins, as
/// in serde_json; integers beyond 64 bits become floats, as in serde_json).
fn to_serde(v: &json::Value) -> serde_json::Value {
    use serde_json::Value as S;
    match &v.kind {
        json::Kind::Null => S::Null,
        json::Kind::Bool(b) => S::Bool(*b),
        json::Kind::Int(i) => {
            if let Ok(u) = u64::try_from(*i) {
                S::from(u)
            } else if let Ok(s) = i64::try_from(*i) {
                S::from(s)
            } else {
                S::from(*i as f64)
            }
        }
        json::Kind::Float(f) => S::from(*f),
        json::Kind::Str(s) => S::String(s.clone()),
        json::Kind::Arr(a) => S::Array(a.iter().map(to_serde).collect()),
        json::Kind::Obj(m) => {
            let mut o = serde_json::Map::new();
            for (k, v) in m {
                o.insert(k.clone(), to_serde(v));
            }
            S::Object(o)
        }
    }
}

/// Equal values; floats within a few ULPs (serde_json's default float
/// parser is not correctly rounded on long numbers; ours is).
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as S;
    match (a, b) {
        (S::Number(x), S::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-14 * x.abs().max(y.abs())
        }
        (S::Array(x), S::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (S::Object(x), S::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    // The JSON reader on the whole input, against serde_json.
    let ours = json::parse(data, 0);
    let theirs = serde_json::from_slice::<serde_json::Value>(data);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => {
            let a = to_serde(a);
            assert!(same(&a, b), "values differ: {a:?} / {b:?}");
        }
        (Err(_), Err(_)) => {}
        _ => panic!(
            "verdicts differ: ours {:?}, serde_json {:?}",
            ours.is_ok(),
            theirs.is_ok()
        ),
    }
    // The input as a metadata stream.
    let Ok(tc) = ctf2::parse(data) else {
        return;
    };
    let _ = tracemux_ctf::decode::Program::compile(&tc);
    // Refused only when nested too deeply for a JSON text (aliases).
    let Ok(json) = ctf2::write_metadata(&tc) else {
        return;
    };
    match ctf2::parse(json.as_bytes()) {
        Ok(back) => assert_eq!(back, tc, "round trip differs\n{json}"),
        Err(e) => panic!("written metadata does not read back: {e}\n{json}"),
    }
});
