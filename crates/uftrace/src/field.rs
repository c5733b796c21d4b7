//! Output columns chosen with `-f` (uftrace's `setup_field`), for
//! `replay`, `report` and `graph`.

/// The columns `spec` selects from `table`, in table order: `none` for no
/// column, `all` for every one, `a,b` for those named, `+a,b` for those
/// named and the `defaults`. `named(field, name)` says whether `name`
/// names `field`. `Err` holds the first unknown name (the names after
/// `all` are not looked at, as in uftrace).
pub fn select<F: Copy + PartialEq>(
    spec: &str,
    table: &[F],
    defaults: &[F],
    named: impl Fn(F, &str) -> bool,
) -> Result<Vec<F>, String> {
    if spec == "none" {
        return Ok(Vec::new());
    }
    let mut on = vec![false; table.len()];
    let mut rest = spec;
    if let Some(r) = spec.strip_prefix('+') {
        for (o, f) in on.iter_mut().zip(table) {
            *o = defaults.contains(f);
        }
        rest = r;
    }
    for name in rest.split(',') {
        if name == "all" {
            return Ok(table.to_vec());
        }
        match table.iter().position(|&f| named(f, name)) {
            Some(i) => on[i] = true,
            None => return Err(name.to_string()),
        }
    }
    Ok(table
        .iter()
        .zip(on)
        .filter(|(_, o)| *o)
        .map(|(f, _)| *f)
        .collect())
}

/// uftrace's message for an unknown field `name`, listing the `names`.
pub fn unknown<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    let mut m = format!("uftrace: Unknown field name '{name}'\nuftrace:   Possible fields are:");
    for n in names {
        m.push(' ');
        m.push_str(n);
    }
    m.push('\n');
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_in_table_order() {
        let table = [1, 2, 3, 4];
        let named = |f: i32, n: &str| n == f.to_string();
        assert_eq!(select("none", &table, &[1], named), Ok(vec![]));
        assert_eq!(select("3,1", &table, &[1], named), Ok(vec![1, 3]));
        assert_eq!(select("+4", &table, &[1, 2], named), Ok(vec![1, 2, 4]));
        assert_eq!(select("2,all,x", &table, &[], named), Ok(vec![1, 2, 3, 4]));
        assert_eq!(select("2,x", &table, &[], named), Err("x".into()));
        assert_eq!(
            unknown("x", ["a", "b"]),
            "uftrace: Unknown field name 'x'\nuftrace:   Possible fields are: a b\n"
        );
    }
}
