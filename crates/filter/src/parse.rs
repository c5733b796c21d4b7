//! libtraceevent's filter parser (`process_filter` and friends), step by
//! step: the same token sequence builds the same tree, the same inputs fail,
//! and the tree is then collapsed (`collapse_tree`) the same way: fields the
//! event does not have become FALSE and are folded away.
//!
//! The grammar this implements is unusual, and faithfully so:
//! - `&&` and `||` have the same precedence and group from the left;
//! - a comparison is `FIELD OP VALUE` (a field, `COMM` or `CPU` on the
//!   left, a number or a string on the right); a field compared with a
//!   field is a syntax error;
//! - `FIELD & VALUE` (or `+ - * / % << >> | ^`) alone is true when non-zero,
//!   but cannot be compared;
//! - `!` applies to the next comparison or parenthesized group only;
//! - `FIELD == -1` reads as `FIELD - 1` (the `-` makes a new expression).

use crate::bre;
use crate::error::{ErrorKind, FilterError};
use crate::lexer::{Lexer, Tok};
use regex::bytes::Regex;
use tracemux_core::model::EventClass;

pub type Id = u32;

/// A field an argument refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldRef {
    /// Index into the class's common fields.
    Common(u32),
    /// Index into the class's own fields.
    Own(u32),
    /// The task name of the event's pid (`COMM`).
    Comm,
    /// The CPU the event was recorded on (`CPU`).
    Cpu,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    And,
    Or,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpKind {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Rshift,
    Lshift,
    And,
    Or,
    Xor,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpKind {
    Eq,
    Ne,
    Gt,
    Lt,
    Ge,
    Le,
    Regex,
    NotRegex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrCmp {
    Match,
    NotMatch,
    Regex,
    NotRegex,
}

/// A constant operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Number(u64),
    /// A double-quoted string.
    Str(Vec<u8>),
    /// A single-quoted string.
    Char(Vec<u8>),
}

/// A node of the tree (`struct tep_filter_arg`).
#[derive(Debug, Clone)]
pub enum Node {
    Bool(bool),
    Field(FieldRef),
    Value(Value),
    Op {
        kind: OpKind,
        left: Option<Id>,
        right: Option<Id>,
    },
    Exp {
        kind: ExpKind,
        left: Option<Id>,
        right: Option<Id>,
    },
    Num {
        kind: CmpKind,
        left: Option<Id>,
        right: Option<Id>,
    },
    Str {
        kind: StrCmp,
        field: FieldRef,
        /// The field's size (`COMM`/`CPU`: 0), for the copy libtraceevent
        /// makes of strings that are not NUL-terminated.
        size: u32,
        val: Vec<u8>,
        re: Option<Regex>,
    },
}

/// Stand-in for the value libtraceevent compares with when a one-character
/// single-quoted string meets a number: it uses the string's address.
pub const CHAR_ADDRESS: u64 = 0x5555_5555_0000;

/// Constant folding state of `test_arg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val {
    Norm,
    False,
    True,
}

impl Val {
    /// The operator a constant operand decides on its own: `true` an OR,
    /// `false` an AND.
    fn decides(self) -> OpKind {
        if self == Val::True {
            OpKind::Or
        } else {
            OpKind::And
        }
    }
}

/// The parser's output: the nodes and the root.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub root: Id,
}

enum Ret {
    /// End of input reached; the (collapsed) tree.
    Done(Id),
    /// A `)` closed the group.
    Close(Id),
}

fn syntax() -> FilterError {
    FilterError::new(ErrorKind::SyntaxError, "Syntax error")
}

struct Parser<'c> {
    class: &'c EventClass,
    tree: Tree,
}

impl Parser<'_> {
    fn add(&mut self, n: Node) -> Id {
        self.tree.nodes.push(n);
        (self.tree.nodes.len() - 1) as Id
    }

    fn node(&self, id: Id) -> &Node {
        &self.tree.nodes[id as usize]
    }

    fn find_field(&self, name: &[u8]) -> Option<FieldRef> {
        let c = self.class;
        if let Some(i) = c
            .common_fields
            .iter()
            .position(|f| f.name.as_bytes() == name)
        {
            return Some(FieldRef::Common(i as u32));
        }
        c.fields
            .iter()
            .position(|f| f.name.as_bytes() == name)
            .map(|i| FieldRef::Own(i as u32))
    }

    fn field_size(&self, f: FieldRef) -> u32 {
        match f {
            FieldRef::Common(i) => self.class.common_fields[i as usize].size,
            FieldRef::Own(i) => self.class.fields[i as usize].size,
            FieldRef::Comm | FieldRef::Cpu => 0,
        }
    }

    /// `create_arg_item`
    fn item(&mut self, ty: Tok, tok: Vec<u8>) -> Result<Id, FilterError> {
        let n = match ty {
            Tok::SQuote => Node::Value(Value::Char(tok)),
            Tok::DQuote => Node::Value(Value::Str(tok)),
            Tok::Item => {
                if tok.first().is_some_and(|c| c.is_ascii_digit()) {
                    Node::Value(Value::Number(strtoull(&tok)))
                } else if let Some(f) = self.find_field(&tok) {
                    Node::Field(f)
                } else if tok == b"COMM" {
                    Node::Field(FieldRef::Comm)
                } else if tok == b"CPU" {
                    Node::Field(FieldRef::Cpu)
                } else {
                    // not a field of this event: FALSE
                    Node::Bool(false)
                }
            }
            _ => {
                return Err(FilterError::new(
                    ErrorKind::UnexpectedType,
                    format!(
                        "expected a value but found {}",
                        String::from_utf8_lossy(&tok)
                    ),
                ))
            }
        };
        Ok(self.add(n))
    }

    /// `add_right`
    fn add_right(&mut self, op: Id, arg: Id) -> Result<(), FilterError> {
        let arg_node = self.node(arg).clone();
        match &mut self.tree.nodes[op as usize] {
            Node::Exp { right, .. } | Node::Op { right, .. } => {
                if right.is_some() {
                    return Err(syntax());
                }
                *right = Some(arg);
                Ok(())
            }
            Node::Num { kind, left, right } => {
                if right.is_some() {
                    return Err(syntax());
                }
                let (kind, left) = (*kind, *left);
                let value = match arg_node {
                    Node::Value(v) => v,
                    // a field on the right: libtraceevent reads the field
                    // pointer as a value type and fails
                    Node::Field(_) => return Err(syntax()),
                    _ => return Err(FilterError::new(ErrorKind::IllegalRvalue, "Illegal rvalue")),
                };
                let is_regex = matches!(kind, CmpKind::Regex | CmpKind::NotRegex);
                let s = match value {
                    Value::Char(s) if s.len() == 1 && !is_regex => {
                        // compared as a number: the string's address
                        return self.set_num_right(op, kind, arg, CHAR_ADDRESS);
                    }
                    Value::Char(s) | Value::Str(s) => s,
                    Value::Number(_) => {
                        if is_regex {
                            return Err(FilterError::new(
                                ErrorKind::IllegalIntegerCmp,
                                "Op not allowed with integers",
                            ));
                        }
                        if let Node::Num { right, .. } = &mut self.tree.nodes[op as usize] {
                            *right = Some(arg);
                        }
                        return Ok(());
                    }
                };
                // a string comparison
                let Some(left) = left else {
                    return Err(syntax());
                };
                let field = match *self.node(left) {
                    Node::Bool(_) => {
                        self.tree.nodes[op as usize] = Node::Bool(false);
                        return Ok(());
                    }
                    Node::Field(f) => f,
                    _ => {
                        return Err(FilterError::new(
                            ErrorKind::IllegalLvalue,
                            "Illegal lvalue for string comparison",
                        ))
                    }
                };
                let (kind, re) = match kind {
                    CmpKind::Eq => (StrCmp::Match, None),
                    CmpKind::Ne => (StrCmp::NotMatch, None),
                    CmpKind::Regex | CmpKind::NotRegex => {
                        let pat = String::from_utf8_lossy(&s);
                        let re = bre::compile(&pat).map_err(|_| {
                            FilterError::new(
                                ErrorKind::InvalidRegex,
                                format!("RegEx '{pat}' did not compute"),
                            )
                        })?;
                        let k = if kind == CmpKind::Regex {
                            StrCmp::Regex
                        } else {
                            StrCmp::NotRegex
                        };
                        (k, Some(re))
                    }
                    _ => {
                        return Err(FilterError::new(
                            ErrorKind::IllegalStringCmp,
                            "Illegal comparison for string",
                        ))
                    }
                };
                let size = self.field_size(field);
                self.tree.nodes[op as usize] = Node::Str {
                    kind,
                    field,
                    size,
                    val: s,
                    re,
                };
                Ok(())
            }
            _ => Err(syntax()),
        }
    }

    fn set_num_right(&mut self, op: Id, kind: CmpKind, arg: Id, v: u64) -> Result<(), FilterError> {
        let _ = kind;
        self.tree.nodes[arg as usize] = Node::Value(Value::Number(v));
        if let Node::Num { right, .. } = &mut self.tree.nodes[op as usize] {
            *right = Some(arg);
        }
        Ok(())
    }

    /// `add_left` (the left item of a comparison or expression, or the left
    /// side of a logical operator).
    fn add_left(&mut self, op: Id, arg: Option<Id>) -> Result<(), FilterError> {
        let is_field_or_bool =
            arg.is_some_and(|a| matches!(self.node(a), Node::Field(_) | Node::Bool(_)));
        match &mut self.tree.nodes[op as usize] {
            Node::Exp { left, .. } | Node::Op { left, .. } => {
                *left = arg;
                Ok(())
            }
            // a comparison's left side is a field (or a boolean)
            Node::Num { left, .. } if is_field_or_bool => {
                *left = arg;
                Ok(())
            }
            _ => Err(FilterError::new(
                ErrorKind::InvalidArgType,
                "invalid argument type",
            )),
        }
    }

    fn check_op_done(&self, id: Id) -> bool {
        match self.node(id) {
            Node::Exp { right, .. } | Node::Op { right, .. } | Node::Num { right, .. } => {
                right.is_some()
            }
            Node::Str { .. } | Node::Bool(_) => true,
            _ => false,
        }
    }

    /// `process_filter`
    fn process(&mut self, lx: &mut Lexer<'_>, not: bool) -> Result<Ret, FilterError> {
        let mut current_op: Option<Id> = None;
        let mut current_exp: Option<Id> = None;
        let mut left_item: Option<Id> = None;
        loop {
            let (ty, tok) = lx.next();
            match ty {
                Tok::SQuote | Tok::DQuote | Tok::Item => {
                    let arg = self.item(ty, tok)?;
                    if left_item.is_none() {
                        left_item = Some(arg);
                    } else if let Some(ce) = current_exp {
                        self.add_right(ce, arg)?;
                        left_item = None;
                        // a NOT takes one expression only
                        if not {
                            if current_op.is_some() {
                                return Err(syntax());
                            }
                            return Ok(Ret::Done(ce));
                        }
                    } else {
                        return Err(syntax());
                    }
                }
                Tok::Delim => {
                    if tok == b"," {
                        return Err(FilterError::new(
                            ErrorKind::IllegalToken,
                            "Illegal token ','",
                        ));
                    }
                    if tok == b"(" {
                        if left_item.is_some() {
                            return Err(FilterError::new(
                                ErrorKind::InvalidParen,
                                "Open paren can not come after item",
                            ));
                        }
                        if current_exp.is_some() {
                            return Err(FilterError::new(
                                ErrorKind::InvalidParen,
                                "Open paren can not come after expression",
                            ));
                        }
                        let arg = match self.process(lx, false)? {
                            Ret::Close(a) => a,
                            Ret::Done(_) => {
                                return Err(FilterError::new(
                                    ErrorKind::UnbalancedParen,
                                    "Unbalanced number of '('",
                                ))
                            }
                        };
                        if not {
                            if current_op.is_some() {
                                return Err(syntax());
                            }
                            return Ok(Ret::Done(arg));
                        }
                        match current_op {
                            Some(op) => self.add_right(op, arg)?,
                            None => current_exp = Some(arg),
                        }
                    } else {
                        // ')'
                        if current_op.is_none() && current_exp.is_none() {
                            return Err(syntax());
                        }
                        if current_exp.is_some_and(|e| !self.check_op_done(e)) {
                            return Err(syntax());
                        }
                        if current_op.is_some_and(|o| !self.check_op_done(o)) {
                            return Err(syntax());
                        }
                        if not {
                            // libtraceevent fails on the paren code here
                            return Err(FilterError::new(
                                ErrorKind::UnbalancedParen,
                                "Unbalanced number of '('",
                            ));
                        }
                        return Ok(Ret::Close(current_op.or(current_exp).expect("checked")));
                    }
                }
                Tok::Op => {
                    let op = process_op(&tok);
                    match op {
                        OpType::Bool(_) => {
                            if current_exp.is_none() && current_op.is_none() {
                                return Err(syntax());
                            }
                            if left_item.is_some() {
                                return Err(syntax());
                            }
                        }
                        OpType::Not => {
                            if left_item.is_some() {
                                return Err(syntax());
                            }
                        }
                        OpType::Exp(_) | OpType::Cmp(_) => {
                            if left_item.is_none() {
                                return Err(syntax());
                            }
                        }
                        OpType::None => {
                            return Err(FilterError::new(
                                ErrorKind::UnknownToken,
                                format!("Unknown op token {}", String::from_utf8_lossy(&tok)),
                            ))
                        }
                    }
                    match op {
                        OpType::Bool(k) => {
                            let arg = self.add(Node::Op {
                                kind: k,
                                left: None,
                                right: None,
                            });
                            let l = current_op.or(current_exp);
                            self.add_left(arg, l)?;
                            current_op = Some(arg);
                            current_exp = None;
                        }
                        OpType::Not => {
                            let arg = self.add(Node::Op {
                                kind: OpKind::Not,
                                left: None,
                                right: None,
                            });
                            if let Some(o) = current_op {
                                self.add_right(o, arg)?;
                            }
                            current_exp = Some(arg);
                            let sub = match self.process(lx, true)? {
                                Ret::Done(s) => s,
                                Ret::Close(_) => unreachable!("a NOT level does not close"),
                            };
                            self.add_right(arg, sub)?;
                        }
                        OpType::Exp(k) | OpType::Cmp(k) => {
                            let arg = self.add(match op {
                                OpType::Exp(_) => Node::Exp {
                                    kind: exp_kind(k),
                                    left: None,
                                    right: None,
                                },
                                _ => Node::Num {
                                    kind: cmp_kind(k),
                                    left: None,
                                    right: None,
                                },
                            });
                            if let Some(o) = current_op {
                                self.add_right(o, arg)?;
                            }
                            if self.add_left(arg, left_item).is_err() {
                                return Err(syntax());
                            }
                            current_exp = Some(arg);
                        }
                        OpType::None => unreachable!(),
                    }
                }
                Tok::None => break,
                // spaces and newlines are skipped by the lexer, which
                // makes no errors
                Tok::Space | Tok::Newline | Tok::Error => return Err(syntax()),
            }
        }
        let Some(root) = current_op.or(current_exp) else {
            return Err(syntax());
        };
        Ok(Ret::Done(self.collapse(root)?))
    }

    /// `collapse_tree`: fold constants; the root may become a boolean.
    fn collapse(&mut self, root: Id) -> Result<Id, FilterError> {
        match self.test_arg(root, root)? {
            Val::Norm => Ok(root),
            v => Ok(self.add(Node::Bool(v == Val::True))),
        }
    }

    fn child(id: Option<Id>) -> Result<Id, FilterError> {
        // libtraceevent follows a NULL pointer here (a crash): an incomplete
        // expression such as `a ==` or `a == 1 &&`
        id.ok_or_else(syntax)
    }

    /// `test_arg`
    fn test_arg(&mut self, parent: Id, arg: Id) -> Result<Val, FilterError> {
        match self.node(arg).clone() {
            Node::Bool(b) => Ok(if b { Val::True } else { Val::False }),
            Node::Str { .. } | Node::Value(_) | Node::Field(_) => Ok(Val::Norm),
            Node::Exp { left, right, .. } | Node::Num { left, right, .. } => {
                let l = self.test_arg(arg, Self::child(left)?)?;
                if l != Val::Norm {
                    return Ok(l);
                }
                let r = self.test_arg(arg, Self::child(right)?)?;
                if r != Val::Norm {
                    return Ok(r);
                }
                Ok(Val::Norm)
            }
            Node::Op { kind, left, right } => {
                if kind != OpKind::Not {
                    let l = self.test_arg(arg, Self::child(left)?)?;
                    if l != Val::Norm {
                        if kind == l.decides() {
                            return Ok(l);
                        }
                        let r = self.test_arg(arg, Self::child(right)?)?;
                        if r != Val::Norm {
                            return Ok(r);
                        }
                        self.reparent(parent, arg, Self::child(right)?)?;
                        return Ok(Val::Norm);
                    }
                }
                // the right side (re-read: the left one may have been reparented)
                let right = match self.node(arg) {
                    Node::Op { right, .. } => *right,
                    _ => right,
                };
                let r = self.test_arg(arg, Self::child(right)?)?;
                if r == Val::Norm {
                    return Ok(Val::Norm);
                }
                if kind == r.decides() {
                    return Ok(r);
                }
                if kind == OpKind::Not {
                    return Ok(if r == Val::True {
                        Val::False
                    } else {
                        Val::True
                    });
                }
                let left = match self.node(arg) {
                    Node::Op { left, .. } => *left,
                    _ => None,
                };
                self.reparent(parent, arg, Self::child(left)?)?;
                Ok(Val::Norm)
            }
        }
    }

    /// `reparent_op_arg`: replace `old_child` (an operator) by its child
    /// `keep` in `parent` (or at the root when `parent == old_child`).
    fn reparent(&mut self, parent: Id, old_child: Id, keep: Id) -> Result<(), FilterError> {
        if parent == old_child {
            let n = self.node(keep).clone();
            self.tree.nodes[parent as usize] = n;
            return Ok(());
        }
        match &mut self.tree.nodes[parent as usize] {
            Node::Op { left, right, .. } => {
                if *right == Some(old_child) {
                    *right = Some(keep);
                } else if *left == Some(old_child) {
                    *left = Some(keep);
                } else {
                    return Err(FilterError::new(
                        ErrorKind::ReparentFailed,
                        "Error in reparent op",
                    ));
                }
                Ok(())
            }
            _ => Err(FilterError::new(
                ErrorKind::ReparentNotOp,
                "can not reparent other than OP",
            )),
        }
    }
}

enum OpType {
    None,
    Bool(OpKind),
    Not,
    Exp(u8),
    Cmp(u8),
}

/// `process_op`
fn process_op(tok: &[u8]) -> OpType {
    match tok {
        b"&&" => OpType::Bool(OpKind::And),
        b"||" => OpType::Bool(OpKind::Or),
        b"!" => OpType::Not,
        b"+" => OpType::Exp(0),
        b"-" => OpType::Exp(1),
        b"*" => OpType::Exp(2),
        b"/" => OpType::Exp(3),
        b"%" => OpType::Exp(4),
        b">>" => OpType::Exp(5),
        b"<<" => OpType::Exp(6),
        b"&" => OpType::Exp(7),
        b"|" => OpType::Exp(8),
        b"^" => OpType::Exp(9),
        b"~" => OpType::Exp(10),
        b"==" => OpType::Cmp(0),
        b"!=" => OpType::Cmp(1),
        b"<" => OpType::Cmp(2),
        b">" => OpType::Cmp(3),
        b"<=" => OpType::Cmp(4),
        b">=" => OpType::Cmp(5),
        b"=~" => OpType::Cmp(6),
        b"!~" => OpType::Cmp(7),
        _ => OpType::None,
    }
}

fn exp_kind(k: u8) -> ExpKind {
    [
        ExpKind::Add,
        ExpKind::Sub,
        ExpKind::Mul,
        ExpKind::Div,
        ExpKind::Mod,
        ExpKind::Rshift,
        ExpKind::Lshift,
        ExpKind::And,
        ExpKind::Or,
        ExpKind::Xor,
        ExpKind::Not,
    ][k as usize]
}

fn cmp_kind(k: u8) -> CmpKind {
    [
        CmpKind::Eq,
        CmpKind::Ne,
        CmpKind::Lt,
        CmpKind::Gt,
        CmpKind::Le,
        CmpKind::Ge,
        CmpKind::Regex,
        CmpKind::NotRegex,
    ][k as usize]
}

/// C `strtoull(s, NULL, 0)` on a token that starts with a digit.
pub fn strtoull(s: &[u8]) -> u64 {
    let (radix, digits) = if s.len() > 1 && s[0] == b'0' && (s[1] == b'x' || s[1] == b'X') {
        if s.get(2).is_some_and(|c| c.is_ascii_hexdigit()) {
            (16, &s[2..])
        } else {
            // "0x" without hex digits: the "0"
            return 0;
        }
    } else if s.first() == Some(&b'0') {
        (8, &s[1..])
    } else {
        (10, s)
    };
    let mut v: u64 = 0;
    for &c in digits {
        let d = match (c as char).to_digit(radix) {
            Some(d) => d as u64,
            None => break,
        };
        v = match v.checked_mul(radix as u64).and_then(|v| v.checked_add(d)) {
            Some(v) => v,
            None => return u64::MAX,
        };
    }
    v
}

/// Parse the filter text of one event (`process_event`): the root of the
/// collapsed tree.
pub fn parse_event(class: &EventClass, text: &[u8]) -> Result<Tree, FilterError> {
    let mut p = Parser {
        class,
        tree: Tree::default(),
    };
    let mut lx = Lexer::new(text);
    let root = match p.process(&mut lx, false)? {
        Ret::Done(r) => r,
        Ret::Close(_) => {
            // a `)` at the top level: libtraceevent returns the paren code
            // as a failure
            return Err(FilterError::new(
                ErrorKind::UnbalancedParen,
                "Unbalanced number of '('",
            ));
        }
    };
    let mut tree = p.tree;
    tree.root = root;
    Ok(tree)
}
