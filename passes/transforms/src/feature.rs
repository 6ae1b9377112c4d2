//! The language features an expression uses, and the check passes make
//! before they run: TVM v0.13's `DetectFeature` / `CheckFeature`
//! (`src/relay/analysis/feature.cc`).
//!
//! A feature is a kind of node (`fVar`, `fCall`, …) plus two properties of
//! the program: `fGraph` (a non-atomic node is reached twice, i.e. the
//! program is a graph rather than a tree) and `fLetRec` (a `let` whose value
//! mentions its own variable). The gradient passes refuse programs with
//! features they do not handle, with TVM's message.

use relay_ir::diagnostic::Diagnostic;
use relay_ir::printer::{print_expr, PrintOptions};
use relay_ir::rewrite::for_each_child_except_pattern_vars;
use relay_ir::{Expr, ExprKind, IRModule, VarId};
// Tables consulted per node: the fast hasher, not SipHash.
use relay_ir::fxhash::FxSet as HashSet;

/// One feature, numbered as TVM's `enum Feature`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    Var = 0,
    GlobalVar = 1,
    Constant = 2,
    Tuple = 3,
    TupleGetItem = 4,
    Function = 5,
    Op = 6,
    Call = 7,
    Let = 8,
    If = 9,
    RefCreate = 10,
    RefRead = 11,
    RefWrite = 12,
    Constructor = 13,
    Match = 14,
    Graph = 15,
    LetRec = 16,
}

/// Every feature, in TVM's printing order.
const ALL: [Feature; 17] = [
    Feature::Var,
    Feature::GlobalVar,
    Feature::Constant,
    Feature::Tuple,
    Feature::TupleGetItem,
    Feature::Function,
    Feature::Op,
    Feature::Call,
    Feature::Let,
    Feature::If,
    Feature::RefCreate,
    Feature::RefRead,
    Feature::RefWrite,
    Feature::Constructor,
    Feature::Match,
    Feature::Graph,
    Feature::LetRec,
];

/// A set of features (TVM's `FeatureSet`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeatureSet(u32);

impl FeatureSet {
    pub fn none() -> FeatureSet {
        FeatureSet(0)
    }

    pub fn all() -> FeatureSet {
        FeatureSet((1 << ALL.len()) - 1)
    }

    pub fn of(features: &[Feature]) -> FeatureSet {
        features
            .iter()
            .fold(FeatureSet::none(), |set, &f| set.with(f))
    }

    pub fn with(self, feature: Feature) -> FeatureSet {
        FeatureSet(self.0 | 1 << feature as u32)
    }

    pub fn without(self, feature: Feature) -> FeatureSet {
        FeatureSet(self.0 & !(1 << feature as u32))
    }

    pub fn contains(self, feature: Feature) -> bool {
        self.0 & (1 << feature as u32) != 0
    }

    pub fn union(self, other: FeatureSet) -> FeatureSet {
        FeatureSet(self.0 | other.0)
    }

    pub fn minus(self, other: FeatureSet) -> FeatureSet {
        FeatureSet(self.0 & !other.0)
    }

    pub fn is_subset_of(self, other: FeatureSet) -> bool {
        self.minus(other).0 == 0
    }
}

impl std::fmt::Display for FeatureSet {
    /// TVM's `FeatureSet::ToString`: `[fVar, fCall, ]`, each name followed
    /// by a comma and a space.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[")?;
        for feature in ALL.iter().filter(|&&feature| self.contains(feature)) {
            write!(f, "f{feature:?}, ")?;
        }
        f.write_str("]")
    }
}

/// The features `expr` uses. Walks with an explicit stack, so deep
/// programs cannot overflow the call stack.
pub fn detect_features(expr: &Expr) -> FeatureSet {
    let mut features = FeatureSet::none();
    let mut visited: HashSet<usize> = HashSet::default();
    let mut stack = vec![expr.clone()];
    while let Some(node) = stack.pop() {
        if !visited.insert(node.addr()) {
            if !is_atomic(&node) {
                features = features.with(Feature::Graph);
            }
            continue;
        }
        features = features.with(kind_feature(&node));
        match node.kind() {
            // TVM does not look inside primitive (fused) functions.
            ExprKind::Function(_) if node.as_function().is_some_and(|f| f.is_primitive()) => {
                continue
            }
            ExprKind::Let { var, value, .. } if mentions_var(value, var.id()) => {
                features = features.with(Feature::LetRec);
            }
            _ => {}
        }
        let mut children = Vec::new();
        for_each_child_except_pattern_vars(&node, |child| children.push(child.clone()));
        // Reversed so that children are visited first to last, as TVM does.
        stack.extend(children.into_iter().rev());
    }
    features
}

/// The features of every function of `module`.
pub fn detect_module_features(module: &IRModule) -> FeatureSet {
    module.functions().fold(FeatureSet::none(), |set, (_, f)| {
        set.union(detect_features(f.expr()))
    })
}

/// TVM's `CheckFeature(expr, fs)`: an error naming the features of `expr`
/// outside `allowed`, after the expression's text, as TVM's message is.
pub fn check_features(expr: &Expr, allowed: FeatureSet) -> Result<(), Diagnostic> {
    let detected = detect_features(expr);
    if detected.is_subset_of(allowed) {
        return Ok(());
    }
    let options = PrintOptions {
        show_meta_data: false,
        ..Default::default()
    };
    let message = format!(
        "{}\nhas unsupported feature: {}",
        print_expr(expr, &options).trim_end(),
        detected.minus(allowed)
    );
    Err(Diagnostic::pass_failed_at(expr, message))
}

/// TVM's `CheckFeature(mod, fs)`: every function of `module`, in order.
pub fn check_module_features(module: &IRModule, allowed: FeatureSet) -> Result<(), Diagnostic> {
    module
        .functions()
        .try_for_each(|(_, f)| check_features(f.expr(), allowed))
}

/// TVM's `IsAtomic`: nodes that are shared by reference, never copied.
fn is_atomic(expr: &Expr) -> bool {
    matches!(
        expr.kind(),
        ExprKind::Var(_)
            | ExprKind::Op(_)
            | ExprKind::Constructor(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Constant(_)
    )
}

fn kind_feature(expr: &Expr) -> Feature {
    match expr.kind() {
        ExprKind::Var(_) => Feature::Var,
        ExprKind::GlobalVar(_) => Feature::GlobalVar,
        ExprKind::Constant(_) => Feature::Constant,
        ExprKind::Tuple(_) => Feature::Tuple,
        ExprKind::TupleGetItem { .. } => Feature::TupleGetItem,
        ExprKind::Function(_) => Feature::Function,
        ExprKind::Op(_) => Feature::Op,
        ExprKind::Call(_) => Feature::Call,
        ExprKind::Let { .. } => Feature::Let,
        ExprKind::If { .. } => Feature::If,
        ExprKind::RefCreate(_) => Feature::RefCreate,
        ExprKind::RefRead(_) => Feature::RefRead,
        ExprKind::RefWrite { .. } => Feature::RefWrite,
        ExprKind::Constructor(_) => Feature::Constructor,
        ExprKind::Match { .. } => Feature::Match,
    }
}

/// Whether `var` occurs in `expr` (TVM asks whether it is among the free
/// variables of a `let`'s value; a variable is bound once, so inside its
/// own value every occurrence is free).
fn mentions_var(expr: &Expr, var: VarId) -> bool {
    let mut found = false;
    relay_ir::rewrite::post_order_each(expr, |node| {
        if let ExprKind::Var(data) = node.kind() {
            found |= data.id == var;
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_lower::parse_and_lower_expr;

    fn features(text: &str) -> FeatureSet {
        let (expr, diagnostics) = parse_and_lower_expr("test", text);
        assert!(!diagnostics.has_errors(), "{text}");
        detect_features(&expr)
    }

    #[test]
    fn a_shared_call_makes_a_graph_and_a_shared_variable_does_not() {
        let shared = features("fn (%x) { %0 = negative(%x); add(%0, %0) }");
        assert!(shared.contains(Feature::Graph));
        let tree = features("fn (%x) { add(%x, %x) }");
        assert!(!tree.contains(Feature::Graph));
        assert_eq!(
            tree.to_string(),
            "[fVar, fFunction, fOp, fCall, ]",
            "TVM's order and punctuation"
        );
    }

    #[test]
    fn a_let_whose_value_mentions_its_variable_is_recursive() {
        let rec = features("let %f = fn (%x) { %f(%x) }; %f");
        assert!(rec.contains(Feature::LetRec));
        let plain = features("let %y = 1; %y");
        assert!(!plain.contains(Feature::LetRec));
    }

    #[test]
    fn the_check_message_ends_with_the_missing_features() {
        let (expr, _) = parse_and_lower_expr("test", "fn (%x) { %0 = negative(%x); add(%0, %0) }");
        let error = check_features(&expr, FeatureSet::all().without(Feature::Graph)).unwrap_err();
        assert!(
            error
                .message
                .ends_with("\nhas unsupported feature: [fGraph, ]"),
            "{}",
            error.message
        );
    }
}
