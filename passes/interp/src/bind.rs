//! Which argument of the module before a pass goes to which parameter of
//! the module after it. Passes may reorder the entry's parameters (TVM
//! rebuilds `@main` from `FreeVars`, whose order follows first use:
//! DenseToSparse, SimplifyFCTranspose), add some (the sparse weights'
//! `.data`/`.indices`/`.indptr`, ToCPS's continuation) or drop some;
//! binding by position would give one parameter another's value.
//! Parameters are matched by name: the same name, else the printer's
//! renaming (`%x` printed as `%x2` when a pass went through the text, as an
//! external pass does). A parameter the pass added gets the value the
//! pass's contract supplies for it (ToCPS's continuation: the identity,
//! [`crate::contract::continuation_argument`]); any other added parameter
//! has no value to compare with: the pass is not checked, and the reason
//! names it. A parameter the pass dropped is simply not passed.

use crate::value::Value;
use relay_ir::Function;

/// How the arguments of the module before the pass bind to the module
/// after it.
#[derive(Debug, Clone)]
pub enum Binding {
    /// The same parameters in the same order: the same arguments.
    Same,
    /// After's parameter `i` takes `slots[i]`; `dropped` names before's
    /// parameters the pass removed.
    Reordered {
        slots: Vec<Slot>,
        dropped: Vec<String>,
    },
}

/// What one parameter of the module after the pass takes.
#[derive(Debug, Clone)]
pub enum Slot {
    /// Before's argument at this position.
    Argument(usize),
    /// A parameter the pass added, with the value its contract supplies.
    Supplied(Supplied),
}

/// The value given to a parameter a pass added, and how to say so.
#[derive(Debug, Clone)]
pub struct Supplied {
    /// The parameter, as `%k`.
    pub parameter: String,
    pub value: Value,
    /// The value as Relay text (`fn (%x: float32) { %x }`).
    pub text: String,
}

/// A value for after's parameter `i` that before does not have, if the
/// pass's contract supplies one.
pub type Supply<'a> = &'a dyn Fn(usize) -> Option<Supplied>;

/// How `before`'s arguments bind to `after`'s parameters, or why they
/// cannot (a parameter appeared, or names do not tell them apart).
pub fn bind_by_name(before: &Function, after: &Function) -> Result<Binding, String> {
    bind_by_name_supplying(before, after, &|_| None)
}

/// [`bind_by_name`], giving a parameter the pass added the value `supply`
/// returns for its position.
pub fn bind_by_name_supplying(
    before: &Function,
    after: &Function,
    supply: Supply<'_>,
) -> Result<Binding, String> {
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
    let mut slots = Vec::with_capacity(new.len());
    let mut added = Vec::new();
    for (i, source) in order.iter().enumerate() {
        match source {
            Some(j) => slots.push(Slot::Argument(*j)),
            None => match supply(i) {
                Some(supplied) => slots.push(Slot::Supplied(supplied)),
                None => added.push(format!("%{}", new[i])),
            },
        }
    }
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
    let in_place = slots
        .iter()
        .enumerate()
        .all(|(i, slot)| matches!(slot, Slot::Argument(j) if *j == i));
    if dropped.is_empty() && in_place {
        return Ok(Binding::Same);
    }
    Ok(Binding::Reordered { slots, dropped })
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
            Binding::Reordered { slots, .. } => slots
                .iter()
                .map(|slot| match slot {
                    Slot::Argument(j) => args[*j].clone(),
                    Slot::Supplied(supplied) => supplied.value.clone(),
                })
                .collect(),
        }
    }

    /// Whether after takes before's arguments as they are.
    pub fn is_same(&self) -> bool {
        matches!(self, Binding::Same)
    }

    /// The position of before's argument that after's parameter `i`
    /// takes (none for a parameter the pass added).
    pub fn argument_of(&self, i: usize) -> Option<usize> {
        match self {
            Binding::Same => Some(i),
            Binding::Reordered { slots, .. } => match slots.get(i)? {
                Slot::Argument(j) => Some(*j),
                Slot::Supplied(_) => None,
            },
        }
    }

    /// Before's parameters the pass removed.
    pub fn dropped(&self) -> &[String] {
        match self {
            Binding::Same => &[],
            Binding::Reordered { dropped, .. } => dropped,
        }
    }

    /// The parameters the pass added, with the values they were given.
    pub fn supplied(&self) -> Vec<&Supplied> {
        match self {
            Binding::Same => Vec::new(),
            Binding::Reordered { slots, .. } => slots
                .iter()
                .filter_map(|slot| match slot {
                    Slot::Supplied(supplied) => Some(supplied),
                    Slot::Argument(_) => None,
                })
                .collect(),
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

    /// Before's argument position of each of after's parameters.
    fn positions(binding: &Binding, count: usize) -> Vec<Option<usize>> {
        (0..count).map(|i| binding.argument_of(i)).collect()
    }

    #[test]
    fn reordered_parameters_bind_by_name() {
        let after = main_of("#[version = \"0.0.5\"]\ndef @main(%b: Tensor[(2), float32], %a: Tensor[(2), float32]) { subtract(%a, %b) }\n");
        let binding = bind_by_name(&main_of(BEFORE), &after).unwrap();
        assert!(!binding.is_same());
        assert_eq!(positions(&binding, 2), [Some(1), Some(0)]);
        assert!(binding.dropped().is_empty());
    }

    #[test]
    fn the_printers_renaming_is_the_same_parameter() {
        let after = main_of("#[version = \"0.0.5\"]\ndef @main(%a1: Tensor[(2), float32], %b: Tensor[(2), float32]) { subtract(%a1, %b) }\n");
        assert!(bind_by_name(&main_of(BEFORE), &after).unwrap().is_same());
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
        assert_eq!(positions(&binding, 1), [Some(1)]);
    }

    #[test]
    fn a_supplied_value_fills_an_added_parameter() {
        let after = main_of("#[version = \"0.0.5\"]\ndef @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32], %k: Tensor[(2), float32]) { subtract(%a, %k) }\n");
        let zeros = Value::tensor(
            relay_ir::metadata::TensorData::zeros(relay_ir::dtype::DataType::FLOAT32, vec![2])
                .unwrap(),
        );
        let supply = |i: usize| {
            (i == 2).then(|| Supplied {
                parameter: "%k".into(),
                value: zeros.clone(),
                text: "zeros".into(),
            })
        };
        let binding = bind_by_name_supplying(&main_of(BEFORE), &after, &supply).unwrap();
        assert_eq!(positions(&binding, 3), [Some(0), Some(1), None]);
        assert_eq!(binding.supplied().len(), 1);
        let args = binding.apply(&[zeros.clone(), zeros.clone()]);
        assert_eq!(args.len(), 3);
        // Without a supplied value the added parameter is named.
        assert!(bind_by_name(&main_of(BEFORE), &after)
            .unwrap_err()
            .contains("%k"));
    }
}
