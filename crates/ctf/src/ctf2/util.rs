//! JSON pointers for error messages and typed accessors for JSON values
//! that fail with a [`Ctf2Error`] naming the value.

use super::json::{Kind, Value};
use super::Ctf2Error;
use crate::ir::IntRange;

/// One step of a JSON pointer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Seg<'a> {
    Key(&'a str),
    Index(usize),
    /// Entering the body of a field class alias (its `field-class`).
    Alias(&'a str),
}

/// A JSON pointer as a linked list on the stack: building one costs
/// nothing; it is rendered only for an error.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JPath<'a> {
    up: Option<&'a JPath<'a>>,
    seg: Option<Seg<'a>>,
}

impl<'a> JPath<'a> {
    /// The whole fragment.
    pub(crate) fn root() -> JPath<'static> {
        JPath {
            up: None,
            seg: None,
        }
    }

    pub(crate) fn key(&'a self, k: &'a str) -> JPath<'a> {
        JPath {
            up: Some(self),
            seg: Some(Seg::Key(k)),
        }
    }

    pub(crate) fn index(&'a self, i: usize) -> JPath<'a> {
        JPath {
            up: Some(self),
            seg: Some(Seg::Index(i)),
        }
    }

    pub(crate) fn alias(&'a self, name: &'a str) -> JPath<'a> {
        JPath {
            up: Some(self),
            seg: Some(Seg::Alias(name)),
        }
    }

    /// RFC 6901 rendering (`~` and `/` escaped).
    pub(crate) fn render(&self) -> String {
        let mut segs = Vec::new();
        let mut p = Some(self);
        while let Some(n) = p {
            if let Some(s) = n.seg {
                segs.push(s);
            }
            p = n.up;
        }
        let mut out = String::new();
        for s in segs.iter().rev() {
            match s {
                Seg::Key(k) => {
                    out.push('/');
                    out.push_str(&k.replace('~', "~0").replace('/', "~1"));
                }
                Seg::Index(i) => {
                    out.push('/');
                    out.push_str(&i.to_string());
                }
                Seg::Alias(n) => {
                    out.push_str(&format!(" -> alias {n:?} /field-class"));
                }
            }
        }
        out
    }
}

/// Accessors that report errors in fragment `frag`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cx {
    pub frag: usize,
}

pub(crate) type Res<T> = Result<T, Ctf2Error>;

impl Cx {
    pub(crate) fn err(&self, v: &Value, path: &JPath, msg: impl Into<String>) -> Ctf2Error {
        Ctf2Error {
            fragment: self.frag,
            offset: v.off,
            path: path.render(),
            msg: msg.into(),
            unsupported: false,
        }
    }

    pub(crate) fn unsupported(&self, v: &Value, path: &JPath, msg: impl Into<String>) -> Ctf2Error {
        Ctf2Error {
            unsupported: true,
            ..self.err(v, path, msg)
        }
    }

    fn expected(&self, v: &Value, path: &JPath, what: &str) -> Ctf2Error {
        self.err(v, path, format!("expected {what}, found {}", v.kind_name()))
    }

    /// The members of an object.
    pub(crate) fn obj<'v>(&self, v: &'v Value, path: &JPath) -> Res<&'v [(String, Value)]> {
        match &v.kind {
            Kind::Obj(m) => Ok(m),
            _ => Err(self.expected(v, path, "an object")),
        }
    }

    pub(crate) fn arr<'v>(&self, v: &'v Value, path: &JPath) -> Res<&'v [Value]> {
        match &v.kind {
            Kind::Arr(a) => Ok(a),
            _ => Err(self.expected(v, path, "an array")),
        }
    }

    pub(crate) fn str<'v>(&self, v: &'v Value, path: &JPath) -> Res<&'v str> {
        match &v.kind {
            Kind::Str(s) => Ok(s),
            _ => Err(self.expected(v, path, "a string")),
        }
    }

    pub(crate) fn int(&self, v: &Value, path: &JPath) -> Res<i128> {
        match v.kind {
            Kind::Int(i) => Ok(i),
            _ => Err(self.expected(v, path, "an integer")),
        }
    }

    pub(crate) fn u64(&self, v: &Value, path: &JPath) -> Res<u64> {
        let i = self.int(v, path)?;
        u64::try_from(i)
            .map_err(|_| self.err(v, path, format!("{i} is not in the range 0 to 2^64-1")))
    }

    pub(crate) fn i64(&self, v: &Value, path: &JPath) -> Res<i64> {
        let i = self.int(v, path)?;
        i64::try_from(i).map_err(|_| self.err(v, path, format!("{i} does not fit in 64 bits")))
    }

    /// The property `key` of object `v`, which must exist.
    pub(crate) fn req<'v>(&self, v: &'v Value, key: &str, path: &JPath) -> Res<&'v Value> {
        self.obj(v, path)?;
        v.get(key)
            .ok_or_else(|| self.err(v, path, format!("missing property `{key}`")))
    }

    /// The string property `key`, when present.
    pub(crate) fn opt_str<'v>(
        &self,
        v: &'v Value,
        key: &str,
        path: &JPath,
    ) -> Res<Option<&'v str>> {
        match v.get(key) {
            None => Ok(None),
            Some(s) => self.str(s, &path.key(key)).map(Some),
        }
    }

    pub(crate) fn opt_u64(&self, v: &Value, key: &str, path: &JPath) -> Res<Option<u64>> {
        match v.get(key) {
            None => Ok(None),
            Some(s) => self.u64(s, &path.key(key)).map(Some),
        }
    }

    /// An alignment property: a power of two, 1 when absent.
    pub(crate) fn align(&self, v: &Value, key: &str, path: &JPath) -> Res<u32> {
        let Some(a) = v.get(key) else { return Ok(1) };
        let p = path.key(key);
        let i = self.int(a, &p)?;
        match u32::try_from(i) {
            Ok(n) if n.is_power_of_two() => Ok(n),
            _ if i > 0 && (i as u128).is_power_of_two() => {
                Err(self.unsupported(a, &p, format!("alignment {i} is too large")))
            }
            _ => Err(self.err(
                a,
                &p,
                format!("alignment {i} is not a positive power of two"),
            )),
        }
    }

    /// An integer range set: one or more `[lower, upper]` pairs.
    pub(crate) fn range_set(&self, v: &Value, path: &JPath) -> Res<Vec<IntRange>> {
        let a = self.arr(v, path)?;
        if a.is_empty() {
            return Err(self.err(v, path, "an integer range set needs at least one range"));
        }
        let mut out = Vec::with_capacity(a.len());
        for (i, r) in a.iter().enumerate() {
            let p = path.index(i);
            let pair = self.arr(r, &p)?;
            let [lo, hi] = pair else {
                return Err(self.err(r, &p, "an integer range has exactly two elements"));
            };
            let lower = self.int(lo, &p.index(0))?;
            let upper = self.int(hi, &p.index(1))?;
            if lower > upper {
                return Err(self.err(r, &p, format!("lower bound {lower} > upper bound {upper}")));
            }
            out.push(IntRange::new(lower, upper));
        }
        Ok(out)
    }

    /// No extension may be used outside the preamble (none can be declared:
    /// this reader supports none). Empty namespaces are fine.
    pub(crate) fn no_ext(&self, v: &Value, path: &JPath) -> Res<()> {
        self.refuse_extensions(v, path, |x, p, ns, name| {
            self.err(
                x,
                p,
                format!("extension `{ns}` / `{name}` is not declared in the preamble"),
            )
        })
    }

    /// The first extension in the `extensions` object of `v`, if any, as
    /// the error `refuse(its value, its path, namespace, name)` makes.
    /// Empty namespaces are fine.
    pub(crate) fn refuse_extensions(
        &self,
        v: &Value,
        path: &JPath,
        refuse: impl Fn(&Value, &JPath, &str, &str) -> Ctf2Error,
    ) -> Res<()> {
        let Some(e) = v.get("extensions") else {
            return Ok(());
        };
        let p = path.key("extensions");
        for (ns, exts) in self.obj(e, &p)? {
            let pn = p.key(ns);
            if let Some((name, x)) = self.obj(exts, &pn)?.first() {
                return Err(refuse(x, &pn.key(name), ns, name));
            }
        }
        Ok(())
    }
}
