//! Function name patterns as uftrace matches them: exact names, POSIX
//! extended regular expressions (searched anywhere in the name, like
//! `regexec` without anchors) and shell globs (`fnmatch` without flags).
//!
//! The regex engine is a small Thompson-NFA simulation: linear in the name
//! length, no backtracking blow-up, bounded program size.

use crate::header::PatternType;

/// Characters that make uftrace treat a pattern as regex/glob rather than
/// an exact name.
pub const REGEX_CHARS: &str = ".?*+-^$|()[]{}";

/// A compiled name pattern.
#[derive(Debug, Clone)]
pub enum Pattern {
    Simple(String),
    Regex(Regex),
    Glob(String),
}

impl Pattern {
    /// Build a pattern the way uftrace's `init_filter_pattern` does: names
    /// without special characters match exactly, `operator ...` names are
    /// exact, and a regex that does not compile falls back to exact.
    pub fn new(kind: PatternType, s: &str) -> Pattern {
        if !s.chars().any(|c| REGEX_CHARS.contains(c)) {
            return Pattern::Simple(s.to_string());
        }
        match kind {
            PatternType::Regex => {
                if s.starts_with("operator ") {
                    return Pattern::Simple(s.to_string());
                }
                match Regex::new(s) {
                    Some(r) => Pattern::Regex(r),
                    None => Pattern::Simple(s.to_string()),
                }
            }
            PatternType::Glob => Pattern::Glob(s.to_string()),
            _ => Pattern::Simple(s.to_string()),
        }
    }

    /// Whether an exact-name pattern (exact matches win over regex ones
    /// when argument specs are merged).
    pub fn is_simple(&self) -> bool {
        matches!(self, Pattern::Simple(_))
    }

    pub fn matches(&self, name: &str) -> bool {
        match self {
            Pattern::Simple(p) => p == name,
            Pattern::Regex(r) => r.is_match(name.as_bytes()),
            Pattern::Glob(g) => glob_match(g.as_bytes(), name.as_bytes()),
        }
    }
}

/// `fnmatch(pattern, name, 0)`.
pub fn glob_match(p: &[u8], s: &[u8]) -> bool {
    glob_rec(p, s, 0)
}

fn glob_rec(p: &[u8], s: &[u8], depth: u32) -> bool {
    if depth > 64 {
        return false;
    }
    let (mut pi, mut si) = (0, 0);
    while pi < p.len() {
        match p[pi] {
            b'*' => {
                while pi < p.len() && p[pi] == b'*' {
                    pi += 1;
                }
                if pi == p.len() {
                    return true;
                }
                return (si..=s.len()).any(|k| glob_rec(&p[pi..], &s[k..], depth + 1));
            }
            b'?' => {
                if si >= s.len() {
                    return false;
                }
                pi += 1;
                si += 1;
            }
            b'[' => {
                if si >= s.len() {
                    return false;
                }
                match bracket(&p[pi..], s[si], b'!') {
                    Some((ok, used)) => {
                        if !ok {
                            return false;
                        }
                        pi += used;
                        si += 1;
                    }
                    None => {
                        if s[si] != b'[' {
                            return false;
                        }
                        pi += 1;
                        si += 1;
                    }
                }
            }
            c => {
                let (c, used) = if c == b'\\' && pi + 1 < p.len() {
                    (p[pi + 1], 2)
                } else {
                    (c, 1)
                };
                if si >= s.len() || s[si] != c {
                    return false;
                }
                pi += used;
                si += 1;
            }
        }
    }
    si == s.len()
}

/// Match a bracket expression starting at `p[0] == '['` against `c`.
/// Returns (matched, bytes used) or `None` when the bracket is not closed.
fn bracket(p: &[u8], c: u8, neg_char: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let neg = i < p.len() && (p[i] == b'^' || p[i] == neg_char);
    if neg {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == b']' && !first {
            return Some((matched != neg, i + 1));
        }
        first = false;
        if p[i] == b'[' && p.get(i + 1) == Some(&b':') {
            if let Some(end) = p[i + 2..].windows(2).position(|w| w == b":]") {
                let name = &p[i + 2..i + 2 + end];
                if class_match(name, c) {
                    matched = true;
                }
                i += end + 4;
                continue;
            }
        }
        let lo = p[i];
        if p.get(i + 1) == Some(&b'-') && p.get(i + 2).is_some_and(|&h| h != b']') {
            let hi = p[i + 2];
            if lo <= c && c <= hi {
                matched = true;
            }
            i += 3;
        } else {
            if lo == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}

fn class_match(name: &[u8], c: u8) -> bool {
    match name {
        b"alpha" => c.is_ascii_alphabetic(),
        b"digit" => c.is_ascii_digit(),
        b"alnum" => c.is_ascii_alphanumeric(),
        b"upper" => c.is_ascii_uppercase(),
        b"lower" => c.is_ascii_lowercase(),
        b"space" => c.is_ascii_whitespace() || c == 0x0b,
        b"xdigit" => c.is_ascii_hexdigit(),
        b"punct" => c.is_ascii_punctuation(),
        b"print" => (0x20..0x7f).contains(&c),
        b"graph" => (0x21..0x7f).contains(&c),
        b"cntrl" => c < 0x20 || c == 0x7f,
        b"blank" => c == b' ' || c == b'\t',
        _ => false,
    }
}

#[derive(Debug, Clone)]
enum Inst {
    Byte(u8),
    Any,
    /// Byte ranges; `true` = negated.
    Class(Vec<(u8, u8)>, bool),
    Split(usize, usize),
    Jmp(usize),
    Bol,
    Eol,
    Match,
}

#[derive(Debug, Clone)]
enum Node {
    Empty,
    Byte(u8),
    Any,
    Class(Vec<(u8, u8)>, bool),
    Bol,
    Eol,
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat(Box<Node>, u32, Option<u32>),
}

/// A compiled POSIX extended regular expression (match/no-match only).
#[derive(Debug, Clone)]
pub struct Regex {
    prog: Vec<Inst>,
}

const MAX_PROG: usize = 20_000;

impl Regex {
    /// Compile; `None` when the pattern is not a valid ERE (or too large).
    pub fn new(pat: &str) -> Option<Regex> {
        let mut p = Parser {
            s: pat.as_bytes(),
            i: 0,
            depth: 0,
        };
        let node = p.alt()?;
        if p.i != p.s.len() {
            return None;
        }
        let mut prog = Vec::new();
        compile(&node, &mut prog)?;
        prog.push(Inst::Match);
        Some(Regex { prog })
    }

    /// Whether the regex matches anywhere in `s`.
    pub fn is_match(&self, s: &[u8]) -> bool {
        let n = self.prog.len();
        let mut clist: Vec<usize> = Vec::with_capacity(n);
        let mut nlist: Vec<usize> = Vec::with_capacity(n);
        let mut mark = vec![usize::MAX; n];
        for pos in 0..=s.len() {
            // unanchored: a new thread starts at every position
            if self.add_gen(&mut clist, &mut mark, 0, pos, s) {
                return true;
            }
            if pos == s.len() {
                break;
            }
            let c = s[pos];
            nlist.clear();
            let gen = pos + 1;
            for &pc in &clist {
                let ok = match &self.prog[pc] {
                    Inst::Byte(b) => *b == c,
                    Inst::Any => true,
                    Inst::Class(r, neg) => r.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *neg,
                    _ => false,
                };
                if ok && self.add_gen(&mut nlist, &mut mark, pc + 1, gen, s) {
                    return true;
                }
            }
            std::mem::swap(&mut clist, &mut nlist);
        }
        false
    }

    /// Add the thread at `pc` (following jumps) for input position `pos`;
    /// returns true when a `Match` is reached.
    fn add_gen(
        &self,
        list: &mut Vec<usize>,
        mark: &mut [usize],
        pc: usize,
        pos: usize,
        s: &[u8],
    ) -> bool {
        let mut stack = vec![pc];
        while let Some(pc) = stack.pop() {
            if mark[pc] == pos {
                continue;
            }
            mark[pc] = pos;
            match &self.prog[pc] {
                Inst::Match => return true,
                Inst::Jmp(t) => stack.push(*t),
                Inst::Split(a, b) => {
                    stack.push(*b);
                    stack.push(*a);
                }
                Inst::Bol => {
                    if pos == 0 {
                        stack.push(pc + 1);
                    }
                }
                Inst::Eol => {
                    if pos == s.len() {
                        stack.push(pc + 1);
                    }
                }
                _ => list.push(pc),
            }
        }
        false
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: u32,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn alt(&mut self) -> Option<Node> {
        self.depth += 1;
        if self.depth > 100 {
            return None;
        }
        let mut alts = vec![self.concat()?];
        while self.peek() == Some(b'|') {
            self.i += 1;
            alts.push(self.concat()?);
        }
        self.depth -= 1;
        Some(if alts.len() == 1 {
            alts.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(alts)
        })
    }

    fn concat(&mut self) -> Option<Node> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == b'|' || c == b')' {
                break;
            }
            let mut atom = self.atom()?;
            while let Some(q) = self.peek() {
                let (lo, hi) = match q {
                    b'*' => (0, None),
                    b'+' => (1, None),
                    b'?' => (0, Some(1)),
                    b'{' => match self.bounds() {
                        Some(b) => b,
                        None => break,
                    },
                    _ => break,
                };
                if q != b'{' {
                    self.i += 1;
                }
                atom = Node::Repeat(Box::new(atom), lo, hi);
            }
            items.push(atom);
        }
        Some(Node::Concat(items))
    }

    /// `{m}`, `{m,}`, `{m,n}`; consumes it when valid.
    fn bounds(&mut self) -> Option<(u32, Option<u32>)> {
        let rest = &self.s[self.i..];
        let end = rest.iter().position(|&b| b == b'}')?;
        let inner = std::str::from_utf8(&rest[1..end]).ok()?;
        let (lo, hi) = match inner.split_once(',') {
            None => {
                let n: u32 = inner.parse().ok()?;
                (n, Some(n))
            }
            Some((a, "")) => (a.parse().ok()?, None),
            Some((a, b)) => (a.parse().ok()?, Some(b.parse().ok()?)),
        };
        if lo > 255 || hi.is_some_and(|h| h > 255 || h < lo) {
            return None;
        }
        self.i += end + 1;
        Some((lo, hi))
    }

    fn atom(&mut self) -> Option<Node> {
        let c = self.peek()?;
        self.i += 1;
        Some(match c {
            b'.' => Node::Any,
            b'^' => Node::Bol,
            b'$' => Node::Eol,
            b'(' => {
                let n = if self.peek() == Some(b')') {
                    Node::Empty
                } else {
                    self.alt()?
                };
                if self.peek() != Some(b')') {
                    return None;
                }
                self.i += 1;
                n
            }
            b'[' => {
                self.i -= 1;
                let (ranges, neg, used) = parse_class(&self.s[self.i..])?;
                self.i += used;
                Node::Class(ranges, neg)
            }
            b'\\' => {
                let e = self.peek()?;
                self.i += 1;
                Node::Byte(e)
            }
            b'*' | b'+' | b'?' => return None,
            c => Node::Byte(c),
        })
    }
}

/// Parse `[...]` into byte ranges; returns (ranges, negated, bytes used).
type ClassParse = (Vec<(u8, u8)>, bool, usize);

fn parse_class(p: &[u8]) -> Option<ClassParse> {
    let mut i = 1;
    let neg = p.get(1) == Some(&b'^');
    if neg {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    while i < p.len() {
        if p[i] == b']' && !first {
            return Some((ranges, neg, i + 1));
        }
        first = false;
        if p[i] == b'[' && p.get(i + 1) == Some(&b':') {
            let end = p[i + 2..].windows(2).position(|w| w == b":]")?;
            let name = &p[i + 2..i + 2 + end];
            for c in 0..=255u8 {
                if class_match(name, c) {
                    ranges.push((c, c));
                }
            }
            i += end + 4;
            continue;
        }
        let lo = p[i];
        if p.get(i + 1) == Some(&b'-') && p.get(i + 2).is_some_and(|&h| h != b']') {
            ranges.push((lo, p[i + 2]));
            i += 3;
        } else {
            ranges.push((lo, lo));
            i += 1;
        }
    }
    None
}

fn compile(n: &Node, prog: &mut Vec<Inst>) -> Option<()> {
    if prog.len() > MAX_PROG {
        return None;
    }
    match n {
        Node::Empty => {}
        Node::Byte(b) => prog.push(Inst::Byte(*b)),
        Node::Any => prog.push(Inst::Any),
        Node::Class(r, neg) => prog.push(Inst::Class(r.clone(), *neg)),
        Node::Bol => prog.push(Inst::Bol),
        Node::Eol => prog.push(Inst::Eol),
        Node::Concat(v) => {
            for x in v {
                compile(x, prog)?;
            }
        }
        Node::Alt(v) => {
            let mut jumps = Vec::new();
            for (k, x) in v.iter().enumerate() {
                if k + 1 < v.len() {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    compile(x, prog)?;
                    jumps.push(prog.len());
                    prog.push(Inst::Jmp(0));
                    let next = prog.len();
                    prog[split] = Inst::Split(split + 1, next);
                } else {
                    compile(x, prog)?;
                }
            }
            let end = prog.len();
            for j in jumps {
                prog[j] = Inst::Jmp(end);
            }
        }
        Node::Repeat(x, lo, hi) => {
            for _ in 0..*lo {
                compile(x, prog)?;
            }
            match hi {
                None => {
                    // x*
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    compile(x, prog)?;
                    prog.push(Inst::Jmp(split));
                    let end = prog.len();
                    prog[split] = Inst::Split(split + 1, end);
                }
                Some(h) => {
                    let mut splits = Vec::new();
                    for _ in *lo..*h {
                        splits.push(prog.len());
                        prog.push(Inst::Split(0, 0));
                        compile(x, prog)?;
                    }
                    let end = prog.len();
                    for s in splits {
                        prog[s] = Inst::Split(s + 1, end);
                    }
                }
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str, s: &str) -> bool {
        Regex::new(p).unwrap().is_match(s.as_bytes())
    }

    #[test]
    fn regex_basics() {
        assert!(re(".", "a"));
        assert!(!re(".", ""));
        assert!(re("^ma", "main"));
        assert!(!re("^ain", "main"));
        assert!(re("in$", "main"));
        assert!(re("a|z", "xyz"));
        assert!(re("f(o|i)+b", "xfoiob"));
        assert!(re("^a{2,3}$", "aaa"));
        assert!(!re("^a{2,3}$", "aaaa"));
        assert!(re("[[:digit:]]x", "a1x"));
        assert!(re("[^a-c]", "abcd"));
        assert!(!re("^[^a-c]+$", "abc"));
        assert!(Regex::new("(").is_none());
        assert!(Regex::new("*a").is_none());
    }

    #[test]
    fn glob_basics() {
        assert!(glob_match(b"ma*", b"main"));
        assert!(glob_match(b"*", b""));
        assert!(glob_match(b"m?in", b"main"));
        assert!(glob_match(b"[a-m]ain", b"main"));
        assert!(!glob_match(b"[!m]ain", b"main"));
        assert!(!glob_match(b"ma", b"main"));
    }

    #[test]
    fn pattern_kinds() {
        assert!(Pattern::new(PatternType::Regex, "main").is_simple());
        assert!(Pattern::new(PatternType::Regex, "ma.n").matches("xmainx"));
        assert!(!Pattern::new(PatternType::Glob, "ma?n").matches("xmainx"));
        assert!(Pattern::new(PatternType::Regex, "operator new").is_simple());
    }
}
