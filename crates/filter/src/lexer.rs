//! libtraceevent's tokenizer (`__read_token`, tracemux-ftrace's, the one
//! that reads `print fmt`s) as the filter parser uses it
//! (`filter_read_token`: spaces and newlines skipped, `=~` and `!~` joined).

use tracemux_ftrace::printfmt::lexer;

/// Token types (`enum tep_event_type`).
pub use lexer::Ty as Tok;

pub struct Lexer<'a>(lexer::Lexer<'a>);

impl<'a> Lexer<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Lexer(lexer::Lexer::new(buf))
    }

    /// The next token of a filter (`filter_read_token`).
    pub fn next(&mut self) -> (Tok, Vec<u8>) {
        let (ty, mut tok) = self.0.read_token_item();
        if (tok == "=" || tok == "!") && self.0.eat(b'~') {
            tok.push('~');
        }
        (ty, tok.into_bytes())
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
