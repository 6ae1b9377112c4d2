//! Which argument of the module before a pass goes to which parameter of
//! the module after it. Passes may reorder the entry's parameters (TVM
//! rebuilds `@main` from `FreeVars`, whose order follows first use:
//! DenseToSparse, SimplifyFCTranspose), add some (the sparse weights'
//! `.data`/`.indices`/`.indptr`) or drop some; binding by position would
//! give one parameter another's value. Parameters are matched by name:
//! the same name, else the printer's renaming (`%x` printed as `%x2` when a
//! pass went through the text, as an external pass does). A parameter the
//! pass added has no value to compare with: the pass is not checked, and
//! the reason names it. A parameter the pass dropped is simply not passed.

use crate::value::Value;
use relay_ir::Function;

/// How the arguments of the module before the pass bind to the module
/// after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// The same parameters in the same order: the same arguments.
    Same,
    /// After's parameter `i` takes before's argument `order[i]`; `dropped`
    /// names before's parameters the pass removed.
    Reordered {
        order: Vec<usize>,
        dropped: Vec<String>,
    },
}

/// How `before`'s arguments bind to `after`'s parameters, or why they
/// cannot (a parameter appeared, or names do not tell them apart).
pub fn bind_by_name(before: &Function, after: &Function) -> Result<Binding, String> {
    let old: Vec<&str> = before.params().iter().map(|p| p.name()).collect();
    let new: Vec<&str> = after.params().iter().map(|p| p.name()).collect();
    if old == new {
        return Ok(Binding::Same);
    }
    let nameable = |names: &[&str]| {
        names
            .iter()
            .all(|n| !n.is_empty() && names.iter().filter(|m| *m == n).count() == 1)
    };
    if !nameable(&old) || !nameable(&new) {
        // Unnamed or repeated names: only the position can say.
        if old.len() == new.len() {
            return Ok(Binding::Same);
        }
        return Err(format!(
            "the pass changed @main's parameter count ({} → {}) and their names cannot tell which is which",
            old.len(),
            new.len()
        ));
    }
    let mut order: Vec<Option<usize>> = new
        .iter()
        .map(|n| old.iter().position(|o| o == n))
        .collect();
    // The printer's renaming: one unmatched parameter on each side whose
    // names differ by a numeric suffix.
    for (i, name) in new.iter().enumerate() {
        if order[i].is_some() {
            continue;
        }
        let taken = |j: usize| order.contains(&Some(j));
        let candidates: Vec<usize> = (0..old.len())
            .filter(|&j| !taken(j) && renamed_by_printer(old[j], name))
            .collect();
        if let [j] = candidates[..] {
            order[i] = Some(j);
        }
    }
    let added: Vec<String> = new
        .iter()
        .zip(&order)
        .filter(|(_, o)| o.is_none())
        .map(|(n, _)| format!("%{n}"))
        .collect();
    let dropped: Vec<String> = (0..old.len())
        .filter(|j| !order.contains(&Some(*j)))
        .map(|j| format!("%{}", old[j]))
        .collect();
    if !added.is_empty() {
        let mut why = format!(
            "the pass added parameter{} {} to @main (no value to compare with)",
            if added.len() == 1 { "" } else { "s" },
            added.join(", ")
        );
        if !dropped.is_empty() {
            why.push_str(&format!(" and removed {}", dropped.join(", ")));
        }
        return Err(why);
    }
    let order: Vec<usize> = order.into_iter().flatten().collect();
    if dropped.is_empty() && order.iter().enumerate().all(|(i, &j)| i == j) {
        return Ok(Binding::Same);
    }
    Ok(Binding::Reordered { order, dropped })
}

/// Whether one name is the other with a numeric suffix (the printer makes
/// names unique across a module by appending a number).
fn renamed_by_printer(a: &str, b: &str) -> bool {
    let suffixed = |long: &str, short: &str| {
        long.strip_prefix(short)
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|c| c.is_ascii_digit()))
    };
    suffixed(a, b) || suffixed(b, a)
}

impl Binding {
    /// After's arguments from before's.
    pub fn apply(&self, args: &[Value]) -> Vec<Value> {
        match self {
            Binding::Same => args.to_vec(),
            Binding::Reordered { order, .. } => order.iter().map(|&j| args[j].clone()).collect(),
        }
    }

    /// Before's parameters the pass removed.
    pub fn dropped(&self) -> &[String] {
        match self {
            Binding::Same => &[],
            Binding::Reordered { dropped, .. } => dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn main_of(text: &str) -> Function {
        let (module, errors) = relay_lower::parse_and_lower("t.relay", text);
        assert!(errors.is_empty(), "{errors:?}");
        module.function("main").unwrap().clone()
    }

    const BEFORE: &str = "#[version = \"0.0.5\"]\ndef @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32]) { subtract(%a, %b) }\n";

    #[test]
    fn reordered_parameters_bind_by_name() {
        let after = main_of("#[version = \"0.0.5\"]\ndef @main(%b: Tensor[(2), float32], %a: Tensor[(2), float32]) { subtract(%a, %b) }\n");
        let binding = bind_by_name(&main_of(BEFORE), &after).unwrap();
        assert_eq!(
            binding,
            Binding::Reordered {
                order: vec![1, 0],
                dropped: vec![]
            }
        );
    }

    #[test]
    fn the_printers_renaming_is_the_same_parameter() {
        let after = main_of("#[version = \"0.0.5\"]\ndef @main(%a1: Tensor[(2), float32], %b: Tensor[(2), float32]) { subtract(%a1, %b) }\n");
        assert_eq!(
            bind_by_name(&main_of(BEFORE), &after).unwrap(),
            Binding::Same
        );
    }

    #[test]
    fn an_added_parameter_is_named_and_a_dropped_one_is_not_passed() {
        let added = main_of("#[version = \"0.0.5\"]\ndef @main(%a: Tensor[(2), float32], %c: Tensor[(2), float32]) { subtract(%a, %c) }\n");
        let why = bind_by_name(&main_of(BEFORE), &added).unwrap_err();
        assert_eq!(
            why,
            "the pass added parameter %c to @main (no value to compare with) and removed %b"
        );
        let dropped = main_of(
            "#[version = \"0.0.5\"]\ndef @main(%b: Tensor[(2), float32]) { negative(%b) }\n",
        );
        let binding = bind_by_name(&main_of(BEFORE), &dropped).unwrap();
        assert_eq!(binding.dropped(), ["%a".to_string()]);
        assert_eq!(
            binding,
            Binding::Reordered {
                order: vec![1],
                dropped: vec!["%a".into()]
            }
        );
    }
}
