//! TSDL tokens (CTF 1.8 section 7: a C-like lexical grammar).
//!
//! Comments (`/* */`, `//`) and white space are skipped. Keywords are not
//! told apart from identifiers here: TSDL lets most keywords appear as
//! attribute names and enumeration labels, so the parser decides.

use super::TsdlError;

/// Punctuators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Punct {
    LBracket,
    RBracket,
    LParen,
    RParen,
    LBrace,
    RBrace,
    Arrow,
    Star,
    Plus,
    Minus,
    Lt,
    Gt,
    TypeAssign,
    Colon,
    Semicolon,
    Ellipsis,
    Dot,
    Equal,
    Comma,
}

impl Punct {
    pub fn text(self) -> &'static str {
        match self {
            Punct::LBracket => "[",
            Punct::RBracket => "]",
            Punct::LParen => "(",
            Punct::RParen => ")",
            Punct::LBrace => "{",
            Punct::RBrace => "}",
            Punct::Arrow => "->",
            Punct::Star => "*",
            Punct::Plus => "+",
            Punct::Minus => "-",
            Punct::Lt => "<",
            Punct::Gt => ">",
            Punct::TypeAssign => ":=",
            Punct::Colon => ":",
            Punct::Semicolon => ";",
            Punct::Ellipsis => "...",
            Punct::Dot => ".",
            Punct::Equal => "=",
            Punct::Comma => ",",
        }
    }
}

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// Identifier or keyword.
    Ident(String),
    /// Integer literal (decimal, octal or hexadecimal; suffixes dropped).
    Int(u64),
    /// String literal, escapes decoded.
    Str(String),
    /// Character literal, escapes decoded (a string for all purposes).
    Char(String),
    Punct(Punct),
    Eof,
}

/// A position in the metadata text (1-based line and column; byte offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
    pub offset: usize,
}

/// A token and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
    line: u32,
    line_start: usize,
}

impl<'a> Lexer<'a> {
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: (self.i - self.line_start) as u32 + 1,
            offset: self.i,
        }
    }

    fn peek(&self, k: usize) -> u8 {
        self.s.get(self.i + k).copied().unwrap_or(0)
    }

    fn bump(&mut self) -> u8 {
        let c = self.peek(0);
        self.i += 1;
        if c == b'\n' {
            self.line += 1;
            self.line_start = self.i;
        }
        c
    }

    fn err(&self, pos: Pos, msg: impl Into<String>) -> TsdlError {
        TsdlError::new(pos, msg)
    }

    /// Skip white space and comments.
    fn skip(&mut self) -> Result<(), TsdlError> {
        loop {
            match self.peek(0) {
                b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c => {
                    self.bump();
                }
                b'/' if self.peek(1) == b'*' => {
                    let p = self.pos();
                    self.bump();
                    self.bump();
                    loop {
                        if self.i >= self.s.len() {
                            return Err(self.err(p, "unterminated comment"));
                        }
                        if self.peek(0) == b'*' && self.peek(1) == b'/' {
                            self.bump();
                            self.bump();
                            break;
                        }
                        self.bump();
                    }
                }
                b'/' if self.peek(1) == b'/' => {
                    while self.i < self.s.len() && self.peek(0) != b'\n' {
                        self.bump();
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn string(&mut self, delim: u8) -> Result<String, TsdlError> {
        let p = self.pos();
        self.bump();
        let mut out = Vec::new();
        loop {
            if self.i >= self.s.len() {
                return Err(self.err(p, "unterminated literal"));
            }
            let c = self.bump();
            if c == delim {
                break;
            }
            if c != b'\\' {
                out.push(c);
                continue;
            }
            if self.i >= self.s.len() {
                return Err(self.err(p, "unterminated literal"));
            }
            let e = self.bump();
            match e {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'a' => out.push(7),
                b'b' => out.push(8),
                b'f' => out.push(12),
                b'v' => out.push(11),
                b'0'..=b'7' => {
                    let mut v = (e - b'0') as u32;
                    for _ in 0..2 {
                        let d = self.peek(0);
                        if (b'0'..=b'7').contains(&d) {
                            v = v * 8 + (d - b'0') as u32;
                            self.bump();
                        } else {
                            break;
                        }
                    }
                    out.push(v as u8);
                }
                b'x' => {
                    let mut v = 0u32;
                    let mut n = 0;
                    while n < 2 && self.peek(0).is_ascii_hexdigit() {
                        v = v * 16 + (self.bump() as char).to_digit(16).unwrap_or(0);
                        n += 1;
                    }
                    out.push(v as u8);
                }
                other => out.push(other),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn number(&mut self) -> Result<u64, TsdlError> {
        let p = self.pos();
        let start = self.i;
        let (radix, digits_start) =
            if self.peek(0) == b'0' && (self.peek(1) == b'x' || self.peek(1) == b'X') {
                self.bump();
                self.bump();
                (16, self.i)
            } else if self.peek(0) == b'0' {
                (8, self.i)
            } else {
                (10, self.i)
            };
        while self.peek(0).is_ascii_alphanumeric() {
            self.bump();
        }
        let text = &self.s[digits_start..self.i];
        // Strip the integer suffix (u, l, ul, ll, ull... any case).
        let end = text
            .iter()
            .rposition(|c| !matches!(c, b'u' | b'U' | b'l' | b'L'))
            .map(|p| p + 1)
            .unwrap_or(0);
        let body = &text[..end];
        let body = std::str::from_utf8(body).unwrap_or("");
        if radix == 16 && body.is_empty() {
            return Err(self.err(p, "invalid hexadecimal literal"));
        }
        if body.is_empty() {
            return Ok(0);
        }
        u64::from_str_radix(body, radix).map_err(|_| {
            let t = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
            self.err(p, format!("invalid integer literal `{t}`"))
        })
    }

    fn next(&mut self) -> Result<Token, TsdlError> {
        self.skip()?;
        let pos = self.pos();
        let c = self.peek(0);
        if self.i >= self.s.len() {
            return Ok(Token { tok: Tok::Eof, pos });
        }
        let tok = match c {
            b'"' => Tok::Str(self.string(b'"')?),
            b'\'' => Tok::Char(self.string(b'\'')?),
            b'L' if self.peek(1) == b'"' || self.peek(1) == b'\'' => {
                return Err(self.err(pos, "wide character literals are not supported"));
            }
            b'0'..=b'9' => Tok::Int(self.number()?),
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.i;
                while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
                    self.bump();
                }
                let s = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                Tok::Ident(s.to_string())
            }
            _ => {
                let (p, n) = match (c, self.peek(1), self.peek(2)) {
                    (b'.', b'.', b'.') => (Punct::Ellipsis, 3),
                    (b'-', b'>', _) => (Punct::Arrow, 2),
                    (b':', b'=', _) => (Punct::TypeAssign, 2),
                    (b'[', _, _) => (Punct::LBracket, 1),
                    (b']', _, _) => (Punct::RBracket, 1),
                    (b'(', _, _) => (Punct::LParen, 1),
                    (b')', _, _) => (Punct::RParen, 1),
                    (b'{', _, _) => (Punct::LBrace, 1),
                    (b'}', _, _) => (Punct::RBrace, 1),
                    (b'*', _, _) => (Punct::Star, 1),
                    (b'+', _, _) => (Punct::Plus, 1),
                    (b'-', _, _) => (Punct::Minus, 1),
                    (b'<', _, _) => (Punct::Lt, 1),
                    (b'>', _, _) => (Punct::Gt, 1),
                    (b':', _, _) => (Punct::Colon, 1),
                    (b';', _, _) => (Punct::Semicolon, 1),
                    (b'.', _, _) => (Punct::Dot, 1),
                    (b'=', _, _) => (Punct::Equal, 1),
                    (b',', _, _) => (Punct::Comma, 1),
                    _ => {
                        let shown = if c.is_ascii_graphic() {
                            format!("`{}`", c as char)
                        } else {
                            format!("0x{c:02x}")
                        };
                        return Err(self.err(pos, format!("invalid character {shown}")));
                    }
                };
                for _ in 0..n {
                    self.bump();
                }
                Tok::Punct(p)
            }
        };
        Ok(Token { tok, pos })
    }
}

/// Split TSDL text into tokens (the last one is [`Tok::Eof`]).
pub fn tokenize(text: &[u8]) -> Result<Vec<Token>, TsdlError> {
    let mut lx = Lexer {
        s: text,
        i: 0,
        line: 1,
        line_start: 0,
    };
    let mut out = Vec::new();
    loop {
        let t = lx.next()?;
        let eof = t.tok == Tok::Eof;
        out.push(t);
        if eof {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_positions() {
        let t = tokenize(b"/* c */ a := 0x1F;\n  b = \"x\\ty\" ... -3ULL // end\n").unwrap();
        let toks: Vec<_> = t.iter().map(|t| t.tok.clone()).collect();
        assert_eq!(
            toks,
            vec![
                Tok::Ident("a".into()),
                Tok::Punct(Punct::TypeAssign),
                Tok::Int(31),
                Tok::Punct(Punct::Semicolon),
                Tok::Ident("b".into()),
                Tok::Punct(Punct::Equal),
                Tok::Str("x\ty".into()),
                Tok::Punct(Punct::Ellipsis),
                Tok::Punct(Punct::Minus),
                Tok::Int(3),
                Tok::Eof
            ]
        );
        assert_eq!((t[4].pos.line, t[4].pos.col), (2, 3));
    }

    #[test]
    fn octal_and_errors() {
        assert_eq!(tokenize(b"017").unwrap()[0].tok, Tok::Int(15));
        assert_eq!(tokenize(b"0").unwrap()[0].tok, Tok::Int(0));
        let e = tokenize(b"a\n  @").unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (2, 3));
        assert!(tokenize(b"/* open").is_err());
        assert!(tokenize(b"\"open").is_err());
        assert!(tokenize(b"99999999999999999999999").is_err());
    }
}
