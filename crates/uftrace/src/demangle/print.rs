//! Printing a parsed name the way libstdc++'s `__cxa_demangle` prints it.
//!
//! C++ declarator syntax is inside out (`int (*f())[3]`), so types are
//! printed with a stack of pending *modifiers*: a pointer, reference or
//! qualifier is pushed while the type under it prints, and written after
//! it unless a function or array type under it took it into its
//! parentheses (`int (*)()`, `char (&) [4]`). A function's name and its
//! `const`/`&` qualifiers travel the same way, so that a return type that
//! is itself a function pointer wraps the name. Template parameters are
//! resolved while printing, against the template arguments of the
//! enclosing function template.
//!
//! Work is bounded: a node may be on the print stack at most twice,
//! nesting is limited, and the output has a maximum size.

use super::parse::{is_new_cast, is_nullptr_type, Id, Lit, ModKind, Node};

/// Largest demangled name produced; beyond it the name is given up on.
const MAX_OUT: usize = 64 * 1024;
/// Deepest print nesting.
const MAX_NESTING: u32 = 1024;

/// A pending modifier (an element of a linked list kept in an arena, so
/// that callers can hold on to a list while new ones are pushed).
#[derive(Clone, Copy)]
struct Pending {
    node: Id,
    printed: bool,
    /// The template scope when it was pushed.
    templates: Option<usize>,
    next: Option<usize>,
}

/// A template scope: the template whose arguments `T_` refers to.
#[derive(Clone, Copy)]
struct Scope {
    template: Id,
    next: Option<usize>,
}

struct Printer<'n, 'a> {
    nodes: &'n [Node<'a>],
    out: Vec<u8>,
    last_char: u8,
    error: bool,
    pending: Vec<Pending>,
    modifiers: Option<usize>,
    scopes: Vec<Scope>,
    templates: Option<usize>,
    current_template: Option<Id>,
    lambda_arg: u32,
    pack_index: i64,
    printing: Vec<u8>,
    nesting: u32,
}

/// Print the tree rooted at `root`; `None` when it cannot be printed
/// (an unresolved template parameter, too deep, too long).
pub(super) fn print(nodes: &[Node<'_>], root: Id) -> Option<String> {
    let mut p = Printer {
        nodes,
        out: Vec::new(),
        last_char: 0,
        error: false,
        pending: Vec::new(),
        modifiers: None,
        scopes: Vec::new(),
        templates: None,
        current_template: None,
        lambda_arg: 0,
        pack_index: 0,
        printing: vec![0; nodes.len()],
        nesting: 0,
    };
    p.comp(root);
    if p.error {
        return None;
    }
    String::from_utf8(p.out).ok()
}

fn is_fnqual(n: &Node<'_>) -> bool {
    match n {
        Node::Mod(k, _) => k.is_fnqual(),
        Node::Noexcept(..) | Node::Throw(..) => true,
        _ => false,
    }
}

/// The node a function qualifier applies to.
fn fnqual_inner(n: &Node<'_>) -> Option<Id> {
    match *n {
        Node::Mod(k, i) if k.is_fnqual() => Some(i),
        Node::Noexcept(i, _) | Node::Throw(i, _) => Some(i),
        _ => None,
    }
}

impl<'n, 'a> Printer<'n, 'a> {
    fn node(&self, id: Id) -> &'n Node<'a> {
        &self.nodes[id as usize]
    }

    fn put(&mut self, s: &[u8]) {
        if self.out.len() + s.len() > MAX_OUT {
            self.error = true;
            return;
        }
        if let Some(&c) = s.last() {
            self.last_char = c;
        }
        self.out.extend_from_slice(s);
    }

    fn ch(&mut self, c: u8) {
        self.put(&[c]);
    }

    fn num(&mut self, n: i64) {
        self.put(n.to_string().as_bytes());
    }

    /// The last character written; a separator taken back by [`list`]
    /// still counts (so `A<B<int>, >` with an empty pack ends in `>>`).
    fn last(&self) -> u8 {
        self.last_char
    }

    fn push_mod(&mut self, node: Id) -> usize {
        self.pending.push(Pending {
            node,
            printed: false,
            templates: self.templates,
            next: self.modifiers,
        });
        let i = self.pending.len() - 1;
        self.modifiers = Some(i);
        i
    }

    fn push_scope(&mut self, template: Id) {
        self.scopes.push(Scope {
            template,
            next: self.templates,
        });
        self.templates = Some(self.scopes.len() - 1);
    }

    /// Print one node, with the guards against runaway recursion.
    /// `<ARGS>`, spaced so that no `<<` or `>>` appears.
    fn template_args(&mut self, args: Id) {
        if self.last() == b'<' {
            self.ch(b' ');
        }
        self.ch(b'<');
        self.comp(args);
        if self.last() == b'>' {
            self.ch(b' ');
        }
        self.ch(b'>');
    }

    fn comp(&mut self, id: Id) {
        if self.error {
            return;
        }
        let i = id as usize;
        if self.printing[i] > 1 || self.nesting >= MAX_NESTING {
            self.error = true;
            return;
        }
        self.printing[i] += 1;
        self.nesting += 1;
        self.comp_inner(id);
        self.printing[i] -= 1;
        self.nesting -= 1;
    }

    fn comp_inner(&mut self, id: Id) {
        match *self.node(id) {
            Node::Name(s) => self.put(s),
            Node::Text(s) | Node::Std(s) => self.put(s.as_bytes()),
            Node::Builtin(b) => self.put(b.name.as_bytes()),
            Node::Qual(a, b) | Node::Local(a, b) => {
                self.comp(a);
                self.put(b"::");
                self.default_arg_then(b);
            }
            Node::DefaultArg(..) => self.error = true,
            Node::Typed(name, ft) => self.typed_name(name, ft),
            Node::Function { ret, .. } => {
                if let Some(r) = ret {
                    let m = self.push_mod(id);
                    self.comp(r);
                    self.modifiers = self.pending[m].next;
                    let printed = self.pending[m].printed;
                    self.pending.truncate(m);
                    if printed {
                        return;
                    }
                    self.ch(b' ');
                }
                self.function_type(id, self.modifiers);
            }
            Node::Array(_, elem) => self.array(id, elem),
            Node::Mod(k, inner) => self.modifier(id, k, inner),
            Node::PtrMem(_, inner)
            | Node::Vector(_, inner)
            | Node::Noexcept(inner, _)
            | Node::Throw(inner, _)
            | Node::VendorQual(inner, _) => self.wrap(id, inner),
            Node::Vendor(n) => self.comp(n),
            Node::Template(name, args) => {
                let hold_cur = self.current_template.replace(id);
                let hold = self.modifiers.take();
                self.comp(name);
                self.template_args(args);
                self.modifiers = hold;
                self.current_template = hold_cur;
            }
            Node::TArgs(ref l) | Node::Args(ref l) => {
                let l = l.clone();
                self.list(&l);
            }
            Node::Op(op) => {
                self.put(b"operator");
                if op.name.as_bytes()[0].is_ascii_lowercase() {
                    self.ch(b' ');
                }
                self.put(op.name.trim_end_matches(' ').as_bytes());
            }
            Node::ExtOp(n) => {
                self.put(b"operator ");
                self.comp(n);
            }
            Node::Conversion(t) => {
                self.put(b"operator ");
                self.conversion(t);
            }
            Node::Cast(_) => self.error = true,
            Node::Ctor(n) => self.comp(n),
            Node::Dtor(n) => {
                self.ch(b'~');
                self.comp(n);
            }
            Node::Tagged(n, t) => {
                self.comp(n);
                self.put(b"[abi:");
                self.comp(t);
                self.ch(b']');
            }
            Node::Lambda(params, num) => {
                self.put(b"{lambda(");
                self.lambda_arg += 1;
                self.comp(params);
                self.lambda_arg -= 1;
                self.put(b")#");
                self.num(num + 1);
                self.ch(b'}');
            }
            Node::Unnamed(num) => {
                self.put(b"{unnamed type#");
                self.num(num + 1);
                self.ch(b'}');
            }
            Node::Clone(e, suffix) => {
                self.comp(e);
                self.put(b" [clone ");
                self.put(suffix);
                self.ch(b']');
            }
            Node::Special(what, e) => {
                self.put(what.as_bytes());
                self.comp(e);
            }
            Node::CtorVtable(base, derived) => {
                self.put(b"construction vtable for ");
                self.comp(base);
                self.put(b"-in-");
                self.comp(derived);
            }
            Node::RefTemp(n, num) => {
                self.put(b"reference temporary #");
                self.num(num);
                self.put(b" for ");
                self.comp(n);
            }
            Node::TParam(n) => self.template_param(n),
            Node::FParam(n) => {
                if n == 0 {
                    self.put(b"this");
                } else {
                    self.put(b"{parm#");
                    self.num(n);
                    self.ch(b'}');
                }
            }
            Node::Pack(inner) => self.pack(inner),
            Node::Decltype(e) => {
                self.put(b"decltype (");
                self.comp(e);
                self.ch(b')');
            }
            Node::Nullary(op) => self.expr_op(op),
            Node::Unary(op, arg) => self.unary(op, arg),
            Node::Suffix(op, arg) => {
                self.subexpr(arg);
                self.expr_op(op);
            }
            Node::Binary(op, l, r) => self.binary(op, l, r),
            Node::Trinary(op, a, b, c) => self.trinary(op, a, b, c),
            Node::New(_, place, ty, init) => {
                self.put(b"new ");
                if matches!(self.node(place), Node::Args(l) if !l.is_empty()) {
                    self.subexpr(place);
                    self.ch(b' ');
                }
                self.comp(ty);
                if let Some(i) = init {
                    self.subexpr(i);
                }
            }
            Node::Literal(ty, digits, neg) => self.literal(ty, digits, neg),
            Node::InitList(ty, list) => {
                if let Some(t) = ty {
                    self.comp(t);
                }
                self.ch(b'{');
                self.comp(list);
                self.ch(b'}');
            }
            Node::Number(n) => self.num(n),
        }
    }

    /// The right side of a qualified or local name, with its default
    /// argument scope.
    fn default_arg_then(&mut self, b: Id) {
        if let Node::DefaultArg(n, sub) = *self.node(b) {
            self.put(b"{default arg#");
            self.num(n + 1);
            self.put(b"}::");
            self.comp(sub);
        } else {
            self.comp(b);
        }
    }

    /// Comma-separated list; a separator is taken back when everything
    /// after it printed nothing (empty argument packs).
    fn list(&mut self, l: &[Id]) {
        let Some((&first, rest)) = l.split_first() else {
            return;
        };
        self.comp(first);
        let mut commas = Vec::with_capacity(rest.len());
        for &a in rest {
            commas.push(self.out.len());
            self.put(b", ");
            self.comp(a);
        }
        for &c in commas.iter().rev() {
            if self.out.len() == c + 2 {
                self.out.truncate(c);
            } else {
                break;
            }
        }
    }

    /// A function (its name with member qualifiers travels down as
    /// modifiers so the type can place it).
    fn typed_name(&mut self, name: Id, ft: Id) {
        let hold = self.modifiers.take();
        let mark = self.pending.len();
        let mut pushed: Vec<usize> = Vec::new();
        let mut typed = name;
        loop {
            if pushed.len() >= 4 {
                self.error = true;
                self.pending.truncate(mark);
                self.modifiers = hold;
                return;
            }
            pushed.push(self.push_mod(typed));
            match fnqual_inner(self.node(typed)) {
                Some(i) => typed = i,
                None => break,
            }
        }
        if let Node::Local(_, r) = *self.node(typed) {
            let mut r = r;
            if let Node::DefaultArg(_, sub) = *self.node(r) {
                r = sub;
            }
            while let Some(i) = fnqual_inner(self.node(r)) {
                if pushed.len() >= 4 {
                    self.error = true;
                    self.pending.truncate(mark);
                    self.modifiers = hold;
                    return;
                }
                pushed.push(self.push_mod(r));
                r = i;
            }
            // a template local entity scopes the function type
            typed = r;
        }
        let hold_t = self.templates;
        if let Node::Template(..) = self.node(typed) {
            self.push_scope(typed);
        }
        self.comp(ft);
        self.templates = hold_t;
        for &m in pushed.iter().rev() {
            if !self.pending[m].printed {
                self.ch(b' ');
                let n = self.pending[m].node;
                self.print_mod(n);
            }
        }
        self.pending.truncate(mark);
        self.modifiers = hold;
    }

    /// A pointer, reference or qualifier around `inner`.
    fn modifier(&mut self, id: Id, k: ModKind, inner: Id) {
        let mut inner = inner;
        let mut id = id;
        if k.is_cv() {
            // the same qualifier pushed twice (through arrays) prints once
            let mut p = self.modifiers;
            while let Some(i) = p {
                let m = self.pending[i];
                if !m.printed {
                    let Node::Mod(mk, _) = *self.node(m.node) else {
                        break;
                    };
                    if !mk.is_cv() {
                        break;
                    }
                    // a qualifier already pending prints once (through
                    // arrays, or a template argument that has it)
                    if mk == k {
                        self.comp(inner);
                        return;
                    }
                }
                p = m.next;
            }
        }
        if matches!(k, ModKind::LRef | ModKind::RRef) {
            // reference collapsing through a template parameter
            let mut sub = inner;
            if let (&Node::TParam(n), 0) = (self.node(inner), self.lambda_arg) {
                match self.lookup(n) {
                    Some(a) => sub = a,
                    None => {
                        self.error = true;
                        return;
                    }
                }
            }
            match *self.node(sub) {
                Node::Mod(ModKind::LRef, _) => {
                    id = sub;
                    if let Node::Mod(_, i) = *self.node(sub) {
                        inner = i;
                    }
                }
                Node::Mod(sk, si) if sk == k => {
                    id = sub;
                    inner = si;
                }
                Node::Mod(ModKind::RRef, si) => inner = si,
                _ => {}
            }
        }
        self.wrap(id, inner);
    }

    /// Push `id` as a modifier, print `inner`, then the modifier if
    /// nothing under it took it.
    fn wrap(&mut self, id: Id, inner: Id) {
        let hold = self.modifiers;
        let m = self.push_mod(id);
        self.comp(inner);
        let printed = self.pending[m].printed;
        self.pending.truncate(m);
        self.modifiers = hold;
        if !printed {
            self.print_mod(id);
        }
    }

    fn array(&mut self, id: Id, elem: Id) {
        let hold = self.modifiers;
        let mark = self.pending.len();
        let first = self.push_mod(id);
        // qualifiers of the array apply to its elements
        let mut extra = Vec::new();
        let mut p = hold;
        while let Some(i) = p {
            let m = self.pending[i];
            if !matches!(self.node(m.node), Node::Mod(k, _) if k.is_cv()) {
                break;
            }
            if !m.printed {
                if extra.len() + 1 >= 4 {
                    self.error = true;
                    self.pending.truncate(mark);
                    self.modifiers = hold;
                    return;
                }
                self.pending.push(Pending {
                    next: self.modifiers,
                    ..m
                });
                self.modifiers = Some(self.pending.len() - 1);
                self.pending[i].printed = true;
                extra.push(m.node);
            }
            p = m.next;
        }
        self.comp(elem);
        self.modifiers = hold;
        let printed = self.pending[first].printed;
        self.pending.truncate(mark);
        if printed {
            return;
        }
        for &n in extra.iter().rev() {
            self.print_mod(n);
        }
        self.array_type(id, self.modifiers);
    }

    /// Write a modifier after what it modifies.
    fn print_mod(&mut self, id: Id) {
        match *self.node(id) {
            Node::Mod(k, _) => {
                let s: &[u8] = match k {
                    ModKind::Restrict | ModKind::RestrictThis => b" restrict",
                    ModKind::Volatile | ModKind::VolatileThis => b" volatile",
                    ModKind::Const | ModKind::ConstThis => b" const",
                    ModKind::TransactionSafe => b" transaction_safe",
                    ModKind::Pointer => b"*",
                    ModKind::LRefThis => b" &",
                    ModKind::LRef => b"&",
                    ModKind::RRefThis => b" &&",
                    ModKind::RRef => b"&&",
                    ModKind::Complex => b" _Complex",
                    ModKind::Imaginary => b" _Imaginary",
                };
                self.put(s);
            }
            Node::Noexcept(_, e) => {
                self.put(b" noexcept");
                if let Some(e) = e {
                    self.ch(b'(');
                    self.comp(e);
                    self.ch(b')');
                }
            }
            Node::Throw(_, l) => {
                self.put(b" throw");
                self.ch(b'(');
                self.comp(l);
                self.ch(b')');
            }
            Node::VendorQual(_, n) => {
                self.ch(b' ');
                self.comp(n);
            }
            Node::PtrMem(class, _) => {
                if self.last() != b'(' {
                    self.ch(b' ');
                }
                self.comp(class);
                self.put(b"::*");
            }
            Node::Typed(name, _) => self.comp(name),
            Node::Vector(dim, _) => {
                self.put(b" __vector(");
                self.comp(dim);
                self.ch(b')');
            }
            _ => self.comp(id),
        }
    }

    /// Print the pending modifiers from `list` on; `suffix`: the pass
    /// after a parameter list (function qualifiers only then).
    fn mod_list(&mut self, list: Option<usize>, suffix: bool) {
        let mut p = list;
        while let Some(i) = p {
            if self.error {
                return;
            }
            let m = self.pending[i];
            if m.printed || (!suffix && is_fnqual(self.node(m.node))) {
                p = m.next;
                continue;
            }
            self.pending[i].printed = true;
            let hold_t = self.templates;
            self.templates = m.templates;
            match *self.node(m.node) {
                Node::Function { .. } => {
                    self.function_type(m.node, m.next);
                    self.templates = hold_t;
                    return;
                }
                Node::Array(..) => {
                    self.array_type(m.node, m.next);
                    self.templates = hold_t;
                    return;
                }
                Node::Local(l, r) => {
                    let hold = self.modifiers.take();
                    self.comp(l);
                    self.modifiers = hold;
                    self.put(b"::");
                    let mut r = r;
                    if let Node::DefaultArg(n, sub) = *self.node(r) {
                        self.put(b"{default arg#");
                        self.num(n + 1);
                        self.put(b"}::");
                        r = sub;
                    }
                    while let Some(i) = fnqual_inner(self.node(r)) {
                        r = i;
                    }
                    self.comp(r);
                    self.templates = hold_t;
                    return;
                }
                _ => {
                    self.print_mod(m.node);
                    self.templates = hold_t;
                    p = m.next;
                }
            }
        }
    }

    fn function_type(&mut self, f: Id, mods: Option<usize>) {
        let Node::Function { params, .. } = *self.node(f) else {
            self.error = true;
            return;
        };
        let mut need_paren = false;
        let mut need_space = false;
        let mut p = mods;
        while let Some(i) = p {
            let m = self.pending[i];
            if m.printed {
                break;
            }
            match *self.node(m.node) {
                Node::Mod(ModKind::Pointer | ModKind::LRef | ModKind::RRef, _) => need_paren = true,
                Node::Mod(
                    ModKind::Restrict
                    | ModKind::Volatile
                    | ModKind::Const
                    | ModKind::Complex
                    | ModKind::Imaginary,
                    _,
                )
                | Node::VendorQual(..)
                | Node::PtrMem(..) => {
                    need_space = true;
                    need_paren = true;
                }
                _ => {}
            }
            if need_paren {
                break;
            }
            p = m.next;
        }
        if need_paren {
            if !need_space && self.last() != b'(' && self.last() != b'*' {
                need_space = true;
            }
            if need_space && self.last() != b' ' {
                self.ch(b' ');
            }
            self.ch(b'(');
        }
        let hold = self.modifiers.take();
        self.mod_list(mods, false);
        if need_paren {
            self.ch(b')');
        }
        self.ch(b'(');
        self.comp(params);
        self.ch(b')');
        self.mod_list(mods, true);
        self.modifiers = hold;
    }

    fn array_type(&mut self, a: Id, mods: Option<usize>) {
        let Node::Array(dim, _) = *self.node(a) else {
            self.error = true;
            return;
        };
        let mut need_space = true;
        if mods.is_some() {
            let mut need_paren = false;
            let mut p = mods;
            while let Some(i) = p {
                let m = self.pending[i];
                if !m.printed {
                    if matches!(self.node(m.node), Node::Array(..)) {
                        need_space = false;
                    } else {
                        need_paren = true;
                        need_space = true;
                    }
                    break;
                }
                p = m.next;
            }
            if need_paren {
                self.put(b" (");
            }
            self.mod_list(mods, false);
            if need_paren {
                self.ch(b')');
            }
        }
        if need_space {
            self.ch(b' ');
        }
        self.ch(b'[');
        if let Some(d) = dim {
            self.comp(d);
        }
        self.ch(b']');
    }

    fn conversion(&mut self, t: Id) {
        let hold_t = self.templates;
        if let Some(ct) = self.current_template {
            self.push_scope(ct);
        }
        if let Node::Template(n, args) = *self.node(t) {
            self.comp(n);
            self.templates = hold_t;
            self.template_args(args);
        } else {
            self.comp(t);
            self.templates = hold_t;
        }
    }

    /// The argument of template parameter `n` in the current scope (a
    /// pack is indexed by the pack expansion being printed).
    fn lookup(&mut self, n: i64) -> Option<Id> {
        let Some(s) = self.templates else {
            self.error = true;
            return None;
        };
        let a = self.template_arg(self.scopes[s].template, n)?;
        if let Node::TArgs(l) = self.node(a) {
            if self.pack_index < 0 {
                return Some(a);
            }
            return l.get(self.pack_index as usize).copied();
        }
        Some(a)
    }

    fn template_arg(&self, template: Id, n: i64) -> Option<Id> {
        let Node::Template(_, args) = *self.node(template) else {
            return None;
        };
        let Node::TArgs(l) = self.node(args) else {
            return None;
        };
        usize::try_from(n).ok().and_then(|i| l.get(i).copied())
    }

    fn template_param(&mut self, n: i64) {
        if self.lambda_arg > 0 {
            self.put(b"auto:");
            self.num(n + 1);
            return;
        }
        let Some(a) = self.lookup(n) else {
            self.error = true;
            return;
        };
        // the argument may refer to an outer template's parameters
        let hold = self.templates;
        self.templates = hold.and_then(|s| self.scopes[s].next);
        self.comp(a);
        self.templates = hold;
    }

    /// The argument pack a pack expansion expands.
    fn find_pack(&mut self, id: Id) -> Option<Id> {
        if self.error {
            return None;
        }
        match *self.node(id) {
            Node::TParam(n) => {
                let Some(s) = self.templates else {
                    self.error = true;
                    return None;
                };
                let a = self.template_arg(self.scopes[s].template, n)?;
                matches!(self.node(a), Node::TArgs(_)).then_some(a)
            }
            Node::Pack(_)
            | Node::Lambda(..)
            | Node::Name(_)
            | Node::Text(_)
            | Node::Tagged(..)
            | Node::Op(_)
            | Node::Builtin(_)
            | Node::Std(_)
            | Node::FParam(_)
            | Node::Unnamed(_)
            | Node::DefaultArg(..)
            | Node::Number(_) => None,
            Node::ExtOp(n) | Node::Ctor(n) | Node::Dtor(n) => self.find_pack(n),
            _ => {
                for c in self.children(id) {
                    if let Some(p) = self.find_pack(c) {
                        return Some(p);
                    }
                }
                None
            }
        }
    }

    fn children(&self, id: Id) -> Vec<Id> {
        match *self.node(id) {
            Node::Qual(a, b)
            | Node::Local(a, b)
            | Node::Template(a, b)
            | Node::Typed(a, b)
            | Node::PtrMem(a, b)
            | Node::Vector(a, b)
            | Node::Unary(a, b)
            | Node::Throw(a, b)
            | Node::VendorQual(a, b)
            | Node::CtorVtable(a, b) => vec![a, b],
            Node::Suffix(a, b) => vec![a, b, b],
            Node::Binary(a, b, c) => vec![a, b, c],
            Node::Trinary(a, b, c, d) => vec![a, b, c, d],
            Node::TArgs(ref l) | Node::Args(ref l) => l.clone(),
            Node::Function { ret, params } => ret.into_iter().chain([params]).collect(),
            Node::Array(d, e) => d.into_iter().chain([e]).collect(),
            Node::Noexcept(a, b) => [a].into_iter().chain(b).collect(),
            Node::InitList(a, b) => a.into_iter().chain([b]).collect(),
            Node::New(a, b, c, d) => [a, b, c].into_iter().chain(d).collect(),
            Node::Literal(t, ..) => vec![t],
            Node::Mod(_, a)
            | Node::Vendor(a)
            | Node::Decltype(a)
            | Node::Conversion(a)
            | Node::Cast(a)
            | Node::Special(_, a)
            | Node::Clone(a, _)
            | Node::RefTemp(a, _)
            | Node::Nullary(a) => vec![a],
            _ => Vec::new(),
        }
    }

    fn pack(&mut self, inner: Id) {
        let Some(a) = self.find_pack(inner) else {
            if self.error {
                return;
            }
            self.subexpr(inner);
            self.put(b"...");
            return;
        };
        let len = match self.node(a) {
            Node::TArgs(l) => l.len(),
            _ => 0,
        };
        let hold = self.pack_index;
        for i in 0..len {
            self.pack_index = i as i64;
            self.comp(inner);
            if i + 1 < len {
                self.put(b", ");
            }
        }
        self.pack_index = hold;
    }

    fn subexpr(&mut self, id: Id) {
        let simple = matches!(
            self.node(id),
            Node::Name(_) | Node::Text(_) | Node::Qual(..) | Node::InitList(..) | Node::FParam(_)
        );
        if !simple {
            self.ch(b'(');
        }
        self.comp(id);
        if !simple {
            self.ch(b')');
        }
    }

    fn expr_op(&mut self, op: Id) {
        if let Node::Op(o) = *self.node(op) {
            self.put(o.name.as_bytes());
        } else {
            self.comp(op);
        }
    }

    fn op_code(&self, op: Id) -> Option<&'static [u8; 2]> {
        match *self.node(op) {
            Node::Op(o) => Some(o.code),
            _ => None,
        }
    }

    fn unary(&mut self, op: Id, arg: Id) {
        let code = self.op_code(op);
        let mut arg = arg;
        if code == Some(b"ad") {
            // `&f` without the parameter list
            if let Node::Typed(n, ft) = *self.node(arg) {
                if matches!(self.node(n), Node::Qual(..))
                    && matches!(self.node(ft), Node::Function { .. })
                {
                    arg = n;
                }
            }
        }
        if code == Some(b"sZ") {
            let a = self.find_pack(arg);
            let len = match a.map(|a| self.node(a)) {
                Some(Node::TArgs(l)) => l.len(),
                _ => 0,
            };
            self.num(len as i64);
            return;
        }
        if code == Some(b"sP") {
            let n = self.args_length(arg);
            self.num(n as i64);
            return;
        }
        if let Node::Cast(t) = *self.node(op) {
            self.ch(b'(');
            self.comp(t);
            self.ch(b')');
        } else {
            self.expr_op(op);
        }
        match code {
            Some(b"gs") => self.comp(arg),
            Some(b"st") => {
                self.ch(b'(');
                self.comp(arg);
                self.ch(b')');
            }
            _ => self.subexpr(arg),
        }
    }

    fn args_length(&mut self, list: Id) -> usize {
        let l = match self.node(list) {
            Node::TArgs(l) => l.clone(),
            _ => return 0,
        };
        let mut n = 0;
        for a in l {
            if let Node::Pack(inner) = *self.node(a) {
                if let Some(p) = self.find_pack(inner) {
                    if let Node::TArgs(pl) = self.node(p) {
                        n += pl.len();
                    }
                }
            } else {
                n += 1;
            }
        }
        n
    }

    fn binary(&mut self, op: Id, l: Id, r: Id) {
        let Some(code) = self.op_code(op) else {
            self.error = true;
            return;
        };
        if is_new_cast(code) {
            self.expr_op(op);
            self.ch(b'<');
            self.comp(l);
            self.put(b">(");
            self.comp(r);
            self.ch(b')');
            return;
        }
        if code[0] == b'f' {
            self.fold(code, l, r, None);
            return;
        }
        if code == b"di" || code == b"dx" {
            self.designated(code, l, r, None);
            return;
        }
        let gt = code == b"gt";
        if gt {
            self.ch(b'(');
        }
        if code == b"cl" {
            if let Node::Typed(name, ft) = *self.node(l) {
                if !matches!(self.node(ft), Node::Function { .. }) {
                    self.error = true;
                }
                self.subexpr(name);
            } else {
                self.subexpr(l);
            }
        } else {
            self.subexpr(l);
        }
        if code == b"ix" {
            self.ch(b'[');
            self.comp(r);
            self.ch(b']');
        } else {
            if code != b"cl" {
                self.expr_op(op);
            }
            self.subexpr(r);
        }
        if gt {
            self.ch(b')');
        }
    }

    fn trinary(&mut self, op: Id, a: Id, b: Id, c: Id) {
        let Some(code) = self.op_code(op) else {
            self.error = true;
            return;
        };
        if code[0] == b'f' {
            self.fold(code, a, b, Some(c));
            return;
        }
        if code == b"dX" {
            self.designated(code, a, b, Some(c));
            return;
        }
        self.subexpr(a);
        self.expr_op(op);
        self.subexpr(b);
        self.put(b" : ");
        self.subexpr(c);
    }

    fn fold(&mut self, code: &[u8; 2], op: Id, a: Id, b: Option<Id>) {
        let hold = self.pack_index;
        self.pack_index = -1;
        match code[1] {
            b'l' => {
                self.put(b"(...");
                self.expr_op(op);
                self.subexpr(a);
                self.ch(b')');
            }
            b'r' => {
                self.ch(b'(');
                self.subexpr(a);
                self.expr_op(op);
                self.put(b"...)");
            }
            _ => {
                self.ch(b'(');
                self.subexpr(a);
                self.expr_op(op);
                self.put(b"...");
                self.expr_op(op);
                if let Some(b) = b {
                    self.subexpr(b);
                }
                self.ch(b')');
            }
        }
        self.pack_index = hold;
    }

    fn designated(&mut self, code: &[u8; 2], a: Id, b: Id, c: Option<Id>) {
        self.ch(if code[1] == b'i' { b'.' } else { b'[' });
        self.comp(a);
        let mut value = b;
        if let Some(c) = c {
            self.put(b" ... ");
            self.comp(b);
            value = c;
        }
        if code[1] != b'i' {
            self.ch(b']');
        }
        let chained = match *self.node(value) {
            Node::Binary(op, ..) | Node::Trinary(op, ..) => {
                matches!(self.op_code(op), Some(b"di" | b"dx" | b"dX"))
            }
            _ => false,
        };
        if chained {
            self.comp(value);
        } else {
            self.ch(b'=');
            self.subexpr(value);
        }
    }

    fn literal(&mut self, ty: Id, digits: &[u8], neg: bool) {
        let mut lit = Lit::Default;
        if let Node::Builtin(b) = *self.node(ty) {
            lit = b.lit;
            let suffix: Option<&[u8]> = match lit {
                Lit::Int => Some(b""),
                Lit::Unsigned => Some(b"u"),
                Lit::Long => Some(b"l"),
                Lit::UnsignedLong => Some(b"ul"),
                Lit::LongLong => Some(b"ll"),
                Lit::UnsignedLongLong => Some(b"ull"),
                _ => None,
            };
            if let Some(sfx) = suffix {
                if neg {
                    self.ch(b'-');
                }
                self.put(digits);
                self.put(sfx);
                return;
            }
            if lit == Lit::Bool && digits.len() == 1 && !neg {
                match digits[0] {
                    b'0' => return self.put(b"false"),
                    b'1' => return self.put(b"true"),
                    _ => {}
                }
            }
            if is_nullptr_type(b) {
                lit = Lit::Default;
            }
        }
        self.ch(b'(');
        self.comp(ty);
        self.ch(b')');
        if neg {
            self.ch(b'-');
        }
        if lit == Lit::Float {
            self.ch(b'[');
        }
        self.put(digits);
        if lit == Lit::Float {
            self.ch(b']');
        }
    }
}
