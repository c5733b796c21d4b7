//! A small JSON reader (RFC 8259) for CTF 2 metadata fragments.
//!
//! Why not `serde_json::Value`: its objects are sorted by key (the
//! workspace does not enable `preserve_order`), while the IR keeps integer
//! mappings, bit-map flags and environment entries in metadata order; and
//! a metadata error should name the byte offset of the offending value,
//! which `serde_json::Value` does not keep. This reader keeps both: object
//! members in document order and the absolute byte offset of every value.
//! It accepts exactly what RFC 8259 allows (the tests and the `ctf_json`
//! fuzz target compare its verdicts with `serde_json`'s).
//!
//! Memory is linear in the input; nesting is limited to [`MAX_DEPTH`]
//! levels so recursion is bounded.

/// Deepest nesting of arrays and objects accepted (as deep as serde_json
/// accepts with its default recursion limit).
pub const MAX_DEPTH: usize = 127;

/// A JSON value and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// Absolute byte offset of the value's first byte in the metadata.
    pub off: usize,
    pub kind: Kind,
}

/// The kinds of JSON values.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Null,
    Bool(bool),
    /// A number without fraction or exponent that fits in an `i128`
    /// (every 64-bit signed and unsigned value does).
    Int(i128),
    /// Any other number.
    Float(f64),
    Str(String),
    Arr(Vec<Value>),
    /// Members in document order (duplicates kept; [`Value::get`] returns
    /// the last one, as serde_json does).
    Obj(Vec<(String, Value)>),
}

impl Value {
    /// The member `key` of an object (the last one when repeated).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match &self.kind {
            Kind::Obj(m) => m.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// What kind of value this is, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Int(_) | Kind::Float(_) => "a number",
            Kind::Str(_) => "a string",
            Kind::Arr(_) => "an array",
            Kind::Obj(_) => "an object",
        }
    }
}

/// A syntax error: what and at which absolute byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub off: usize,
    pub msg: String,
}

/// Parse one JSON text (surrounding whitespace allowed). `base` is the
/// absolute offset of `text[0]`, added to every offset.
pub fn parse(text: &[u8], base: usize) -> Result<Value, SyntaxError> {
    let mut p = Parser::new(text, base, false);
    p.ws();
    let v = p.value()?;
    p.ws();
    if p.i < p.b.len() {
        return Err(p.err("unexpected data after the JSON value"));
    }
    Ok(v)
}

/// What [`parse_lenient`] read: the values one after another, and the
/// absolute offsets of the trailing commas it forgave.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Lenient {
    pub values: Vec<Value>,
    pub trailing_commas: Vec<usize>,
}

/// Parse a text holding zero or more JSON values, each an object or an
/// array after the first, separated by whitespace only, and forgive a
/// comma before the closing `}` or `]` (what some CTF 2 producers write).
/// Everything else is as strict as [`parse`]: any other data after a
/// value is an error at its offset.
pub fn parse_lenient(text: &[u8], base: usize) -> Result<Lenient, SyntaxError> {
    let mut p = Parser::new(text, base, true);
    let mut out = Lenient::default();
    p.ws();
    while p.i < p.b.len() {
        if !out.values.is_empty() && !matches!(p.peek(), Some(b'{' | b'[')) {
            return Err(p.err("unexpected data after the JSON value"));
        }
        out.values.push(p.value()?);
        p.ws();
    }
    out.trailing_commas = p.trailing;
    Ok(out)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    base: usize,
    depth: usize,
    /// Forgive trailing commas (and record where they were).
    lenient: bool,
    trailing: Vec<usize>,
}

impl<'a> Parser<'a> {
    fn new(b: &'a [u8], base: usize, lenient: bool) -> Self {
        Parser {
            b,
            i: 0,
            base,
            depth: 0,
            lenient,
            trailing: Vec::new(),
        }
    }

    /// After a `,` in an object or array: whether `close` follows (a
    /// trailing comma), which is forgiven in lenient mode. `comma` is the
    /// comma's position.
    fn trailing_comma(&mut self, comma: usize, close: u8) -> bool {
        if !self.lenient {
            return false;
        }
        self.ws();
        if self.peek() == Some(close) {
            self.trailing.push(self.base + comma);
            self.i += 1;
            return true;
        }
        false
    }

    fn err(&self, msg: impl Into<String>) -> SyntaxError {
        self.err_at(self.i, msg)
    }

    fn err_at(&self, i: usize, msg: impl Into<String>) -> SyntaxError {
        SyntaxError {
            off: self.base + i,
            msg: msg.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Result<Value, SyntaxError> {
        let off = self.base + self.i;
        let kind = match self.peek() {
            None => return Err(self.err("unexpected end of the JSON text")),
            Some(b'{') => self.nested(Self::object)?,
            Some(b'[') => self.nested(Self::array)?,
            Some(b'"') => Kind::Str(self.string()?),
            Some(b't') => self.literal(b"true", Kind::Bool(true))?,
            Some(b'f') => self.literal(b"false", Kind::Bool(false))?,
            Some(b'n') => self.literal(b"null", Kind::Null)?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return Err(self.err("expected a JSON value")),
        };
        Ok(Value { off, kind })
    }

    fn nested(
        &mut self,
        f: fn(&mut Self) -> Result<Kind, SyntaxError>,
    ) -> Result<Kind, SyntaxError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Result<Kind, SyntaxError> {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(kind)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn object(&mut self) -> Result<Kind, SyntaxError> {
        self.elements(b'}', "an object", |p| {
            if p.peek() != Some(b'"') {
                return Err(p.err("expected a member name (a string)"));
            }
            let key = p.string()?;
            p.ws();
            if p.peek() != Some(b':') {
                return Err(p.err("expected `:` after a member name"));
            }
            p.i += 1;
            p.ws();
            Ok((key, p.value()?))
        })
        .map(Kind::Obj)
    }

    fn array(&mut self) -> Result<Kind, SyntaxError> {
        self.elements(b']', "an array", Self::value).map(Kind::Arr)
    }

    /// The `,`-separated elements of an object or array, each read by
    /// `element`, from the opening bracket to `close` (both consumed);
    /// `what` names the container in errors.
    fn elements<T>(
        &mut self,
        close: u8,
        what: &str,
        mut element: impl FnMut(&mut Self) -> Result<T, SyntaxError>,
    ) -> Result<Vec<T>, SyntaxError> {
        self.i += 1; // the opening bracket
        let mut out = Vec::new();
        self.ws();
        if self.peek() == Some(close) {
            self.i += 1;
            return Ok(out);
        }
        loop {
            self.ws();
            out.push(element(self)?);
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    if self.trailing_comma(self.i - 1, close) {
                        return Ok(out);
                    }
                }
                Some(c) if c == close => {
                    self.i += 1;
                    return Ok(out);
                }
                _ => {
                    let msg = format!("expected `,` or `{}` in {what}", close as char);
                    return Err(self.err(msg));
                }
            }
        }
    }

    /// A string starting at the opening quote.
    fn string(&mut self) -> Result<String, SyntaxError> {
        self.i += 1; // '"'
        let mut out = String::new();
        loop {
            // A run of plain bytes.
            let start = self.i;
            while let Some(c) = self.peek() {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            let run = &self.b[start..self.i];
            match std::str::from_utf8(run) {
                Ok(s) => out.push_str(s),
                Err(e) => {
                    return Err(self.err_at(start + e.valid_up_to(), "invalid UTF-8 in a string"))
                }
            }
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    let c = self.escape()?;
                    out.push(c);
                }
                Some(_) => return Err(self.err("control character in a string")),
            }
        }
    }

    /// An escape sequence starting at the backslash.
    fn escape(&mut self) -> Result<char, SyntaxError> {
        let at = self.i;
        self.i += 1;
        let Some(c) = self.peek() else {
            return Err(self.err("unterminated string"));
        };
        self.i += 1;
        Ok(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4()?;
                if (0xD800..0xDC00).contains(&hi) {
                    // A high surrogate must be followed by `\u` and a low one.
                    if self.b.get(self.i) != Some(&b'\\') || self.b.get(self.i + 1) != Some(&b'u') {
                        return Err(self.err_at(at, "lone surrogate in a \\u escape"));
                    }
                    self.i += 2;
                    let lo = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return Err(self.err_at(at, "lone surrogate in a \\u escape"));
                    }
                    let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    char::from_u32(cp).ok_or_else(|| self.err_at(at, "invalid \\u escape"))?
                } else {
                    char::from_u32(hi)
                        .ok_or_else(|| self.err_at(at, "lone surrogate in a \\u escape"))?
                }
            }
            _ => return Err(self.err_at(at, "invalid escape sequence")),
        })
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let Some(h) = self.b.get(self.i..self.i + 4) else {
            return Err(self.err("truncated \\u escape"));
        };
        let mut v = 0u32;
        for &c in h {
            let d = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => return Err(self.err("invalid hexadecimal digit in a \\u escape")),
            };
            v = v * 16 + u32::from(d);
        }
        self.i += 4;
        Ok(v)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Kind, SyntaxError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("invalid number")),
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            self.i += 1;
            integral = false;
            if self.digits() == 0 {
                return Err(self.err("invalid number: no digit after `.`"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            integral = false;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("invalid number: no digit in the exponent"));
            }
        }
        // Only ASCII digits, signs, `.` and `e` were accepted above.
        let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("");
        if integral {
            if let Ok(v) = text.parse::<i128>() {
                return Ok(Kind::Int(v));
            }
        }
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Kind::Float(v)),
            Ok(_) => Err(self.err_at(start, "number out of range")),
            Err(_) => Err(self.err_at(start, "invalid number")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Value, SyntaxError> {
        parse(s.as_bytes(), 100)
    }

    #[test]
    fn keeps_member_order_and_offsets() {
        let v = p(r#" {"z": 1, "a": [true, null, "x"], "m": -2.5e1}"#).unwrap();
        assert_eq!(v.off, 101);
        let Kind::Obj(m) = &v.kind else { panic!() };
        let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a", "m"]);
        assert_eq!(v.get("z").unwrap().kind, Kind::Int(1));
        assert_eq!(v.get("z").unwrap().off, 107);
        assert_eq!(v.get("m").unwrap().kind, Kind::Float(-25.0));
        let Kind::Arr(a) = &v.get("a").unwrap().kind else {
            panic!()
        };
        assert_eq!(a[2].kind, Kind::Str("x".into()));
    }

    #[test]
    fn integers_keep_their_full_range() {
        assert_eq!(
            p("18446744073709551615").unwrap().kind,
            Kind::Int(u64::MAX as i128)
        );
        assert_eq!(
            p("-9223372036854775808").unwrap().kind,
            Kind::Int(i64::MIN as i128)
        );
        assert_eq!(p("-0").unwrap().kind, Kind::Int(0));
        assert!(matches!(
            p("1234567890123456789012345678901234567890123")
                .unwrap()
                .kind,
            Kind::Float(_)
        ));
    }

    #[test]
    fn strings_unescape() {
        let v = p(r#""a\"b\\c\/\n\u00e9\ud83d\ude00""#).unwrap();
        assert_eq!(v.kind, Kind::Str("a\"b\\c/\né😀".into()));
        assert_eq!(p("\"caf\u{e9}\"").unwrap().kind, Kind::Str("café".into()));
    }

    #[test]
    fn last_duplicate_wins() {
        let v = p(r#"{"a": 1, "a": 2}"#).unwrap();
        assert_eq!(v.get("a").unwrap().kind, Kind::Int(2));
    }

    #[test]
    fn errors_name_the_offset() {
        let e = p(r#"{"a": tru}"#).unwrap_err();
        assert_eq!(e.off, 106);
        let e = p(r#"{"a": 1,}"#).unwrap_err();
        assert_eq!(e.off, 108);
        assert_eq!(p("[1] 2").unwrap_err().off, 104);
        assert_eq!(p("").unwrap_err().off, 100);
        assert!(p("\"a\u{1}\"").is_err());
        assert!(p("\"\\ud800\"").is_err());
        assert!(p("\"\\udc00\"").is_err());
        assert!(p("01").is_err());
        assert!(p("1.").is_err());
        assert!(p("1e").is_err());
        assert!(p("+1").is_err());
        assert_eq!(parse(b"\"\xff\"", 0).unwrap_err().off, 1);
    }

    #[test]
    fn nesting_is_limited() {
        let deep = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(p(&deep).is_ok());
        let deeper = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(p(&deeper).is_err());
        // No stack overflow on absurd nesting.
        assert!(p(&"[".repeat(1_000_000)).is_err());
    }

    #[test]
    fn lenient_forgives_trailing_commas_and_reads_several_values() {
        let l = parse_lenient(b" {\"a\": [1, 2,], \"b\": {},}\n{\"c\": 3}\n", 10).unwrap();
        assert_eq!(l.values.len(), 2);
        assert_eq!(l.values[0].off, 11);
        assert_eq!(l.values[1].off, 36);
        assert_eq!(l.values[1].get("c").unwrap().kind, Kind::Int(3));
        // `[1, 2,]`: the comma at 22; `{},}`: the comma at 33.
        assert_eq!(l.trailing_commas, [22, 33]);
        let Kind::Arr(a) = &l.values[0].get("a").unwrap().kind else {
            panic!()
        };
        assert_eq!(a.len(), 2);
        // Still refused: a lone comma, two commas, data that is not a
        // value after a value, and anything `parse` refuses.
        assert!(parse_lenient(b"[,]", 0).is_err());
        assert!(parse_lenient(b"{,}", 0).is_err());
        assert!(parse_lenient(b"[1,,]", 0).is_err());
        assert_eq!(parse_lenient(b"{} 2", 0).unwrap_err().off, 3);
        assert!(parse_lenient(b"{\"a\": tru}", 0).is_err());
        assert_eq!(parse_lenient(b" \n", 0).unwrap(), Lenient::default());
        // The strict parser is unchanged.
        assert!(p("[1,]").is_err());
    }

    /// Same verdict as serde_json on a set of tricky texts.
    #[test]
    fn agrees_with_serde_json() {
        let texts: &[&str] = &[
            "{}",
            "[]",
            "[1,2,3]",
            "{\"a\":{\"b\":[null,true,false]}}",
            "1e400",
            "-1.5E-3",
            "\"\\u0000\"",
            "\"\\ud83d\\ude00\"",
            "[1,]",
            "{\"a\"}",
            "{\"a\":}",
            "nul",
            "[\"\t\"]",
            "\"\\x\"",
            "0.0",
            "00",
            "-",
            "[1 2]",
            " \n\t\r 7 \n",
            "{\"a\":1 \"b\":2}",
            &"[".repeat(127),
            &("[".repeat(127) + &"]".repeat(127)),
            &("[".repeat(128) + &"]".repeat(128)),
            &("{\"a\":".repeat(127) + "1" + &"}".repeat(127)),
            &("{\"a\":".repeat(128) + "1" + &"}".repeat(128)),
        ];
        for t in texts {
            let ours = parse(t.as_bytes(), 0).is_ok();
            let theirs = serde_json::from_str::<serde_json::Value>(t).is_ok();
            assert_eq!(ours, theirs, "{t:?}");
        }
    }
}
