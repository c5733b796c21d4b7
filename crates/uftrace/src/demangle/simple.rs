//! uftrace's "simple" C++ demangling: the qualified function name only
//! (`ns::Class::method`), without parameter lists, template arguments or
//! return types; lambdas become `$_N`, special names get `__vtable__`-style
//! prefixes. The grammar is the Itanium C++ ABI's; only names outside of
//! types and template arguments are printed. When the input cannot be
//! parsed the mangled name is kept, as uftrace does.
//!
//! Error and nesting-level bookkeeping follow uftrace 0.13 exactly, because
//! they decide when a name is given up on.

const OPS: [(&[u8; 2], &str); 50] = [
    (b"nw", " new"),
    (b"na", " new[]"),
    (b"dl", " delete"),
    (b"da", " delete[]"),
    (b"ps", "+"),
    (b"ng", "-"),
    (b"ad", "&"),
    (b"de", "*"),
    (b"co", "~"),
    (b"pl", "+"),
    (b"mi", "-"),
    (b"ml", "*"),
    (b"dv", "/"),
    (b"rm", "%"),
    (b"an", "&"),
    (b"or", "|"),
    (b"eo", "^"),
    (b"aS", "="),
    (b"pL", "+="),
    (b"mI", "-="),
    (b"mL", "*="),
    (b"dV", "/="),
    (b"rM", "%="),
    (b"aN", "&="),
    (b"oR", "|="),
    (b"eO", "^="),
    (b"ls", "<<"),
    (b"rs", ">>"),
    (b"lS", "<<="),
    (b"rS", ">>="),
    (b"eq", "=="),
    (b"ne", "!="),
    (b"lt", "<"),
    (b"gt", ">"),
    (b"le", "<="),
    (b"ge", ">="),
    (b"nt", "!"),
    (b"aa", "&&"),
    (b"oo", "||"),
    (b"pp", "++"),
    (b"mm", "--"),
    (b"cm", ","),
    (b"pm", "->*"),
    (b"pt", "->"),
    (b"cl", "()"),
    (b"ix", "[]"),
    (b"qu", "?"),
    (b"cv", "(cast)"),
    (b"li", "\"\""),
    (b"  ", ""),
];

const BUILTIN: &[u8] = b"vwbcahstijlmxynofdegz";

const STD_ABBREV: [(u8, &str); 7] = [
    (b't', "std"),
    (b'a', "std::allocator"),
    (b'b', "std::basic_string"),
    (b's', "std::basic_string<>"),
    (b'i', "std::basic_istream"),
    (b'o', "std::basic_ostream"),
    (b'd', "std::basic_iostream"),
];

const RUST_MAP: [(&str, &str); 19] = [
    ("SP", "@"),
    ("BP", "*"),
    ("RF", "&"),
    ("LT", "<"),
    ("GT", ">"),
    ("LP", "("),
    ("RP", ")"),
    ("C", ","),
    ("u20", " "),
    ("u22", "\""),
    ("u27", "'"),
    ("u2b", "+"),
    ("u3b", ";"),
    ("u3d", "="),
    ("u5b", "["),
    ("u5d", "]"),
    ("u7b", "{"),
    ("u7d", "}"),
    ("u7e", "~"),
];

/// Max recursion before giving up (hostile input).
const MAX_DEPTH: u32 = 256;

struct D<'a> {
    s: &'a [u8],
    pos: usize,
    len: usize,
    out: Vec<u8>,
    level: i32,
    ty: i32,
    templates: i32,
    type_info: bool,
    first_name: bool,
    ignore_disc: bool,
    depth: u32,
}

type R = Result<(), ()>;

impl D<'_> {
    fn eof(&self) -> bool {
        self.pos >= self.len
    }
    fn peek(&self, k: usize) -> u8 {
        if self.pos + k > self.len {
            return 0;
        }
        self.s.get(self.pos + k).copied().unwrap_or(0)
    }
    fn cur(&self) -> u8 {
        self.peek(0)
    }
    fn consume_n(&mut self, n: usize) -> u8 {
        let c = self.cur();
        if self.pos + n > self.len {
            return 0;
        }
        self.pos += n;
        c
    }
    fn consume(&mut self) -> u8 {
        self.consume_n(1)
    }
    /// Consume the two characters that open a production when `ok`
    /// accepts them, else put them back; the second one. (At the end of
    /// the input it fails either way, with both consumed.)
    fn opening(&mut self, ok: impl Fn(u8, u8) -> bool) -> Result<u8, ()> {
        let c0 = self.consume();
        let c1 = self.consume();
        if self.eof() {
            return Err(());
        }
        if !ok(c0, c1) {
            self.pos = self.pos.saturating_sub(2);
            return Err(());
        }
        Ok(c1)
    }
    /// Consume `c` or fail (the failed byte is not consumed).
    fn expect(&mut self, c: u8) -> R {
        let got = self.consume();
        if got != c {
            if got != 0 {
                self.pos -= 1;
            }
            return Err(());
        }
        Ok(())
    }
    fn append(&mut self, s: &[u8]) {
        self.out.extend_from_slice(s);
    }
    fn sep(&mut self) {
        if !self.first_name {
            self.out.extend_from_slice(b"::");
        }
        self.first_name = false;
    }
    /// `f` one level deeper; too deep (hostile input) fails.
    fn deeper(&mut self, f: fn(&mut Self) -> R) -> R {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(());
        }
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// `strtoul(.., 0)` after an optional `n`; -1 at the end of input.
    fn number(&mut self) -> i64 {
        if self.eof() {
            return -1;
        }
        if self.cur() == b'n' {
            self.pos += 1;
        }
        // no digit: an error (a `.clone` suffix after a special name's
        // type, `_ZTV1AE.localalias`, is not a name)
        if !self.s.get(self.pos).is_some_and(|c| c.is_ascii_digit()) {
            return -1;
        }
        let rest = &self.s[self.pos.min(self.s.len())..];
        let (radix, skip) = if rest.len() > 2
            && rest[0] == b'0'
            && (rest[1] | 0x20) == b'x'
            && rest[2].is_ascii_hexdigit()
        {
            (16, 2)
        } else if rest.first() == Some(&b'0') {
            (8, 0)
        } else {
            (10, 0)
        };
        let mut v: i64 = 0;
        let mut n = skip;
        while n < rest.len() {
            let Some(d) = (rest[n] as char).to_digit(radix) else {
                break;
            };
            v = v.saturating_mul(radix as i64).saturating_add(d as i64);
            n += 1;
        }
        if n == skip && skip > 0 {
            n = 1; // "0x" without digits: strtoul takes the 0
        }
        self.pos += n;
        v.min(i32::MAX as i64)
    }

    fn seq_id(&mut self) {
        if self.eof() {
            return;
        }
        while self.cur().is_ascii_digit() || self.cur().is_ascii_uppercase() {
            self.pos += 1;
        }
    }

    fn call_offset(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        match self.cur() {
            b'h' => {
                self.consume();
                if self.number() < 0 {
                    return Err(());
                }
                self.expect(b'_')
            }
            b'v' => {
                self.consume();
                if self.number() < 0 {
                    return Err(());
                }
                self.expect(b'_')?;
                if self.number() < 0 {
                    return Err(());
                }
                self.expect(b'_')
            }
            _ => Err(()),
        }
    }

    fn qualifier(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        if b"rVKRO".contains(&self.cur()) && self.cur() != 0 {
            self.consume();
        }
        Ok(())
    }

    fn initializer(&mut self) -> R {
        self.opening(|c0, c1| c0 == b'p' && c1 == b'i')?;
        self.level += 1;
        while self.cur() != b'E' {
            self.expression()?;
        }
        self.expect(b'E')?;
        self.level -= 1;
        Ok(())
    }

    fn abi_tag(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.expect(b'B')?;
        self.source_name()
    }

    fn substitution(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.expect(b'S')?;
        let c = self.cur();
        if let Some((_, name)) = STD_ABBREV.iter().find(|(k, _)| *k == c) {
            self.consume();
            if self.ty == 0 || self.type_info {
                self.sep();
                self.append(name.as_bytes());
            }
            if self.cur() == b'B' {
                let _ = self.abi_tag();
            }
            return Ok(());
        }
        self.seq_id();
        self.expect(b'_')
    }

    fn function_param(&mut self) -> R {
        let c1 = self.opening(|c0, c1| c0 == b'f' && (c1 == b'p' || c1 == b'L'))?;
        if self.cur().is_ascii_digit() {
            self.number();
            if c1 == b'L' {
                self.expect(b'p')?;
            }
        }
        let _ = self.qualifier();
        if self.cur().is_ascii_digit() {
            self.number();
        }
        self.expect(b'_')
    }

    fn template_param(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.expect(b'T')?;
        self.number();
        self.expect(b'_')
    }

    fn template_arg(&mut self) -> R {
        self.deeper(Self::template_arg_inner)
    }

    fn template_arg_inner(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        match self.cur() {
            b'X' => {
                self.consume();
                self.level += 1;
                let _ = self.expression();
                self.expect(b'E')?;
                self.level -= 1;
            }
            b'L' => self.expr_primary()?,
            b'J' => {
                self.consume();
                self.level += 1;
                while self.cur() != b'E' {
                    self.template_arg()?;
                }
                self.expect(b'E')?;
                self.level -= 1;
            }
            _ => self.type_()?,
        }
        Ok(())
    }

    fn template_args(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.expect(b'I')?;
        self.templates += 1;
        self.level += 1;
        while self.cur() != b'E' {
            self.template_arg()?;
        }
        self.expect(b'E')?;
        self.level -= 1;
        self.templates -= 1;
        Ok(())
    }

    fn simple_id(&mut self) -> R {
        if self.eof() || !self.cur().is_ascii_digit() {
            return Err(());
        }
        self.source_name()?;
        if self.cur() == b'I' {
            return self.template_args();
        }
        Ok(())
    }

    fn unresolved_type(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        match self.cur() {
            b'T' => self.template_param(),
            b'D' => self.decltype(),
            b'S' => {
                self.substitution()?;
                if self.cur() == b'I' {
                    return self.template_args();
                }
                if self.cur().is_ascii_digit() {
                    return self.unqualified_name();
                }
                Ok(())
            }
            _ => Err(()),
        }
    }

    fn destructor_name(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        if self.cur().is_ascii_digit() {
            return self.source_name();
        }
        self.unresolved_type()
    }

    fn base_unresolved_name(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        let (c0, c1) = (self.cur(), self.peek(1));
        if c0 == b'o' && c1 == b'n' {
            self.consume_n(2);
            self.operator_name()?;
            if self.cur() == b'I' {
                return self.template_args();
            }
            return Ok(());
        }
        if c0 == b'd' && c1 == b'n' {
            self.consume_n(2);
            return self.destructor_name();
        }
        self.simple_id()
    }

    fn unresolved_name(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        let (mut c0, c1) = (self.cur(), self.peek(1));
        let mut c1 = c1;
        if c0 == b'g' && c1 == b's' {
            self.consume_n(2);
            c0 = self.cur();
            c1 = self.peek(1);
        }
        if c0 == b's' && c1 == b'r' {
            self.consume_n(2);
            c0 = self.cur();
            if c0 == b'T' || c0 == b'D' || c0 == b'S' {
                self.type_()?;
                self.base_unresolved_name()?;
                if self.cur() == b'I' {
                    let _ = self.template_args();
                }
                return Ok(());
            }
            if c0 == b'N' {
                self.consume();
                self.type_()?;
            }
            c0 = self.cur();
            while c0 != b'E' {
                if self.simple_id().is_err() {
                    return Ok(());
                }
                c0 = self.cur();
            }
            self.expect(b'E')?;
        }
        self.base_unresolved_name()
    }

    fn expr_primary(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.expect(b'L')?;
        self.ty += 1;
        self.level += 1;
        if self.cur() == b'_' && self.peek(1) == b'Z' {
            self.consume_n(2);
            self.encoding()?;
            self.expect(b'E')?;
            self.level -= 1;
            self.ty -= 1;
            return Ok(());
        }
        let _ = self.type_();
        self.number();
        if self.cur() == b'_' {
            self.consume();
            self.number();
        }
        self.expect(b'E')?;
        self.level -= 1;
        self.ty -= 1;
        Ok(())
    }

    fn expr_list(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.level += 1;
        let mut c = self.cur();
        while c != b'E' && c != b'_' {
            self.expression()?;
            c = self.cur();
        }
        self.consume();
        self.level -= 1;
        Ok(())
    }

    fn expression(&mut self) -> R {
        self.deeper(Self::expression_inner)
    }

    fn expression_inner(&mut self) -> R {
        const UNARY: [&[u8]; 17] = [
            b"ps", b"ng", b"ad", b"de", b"pp_", b"mm_", b"pp", b"mm", b"dl", b"da", b"te", b"sz",
            b"az", b"nx", b"sp", b"tw", b"nt",
        ];
        if self.eof() {
            return Err(());
        }
        let (mut c0, mut c1) = (self.peek(0), self.peek(1));
        if c0 == b'g' && c1 == b's' {
            self.consume_n(2);
            c0 = self.cur();
            c1 = self.peek(1);
        }
        if c0 == b'L' {
            return self.expr_primary();
        }
        let rest = &self.s[self.pos.min(self.s.len())..];
        for u in UNARY {
            if rest.starts_with(u) {
                self.consume_n(u.len());
                return self.expression();
            }
        }
        if c0 == b'q' && c1 == b'u' {
            self.consume_n(2);
            self.expression()?;
            self.expression()?;
            return self.expression();
        }
        for (op, _) in OPS.iter().take(49) {
            if c0 != op[0] || c1 != op[1] {
                continue;
            }
            if c0 == b'c' || c1 == b'v' {
                continue;
            }
            self.consume_n(2);
            self.expression()?;
            return self.expression();
        }
        match (c0, c1) {
            (b'c', b'l') => {
                self.consume_n(2);
                self.expr_list()
            }
            (b'c', b'v') => {
                self.consume_n(2);
                self.type_()?;
                if self.cur() == b'_' {
                    self.consume();
                    return self.expr_list();
                }
                self.expression()
            }
            (b't', b'l') => {
                self.consume_n(2);
                self.type_()?;
                self.expr_list()
            }
            (b'i', b'l') => {
                self.consume_n(2);
                self.expr_list()
            }
            (b'n', b'w') | (b'n', b'a') => {
                self.expr_list()?;
                self.type_()?;
                if self.cur() == b'E' {
                    self.consume();
                    return Ok(());
                }
                self.initializer()
            }
            (b'd' | b's' | b'c' | b'r', b'c') => {
                self.consume_n(2);
                self.type_()?;
                self.expression()
            }
            (b't', b'i') | (b's', b't') | (b'a', b't') => {
                self.consume_n(2);
                self.type_()
            }
            (b'T', c) if c == b'_' || c.is_ascii_digit() => self.template_param(),
            (b'f', b'p') | (b'f', b'L') => self.function_param(),
            (b'd' | b'p', b't') => {
                self.consume_n(2);
                self.expression()?;
                self.unresolved_name()
            }
            (b'd', b's') => {
                self.consume_n(2);
                self.expression()?;
                self.expression()
            }
            (b's', b'Z') => {
                self.consume_n(2);
                match self.cur() {
                    b'T' => self.template_param(),
                    b'f' => self.function_param(),
                    _ => Err(()),
                }
            }
            (b's', b'P') => {
                self.consume_n(2);
                self.level += 1;
                while self.cur() != b'E' {
                    self.template_arg()?;
                }
                self.expect(b'E')?;
                self.level -= 1;
                Ok(())
            }
            (b't', b'r') => {
                self.consume_n(2);
                Ok(())
            }
            _ => self.unresolved_name(),
        }
    }

    fn function_type(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.expect(b'F')?;
        if self.cur() == b'Y' {
            self.consume();
        }
        self.ty += 1;
        self.level += 1;
        let mut c = self.cur();
        while c != b'E' {
            let old = self.pos;
            if self.type_().is_err() {
                self.pos = old;
                break;
            }
            c = self.cur();
        }
        if c == b'R' || c == b'O' {
            let _ = self.qualifier();
        }
        self.expect(b'E')?;
        self.level -= 1;
        self.ty -= 1;
        Ok(())
    }

    fn array_type(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.expect(b'A')?;
        let c = self.cur();
        if c.is_ascii_digit() {
            self.number();
        } else if c != b'_' {
            let _ = self.expression();
        }
        self.expect(b'_')?;
        self.type_()
    }

    fn ptr_to_member_type(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.expect(b'M')?;
        self.type_()?;
        self.type_()
    }

    fn decltype(&mut self) -> R {
        self.opening(|c0, c1| c0 == b'D' && (c1 == b'T' || c1 == b't'))?;
        self.ty += 1;
        self.level += 1;
        let _ = self.expression();
        self.expect(b'E')?;
        self.level -= 1;
        self.ty -= 1;
        Ok(())
    }

    fn vector_type(&mut self) -> R {
        self.opening(|c0, c1| c0 == b'D' && c1 == b'v')?;
        self.ty += 1;
        if self.cur() == b'_' {
            self.consume();
            let _ = self.expression();
        } else if self.number() < 0 {
            return Err(());
        }
        self.expect(b'_')?;
        self.ty -= 1;
        Ok(())
    }

    fn type_(&mut self) -> R {
        self.deeper(Self::type_inner)
    }

    fn type_inner(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.ty += 1;
        self.level += 1;
        let mut ret: R = Err(());
        let mut done = false;
        while !done && !self.eof() {
            let c = self.cur();
            if b"rVK".contains(&c) {
                let _ = self.qualifier();
                continue;
            } else if b"PROCG".contains(&c) {
                self.consume();
                continue;
            }
            match c {
                b'F' => {
                    ret = self.function_type();
                    done = true;
                }
                b'T' => {
                    let c1 = self.peek(1);
                    if b"sue".contains(&c1) && c1 != 0 {
                        self.consume_n(2);
                        ret = self.name();
                    } else if c1 == b'_' || c1.is_ascii_digit() {
                        ret = self.template_param();
                        if self.cur() == b'I' {
                            ret = self.template_args();
                        }
                    }
                    done = true;
                }
                b'A' => {
                    ret = self.array_type();
                    done = true;
                }
                b'M' => {
                    ret = self.ptr_to_member_type();
                    done = true;
                }
                b'D' => {
                    let c1 = self.peek(1);
                    if b"defhisacnu".contains(&c1) && c1 != 0 {
                        self.consume_n(2);
                        ret = Ok(());
                    } else if c1 == b'p' {
                        self.consume_n(2);
                        continue;
                    } else if c1 == b'v' {
                        let _ = self.vector_type();
                        continue;
                    } else if c1 == b't' || c1 == b'T' {
                        ret = self.decltype();
                    }
                    done = true;
                }
                b'S' => {
                    let c1 = self.peek(1);
                    ret = self.substitution();
                    if ret.is_ok() && c1 == b't' && self.cur().is_ascii_digit() {
                        ret = self.unqualified_name();
                    }
                    if self.cur() == b'I' {
                        ret = self.template_args();
                    }
                    done = true;
                }
                b'u' => {
                    self.consume();
                    ret = self.source_name();
                    done = true;
                }
                b'U' => {
                    self.consume();
                    ret = self.source_name();
                    if ret.is_err() {
                        done = true;
                    }
                    if ret.is_ok() && self.cur() == b'I' {
                        ret = self.template_args();
                    }
                    if ret.is_err() {
                        done = true;
                    }
                }
                b'I' => {
                    ret = self.template_args();
                    done = true;
                }
                c if c.is_ascii_digit() || c == b'N' || c == b'Z' => {
                    ret = self.name();
                    done = true;
                }
                c => {
                    if BUILTIN.contains(&c) && c != 0 {
                        self.consume();
                        ret = Ok(());
                    }
                    done = true;
                }
            }
        }
        self.level -= 1;
        self.ty -= 1;
        ret
    }

    fn discriminator(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.expect(b'_')?;
        let c = self.cur();
        if c.is_ascii_digit() {
            return if self.number() > 0 { Ok(()) } else { Err(()) };
        } else if c == b'_' {
            self.consume();
            if self.number() < 0 {
                return Err(());
            }
            self.expect(b'_')?;
        }
        Ok(())
    }

    fn special_name(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        let (c0, c1) = (self.cur(), self.peek(1));
        const T_TYPE: &[u8] = b"VTISFJ";
        const T_NAME: [&str; 6] = [
            "vtable",
            "VTT",
            "typeinfo_name",
            "typeinfo",
            "typeinfo_fn",
            "java_class",
        ];
        if c0 == b'T' {
            if let Some(idx) = T_TYPE.iter().position(|&t| t == c1) {
                self.consume_n(2);
                self.type_info = true;
                self.append(b"__");
                self.append(T_NAME[idx].as_bytes());
                self.append(b"__");
                return self.type_();
            }
            if c1 == b'h' || c1 == b'v' {
                self.consume();
                self.call_offset()?;
                return self.encoding();
            }
            if c1 == b'c' {
                self.consume_n(2);
                self.call_offset()?;
                self.call_offset()?;
                return self.encoding();
            }
            if c1 == b'C' {
                self.consume_n(2);
                self.append(b"__construction_vtable__");
                self.type_info = true;
                self.type_()?;
                if self.number() < 0 {
                    return Err(());
                }
                if self.eof() {
                    return Ok(());
                }
                self.expect(b'_')?;
                self.type_info = false;
                return self.type_();
            }
            if c1 == b'H' || c1 == b'W' {
                self.consume_n(2);
                self.sep();
                self.append(b"TLS_");
                self.append(if c1 == b'H' { b"init" } else { b"wrap" });
                return self.name();
            }
        }
        if c0 == b'G' {
            match c1 {
                b'V' => {
                    self.consume_n(2);
                    self.append(b"__guard_variable__");
                    return self.name();
                }
                b'R' => {
                    self.consume_n(2);
                    self.append(b"__ref_temp__");
                    self.ignore_disc = true;
                    self.name()?;
                    if self.cur() != b'_' {
                        self.seq_id();
                    }
                    return self.expect(b'_');
                }
                b'A' => {
                    self.consume_n(2);
                    return self.encoding();
                }
                b'T' => {
                    self.consume_n(2);
                    let c = self.cur();
                    if c == b't' || c == b'n' {
                        self.consume();
                        return self.encoding();
                    }
                    return Err(());
                }
                _ => {}
            }
        }
        Err(())
    }

    fn ctor_dtor_name(&mut self) -> R {
        let c0 = self.consume();
        let mut c1 = self.consume();
        if self.eof() {
            return Err(());
        }
        if c0 != b'C' && c0 != b'D' {
            self.pos = self.pos.saturating_sub(2);
            return Err(());
        }
        let mut needs_type = false;
        if c1 == b'I' {
            c1 = self.consume();
            needs_type = true;
        }
        if !c1.is_ascii_digit() {
            return Err(());
        }
        let mut ret = Ok(());
        if needs_type {
            ret = self.type_();
        }
        if self.ty != 0 {
            return ret;
        }
        let last = match self.out.iter().rposition(|&b| b == b':') {
            Some(p) => self.out[p + 1..].to_vec(),
            None => self.out.clone(),
        };
        self.append(if c0 == b'C' { b"::" } else { b"::~" });
        self.append(&last);
        ret
    }

    fn operator_name(&mut self) -> R {
        let c0 = self.consume();
        let c1 = self.consume();
        if self.eof() {
            return Err(());
        }
        if self.ty != 0 {
            if c0 == b'c' && c1 == b'v' {
                let _ = self.type_();
            }
            if c0 == b'l' && c1 == b'i' {
                let _ = self.source_name();
            }
            return Ok(());
        }
        for (op, name) in OPS.iter().take(49) {
            if c0 == op[0] && c1 == op[1] {
                self.sep();
                self.append(b"operator");
                self.append(name.as_bytes());
                self.ty += 1;
                if c0 == b'c' && c1 == b'v' {
                    let _ = self.type_();
                }
                if c0 == b'l' && c1 == b'i' {
                    let _ = self.source_name();
                }
                self.ty -= 1;
                return Ok(());
            }
        }
        if c0 == b'v' && c1.is_ascii_digit() {
            self.ty += 1;
            let _ = self.source_name();
            self.ty -= 1;
        }
        Err(())
    }

    fn source_name(&mut self) -> R {
        let num = self.number();
        if num < 0 {
            return Err(());
        }
        let mut num = num as usize;
        if self.eof() || self.pos + num > self.len {
            return Err(());
        }
        if (self.ty != 0 && !self.type_info) || self.templates != 0 {
            self.consume_n(num);
            return Ok(());
        }
        let start = self.pos;
        let name = &self.s[start..start + num];
        // Rust hash suffix
        if num == 17 && name[0] == b'h' && name[1..].iter().all(|c| c.is_ascii_hexdigit()) {
            self.consume_n(num);
            return Ok(());
        }
        self.sep();
        let mut p = start;
        let end = start + num;
        // '$' sequences of Rust symbols
        if let Some(d) = self.s[p..].iter().position(|&b| b == b'$').map(|d| d + p) {
            if d <= end {
                let mut dollar = Some(d);
                while let Some(dpos) = dollar.filter(|&x| x < end) {
                    let n = dpos - p;
                    let seg = self.s[p..p + n].to_vec();
                    self.append(&seg);
                    let code = &self.s[dpos + 1..];
                    let Some((c, punc)) = RUST_MAP
                        .iter()
                        .find(|(c, _)| code.starts_with(c.as_bytes()))
                    else {
                        // treat '$' as a normal character
                        break;
                    };
                    self.append(punc.as_bytes());
                    let adv = n + c.len() + 2;
                    self.consume_n(adv);
                    p += adv;
                    dollar = self
                        .s
                        .get(p..)
                        .and_then(|r| r.iter().position(|&b| b == b'$'))
                        .map(|x| x + p);
                }
                // a code running past the end of the name (damaged input)
                // leaves nothing more of it to print
                num = end.saturating_sub(p);
            }
        }
        let seg = self.s.get(p..p + num).unwrap_or(&[]).to_vec();
        self.append(&seg);
        self.consume_n(num);
        Ok(())
    }

    fn unqualified_name(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        let (c0, c1) = (self.cur(), self.peek(1));
        let mut ret: R = Ok(());
        if c0 == b'C' || c0 == b'D' {
            ret = self.ctor_dtor_name();
        } else if c0 == b'U' {
            if c1 == b't' {
                self.ty += 1;
                self.consume_n(2);
                self.number();
                self.expect(b'_')?;
                self.ty -= 1;
            } else if c1 == b'l' {
                self.consume_n(2);
                self.level += 1;
                while self.cur() != b'E' {
                    if self.type_().is_err() {
                        break;
                    }
                }
                self.expect(b'E')?;
                self.level -= 1;
                let mut n: i64 = -1;
                if self.cur() != b'_' {
                    n = self.number();
                    if n < 0 {
                        return Err(());
                    }
                }
                self.expect(b'_')?;
                if self.ty != 0 {
                    return Ok(());
                }
                self.sep();
                self.append(format!("$_{}", n + 1).as_bytes());
            } else {
                ret = Err(());
            }
        } else if c0.is_ascii_lowercase() {
            ret = self.operator_name();
        } else {
            if c0 == b'L' {
                self.consume();
            }
            ret = self.source_name();
        }
        if self.cur() == b'B' {
            ret = self.abi_tag();
        }
        ret
    }

    fn nested_name(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.expect(b'N')?;
        self.level += 1;
        let mut ret: R = Ok(());
        while self.cur() != b'E' && !self.eof() && ret.is_ok() {
            let (c0, c1) = (self.cur(), self.peek(1));
            if c0 == b'D' && (c1 == b'T' || c1 == b't') {
                ret = self.decltype();
            } else if c0 == b'C' || c0 == b'D' {
                ret = self.ctor_dtor_name();
            } else if c0 == b'U' || c0.is_ascii_lowercase() || c0.is_ascii_digit() {
                ret = self.unqualified_name();
            } else if c0 == b'T' {
                ret = self.template_param();
            } else if c0 == b'I' {
                ret = self.template_args();
            } else if c0 == b'S' {
                ret = self.substitution();
            } else if c0 == b'M' || c0 == b'L' {
                self.consume();
            } else if b"rVKRO".contains(&c0) {
                let _ = self.qualifier();
            } else {
                break;
            }
        }
        self.expect(b'E')?;
        self.level -= 1;
        ret
    }

    fn local_name(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        self.expect(b'Z')?;
        self.level += 1;
        let _ = self.encoding();
        self.expect(b'E')?;
        self.level -= 1;
        let c = self.cur();
        if c == b'd' {
            self.consume();
            if self.cur() != b'_' && self.number() < 0 {
                return Err(());
            }
            self.expect(b'_')?;
            return self.name();
        }
        if c == b's' {
            self.consume();
        } else {
            let _ = self.name();
        }
        if self.cur() == b'_' && !self.ignore_disc {
            let _ = self.discriminator();
        }
        Ok(())
    }

    fn name(&mut self) -> R {
        self.deeper(Self::name_inner)
    }

    fn name_inner(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        match self.cur() {
            b'N' => return self.nested_name(),
            b'Z' => return self.local_name(),
            b'S' => {
                self.substitution()?;
                if self.cur() == b'I' {
                    return self.template_args();
                }
            }
            _ => {}
        }
        self.unqualified_name()?;
        if self.cur() == b'I' {
            return self.template_args();
        }
        Ok(())
    }

    fn encoding(&mut self) -> R {
        self.deeper(Self::encoding_inner)
    }

    fn encoding_inner(&mut self) -> R {
        if self.eof() {
            return Err(());
        }
        if self.pos == 0 {
            self.consume_n(2);
        }
        self.level += 1;
        let c = self.cur();
        if c == b'T' || c == b'G' {
            let r = self.special_name();
            self.level -= 1;
            return r;
        }
        self.name()?;
        while !self.eof() && !b"E.@".contains(&self.cur()) {
            if self.type_().is_err() {
                break;
            }
        }
        if self.cur() == b'.' || self.cur() == b'@' {
            self.len = self.pos;
        }
        self.level -= 1;
        Ok(())
    }
}

/// Demangle like uftrace's simple demangler (`--demangle=full` is
/// `crate::demangle::full`). `None` when the name is not mangled or
/// cannot be parsed.
pub fn demangle(name: &str) -> Option<String> {
    let (prefix, body) = match name.strip_prefix("_GLOBAL__sub_I_") {
        Some(b) => ("_GLOBAL__sub_I_", b),
        None => ("", name),
    };
    if !body.starts_with("_Z") {
        return None;
    }
    let mut d = D {
        s: body.as_bytes(),
        pos: 0,
        len: body.len(),
        out: Vec::new(),
        level: 0,
        ty: 0,
        templates: 0,
        type_info: false,
        first_name: true,
        ignore_disc: false,
        depth: 0,
    };
    if d.encoding().is_err() || d.level != 0 {
        return None;
    }
    if !d.eof() && (!d.type_info || d.name().is_err()) {
        return None;
    }
    let s = String::from_utf8_lossy(&d.out).into_owned();
    Some(format!("{prefix}{s}"))
}

#[cfg(test)]
mod tests {
    use super::demangle;

    fn d(s: &str) -> String {
        demangle(s).unwrap_or_else(|| s.to_string())
    }

    #[test]
    fn simple_names() {
        assert_eq!(
            d("_ZN3geo6shapes6SquareC1Eid"),
            "geo::shapes::Square::Square"
        );
        assert_eq!(
            d("_ZN3geo6shapes6SquareD0Ev"),
            "geo::shapes::Square::~Square"
        );
        assert_eq!(d("_ZNK3geo3VecplERKS0_"), "geo::Vec::operator+");
        assert_eq!(d("_ZN3geo5twiceIiEET_S1_"), "geo::twice");
        assert_eq!(d("_ZZ4mainENKUliiE_clEii"), "main::$_0::operator()");
        assert_eq!(d("_Znwm"), "operator new");
        assert_eq!(d("_ZN12_GLOBAL__N_16hiddenEi"), "_GLOBAL__N_1::hidden");
        assert_eq!(d("_ZN3geo5scaleEd.cold"), "geo::scale");
        assert_eq!(
            d("_Z11count_charsRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEc"),
            "count_chars"
        );
        assert_eq!(d("main"), "main");
        assert_eq!(d("_Z"), "_Z");
    }

    /// Fuzz regression: a Rust `$..$` escape running past the end of its
    /// source name (subtract overflow, then an out-of-range slice).
    #[test]
    fn rust_escape_past_name_end() {
        let crash: &[u8] =
            b"_ZN2v89v89i\0\0\0$GTHandnternal8comiler1Y5JaeHS@Brok\x07te\0RI\x005\x005\0reEv";
        let name = String::from_utf8_lossy(crash);
        let _ = d(&name);
        for n in 1..name.len() {
            if name.is_char_boundary(n) {
                let _ = d(&name[..n]);
            }
        }
        let _ = d("_ZN3a$GTE");
        let _ = d("_ZN4ab$SE");
    }
}
