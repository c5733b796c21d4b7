//! The tokenizer libtraceevent runs over a `format` file (and over event
//! filters: tracemux-filter reads its tokens here), reproduced with its
//! quirks because they decide which `print fmt`s parse:
//!
//! - bytes are read as C `char` (signed), so any byte >= 0x80 is not
//!   printable and ends the input (outside quotes) or the token;
//! - a quoted string ends at the closing quote *or* at the first
//!   non-printable character other than a newline (a literal TAB ends it);
//!   a backslash lets any following character through, and the character
//!   after `\\` is still treated as escaped (`"a\\"b"` does not end at the
//!   second quote);
//! - adjacent double-quoted strings (only whitespace between them) are
//!   joined into one token;
//! - operators are `->`, doubled `++ -- || && << >>`, and any of those or
//!   `! = < >` followed by `=`; every other printable character is a
//!   one-character operator, except `( ) ,` which are delimiters.

/// Token classes, in the order of libtraceevent's `enum tep_event_type`
/// (the parser relies on ranges of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ty {
    Error,
    None,
    Space,
    Newline,
    Op,
    Delim,
    Item,
    DQuote,
    SQuote,
}

impl Ty {
    /// libtraceevent's `event_item_type`: items and quoted strings.
    pub fn is_item(self) -> bool {
        matches!(self, Ty::Item | Ty::DQuote | Ty::SQuote)
    }
}

/// A token: its class and text (empty where C would have a NULL token).
pub type Token = (Ty, String);

#[inline]
fn is_space(ch: i32) -> bool {
    ch == b' ' as i32 || (9..=13).contains(&ch)
}

#[inline]
fn is_print(ch: i32) -> bool {
    (0x20..=0x7e).contains(&ch)
}

#[inline]
fn is_alnum(ch: i32) -> bool {
    (0..=0x7f).contains(&ch) && (ch as u8).is_ascii_alphanumeric()
}

fn get_type(ch: i32) -> Ty {
    if ch == b'\n' as i32 {
        return Ty::Newline;
    }
    if is_space(ch) {
        return Ty::Space;
    }
    if is_alnum(ch) || ch == b'_' as i32 {
        return Ty::Item;
    }
    if ch == b'\'' as i32 {
        return Ty::SQuote;
    }
    if ch == b'"' as i32 {
        return Ty::DQuote;
    }
    if !is_print(ch) {
        return Ty::None;
    }
    if ch == b'(' as i32 || ch == b')' as i32 || ch == b',' as i32 {
        return Ty::Delim;
    }
    Ty::Op
}

pub struct Lexer<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Lexer { buf, pos: 0 }
    }

    /// The next byte as a C `char` (sign-extended), -1 at the end.
    #[inline]
    fn read_char(&mut self) -> i32 {
        match self.buf.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b as i8 as i32
            }
            None => -1,
        }
    }

    #[inline]
    fn peek_char(&self) -> i32 {
        self.buf.get(self.pos).map_or(-1, |&b| b as i8 as i32)
    }

    /// Consume the next byte if it is `b`.
    pub fn eat(&mut self, b: u8) -> bool {
        if self.buf.get(self.pos) == Some(&b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn token(ty: Ty, buf: Vec<u8>) -> Token {
        // Tokens only ever hold ASCII (see the module comment).
        (ty, String::from_utf8_lossy(&buf).into_owned())
    }

    /// One token, spaces and newlines included (`__read_token`).
    pub fn read_token_raw(&mut self) -> Token {
        let mut ch = self.read_char();
        if ch < 0 {
            return (Ty::None, String::new());
        }
        let mut ty = get_type(ch);
        if ty == Ty::None {
            return (Ty::None, String::new());
        }
        let mut buf: Vec<u8> = vec![ch as u8];
        match ty {
            Ty::Newline | Ty::Delim => return Self::token(ty, buf),
            Ty::Op => {
                let c = ch as u8;
                let mut test_equal = false;
                if c == b'-' && self.peek_char() == b'>' as i32 {
                    buf.push(self.read_char() as u8);
                } else if matches!(c, b'-' | b'+' | b'|' | b'&' | b'>' | b'<') {
                    if self.peek_char() != ch {
                        test_equal = true;
                    } else {
                        buf.push(self.read_char() as u8);
                        if c == b'>' || c == b'<' {
                            test_equal = true;
                        }
                    }
                } else if c == b'!' || c == b'=' {
                    test_equal = true;
                }
                if test_equal && self.peek_char() == b'=' as i32 {
                    buf.push(self.read_char() as u8);
                }
                return Self::token(ty, buf);
            }
            Ty::DQuote | Ty::SQuote => {
                // quotes are not kept
                buf.pop();
                let quote = ch;
                loop {
                    // (concatenation of adjacent double-quoted strings
                    // loops back here)
                    loop {
                        let mut last = ch;
                        ch = self.read_char();
                        buf.push(ch as u8);
                        // "\\" cancels itself, but `last` is reloaded from
                        // `ch` on the next round, exactly as in C
                        if ch == b'\\' as i32 && last == b'\\' as i32 {
                            last = 0;
                        }
                        if ch <= 0 {
                            break;
                        }
                        let go_on = (ch != quote && is_print(ch))
                            || last == b'\\' as i32
                            || ch == b'\n' as i32;
                        if !go_on {
                            break;
                        }
                    }
                    // drop the closing quote (or whatever ended the string)
                    buf.pop();
                    if ch <= 0 {
                        ty = Ty::None;
                    }
                    if ty == Ty::DQuote {
                        let save = self.pos;
                        loop {
                            ch = self.read_char();
                            if !is_space(ch) {
                                break;
                            }
                        }
                        if ch == b'"' as i32 {
                            continue;
                        }
                        self.pos = save;
                    }
                    break;
                }
                return Self::token(ty, buf);
            }
            _ => {}
        }
        while get_type(self.peek_char()) == ty {
            buf.push(self.read_char() as u8);
        }
        if ty == Ty::Item {
            // Workarounds for old kernels' broken mac80211 formats.
            let forced = match buf.as_slice() {
                b"LOCAL_PR_FMT" => Some(&b"\"%s\" "[..]),
                b"STA_PR_FMT" => Some(&b"\" sta:%pM\" "[..]),
                b"VIF_PR_FMT" => Some(&b"\" vif:%p(%d)\" "[..]),
                _ => None,
            };
            if let Some(f) = forced {
                return Lexer::new(f).read_token_raw();
            }
        }
        Self::token(ty, buf)
    }

    /// Next token, skipping spaces (`read_token`).
    pub fn read_token(&mut self) -> Token {
        loop {
            let t = self.read_token_raw();
            if t.0 != Ty::Space {
                return t;
            }
        }
    }

    /// Next token, skipping spaces and newlines (`read_token_item`).
    pub fn read_token_item(&mut self) -> Token {
        loop {
            let t = self.read_token_raw();
            if t.0 != Ty::Space && t.0 != Ty::Newline {
                return t;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(s: &str) -> Vec<Token> {
        let mut l = Lexer::new(s.as_bytes());
        let mut v = Vec::new();
        loop {
            let t = l.read_token();
            if t.0 == Ty::None {
                break;
            }
            v.push(t);
        }
        v
    }

    #[test]
    fn operators_and_items() {
        let t = all("REC->a >>= b != c && d--(e)");
        let texts: Vec<&str> = t.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            texts,
            ["REC", "->", "a", ">>=", "b", "!=", "c", "&&", "d", "--", "(", "e", ")"]
        );
        assert_eq!(t[1].0, Ty::Op);
        assert_eq!(t[10].0, Ty::Delim);
    }

    #[test]
    fn strings() {
        // adjacent strings are joined; escapes are kept verbatim
        let t = all("\"a\\n\" \"b\", 'c'");
        assert_eq!(t[0], (Ty::DQuote, "a\\nb".to_string()));
        assert_eq!(t[1], (Ty::Delim, ",".to_string()));
        assert_eq!(t[2], (Ty::SQuote, "c".to_string()));
        // a TAB ends a string
        let t = all("\"a\tb\"");
        assert_eq!(t[0], (Ty::DQuote, "a".to_string()));
        assert_eq!(t[1], (Ty::Item, "b".to_string()));
        // a backslash pair does not end the escape
        let t = all("\"a\\\\\"b\"");
        assert_eq!(t[0], (Ty::DQuote, "a\\\\\"b".to_string()));
        // a non-ASCII byte breaks the token
        let t = all("\"a\u{e9}\"");
        assert!(t.is_empty());
    }
}
