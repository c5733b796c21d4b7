//! libtraceevent's tokenizer (`__read_token`), as the filter parser uses it
//! (`filter_read_token`: spaces and newlines skipped, `=~` and `!~` joined).

/// Token types (`enum tep_event_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok {
    /// End of input, or a character that ends it (not printable).
    None,
    Space,
    Newline,
    Op,
    Delim,
    Item,
    DQuote,
    SQuote,
}

pub struct Lexer<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// The C character class of a byte read as a (signed) `char`: bytes above
/// 0x7f are negative and end the input.
fn get_type(ch: Option<u8>) -> Tok {
    let Some(ch) = ch else { return Tok::None };
    match ch {
        b'\n' => Tok::Newline,
        b' ' | b'\t' | b'\x0b' | b'\x0c' | b'\r' => Tok::Space,
        c if c.is_ascii_alphanumeric() || c == b'_' => Tok::Item,
        b'\'' => Tok::SQuote,
        b'"' => Tok::DQuote,
        c if !(0x20..0x7f).contains(&c) => Tok::None,
        b'(' | b')' | b',' => Tok::Delim,
        _ => Tok::Op,
    }
}

fn isprint(c: u8) -> bool {
    (0x20..0x7f).contains(&c)
}

impl<'a> Lexer<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Lexer { buf, pos: 0 }
    }

    /// `__read_char`: `None` at the end and for bytes above 0x7f (negative).
    fn read(&mut self) -> Option<u8> {
        let c = *self.buf.get(self.pos)?;
        self.pos += 1;
        (c < 0x80).then_some(c)
    }

    fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied().filter(|&c| c < 0x80)
    }

    /// One token (`__read_token`).
    fn raw_token(&mut self) -> (Tok, Vec<u8>) {
        let Some(ch) = self.read() else {
            return (Tok::None, Vec::new());
        };
        let ty = get_type(Some(ch));
        if ty == Tok::None {
            return (ty, Vec::new());
        }
        let mut buf = vec![ch];
        match ty {
            Tok::Newline | Tok::Delim => return (ty, buf),
            Tok::Op => {
                let mut test_equal = false;
                match ch {
                    b'-' if self.peek() == Some(b'>') => {
                        buf.push(b'>');
                        self.pos += 1;
                    }
                    b'-' | b'+' | b'|' | b'&' | b'>' | b'<' => {
                        if self.peek() != Some(ch) {
                            test_equal = true;
                        } else {
                            buf.push(ch);
                            self.pos += 1;
                            test_equal = matches!(ch, b'>' | b'<');
                        }
                    }
                    b'!' | b'=' => test_equal = true,
                    _ => {}
                }
                if test_equal && self.peek() == Some(b'=') {
                    buf.push(b'=');
                    self.pos += 1;
                }
                return (ty, buf);
            }
            Tok::DQuote | Tok::SQuote => {
                buf.clear();
                let quote = ch;
                let mut ty = ty;
                let mut ch: i32 = ch as i32;
                loop {
                    // the `do { } while` of __read_token
                    loop {
                        let mut last = ch;
                        ch = self.read().map_or(-1, |c| c as i32);
                        buf.push(ch as u8);
                        if ch == b'\\' as i32 && last == b'\\' as i32 {
                            last = 0;
                        }
                        if ch <= 0 {
                            break;
                        }
                        let c = ch as u8;
                        if !((c != quote && isprint(c)) || last == b'\\' as i32 || c == b'\n') {
                            break;
                        }
                    }
                    // drop the closing quote (or whatever ended the string)
                    buf.pop();
                    if ch <= 0 {
                        ty = Tok::None;
                    }
                    // "a" "b" is "ab"
                    if ty == Tok::DQuote {
                        let save = self.pos;
                        let mut c;
                        loop {
                            c = self.read();
                            if !matches!(c, Some(b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
                            {
                                break;
                            }
                        }
                        if c == Some(b'"') {
                            ch = b'"' as i32;
                            continue;
                        }
                        self.pos = save;
                    }
                    break;
                }
                return (ty, buf);
            }
            _ => {}
        }
        while get_type(self.peek()) == ty {
            buf.push(self.buf[self.pos]);
            self.pos += 1;
        }
        if ty == Tok::Item {
            // libtraceevent's workaround for old mac80211 formats
            let forced: Option<&[u8]> = match &buf[..] {
                b"LOCAL_PR_FMT" => Some(b"%s"),
                b"STA_PR_FMT" => Some(b" sta:%pM"),
                b"VIF_PR_FMT" => Some(b" vif:%p(%d)"),
                _ => None,
            };
            if let Some(f) = forced {
                return (Tok::DQuote, f.to_vec());
            }
        }
        (ty, buf)
    }

    /// The next token of a filter (`filter_read_token`).
    pub fn next(&mut self) -> (Tok, Vec<u8>) {
        let (ty, tok) = loop {
            let (ty, tok) = self.raw_token();
            if !matches!(ty, Tok::Space | Tok::Newline) {
                break (ty, tok);
            }
        };
        if (tok == b"=" || tok == b"!") && self.peek() == Some(b'~') {
            self.pos += 1;
            return (ty, vec![tok[0], b'~']);
        }
        (ty, tok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<(Tok, String)> {
        let mut l = Lexer::new(s.as_bytes());
        let mut v = Vec::new();
        loop {
            let (t, s) = l.next();
            if t == Tok::None {
                break;
            }
            v.push((t, String::from_utf8(s).unwrap()));
        }
        v
    }

    #[test]
    fn tokens() {
        let t = toks("prev_pid==0&&!(x>=0x1f)||c=~\"a\" \"b\"|| d !~ 'e\\'f'");
        let want: Vec<(Tok, &str)> = vec![
            (Tok::Item, "prev_pid"),
            (Tok::Op, "=="),
            (Tok::Item, "0"),
            (Tok::Op, "&&"),
            (Tok::Op, "!"),
            (Tok::Delim, "("),
            (Tok::Item, "x"),
            (Tok::Op, ">="),
            (Tok::Item, "0x1f"),
            (Tok::Delim, ")"),
            (Tok::Op, "||"),
            (Tok::Item, "c"),
            (Tok::Op, "=~"),
            (Tok::DQuote, "ab"),
            (Tok::Op, "||"),
            (Tok::Item, "d"),
            (Tok::Op, "!~"),
            (Tok::SQuote, "e\\'f"),
        ];
        let got: Vec<(Tok, &str)> = t.iter().map(|(a, b)| (*a, b.as_str())).collect();
        assert_eq!(got, want);
        assert_eq!(toks("a<<=b")[1].1, "<<=");
        assert_eq!(toks("a->b")[1].1, "->");
        assert_eq!(toks("a-b")[1].1, "-");
        // an unterminated string ends the input
        assert_eq!(
            toks("a == \"b"),
            vec![(Tok::Item, "a".into()), (Tok::Op, "==".into())]
        );
    }
}
