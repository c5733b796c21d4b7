//! Parser of Itanium C++ ABI mangled names into a tree of [`Node`]s kept
//! in one arena (`Vec<Node>`, addressed by [`Id`]).
//!
//! The tree has the shape libstdc++'s demangler gives it, because the
//! printer reproduces that demangler's output: substitution candidates
//! are recorded at the same points (so `S_`/`S<n>_` resolve to the same
//! nodes), a constructor or destructor names the last source name seen,
//! member-function qualifiers wrap the name they apply to, and template
//! parameters stay unresolved until printing.
//!
//! Hostile input is bounded: recursion depth, arena size and every
//! number are checked; any failure gives up on the whole name.

/// Index of a node in the arena.
pub(super) type Id = u32;

/// Most nested parse calls before giving up.
const MAX_DEPTH: u32 = 1024;

/// An operator of the `<operator-name>` table: mangled code, printed
/// name (a trailing space is dropped after `operator`), operand count.
#[derive(Debug)]
pub(super) struct Op {
    pub code: &'static [u8; 2],
    pub name: &'static str,
    pub args: u8,
}

macro_rules! ops {
    ($($code:literal $name:literal $args:literal,)*) => {
        &[$(Op { code: $code, name: $name, args: $args },)*]
    };
}

/// Sorted by code.
pub(super) static OPS: &[Op] = ops![
    b"aN" "&=" 2, b"aS" "=" 2, b"aa" "&&" 2, b"ad" "&" 1, b"an" "&" 2,
    b"at" "alignof " 1, b"aw" "co_await " 1, b"az" "alignof " 1,
    b"cc" "const_cast" 2, b"cl" "()" 2, b"cm" "," 2, b"co" "~" 1,
    b"dV" "/=" 2, b"dX" "[...]=" 3, b"da" "delete[] " 1, b"dc" "dynamic_cast" 2,
    b"de" "*" 1, b"di" "=" 2, b"dl" "delete " 1, b"ds" ".*" 2, b"dt" "." 2,
    b"dv" "/" 2, b"dx" "]=" 2, b"eO" "^=" 2, b"eo" "^" 2, b"eq" "==" 2,
    b"fL" "..." 3, b"fR" "..." 3, b"fl" "..." 2, b"fr" "..." 2,
    b"ge" ">=" 2, b"gs" "::" 1, b"gt" ">" 2, b"ix" "[]" 2, b"lS" "<<=" 2,
    b"le" "<=" 2, b"li" "operator\"\" " 1, b"ls" "<<" 2, b"lt" "<" 2,
    b"mI" "-=" 2, b"mL" "*=" 2, b"mi" "-" 2, b"ml" "*" 2, b"mm" "--" 1,
    b"na" "new[]" 3, b"ne" "!=" 2, b"ng" "-" 1, b"nt" "!" 1, b"nw" "new" 3,
    b"nx" "noexcept" 1, b"oR" "|=" 2, b"oo" "||" 2, b"or" "|" 2,
    b"pL" "+=" 2, b"pl" "+" 2, b"pm" "->*" 2, b"pp" "++" 1, b"ps" "+" 1,
    b"pt" "->" 2, b"qu" "?" 3, b"rM" "%=" 2, b"rS" ">>=" 2,
    b"rc" "reinterpret_cast" 2, b"rm" "%" 2, b"rs" ">>" 2,
    b"sP" "sizeof..." 1, b"sZ" "sizeof..." 1, b"sc" "static_cast" 2,
    b"ss" "<=>" 2, b"st" "sizeof " 1, b"sz" "sizeof " 1, b"tr" "throw" 0,
    b"tw" "throw " 1,
];

/// How a builtin type prints a literal of itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lit {
    /// `(type)digits`
    Default,
    Int,
    Unsigned,
    Long,
    UnsignedLong,
    LongLong,
    UnsignedLongLong,
    Bool,
    /// `(type)[hex]`
    Float,
    Void,
}

/// A builtin type: printed name and literal style.
#[derive(Debug)]
pub(super) struct Builtin {
    pub name: &'static str,
    pub lit: Lit,
}

macro_rules! b {
    ($name:literal, $lit:ident) => {
        Builtin {
            name: $name,
            lit: Lit::$lit,
        }
    };
}

/// Builtin type of a lower-case letter code.
fn builtin(c: u8) -> Option<&'static Builtin> {
    static T: [Builtin; 21] = [
        b!("signed char", Default),
        b!("bool", Bool),
        b!("char", Default),
        b!("double", Float),
        b!("long double", Float),
        b!("float", Float),
        b!("__float128", Float),
        b!("unsigned char", Default),
        b!("int", Int),
        b!("unsigned int", Unsigned),
        b!("long", Long),
        b!("unsigned long", UnsignedLong),
        b!("__int128", Default),
        b!("unsigned __int128", Default),
        b!("short", Default),
        b!("unsigned short", Default),
        b!("void", Void),
        b!("wchar_t", Default),
        b!("long long", LongLong),
        b!("unsigned long long", UnsignedLongLong),
        b!("...", Default),
    ];
    let i = match c {
        b'a'..=b'j' => c - b'a',
        b'l'..=b'o' => c - b'a' - 1,
        b's' | b't' => c - b's' + 14,
        b'v' | b'w' | b'x' | b'y' | b'z' => c - b'v' + 16,
        _ => return None,
    };
    T.get(i as usize)
}

/// Builtin type of `D<c>`.
fn builtin_d(c: u8) -> Option<&'static Builtin> {
    static T: [Builtin; 8] = [
        b!("decimal32", Default),
        b!("decimal64", Default),
        b!("decimal128", Default),
        b!("half", Float),
        b!("char8_t", Default),
        b!("char16_t", Default),
        b!("char32_t", Default),
        b!("decltype(nullptr)", Default),
    ];
    let i = match c {
        b'f' => 0,
        b'd' => 1,
        b'e' => 2,
        b'h' => 3,
        b'u' => 4,
        b's' => 5,
        b'i' => 6,
        b'n' => 7,
        _ => return None,
    };
    Some(&T[i])
}

/// The `decltype(nullptr)` builtin (a literal of it may have no value).
pub(super) fn is_nullptr_type(b: &Builtin) -> bool {
    b.name == "decltype(nullptr)"
}

/// A standard abbreviation (`St`, `Sa`, `Sb`, `Ss`, `Si`, `So`, `Sd`):
/// the short and the full spelling, and the name a following
/// constructor or destructor takes.
#[derive(Debug)]
pub(super) struct Abbrev {
    pub code: u8,
    pub simple: &'static str,
    pub full: &'static str,
    pub last_name: Option<&'static str>,
}

static ABBREVS: [Abbrev; 7] = [
    Abbrev {
        code: b't',
        simple: "std",
        full: "std",
        last_name: None,
    },
    Abbrev {
        code: b'a',
        simple: "std::allocator",
        full: "std::allocator",
        last_name: Some("allocator"),
    },
    Abbrev {
        code: b'b',
        simple: "std::basic_string",
        full: "std::basic_string",
        last_name: Some("basic_string"),
    },
    Abbrev {
        code: b's',
        simple: "std::string",
        full: "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
        last_name: Some("basic_string"),
    },
    Abbrev {
        code: b'i',
        simple: "std::istream",
        full: "std::basic_istream<char, std::char_traits<char> >",
        last_name: Some("basic_istream"),
    },
    Abbrev {
        code: b'o',
        simple: "std::ostream",
        full: "std::basic_ostream<char, std::char_traits<char> >",
        last_name: Some("basic_ostream"),
    },
    Abbrev {
        code: b'd',
        simple: "std::iostream",
        full: "std::basic_iostream<char, std::char_traits<char> >",
        last_name: Some("basic_iostream"),
    },
];

/// Type modifiers and qualifiers that wrap one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ModKind {
    Pointer,
    LRef,
    RRef,
    Complex,
    Imaginary,
    Restrict,
    Volatile,
    Const,
    /// Qualifiers of a member function (`this`), printed after the
    /// parameter list.
    RestrictThis,
    VolatileThis,
    ConstThis,
    LRefThis,
    RRefThis,
    TransactionSafe,
}

impl ModKind {
    /// Qualifiers that belong to a function type, not to a value.
    pub(super) fn is_fnqual(self) -> bool {
        matches!(
            self,
            ModKind::RestrictThis
                | ModKind::VolatileThis
                | ModKind::ConstThis
                | ModKind::LRefThis
                | ModKind::RRefThis
                | ModKind::TransactionSafe
        )
    }

    /// Plain cv-qualifiers of a type.
    pub(super) fn is_cv(self) -> bool {
        matches!(self, ModKind::Restrict | ModKind::Volatile | ModKind::Const)
    }
}

/// A node of the demangled tree.
#[derive(Debug, Clone)]
pub(super) enum Node<'a> {
    /// A source name.
    Name(&'a [u8]),
    /// A name made up by the demangler (`std`, `auto`, `string literal`,
    /// `(anonymous namespace)`).
    Text(&'static str),
    /// A standard abbreviation, in its short or full spelling.
    Std(&'static str),
    Builtin(&'static Builtin),
    Qual(Id, Id),
    Local(Id, Id),
    DefaultArg(i64, Id),
    Template(Id, Id),
    /// Template arguments (or an argument pack).
    TArgs(Vec<Id>),
    /// Function parameters or an expression list.
    Args(Vec<Id>),
    /// A function: its name and its type.
    Typed(Id, Id),
    Function {
        ret: Option<Id>,
        params: Id,
    },
    Op(&'static Op),
    ExtOp(Id),
    Conversion(Id),
    Cast(Id),
    Ctor(Id),
    Dtor(Id),
    Tagged(Id, Id),
    Lambda(Id, i64),
    Unnamed(i64),
    Clone(Id, &'a [u8]),
    /// `vtable for X` and the like: prefix text and the named entity.
    Special(&'static str, Id),
    /// `construction vtable for BASE-in-DERIVED`.
    CtorVtable(Id, Id),
    /// `reference temporary #N for NAME`.
    RefTemp(Id, i64),
    TParam(i64),
    FParam(i64),
    Mod(ModKind, Id),
    /// `noexcept` / `noexcept(expr)` on a function type.
    Noexcept(Id, Option<Id>),
    /// `throw(types)` on a function type.
    Throw(Id, Id),
    VendorQual(Id, Id),
    Vendor(Id),
    Array(Option<Id>, Id),
    PtrMem(Id, Id),
    Vector(Id, Id),
    Pack(Id),
    Decltype(Id),
    Nullary(Id),
    Unary(Id, Id),
    /// Postfix `x++` / `x--`.
    Suffix(Id, Id),
    Binary(Id, Id, Id),
    /// `a ? b : c`, folds with an initial value, designated ranges.
    Trinary(Id, Id, Id, Id),
    /// `new (placement) type (init)`: operator, placement list, type,
    /// initializer list (if any).
    New(Id, Id, Id, Option<Id>),
    Literal(Id, &'a [u8], bool),
    InitList(Option<Id>, Id),
    Number(i64),
}

pub(super) struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    pub nodes: Vec<Node<'a>>,
    subs: Vec<Id>,
    last_name: Option<Id>,
    is_expression: bool,
    is_conversion: bool,
    depth: u32,
    max_nodes: usize,
    /// `sr` handling: 1 = try the newer mangling, -1 = it was tried
    /// (a failed parse should be retried with 0), 0 = older mangling.
    pub unresolved: i8,
}

type P<T> = Option<T>;

fn is_digit(c: u8) -> bool {
    c.is_ascii_digit()
}

impl<'a> Parser<'a> {
    pub fn new(s: &'a [u8]) -> Parser<'a> {
        Parser {
            s,
            pos: 0,
            nodes: Vec::new(),
            subs: Vec::new(),
            last_name: None,
            is_expression: false,
            is_conversion: false,
            depth: 0,
            max_nodes: 4 * s.len() + 64,
            unresolved: 1,
        }
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn peek(&self) -> u8 {
        self.s.get(self.pos).copied().unwrap_or(0)
    }

    fn peek2(&self) -> u8 {
        if self.peek() == 0 {
            return 0;
        }
        self.s.get(self.pos + 1).copied().unwrap_or(0)
    }

    fn next(&mut self) -> u8 {
        let c = self.peek();
        if c != 0 {
            self.pos += 1;
        }
        c
    }

    fn check(&mut self, c: u8) -> P<()> {
        if self.peek() == c {
            self.pos += 1;
            Some(())
        } else {
            None
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.check(c).is_some()
    }

    fn add(&mut self, n: Node<'a>) -> P<Id> {
        if self.nodes.len() >= self.max_nodes {
            return None;
        }
        self.nodes.push(n);
        Some((self.nodes.len() - 1) as Id)
    }

    fn sub(&mut self, id: Id) -> P<()> {
        if self.subs.len() > self.s.len() {
            return None;
        }
        self.subs.push(id);
        Some(())
    }

    fn enter(&mut self) -> P<()> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        Some(())
    }

    fn leave<T>(&mut self, r: P<T>) -> P<T> {
        self.depth -= 1;
        r
    }

    /// `[n] <digits>`, `None` on overflow.
    fn number(&mut self) -> P<i64> {
        let neg = self.eat(b'n');
        let mut v: i64 = 0;
        while is_digit(self.peek()) {
            v = v
                .checked_mul(10)?
                .checked_add((self.next() - b'0') as i64)?;
            if v > i32::MAX as i64 {
                return None;
            }
        }
        Some(if neg { -v } else { v })
    }

    /// `_` = 0, `<number>_` = number + 1.
    fn compact_number(&mut self) -> P<i64> {
        let n = match self.peek() {
            b'_' => 0,
            b'n' => return None,
            _ => self.number()?.checked_add(1)?,
        };
        self.check(b'_')?;
        Some(n)
    }

    /// `_Z <encoding> [clone suffixes]` or a bare type (what
    /// `__cxa_demangle` accepts); also `_GLOBAL_[._$][DI]_<name>`.
    pub fn top(&mut self) -> P<Id> {
        let s = self.s;
        if s.starts_with(b"_Z") {
            self.pos = 2;
            let mut e = self.encoding(true)?;
            while self.peek() == b'.'
                && (self.peek2().is_ascii_lowercase()
                    || self.peek2() == b'_'
                    || is_digit(self.peek2()))
            {
                e = self.clone_suffix(e)?;
            }
            return Some(e);
        }
        if s.len() > 11
            && s.starts_with(b"_GLOBAL_")
            && matches!(s[8], b'.' | b'_' | b'$')
            && matches!(s[9], b'D' | b'I')
            && s[10] == b'_'
        {
            let what = if s[9] == b'I' {
                "global constructors keyed to "
            } else {
                "global destructors keyed to "
            };
            let rest = &s[11..];
            let inner = if rest.starts_with(b"_Z") {
                // only the encoding: libstdc++ skips whatever follows it
                // (a clone suffix such as `.cold` is not printed)
                let mut p = Parser::new(rest);
                p.pos = 2;
                let id = p.encoding(true)?;
                // move the inner tree into this arena
                let base = self.nodes.len() as Id;
                for n in p.nodes {
                    let n = shift(n, base);
                    self.add(n)?;
                }
                id + base
            } else {
                self.add(Node::Name(rest))?
            };
            self.pos = s.len();
            return self.add(Node::Special(what, inner));
        }
        self.type_()
    }

    fn clone_suffix(&mut self, e: Id) -> P<Id> {
        let start = self.pos;
        let mut p = self.pos + 1;
        let s = self.s;
        if p < s.len() && (s[p].is_ascii_lowercase() || s[p] == b'_') {
            p += 1;
            while p < s.len() && (s[p].is_ascii_lowercase() || s[p] == b'_') {
                p += 1;
            }
        }
        while p + 1 < s.len() && s[p] == b'.' && is_digit(s[p + 1]) {
            p += 2;
            while p < s.len() && is_digit(s[p]) {
                p += 1;
            }
        }
        self.pos = p;
        self.add(Node::Clone(e, &s[start..p]))
    }

    fn encoding(&mut self, top: bool) -> P<Id> {
        self.enter()?;
        let r = self.encoding_inner(top);
        self.leave(r)
    }

    fn encoding_inner(&mut self, top: bool) -> P<Id> {
        let c = self.peek();
        if c == b'G' || c == b'T' {
            return self.special_name();
        }
        let name = self.name(false)?;
        let c = self.peek();
        if c == 0 || c == b'E' {
            return Some(name);
        }
        let ret = self.has_return_type(name);
        let ft = self.bare_function_type(ret)?;
        if !top {
            if let Node::Local(..) = self.nodes[name as usize] {
                if let Node::Function { ret, .. } = &mut self.nodes[ft as usize] {
                    *ret = None;
                }
            }
        }
        self.add(Node::Typed(name, ft))
    }

    fn has_return_type(&self, id: Id) -> bool {
        match self.nodes[id as usize] {
            Node::Local(_, e) => self.has_return_type(e),
            Node::Template(n, _) => !self.is_ctor_dtor_conv(n),
            Node::Mod(k, inner) if k.is_fnqual() => self.has_return_type(inner),
            Node::Noexcept(inner, _) | Node::Throw(inner, _) => self.has_return_type(inner),
            _ => false,
        }
    }

    fn is_ctor_dtor_conv(&self, id: Id) -> bool {
        match self.nodes[id as usize] {
            Node::Qual(_, n) | Node::Local(_, n) => self.is_ctor_dtor_conv(n),
            Node::Ctor(_) | Node::Dtor(_) | Node::Conversion(_) => true,
            _ => false,
        }
    }

    fn special_name(&mut self) -> P<Id> {
        if self.eat(b'T') {
            let (what, inner) = match self.next() {
                b'V' => ("vtable for ", self.type_()?),
                b'T' => ("VTT for ", self.type_()?),
                b'I' => ("typeinfo for ", self.type_()?),
                b'S' => ("typeinfo name for ", self.type_()?),
                b'h' => {
                    self.call_offset(b'h')?;
                    ("non-virtual thunk to ", self.encoding(false)?)
                }
                b'v' => {
                    self.call_offset(b'v')?;
                    ("virtual thunk to ", self.encoding(false)?)
                }
                b'c' => {
                    self.call_offset(0)?;
                    self.call_offset(0)?;
                    ("covariant return thunk to ", self.encoding(false)?)
                }
                b'C' => {
                    let derived = self.type_()?;
                    if self.number()? < 0 {
                        return None;
                    }
                    self.check(b'_')?;
                    let base = self.type_()?;
                    return self.add(Node::CtorVtable(base, derived));
                }
                b'F' => ("typeinfo fn for ", self.type_()?),
                b'J' => ("java Class for ", self.type_()?),
                b'H' => ("TLS init function for ", self.name(false)?),
                b'W' => ("TLS wrapper function for ", self.name(false)?),
                b'A' => ("template parameter object for ", self.template_arg()?),
                _ => return None,
            };
            return self.add(Node::Special(what, inner));
        }
        if self.eat(b'G') {
            let (what, inner) = match self.next() {
                b'V' => ("guard variable for ", self.name(false)?),
                b'R' => {
                    let n = self.name(false)?;
                    let num = self.number()?;
                    return self.add(Node::RefTemp(n, num));
                }
                b'A' => ("hidden alias for ", self.encoding(false)?),
                b'T' => match self.next() {
                    b'n' => ("non-transaction clone for ", self.encoding(false)?),
                    _ => ("transaction clone for ", self.encoding(false)?),
                },
                _ => return None,
            };
            return self.add(Node::Special(what, inner));
        }
        None
    }

    fn call_offset(&mut self, c: u8) -> P<()> {
        let c = if c == 0 { self.next() } else { c };
        match c {
            b'h' => {
                self.number()?;
            }
            b'v' => {
                self.number()?;
                self.check(b'_')?;
                self.number()?;
            }
            _ => return None,
        }
        self.check(b'_')
    }

    /// `<name>`; `substable`: the whole name is a substitution candidate
    /// (a class or enum type).
    fn name(&mut self, substable: bool) -> P<Id> {
        self.enter()?;
        let r = self.name_inner(substable);
        self.leave(r)
    }

    fn name_inner(&mut self, substable: bool) -> P<Id> {
        let mut from_sub = false;
        let mut dc = match self.peek() {
            b'N' => self.nested_name()?,
            b'Z' => self.local_name()?,
            b'U' => self.unqualified_name(None)?,
            b'S' => {
                if self.peek2() == b't' {
                    self.pos += 2;
                    let std = self.add(Node::Text("std"))?;
                    if self.peek() == b'S' {
                        return None;
                    }
                    self.unqualified_name(Some(std))?
                } else {
                    from_sub = true;
                    self.substitution(false)?
                }
            }
            _ => self.unqualified_name(None)?,
        };
        if self.peek() == b'I' {
            if !from_sub {
                self.sub(dc)?;
            }
            let args = self.template_args()?;
            dc = self.add(Node::Template(dc, args))?;
            from_sub = false;
        }
        if substable && !from_sub {
            self.sub(dc)?;
        }
        Some(dc)
    }

    fn nested_name(&mut self) -> P<Id> {
        self.check(b'N')?;
        let quals = self.cv_qualifiers_list(true)?;
        let rq = match self.peek() {
            b'R' => {
                self.pos += 1;
                Some(ModKind::LRefThis)
            }
            b'O' => {
                self.pos += 1;
                Some(ModKind::RRefThis)
            }
            _ => None,
        };
        let mut ret = self.prefix(true)?;
        self.check(b'E')?;
        ret = self.wrap_quals(ret, &quals)?;
        if let Some(k) = rq {
            ret = self.add(Node::Mod(k, ret))?;
        }
        Some(ret)
    }

    /// `<prefix>` up to (not including) its last component; every
    /// component before the last is a substitution candidate when
    /// `substable`.
    fn prefix(&mut self, substable: bool) -> P<Id> {
        let mut ret: Option<Id> = None;
        loop {
            let c = self.peek();
            if c == b'D' && (self.peek2() == b'T' || self.peek2() == b't') {
                if ret.is_some() {
                    return None;
                }
                ret = Some(self.type_()?);
            } else if c == b'I' {
                let r = ret?;
                let args = self.template_args()?;
                ret = Some(self.add(Node::Template(r, args))?);
            } else if c == b'T' {
                if ret.is_some() {
                    return None;
                }
                ret = Some(self.template_param()?);
            } else if c == b'M' {
                self.pos += 1;
                continue;
            } else if c == b'S' {
                if ret.is_some() {
                    return None;
                }
                ret = Some(self.substitution(true)?);
                continue;
            } else {
                ret = Some(self.unqualified_name(ret)?);
            }
            if self.peek() == b'E' {
                break;
            }
            if substable {
                self.sub(ret?)?;
            }
        }
        ret
    }

    fn unqualified_name(&mut self, scope: Option<Id>) -> P<Id> {
        let c = self.peek();
        let mut ret = if is_digit(c) {
            self.source_name()?
        } else if c.is_ascii_lowercase() {
            let was = self.is_expression;
            if c == b'o' && self.peek2() == b'n' {
                self.pos += 2;
                self.is_expression = false;
            }
            let r = self.operator_name();
            self.is_expression = was;
            let r = r?;
            if let Node::Op(op) = self.nodes[r as usize] {
                if op.code == b"li" {
                    let n = self.source_name()?;
                    let u = self.add(Node::Unary(r, n))?;
                    return self.finish_unqualified(u, scope);
                }
            }
            r
        } else if c == b'D' && self.peek2() == b'C' {
            return None;
        } else if c == b'C' || c == b'D' {
            self.ctor_dtor_name()?
        } else if c == b'L' {
            self.pos += 1;
            let n = self.source_name()?;
            self.discriminator()?;
            n
        } else if c == b'U' {
            match self.peek2() {
                b'l' => self.lambda()?,
                b't' => self.unnamed_type()?,
                _ => return None,
            }
        } else {
            return None;
        };
        ret = self.finish_unqualified(ret, None)?;
        match scope {
            Some(s) => self.add(Node::Qual(s, ret)),
            None => Some(ret),
        }
    }

    fn finish_unqualified(&mut self, mut ret: Id, scope: Option<Id>) -> P<Id> {
        if self.peek() == b'B' {
            let hold = self.last_name;
            while self.eat(b'B') {
                let tag = self.source_name()?;
                ret = self.add(Node::Tagged(ret, tag))?;
            }
            self.last_name = hold;
        }
        match scope {
            Some(s) => self.add(Node::Qual(s, ret)),
            None => Some(ret),
        }
    }

    fn source_name(&mut self) -> P<Id> {
        let len = self.number()?;
        if len <= 0 {
            return None;
        }
        let len = len as usize;
        let start = self.pos;
        let end = start.checked_add(len)?;
        if end > self.s.len() {
            return None;
        }
        self.pos = end;
        let id = &self.s[start..end];
        let n = if len >= 10
            && id.starts_with(b"_GLOBAL_")
            && matches!(id[8], b'.' | b'_' | b'$')
            && id[9] == b'N'
        {
            self.add(Node::Text("(anonymous namespace)"))?
        } else {
            self.add(Node::Name(id))?
        };
        self.last_name = Some(n);
        Some(n)
    }

    fn discriminator(&mut self) -> P<()> {
        if !self.eat(b'_') {
            return Some(());
        }
        let two = self.eat(b'_');
        let n = self.number()?;
        if n < 0 {
            return None;
        }
        if two && n >= 10 {
            self.check(b'_')?;
        }
        Some(())
    }

    fn ctor_dtor_name(&mut self) -> P<Id> {
        let last = self.last_name?;
        match self.peek() {
            b'C' => {
                let inheriting = self.peek2() == b'I';
                if inheriting {
                    self.pos += 1;
                }
                if !matches!(self.peek2(), b'1'..=b'5') {
                    return None;
                }
                self.pos += 2;
                if inheriting {
                    self.type_()?;
                }
                self.add(Node::Ctor(last))
            }
            b'D' => {
                if !matches!(self.peek2(), b'0' | b'1' | b'2' | b'4' | b'5') {
                    return None;
                }
                self.pos += 2;
                self.add(Node::Dtor(last))
            }
            _ => None,
        }
    }

    fn lambda(&mut self) -> P<Id> {
        self.pos += 2;
        let params = self.parmlist()?;
        self.check(b'E')?;
        let num = self.compact_number()?;
        self.add(Node::Lambda(params, num))
    }

    fn unnamed_type(&mut self) -> P<Id> {
        self.pos += 2;
        let num = self.compact_number()?;
        let u = self.add(Node::Unnamed(num))?;
        self.sub(u)?;
        Some(u)
    }

    fn operator_name(&mut self) -> P<Id> {
        let c1 = self.next();
        let c2 = self.next();
        if c1 == b'v' && is_digit(c2) {
            let n = self.source_name()?;
            return self.add(Node::ExtOp(n));
        }
        if c1 == b'c' && c2 == b'v' {
            let was = self.is_conversion;
            self.is_conversion = !self.is_expression;
            let t = self.type_();
            let conv = self.is_conversion;
            self.is_conversion = was;
            let t = t?;
            return self.add(if conv {
                Node::Conversion(t)
            } else {
                Node::Cast(t)
            });
        }
        let code = [c1, c2];
        let i = OPS.binary_search_by(|o| o.code.cmp(&code)).ok()?;
        self.add(Node::Op(&OPS[i]))
    }

    fn local_name(&mut self) -> P<Id> {
        self.check(b'Z')?;
        let func = self.encoding(false)?;
        self.check(b'E')?;
        let entity = if self.eat(b's') {
            self.discriminator()?;
            self.add(Node::Text("string literal"))?
        } else {
            let mut num = -1;
            if self.eat(b'd') {
                num = self.compact_number()?;
            }
            let n = self.name(false)?;
            if !matches!(self.nodes[n as usize], Node::Lambda(..) | Node::Unnamed(_)) {
                self.discriminator()?;
            }
            if num >= 0 {
                self.add(Node::DefaultArg(num, n))?
            } else {
                n
            }
        };
        if let Node::Typed(_, ft) = self.nodes[func as usize] {
            if let Node::Function { ret, .. } = &mut self.nodes[ft as usize] {
                *ret = None;
            }
        }
        self.add(Node::Local(func, entity))
    }

    fn substitution(&mut self, prefix: bool) -> P<Id> {
        self.check(b'S')?;
        let c = self.next();
        if c == b'_' || is_digit(c) || c.is_ascii_uppercase() {
            let mut id: usize = 0;
            if c != b'_' {
                let mut c = c;
                loop {
                    let d = if is_digit(c) {
                        c - b'0'
                    } else if c.is_ascii_uppercase() {
                        c - b'A' + 10
                    } else {
                        return None;
                    };
                    id = id.checked_mul(36)?.checked_add(d as usize)?;
                    if id > self.subs.len() {
                        return None;
                    }
                    c = self.next();
                    if c == b'_' {
                        break;
                    }
                }
                id += 1;
            }
            return self.subs.get(id).copied();
        }
        let verbose = prefix && matches!(self.peek(), b'C' | b'D');
        let a = ABBREVS.iter().find(|a| a.code == c)?;
        if let Some(l) = a.last_name {
            self.last_name = Some(self.add(Node::Std(l))?);
        }
        let mut dc = self.add(Node::Std(if verbose { a.full } else { a.simple }))?;
        if self.peek() == b'B' {
            // an abbreviation with ABI tags is a candidate itself
            dc = self.finish_unqualified(dc, None)?;
            self.sub(dc)?;
        }
        Some(dc)
    }

    fn template_args(&mut self) -> P<Id> {
        let hold = self.last_name;
        if !matches!(self.peek(), b'I' | b'J') {
            return None;
        }
        self.pos += 1;
        let mut args = Vec::new();
        if !self.eat(b'E') {
            loop {
                args.push(self.template_arg()?);
                if self.eat(b'E') {
                    break;
                }
            }
        }
        self.last_name = hold;
        self.add(Node::TArgs(args))
    }

    fn template_arg(&mut self) -> P<Id> {
        self.enter()?;
        let r = match self.peek() {
            b'X' => {
                self.pos += 1;
                let e = self.expression();
                e.and_then(|e| self.check(b'E').map(|_| e))
            }
            b'L' => self.expr_primary(),
            b'I' | b'J' => self.template_args(),
            _ => self.type_(),
        };
        self.leave(r)
    }

    fn template_param(&mut self) -> P<Id> {
        self.check(b'T')?;
        let n = self.compact_number()?;
        self.add(Node::TParam(n))
    }

    /// `r V K` and the `D` exception-spec qualifiers; returns them in
    /// mangled (outermost first) order with their operands.
    fn cv_qualifiers_list(&mut self, member_fn: bool) -> P<Vec<(ModKind, Option<Id>, u8)>> {
        let mut out = Vec::new();
        loop {
            let c = self.peek();
            let k = match c {
                b'r' => {
                    if member_fn {
                        ModKind::RestrictThis
                    } else {
                        ModKind::Restrict
                    }
                }
                b'V' => {
                    if member_fn {
                        ModKind::VolatileThis
                    } else {
                        ModKind::Volatile
                    }
                }
                b'K' => {
                    if member_fn {
                        ModKind::ConstThis
                    } else {
                        ModKind::Const
                    }
                }
                b'D' if matches!(self.peek2(), b'x' | b'o' | b'O' | b'w') => {
                    self.pos += 1;
                    match self.peek() {
                        b'x' => ModKind::TransactionSafe,
                        b'o' => {
                            self.pos += 1;
                            out.push((ModKind::TransactionSafe, None, b'o'));
                            continue;
                        }
                        b'O' => {
                            self.pos += 1;
                            let e = self.expression()?;
                            self.check(b'E')?;
                            out.push((ModKind::TransactionSafe, Some(e), b'o'));
                            continue;
                        }
                        _ => {
                            self.pos += 1;
                            let l = self.parmlist()?;
                            self.check(b'E')?;
                            out.push((ModKind::TransactionSafe, Some(l), b'w'));
                            continue;
                        }
                    }
                }
                _ => break,
            };
            self.pos += 1;
            out.push((k, None, 0));
        }
        if !member_fn && self.peek() == b'F' {
            for q in out.iter_mut() {
                q.0 = match q.0 {
                    ModKind::Restrict => ModKind::RestrictThis,
                    ModKind::Volatile => ModKind::VolatileThis,
                    ModKind::Const => ModKind::ConstThis,
                    k => k,
                };
            }
        }
        Some(out)
    }

    /// Wrap `inner` in qualifiers given outermost first.
    fn wrap_quals(&mut self, mut inner: Id, quals: &[(ModKind, Option<Id>, u8)]) -> P<Id> {
        for &(k, arg, tag) in quals.iter().rev() {
            inner = match tag {
                b'o' => self.add(Node::Noexcept(inner, arg))?,
                b'w' => self.add(Node::Throw(inner, arg?))?,
                _ => self.add(Node::Mod(k, inner))?,
            };
        }
        Some(inner)
    }

    fn next_is_qual(&self) -> bool {
        match self.peek() {
            b'r' | b'V' | b'K' => true,
            b'D' => matches!(self.peek2(), b'x' | b'o' | b'O' | b'w'),
            _ => false,
        }
    }

    pub fn type_(&mut self) -> P<Id> {
        self.enter()?;
        let r = self.type_inner();
        self.leave(r)
    }

    fn type_inner(&mut self) -> P<Id> {
        if self.next_is_qual() {
            let quals = self.cv_qualifiers_list(false)?;
            let inner = if self.peek() == b'F' {
                self.function_type()?
            } else {
                self.type_()?
            };
            // a ref-qualifier of a function goes outside its cv-qualifiers
            let ret = if let Node::Mod(k @ (ModKind::LRefThis | ModKind::RRefThis), f) =
                self.nodes[inner as usize]
            {
                let q = self.wrap_quals(f, &quals)?;
                self.add(Node::Mod(k, q))?
            } else {
                self.wrap_quals(inner, &quals)?
            };
            self.sub(ret)?;
            return Some(ret);
        }
        let c = self.peek();
        let mut can_sub = true;
        let ret = match c {
            b'a'..=b'z' if c != b'u' && builtin(c).is_some() => {
                self.pos += 1;
                can_sub = false;
                self.add(Node::Builtin(builtin(c)?))?
            }
            b'u' => {
                self.pos += 1;
                let n = self.source_name()?;
                self.add(Node::Vendor(n))?
            }
            b'F' => self.function_type()?,
            b'0'..=b'9' | b'N' | b'Z' => {
                can_sub = false;
                self.name(true)?
            }
            b'A' => self.array_type()?,
            b'M' => self.ptr_to_member_type()?,
            b'T' => {
                let mut t = self.template_param()?;
                if self.peek() == b'I' {
                    if !self.is_conversion {
                        self.sub(t)?;
                        let args = self.template_args()?;
                        t = self.add(Node::Template(t, args))?;
                    } else {
                        let save = (self.pos, self.nodes.len(), self.subs.len(), self.last_name);
                        let args = self.template_args()?;
                        if self.peek() == b'I' {
                            self.sub(t)?;
                            t = self.add(Node::Template(t, args))?;
                        } else {
                            self.pos = save.0;
                            self.nodes.truncate(save.1);
                            self.subs.truncate(save.2);
                            self.last_name = save.3;
                        }
                    }
                }
                t
            }
            b'S' => {
                let n = self.peek2();
                if is_digit(n) || n == b'_' || n.is_ascii_uppercase() {
                    let mut t = self.substitution(false)?;
                    if self.peek() == b'I' {
                        let args = self.template_args()?;
                        t = self.add(Node::Template(t, args))?;
                    } else {
                        can_sub = false;
                    }
                    t
                } else {
                    can_sub = false;
                    self.name(true)?
                }
            }
            b'O' | b'P' | b'R' | b'C' | b'G' => {
                self.pos += 1;
                let k = match c {
                    b'O' => ModKind::RRef,
                    b'P' => ModKind::Pointer,
                    b'R' => ModKind::LRef,
                    b'C' => ModKind::Complex,
                    _ => ModKind::Imaginary,
                };
                let t = self.type_()?;
                self.add(Node::Mod(k, t))?
            }
            b'U' => {
                self.pos += 1;
                let mut n = self.source_name()?;
                if self.peek() == b'I' {
                    let args = self.template_args()?;
                    n = self.add(Node::Template(n, args))?;
                }
                let t = self.type_()?;
                self.add(Node::VendorQual(t, n))?
            }
            b'D' => {
                can_sub = false;
                self.pos += 1;
                match self.next() {
                    b'T' | b't' => {
                        let e = self.expression()?;
                        self.check(b'E')?;
                        can_sub = true;
                        self.add(Node::Decltype(e))?
                    }
                    b'p' => {
                        let t = self.type_()?;
                        can_sub = true;
                        self.add(Node::Pack(t))?
                    }
                    b'a' => self.add(Node::Text("auto"))?,
                    b'c' => self.add(Node::Text("decltype(auto)"))?,
                    b'v' => {
                        can_sub = true;
                        self.vector_type()?
                    }
                    c => self.add(Node::Builtin(builtin_d(c)?))?,
                }
            }
            _ => return None,
        };
        if can_sub {
            self.sub(ret)?;
        }
        Some(ret)
    }

    fn function_type(&mut self) -> P<Id> {
        self.enter()?;
        let r = self.function_type_inner();
        self.leave(r)
    }

    fn function_type_inner(&mut self) -> P<Id> {
        self.check(b'F')?;
        self.eat(b'Y');
        let mut f = self.bare_function_type(true)?;
        match self.peek() {
            b'R' => {
                self.pos += 1;
                f = self.add(Node::Mod(ModKind::LRefThis, f))?;
            }
            b'O' => {
                self.pos += 1;
                f = self.add(Node::Mod(ModKind::RRefThis, f))?;
            }
            _ => {}
        }
        self.check(b'E')?;
        Some(f)
    }

    fn bare_function_type(&mut self, mut has_ret: bool) -> P<Id> {
        if self.eat(b'J') {
            has_ret = true;
        }
        let ret = if has_ret { Some(self.type_()?) } else { None };
        let params = self.parmlist()?;
        self.add(Node::Function { ret, params })
    }

    fn parmlist(&mut self) -> P<Id> {
        let mut list = Vec::new();
        loop {
            let c = self.peek();
            if c == 0 || c == b'E' || c == b'.' {
                break;
            }
            if (c == b'R' || c == b'O') && self.peek2() == b'E' {
                break;
            }
            list.push(self.type_()?);
        }
        if list.is_empty() {
            return None;
        }
        if list.len() == 1 {
            if let Node::Builtin(b) = self.nodes[list[0] as usize] {
                if b.lit == Lit::Void {
                    list.clear();
                }
            }
        }
        self.add(Node::Args(list))
    }

    fn array_type(&mut self) -> P<Id> {
        self.check(b'A')?;
        let dim = if self.peek() == b'_' {
            None
        } else if is_digit(self.peek()) {
            let start = self.pos;
            while is_digit(self.peek()) {
                self.pos += 1;
            }
            Some(self.add(Node::Name(&self.s[start..self.pos]))?)
        } else {
            Some(self.expression()?)
        };
        self.check(b'_')?;
        let t = self.type_()?;
        self.add(Node::Array(dim, t))
    }

    fn vector_type(&mut self) -> P<Id> {
        let dim = if self.eat(b'_') {
            self.expression()?
        } else {
            let n = self.number()?;
            self.add(Node::Number(n))?
        };
        self.check(b'_')?;
        let t = self.type_()?;
        self.add(Node::Vector(dim, t))
    }

    fn ptr_to_member_type(&mut self) -> P<Id> {
        self.check(b'M')?;
        let class = self.type_()?;
        let member = self.type_()?;
        self.add(Node::PtrMem(class, member))
    }

    fn expr_primary(&mut self) -> P<Id> {
        self.check(b'L')?;
        let ret = if self.peek() == b'_' || self.peek() == b'Z' {
            // an encoding (`L_Z...E`, or `LZ...E` from an old g++)
            if !self.eat(b'_') {
                // fine: `LZ`
            }
            self.check(b'Z')?;
            self.encoding(false)?
        } else {
            let t = self.type_()?;
            if let Node::Builtin(b) = self.nodes[t as usize] {
                if is_nullptr_type(b) && self.eat(b'E') {
                    return Some(t);
                }
            }
            let neg = self.eat(b'n');
            let start = self.pos;
            while self.peek() != b'E' {
                if self.peek() == 0 {
                    return None;
                }
                self.pos += 1;
            }
            let digits = &self.s[start..self.pos];
            self.add(Node::Literal(t, digits, neg))?
        };
        self.check(b'E')?;
        Some(ret)
    }

    /// `sr ...`: `T::x`, `A::B::x`, `A<T>::x` in an expression. The
    /// newer mangling (`sr <qualifier levels> E <name>`) is tried first;
    /// [`Parser::unresolved`] tells when a retry with the older one
    /// (`sr <type> <name>`) is worth it.
    fn unresolved_name(&mut self) -> P<Id> {
        self.pos += 2;
        let c = self.peek();
        let scope = if self.unresolved != 0
            && (is_digit(c) || c.is_ascii_lowercase() || matches!(c, b'C' | b'U' | b'L'))
        {
            self.unresolved = -1;
            let t = self.prefix(false)?;
            self.eat(b'E');
            t
        } else {
            self.type_()?
        };
        let mut n = self.unqualified_name(None)?;
        if self.peek() == b'I' {
            let args = self.template_args()?;
            n = self.add(Node::Template(n, args))?;
        }
        self.add(Node::Qual(scope, n))
    }

    fn exprlist(&mut self, end: u8) -> P<Id> {
        let mut list = Vec::new();
        if !self.eat(end) {
            loop {
                list.push(self.expression()?);
                if self.eat(end) {
                    break;
                }
            }
        }
        self.add(Node::Args(list))
    }

    pub fn expression(&mut self) -> P<Id> {
        self.enter()?;
        let was = self.is_expression;
        self.is_expression = true;
        let r = self.expression_inner();
        self.is_expression = was;
        self.leave(r)
    }

    fn expression_inner(&mut self) -> P<Id> {
        let c = self.peek();
        let c2 = self.peek2();
        if c == b'L' {
            return self.expr_primary();
        }
        if c == b'T' {
            return self.template_param();
        }
        if c == b's' && c2 == b'r' {
            return self.unresolved_name();
        }
        if c == b's' && c2 == b'p' {
            self.pos += 2;
            let e = self.expression()?;
            return self.add(Node::Pack(e));
        }
        if c == b'f' && c2 == b'p' {
            self.pos += 2;
            let idx = if self.eat(b'T') {
                0
            } else {
                self.compact_number()?.checked_add(1)?
            };
            return self.add(Node::FParam(idx));
        }
        if is_digit(c) || (c == b'o' && c2 == b'n') {
            if c == b'o' {
                self.pos += 2;
            }
            let n = self.unqualified_name(None)?;
            if self.peek() == b'I' {
                let args = self.template_args()?;
                return self.add(Node::Template(n, args));
            }
            return Some(n);
        }
        if (c == b'i' || c == b't') && c2 == b'l' {
            self.pos += 2;
            let t = if c == b't' { Some(self.type_()?) } else { None };
            if self.peek() == 0 || self.peek2() == 0 {
                return None;
            }
            let l = self.exprlist(b'E')?;
            return self.add(Node::InitList(t, l));
        }
        let op = self.operator_name()?;
        let (code, args) = match self.nodes[op as usize] {
            Node::Op(o) => {
                if o.code == b"st" {
                    let t = self.type_()?;
                    return self.add(Node::Unary(op, t));
                }
                (Some(o.code), o.args)
            }
            Node::ExtOp(_) => (None, 1),
            Node::Cast(_) => (None, 1),
            _ => return None,
        };
        match args {
            0 => self.add(Node::Nullary(op)),
            1 => {
                let is_cast = matches!(self.nodes[op as usize], Node::Cast(_));
                let suffix = matches!(code, Some(b"pp") | Some(b"mm")) && !self.eat(b'_');
                let arg = if is_cast && self.eat(b'_') {
                    self.exprlist(b'E')?
                } else if code == Some(b"sP") {
                    let hold = self.last_name;
                    let mut list = Vec::new();
                    while !self.eat(b'E') {
                        list.push(self.template_arg()?);
                    }
                    self.last_name = hold;
                    self.add(Node::TArgs(list))?
                } else {
                    self.expression()?
                };
                if suffix {
                    self.add(Node::Suffix(op, arg))
                } else {
                    self.add(Node::Unary(op, arg))
                }
            }
            2 => {
                let code = code?;
                let left = if is_new_cast(code) {
                    self.type_()?
                } else if code[0] == b'f' {
                    self.operator_name()?
                } else if code == b"di" {
                    self.unqualified_name(None)?
                } else {
                    self.expression()?
                };
                let right = if code == b"cl" {
                    self.exprlist(b'E')?
                } else if code == b"dt" || code == b"pt" {
                    let (a, b) = (self.peek(), self.peek2());
                    if (a == b'g' && b == b's') || (a == b's' && b == b'r') {
                        self.expression()?
                    } else {
                        let n = self.unqualified_name(None)?;
                        if self.peek() == b'I' {
                            let args = self.template_args()?;
                            self.add(Node::Template(n, args))?
                        } else {
                            n
                        }
                    }
                } else {
                    self.expression()?
                };
                self.add(Node::Binary(op, left, right))
            }
            3 => {
                let code = code?;
                if code == b"qu" || code == b"dX" {
                    let a = self.expression()?;
                    let b = self.expression()?;
                    let c = self.expression()?;
                    self.add(Node::Trinary(op, a, b, c))
                } else if code[0] == b'f' {
                    let a = self.operator_name()?;
                    let b = self.expression()?;
                    let c = self.expression()?;
                    self.add(Node::Trinary(op, a, b, c))
                } else if code == b"nw" || code == b"na" {
                    let place = self.exprlist(b'_')?;
                    let t = self.type_()?;
                    let init = if self.eat(b'E') {
                        None
                    } else if self.peek() == b'p' && self.peek2() == b'i' {
                        self.pos += 2;
                        Some(self.exprlist(b'E')?)
                    } else if self.peek() == b'i' && self.peek2() == b'l' {
                        Some(self.expression()?)
                    } else {
                        return None;
                    };
                    self.add(Node::New(op, place, t, init))
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

/// `dc`, `sc`, `cc`, `rc`: printed `name<type>(expr)`.
pub(super) fn is_new_cast(code: &[u8; 2]) -> bool {
    matches!(code, b"dc" | b"sc" | b"cc" | b"rc")
}

/// Offset every node reference of `n` by `base` (moving a tree into
/// another arena).
fn shift(n: Node<'_>, base: Id) -> Node<'_> {
    let s = |i: Id| i + base;
    let o = |i: Option<Id>| i.map(|i| i + base);
    let v = |l: Vec<Id>| l.into_iter().map(|i| i + base).collect();
    match n {
        Node::Qual(a, b) => Node::Qual(s(a), s(b)),
        Node::Local(a, b) => Node::Local(s(a), s(b)),
        Node::DefaultArg(n, a) => Node::DefaultArg(n, s(a)),
        Node::Template(a, b) => Node::Template(s(a), s(b)),
        Node::TArgs(l) => Node::TArgs(v(l)),
        Node::Args(l) => Node::Args(v(l)),
        Node::Typed(a, b) => Node::Typed(s(a), s(b)),
        Node::Function { ret, params } => Node::Function {
            ret: o(ret),
            params: s(params),
        },
        Node::ExtOp(a) => Node::ExtOp(s(a)),
        Node::Conversion(a) => Node::Conversion(s(a)),
        Node::Cast(a) => Node::Cast(s(a)),
        Node::Ctor(a) => Node::Ctor(s(a)),
        Node::Dtor(a) => Node::Dtor(s(a)),
        Node::Tagged(a, b) => Node::Tagged(s(a), s(b)),
        Node::Lambda(a, n) => Node::Lambda(s(a), n),
        Node::Clone(a, t) => Node::Clone(s(a), t),
        Node::Special(t, a) => Node::Special(t, s(a)),
        Node::CtorVtable(a, b) => Node::CtorVtable(s(a), s(b)),
        Node::RefTemp(a, n) => Node::RefTemp(s(a), n),
        Node::Mod(k, a) => Node::Mod(k, s(a)),
        Node::Noexcept(a, b) => Node::Noexcept(s(a), o(b)),
        Node::Throw(a, b) => Node::Throw(s(a), s(b)),
        Node::VendorQual(a, b) => Node::VendorQual(s(a), s(b)),
        Node::Vendor(a) => Node::Vendor(s(a)),
        Node::Array(a, b) => Node::Array(o(a), s(b)),
        Node::PtrMem(a, b) => Node::PtrMem(s(a), s(b)),
        Node::Vector(a, b) => Node::Vector(s(a), s(b)),
        Node::Pack(a) => Node::Pack(s(a)),
        Node::Decltype(a) => Node::Decltype(s(a)),
        Node::Nullary(a) => Node::Nullary(s(a)),
        Node::Unary(a, b) => Node::Unary(s(a), s(b)),
        Node::Suffix(a, b) => Node::Suffix(s(a), s(b)),
        Node::Binary(a, b, c) => Node::Binary(s(a), s(b), s(c)),
        Node::Trinary(a, b, c, d) => Node::Trinary(s(a), s(b), s(c), s(d)),
        Node::New(a, b, c, d) => Node::New(s(a), s(b), s(c), o(d)),
        Node::Literal(a, t, neg) => Node::Literal(s(a), t, neg),
        Node::InitList(a, b) => Node::InitList(o(a), s(b)),
        n => n,
    }
}
