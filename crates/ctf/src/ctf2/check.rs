//! Checks of the field locations of a lowered scope: each designates
//! fields that exist, are decoded before the field that needs them, and
//! have the right kind (CTF2-SPEC-2.0 sections 5.3.1 and 6.4.2).

use std::collections::HashMap;

use super::fc::{Fcx, LocRec, Need};
use super::util::Res;
use super::{Ctf2Error, Leniency, Notes};
use crate::ir::*;

/// Check the field locations of a lowered scope. `scopes[s]` is the root
/// structure of scope `s` when it exists for this scope's fields (the
/// scope being checked included). Returns the optionals whose selector
/// ranges were given with a boolean selector (forgiven, noted in `notes`:
/// the caller drops those ranges).
pub(crate) fn check_locations(
    frag: usize,
    cx: &Fcx,
    scopes: &[Option<&StructClass>; 6],
    notes: &mut Notes,
) -> Res<Vec<LocRec>> {
    let mut r = Resolver::default();
    let mut forgiven = Vec::new();
    for rec in &cx.locs {
        let err = |msg| Ctf2Error {
            fragment: frag,
            offset: rec.off,
            path: rec.jpath.clone(),
            msg,
            unsupported: false,
        };
        if r.check(cx, rec, scopes).map_err(err)? {
            notes.add(
                Leniency::BoolSelectorRanges,
                "selector-field-ranges given with a boolean selector (ignored)",
                err(String::new()),
            );
            forgiven.push(rec.clone());
        }
    }
    Ok(forgiven)
}

fn show(names: &[String]) -> String {
    format!("{names:?}")
}

/// What a location designates, once per distinct location: the prefix
/// lengths of the path where it enters an array, and whether the fields
/// found suit the need.
type Found = (Vec<usize>, Result<bool, String>);

/// Resolves locations with memory: the same location is resolved once,
/// and large structures get a name index, so that checking stays linear.
#[derive(Default)]
struct Resolver<'t> {
    done: HashMap<(Scope, Vec<String>, Need), Found>,
    index: HashMap<*const StructClass, HashMap<&'t str, &'t FieldClass>>,
}

impl<'t> Resolver<'t> {
    fn check(
        &mut self,
        cx: &Fcx,
        rec: &LocRec,
        scopes: &[Option<&'t StructClass>; 6],
    ) -> Result<bool, String> {
        let target = rec.loc.scope;
        if target > cx.scope {
            return Err(format!(
                "the location is in the {} scope, which is decoded after this field ({})",
                target.tsdl_name(),
                cx.scope.tsdl_name()
            ));
        }
        let Some(root) = scopes[target as usize] else {
            return Err(format!(
                "the location is in the {} scope, which does not exist here",
                target.tsdl_name()
            ));
        };
        let key = (target, rec.loc.path.clone(), rec.need);
        if !self.done.contains_key(&key) {
            let found = match self.resolve(root, &rec.loc.path) {
                Ok((leaves, arrays)) => (arrays, suits(&leaves, rec.need, &rec.loc.path)),
                Err(e) => (Vec::new(), Err(e)),
            };
            self.done.insert(key.clone(), found);
        }
        let (arrays, suits) = &self.done[&key];
        let forgiven = suits.clone()?;
        // A path may only enter an array that contains the field that
        // needs it (the array's current element is what it designates).
        for &k in arrays {
            if target != cx.scope || !rec.s_path.starts_with(&rec.loc.path[..k]) {
                return Err(format!(
                    "the location enters the array at {}, which does not contain the field that needs it",
                    show(&rec.loc.path[..k])
                ));
            }
        }
        if target == cx.scope {
            match cx.leaf_first.get(&rec.loc.path) {
                Some(&o) if o <= rec.ordinal => {}
                _ => {
                    return Err(format!(
                        "the field at {} is not decoded before the field that needs it",
                        show(&rec.loc.path)
                    ))
                }
            }
        }
        Ok(forgiven)
    }

    fn member(&mut self, s: &'t StructClass, name: &str) -> Option<&'t FieldClass> {
        if s.members.len() <= 16 {
            return s.member(name).map(|m| &m.class);
        }
        let idx = self
            .index
            .entry(s as *const StructClass)
            .or_insert_with(|| {
                let mut h = HashMap::new();
                // A later member of the same name shadows the earlier.
                for m in &s.members {
                    h.insert(m.name.as_str(), &m.class);
                }
                h
            });
        idx.get(name).copied()
    }

    /// The fields that `names` can designate from `root` (never empty),
    /// and the prefix lengths where the path enters an array.
    fn resolve(
        &mut self,
        root: &'t StructClass,
        names: &[String],
    ) -> Result<(Vec<&'t FieldClass>, Vec<usize>), String> {
        let mut cur: Vec<&StructClass> = vec![root];
        let mut arrays = Vec::new();
        for (k, name) in names.iter().enumerate() {
            let mut flat = Vec::new();
            let mut array = false;
            for s in cur {
                if let Some(m) = self.member(s, name) {
                    expand(m, &mut flat, &mut array);
                }
            }
            if flat.is_empty() {
                return Err(format!("no field at {}", show(&names[..=k])));
            }
            if array {
                arrays.push(k + 1);
            }
            if k + 1 == names.len() {
                return Ok((flat, arrays));
            }
            cur = flat
                .iter()
                .filter_map(|f| match f {
                    FieldClass::Struct(s) => Some(s),
                    _ => None,
                })
                .collect();
            if cur.is_empty() {
                return Err(format!(
                    "the field at {} is not a structure",
                    show(&names[..=k])
                ));
            }
        }
        Err("empty location path".into())
    }
}

/// Whether the fields a location designates suit what it is for; `true`:
/// they do once selector ranges given with a boolean selector are
/// ignored.
fn suits(leaves: &[&FieldClass], need: Need, path: &[String]) -> Result<bool, String> {
    let at = show(path);
    let sign = |f: &FieldClass| match f {
        FieldClass::Int(i) => Some(i.signed),
        FieldClass::VarInt(i) => Some(i.signed),
        _ => None,
    };
    match need {
        Need::Length => {
            if leaves.iter().any(|f| sign(f) != Some(false)) {
                return Err(format!(
                    "the length field at {at} is not an unsigned integer"
                ));
            }
        }
        Need::VariantSelector | Need::OptionalSelector { .. } => {
            let bools = leaves
                .iter()
                .filter(|f| matches!(f, FieldClass::Bool(_)))
                .count();
            if let Need::OptionalSelector { has_ranges } = need {
                if bools == leaves.len() {
                    return Ok(has_ranges);
                }
                if !has_ranges {
                    return Err(format!(
                        "selector-field-ranges missing for the integer selector at {at}"
                    ));
                }
            }
            let first = leaves.first().and_then(|f| sign(f));
            if first.is_none() || leaves.iter().any(|f| sign(f) != first) {
                return Err(format!(
                    "the selector at {at} is not an integer (all of one signedness){}",
                    if need == Need::VariantSelector {
                        ""
                    } else {
                        " or a boolean"
                    }
                ));
            }
        }
    }
    Ok(false)
}

/// Add the fields that `fc` can be once arrays, optionals and variants
/// are entered. Sets `*array` when an array was entered.
fn expand<'t>(fc: &'t FieldClass, out: &mut Vec<&'t FieldClass>, array: &mut bool) {
    match fc {
        FieldClass::Array(a) => {
            *array = true;
            expand(&a.element, out, array);
        }
        FieldClass::Optional(o) => expand(&o.class, out, array),
        FieldClass::Variant(v) => {
            for o in &v.options {
                expand(&o.class, out, array);
            }
        }
        _ => out.push(fc),
    }
}
