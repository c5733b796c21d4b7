//! TSDL syntax tree and recursive-descent parser (CTF 1.8.3, section 7).
//!
//! The parser builds a small tree that keeps every position for error
//! messages; meaning (types, scopes, paths) is given in [`super::lower`].
//!
//! Where the grammar needs to know whether an identifier names a type
//! (`uint32_t magic;`), the parser does without a symbol table: in a
//! declaration, the last plain word before `;`, `,`, `[` or `:` is the
//! declarator's name and the words before it are the type. This accepts
//! member names that are also type names or keywords (yactfr does; bt2
//! rejects some of them).

use super::lexer::{Pos, Punct, Tok, Token};
use super::TsdlError;

/// A unary expression value (right-hand side of an attribute, array
/// length, enumerator value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    UInt(u64),
    SInt(i64),
    /// A string or character literal.
    Str(String),
    /// An identifier path (`clock.monotonic.value`, `stream.event.header.id`).
    Path(Vec<String>),
}

impl Value {
    /// The text of a string-like value (literal or path joined with `.`).
    pub fn as_text(&self) -> Option<String> {
        match self {
            Value::Str(s) => Some(s.clone()),
            Value::Path(p) => Some(p.join(".")),
            _ => None,
        }
    }
}

/// A type specifier list (`unsigned long`, `struct foo`, `integer {...}`).
#[derive(Debug, Clone, PartialEq)]
pub struct SpecList {
    pub items: Vec<Spec>,
    pub pos: Pos,
}

/// One item of a specifier list.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    /// A type name word or a C type keyword (`unsigned`, `long`, `const`).
    Word(String),
    Integer(Vec<Entry>),
    Float(Vec<Entry>),
    String(Vec<Entry>),
    Struct {
        name: Option<String>,
        body: Option<Vec<Entry>>,
        align: Option<Value>,
    },
    Variant {
        name: Option<String>,
        tag: Option<Vec<String>>,
        body: Option<Vec<Entry>>,
    },
    Enum {
        name: Option<String>,
        container: Option<Box<SpecList>>,
        body: Option<Vec<Enumerator>>,
    },
}

/// An enumerator: a label and zero, one or two values (a range).
#[derive(Debug, Clone, PartialEq)]
pub struct Enumerator {
    pub label: String,
    pub values: Vec<Value>,
    pub pos: Pos,
}

/// A declarator: a name (absent in abstract declarators) and array
/// dimensions in source order (`x[2][3]`: `[2, 3]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Declarator {
    pub name: Option<String>,
    pub dims: Vec<Value>,
    pub pointers: u32,
    pub pos: Pos,
}

/// The kind of a top-level block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Trace,
    Env,
    Clock,
    Stream,
    Event,
    Callsite,
}

/// An entry of a block, a structure or variant body, or the file.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// `lhs = value;`
    Assign {
        lhs: Vec<String>,
        value: Value,
        pos: Pos,
    },
    /// `lhs := type;`
    TypeAssign {
        lhs: Vec<String>,
        spec: SpecList,
        decl: Option<Declarator>,
        pos: Pos,
    },
    /// A field (struct/variant bodies) or a bare type declaration
    /// (`struct foo {...};`, no declarators).
    Decl {
        spec: SpecList,
        decls: Vec<Declarator>,
        pos: Pos,
    },
    Typedef {
        spec: SpecList,
        decls: Vec<Declarator>,
        pos: Pos,
    },
    Typealias {
        target: SpecList,
        target_decl: Declarator,
        alias: Vec<String>,
        alias_decl: Declarator,
        pos: Pos,
    },
    Block {
        kind: BlockKind,
        body: Vec<Entry>,
        pos: Pos,
    },
}

/// Maximum nesting of braces (bounds the recursion on hostile input).
const MAX_DEPTH: u32 = 200;

pub struct Parser {
    toks: Vec<Token>,
    i: usize,
    depth: u32,
}

impl Parser {
    pub fn new(toks: Vec<Token>) -> Self {
        Parser {
            toks,
            i: 0,
            depth: 0,
        }
    }

    fn peek(&self) -> &Tok {
        &self.toks[self.i.min(self.toks.len() - 1)].tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }

    fn pos(&self) -> Pos {
        self.toks[self.i.min(self.toks.len() - 1)].pos
    }

    fn bump(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
        t
    }

    fn is_punct(&self, p: Punct) -> bool {
        *self.peek() == Tok::Punct(p)
    }

    fn eat(&mut self, p: Punct) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn describe(t: &Tok) -> String {
        match t {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Char(s) => format!("'{s}'"),
            Tok::Punct(p) => format!("`{}`", p.text()),
            Tok::Eof => "end of metadata".to_string(),
        }
    }

    /// `item` when the next token is `p` (taken), else nothing.
    fn after<T>(
        &mut self,
        p: Punct,
        item: impl FnOnce(&mut Self) -> Result<T, TsdlError>,
    ) -> Result<Option<T>, TsdlError> {
        if self.eat(p) {
            item(self).map(Some)
        } else {
            Ok(None)
        }
    }

    /// A struct, variant or enum (`what`) needs a name or a body.
    fn name_or_body<N, B>(
        &self,
        name: &Option<N>,
        body: &Option<B>,
        what: &str,
    ) -> Result<(), TsdlError> {
        if name.is_none() && body.is_none() {
            return Err(self.unexpected(&format!("{what} name or body")));
        }
        Ok(())
    }

    fn unexpected(&self, what: &str) -> TsdlError {
        TsdlError::new(
            self.pos(),
            format!("expected {what}, found {}", Self::describe(self.peek())),
        )
    }

    fn expect(&mut self, p: Punct) -> Result<(), TsdlError> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{}`", p.text())))
        }
    }

    fn ident(&mut self) -> Result<String, TsdlError> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.bump();
                Ok(s)
            }
            _ => Err(self.unexpected("an identifier")),
        }
    }

    fn enter(&mut self) -> Result<(), TsdlError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(TsdlError::new(self.pos(), "nesting too deep"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// The whole file.
    pub fn file(&mut self) -> Result<Vec<Entry>, TsdlError> {
        let mut out = Vec::new();
        while *self.peek() != Tok::Eof {
            if self.eat(Punct::Semicolon) {
                continue;
            }
            out.push(self.top_entry()?);
        }
        Ok(out)
    }

    fn top_entry(&mut self) -> Result<Entry, TsdlError> {
        let pos = self.pos();
        if let Tok::Ident(s) = self.peek() {
            let kind = match s.as_str() {
                "trace" => Some(BlockKind::Trace),
                "env" => Some(BlockKind::Env),
                "clock" => Some(BlockKind::Clock),
                "stream" => Some(BlockKind::Stream),
                "event" => Some(BlockKind::Event),
                "callsite" => Some(BlockKind::Callsite),
                _ => None,
            };
            if let Some(kind) = kind {
                if *self.peek_at(1) == Tok::Punct(Punct::LBrace) {
                    self.bump();
                    self.bump();
                    let body = self.assignments()?;
                    self.expect(Punct::RBrace)?;
                    self.expect(Punct::Semicolon)?;
                    return Ok(Entry::Block { kind, body, pos });
                }
            }
        }
        let e = self.declaration()?;
        self.expect(Punct::Semicolon)?;
        Ok(e)
    }

    /// Entries of an attribute block (`trace {}`, `integer {}`...), up to
    /// the closing brace (not consumed).
    fn assignments(&mut self) -> Result<Vec<Entry>, TsdlError> {
        self.entries(Self::assignment)
    }

    /// `;`-terminated entries read by `entry`, up to the closing brace
    /// (not consumed); empty statements are skipped.
    fn entries(
        &mut self,
        entry: fn(&mut Self) -> Result<Entry, TsdlError>,
    ) -> Result<Vec<Entry>, TsdlError> {
        self.enter()?;
        let mut out = Vec::new();
        loop {
            if self.is_punct(Punct::RBrace) || *self.peek() == Tok::Eof {
                break;
            }
            if self.eat(Punct::Semicolon) {
                continue;
            }
            out.push(entry(self)?);
            self.expect(Punct::Semicolon)?;
        }
        self.leave();
        Ok(out)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == w)
    }

    fn assignment(&mut self) -> Result<Entry, TsdlError> {
        let pos = self.pos();
        if self.is_word("typealias") || self.is_word("typedef") {
            return self.declaration();
        }
        // An attribute: a path, then `=` or `:=`. Otherwise a type
        // declaration (e.g. `struct foo {...};` inside a block).
        let save = self.i;
        if let Ok(lhs) = self.path() {
            if self.eat(Punct::Equal) {
                let value = self.unary()?;
                return Ok(Entry::Assign { lhs, value, pos });
            }
            if self.eat(Punct::TypeAssign) {
                let spec = self.spec_list(true)?;
                let decl = if self.is_punct(Punct::Semicolon) {
                    None
                } else {
                    Some(self.declarator(true)?)
                };
                return Ok(Entry::TypeAssign {
                    lhs,
                    spec,
                    decl,
                    pos,
                });
            }
        }
        self.i = save;
        self.declaration()
    }

    /// `a.b->c` as a list of words (keywords allowed).
    fn path(&mut self) -> Result<Vec<String>, TsdlError> {
        let mut out = vec![self.ident()?];
        while self.is_punct(Punct::Dot) || self.is_punct(Punct::Arrow) {
            if matches!(self.peek_at(1), Tok::Ident(_)) {
                self.bump();
                out.push(self.ident()?);
            } else {
                break;
            }
        }
        Ok(out)
    }

    /// A unary expression: `+`/`-` integer, literal, or path.
    fn unary(&mut self) -> Result<Value, TsdlError> {
        let pos = self.pos();
        match self.peek().clone() {
            Tok::Punct(Punct::Minus) => {
                self.bump();
                match self.unary()? {
                    Value::UInt(v) => Ok(Value::SInt((v as i64).wrapping_neg())),
                    Value::SInt(v) => Ok(Value::SInt(v.wrapping_neg())),
                    _ => Err(TsdlError::new(pos, "`-` applies to integers only")),
                }
            }
            Tok::Punct(Punct::Plus) => {
                self.bump();
                match self.unary()? {
                    v @ (Value::UInt(_) | Value::SInt(_)) => Ok(v),
                    _ => Err(TsdlError::new(pos, "`+` applies to integers only")),
                }
            }
            Tok::Punct(Punct::LParen) => {
                self.bump();
                let v = self.unary()?;
                self.expect(Punct::RParen)?;
                Ok(v)
            }
            Tok::Int(v) => {
                self.bump();
                Ok(Value::UInt(v))
            }
            Tok::Str(s) | Tok::Char(s) => {
                self.bump();
                Ok(Value::Str(s))
            }
            Tok::Ident(_) => Ok(Value::Path(self.path()?)),
            _ => Err(self.unexpected("a value")),
        }
    }

    /// A declaration: typedef, typealias, or specifiers + declarators.
    fn declaration(&mut self) -> Result<Entry, TsdlError> {
        let pos = self.pos();
        if self.is_word("typealias") {
            self.bump();
            let target = self.spec_list(false)?;
            let target_decl = self.abstract_declarator()?;
            self.expect(Punct::TypeAssign)?;
            let mut alias = Vec::new();
            while let Tok::Ident(s) = self.peek().clone() {
                alias.push(s);
                self.bump();
            }
            if alias.is_empty() {
                return Err(self.unexpected("an alias name"));
            }
            let alias_decl = self.abstract_declarator()?;
            return Ok(Entry::Typealias {
                target,
                target_decl,
                alias,
                alias_decl,
                pos,
            });
        }
        let mut typedef = false;
        if self.is_word("typedef") {
            self.bump();
            typedef = true;
        }
        let spec = self.spec_list(true)?;
        let mut decls = Vec::new();
        if !self.is_punct(Punct::Semicolon) {
            loop {
                decls.push(self.declarator(true)?);
                if !self.eat(Punct::Comma) {
                    break;
                }
            }
        }
        // `typedef` may also follow the first specifiers (`int typedef x;`).
        if typedef {
            Ok(Entry::Typedef { spec, decls, pos })
        } else {
            Ok(Entry::Decl { spec, decls, pos })
        }
    }

    /// A specifier list. With `named_decl`, a trailing plain word that is
    /// followed by a declarator end (`;`, `,`, `[`, `:`, `)`) is left for
    /// the declarator.
    fn spec_list(&mut self, named_decl: bool) -> Result<SpecList, TsdlError> {
        let pos = self.pos();
        let mut items = Vec::new();
        while let Tok::Ident(w) = self.peek().clone() {
            match w.as_str() {
                "integer" | "floating_point" if self.peek_at(1) == &Tok::Punct(Punct::LBrace) => {
                    self.bump();
                    self.bump();
                    let body = self.assignments()?;
                    self.expect(Punct::RBrace)?;
                    items.push(if w == "integer" {
                        Spec::Integer(body)
                    } else {
                        Spec::Float(body)
                    });
                }
                "string" => {
                    self.bump();
                    let body = if self.eat(Punct::LBrace) {
                        let b = self.assignments()?;
                        self.expect(Punct::RBrace)?;
                        b
                    } else {
                        Vec::new()
                    };
                    items.push(Spec::String(body));
                }
                "struct" => {
                    self.bump();
                    items.push(self.struct_spec()?);
                }
                "variant" => {
                    self.bump();
                    items.push(self.variant_spec()?);
                }
                "enum" => {
                    self.bump();
                    items.push(self.enum_spec()?);
                }
                "typedef" | "typealias" => break,
                _ => {
                    // A word: type keyword or type name, unless it is the
                    // declarator's name.
                    if named_decl && !items.is_empty() {
                        let next = self.peek_at(1);
                        let ends = matches!(
                            next,
                            Tok::Punct(
                                Punct::Semicolon
                                    | Punct::Comma
                                    | Punct::LBracket
                                    | Punct::Colon
                                    | Punct::RParen
                            )
                        );
                        if ends {
                            break;
                        }
                    }
                    self.bump();
                    items.push(Spec::Word(w));
                }
            }
        }
        if items.is_empty() {
            return Err(self.unexpected("a type"));
        }
        Ok(SpecList { items, pos })
    }

    fn struct_spec(&mut self) -> Result<Spec, TsdlError> {
        let name = self.opt_ident();
        let body = self.opt_body()?;
        let mut align = None;
        if self.is_word("align") && self.peek_at(1) == &Tok::Punct(Punct::LParen) {
            self.bump();
            self.bump();
            align = Some(self.unary()?);
            self.expect(Punct::RParen)?;
        }
        self.name_or_body(&name, &body, "a structure")?;
        Ok(Spec::Struct { name, body, align })
    }

    fn variant_spec(&mut self) -> Result<Spec, TsdlError> {
        let name = self.opt_ident();
        let tag = self.after(Punct::Lt, |p| {
            let tag = p.path()?;
            p.expect(Punct::Gt)?;
            Ok(tag)
        })?;
        let body = self.opt_body()?;
        self.name_or_body(&name, &body, "a variant")?;
        Ok(Spec::Variant { name, tag, body })
    }

    fn enum_spec(&mut self) -> Result<Spec, TsdlError> {
        let name = self.opt_ident();
        let container = self.after(Punct::Colon, |p| Ok(Box::new(p.spec_list(false)?)))?;
        let mut body = None;
        if self.eat(Punct::LBrace) {
            self.enter()?;
            let mut list = Vec::new();
            loop {
                if self.is_punct(Punct::RBrace) {
                    break;
                }
                let pos = self.pos();
                let label = match self.bump() {
                    Tok::Ident(s) | Tok::Str(s) | Tok::Char(s) => s,
                    _ => {
                        self.i -= 1;
                        return Err(self.unexpected("an enumerator"));
                    }
                };
                let mut values = Vec::new();
                if self.eat(Punct::Equal) {
                    values.push(self.unary()?);
                    if self.eat(Punct::Ellipsis) {
                        values.push(self.unary()?);
                    }
                }
                list.push(Enumerator { label, values, pos });
                if !self.eat(Punct::Comma) {
                    break;
                }
            }
            self.expect(Punct::RBrace)?;
            self.leave();
            body = Some(list);
        }
        self.name_or_body(&name, &body, "an enumeration")?;
        Ok(Spec::Enum {
            name,
            container,
            body,
        })
    }

    /// The identifier that comes next, if one does (consumed).
    fn opt_ident(&mut self) -> Option<String> {
        let Tok::Ident(s) = self.peek().clone() else {
            return None;
        };
        self.bump();
        Some(s)
    }

    /// A structure or variant body in braces, if one comes next.
    fn opt_body(&mut self) -> Result<Option<Vec<Entry>>, TsdlError> {
        if !self.eat(Punct::LBrace) {
            return Ok(None);
        }
        let body = self.body()?;
        self.expect(Punct::RBrace)?;
        Ok(Some(body))
    }

    /// Structure or variant body, up to `}` (not consumed).
    fn body(&mut self) -> Result<Vec<Entry>, TsdlError> {
        self.entries(Self::declaration)
    }

    fn dims(&mut self, d: &mut Declarator) -> Result<(), TsdlError> {
        while self.eat(Punct::LBracket) {
            if self.eat(Punct::RBracket) {
                return Err(TsdlError::new(self.pos(), "array without a length"));
            }
            d.dims.push(self.unary()?);
            self.expect(Punct::RBracket)?;
        }
        Ok(())
    }

    fn pointers(&mut self) -> u32 {
        let mut n = 0;
        while self.eat(Punct::Star) {
            n += 1;
            while self.is_word("const") {
                self.bump();
            }
        }
        n
    }

    /// Where a declarator starts, and its pointers (`*`, `* const`).
    fn declarator_start(&mut self) -> Declarator {
        let pos = self.pos();
        let pointers = self.pointers();
        Declarator {
            name: None,
            dims: Vec::new(),
            pointers,
            pos,
        }
    }

    /// A named declarator (`x`, `x[4]`, `*p`, `(x)[2]`).
    fn declarator(&mut self, need_name: bool) -> Result<Declarator, TsdlError> {
        let mut d = self.declarator_start();
        let pos = d.pos;
        if self.eat(Punct::LParen) {
            let inner = self.declarator(need_name)?;
            self.expect(Punct::RParen)?;
            d.name = inner.name;
            d.pointers += inner.pointers;
            self.dims(&mut d)?;
            // C order: the outer dimensions come first.
            d.dims.extend(inner.dims);
        } else {
            match self.peek().clone() {
                Tok::Ident(s) => {
                    self.bump();
                    d.name = Some(s);
                }
                _ if need_name => return Err(self.unexpected("a field name")),
                _ => {}
            }
            self.dims(&mut d)?;
        }
        if self.eat(Punct::Colon) {
            return Err(TsdlError::new(pos, "bit-fields are not supported"));
        }
        Ok(d)
    }

    /// An abstract declarator (typealias sides): pointers and dimensions,
    /// no name.
    fn abstract_declarator(&mut self) -> Result<Declarator, TsdlError> {
        let mut d = self.declarator_start();
        self.dims(&mut d)?;
        Ok(d)
    }
}

/// Parse TSDL tokens into entries.
pub fn parse(toks: Vec<Token>) -> Result<Vec<Entry>, TsdlError> {
    Parser::new(toks).file()
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokenize;
    use super::*;

    fn p(s: &str) -> Vec<Entry> {
        parse(tokenize(s.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn fields_and_aliases() {
        let e = p("typealias integer { size = 8; } := unsigned char;
             struct s { unsigned char a, b[4]; uint8_t len; uint8_t seq[len]; } align(8);");
        assert_eq!(e.len(), 2);
        let Entry::Typealias { alias, .. } = &e[0] else {
            panic!()
        };
        assert_eq!(alias, &["unsigned".to_string(), "char".to_string()]);
        let Entry::Decl { spec, decls, .. } = &e[1] else {
            panic!()
        };
        assert!(decls.is_empty());
        let Spec::Struct {
            body: Some(body),
            align,
            ..
        } = &spec.items[0]
        else {
            panic!()
        };
        assert_eq!(align, &Some(Value::UInt(8)));
        assert_eq!(body.len(), 3);
        let Entry::Decl { spec, decls, .. } = &body[0] else {
            panic!()
        };
        assert_eq!(spec.items.len(), 2);
        assert_eq!(decls[1].dims, vec![Value::UInt(4)]);
    }

    #[test]
    fn blocks_and_variants() {
        let e = p("stream { id = 0; event.header := struct {
               enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
               variant <id> { struct { uint27_t timestamp; } compact; } v; } align(8); };");
        let Entry::Block { kind, body, .. } = &e[0] else {
            panic!()
        };
        assert_eq!(*kind, BlockKind::Stream);
        assert!(matches!(&body[1], Entry::TypeAssign { lhs, .. } if lhs == &["event", "header"]));
    }

    #[test]
    fn errors_have_positions() {
        let err = parse(tokenize(b"trace {\n  major = ;\n};").unwrap()).unwrap_err();
        assert_eq!((err.pos.line, err.pos.col), (2, 11));
    }
}
