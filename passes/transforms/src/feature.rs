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
use relay_ir::fxhash::{FxMap as HashMap, FxSet as HashSet};

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

/// One step of [`detect_features`]'s walk.
enum Step {
    Visit(Expr),
    /// The walk enters the value of a `let` binding this variable: a use of
    /// it until the matching `Close` makes the `let` recursive.
    Open(VarId),
    Close(VarId),
}

/// The features `expr` uses. Walks with an explicit stack, so deep
/// programs cannot overflow the call stack, and visits each node once:
/// whether a `let` is recursive (TVM looks for its variable among the free
/// variables of its value) is seen when the walk meets a use of the
/// variable while inside that value, not by walking the value again per
/// `let` (quadratic on nested `let`s in value position, as gradient's
/// results are).
pub fn detect_features(expr: &Expr) -> FeatureSet {
    let mut features = FeatureSet::none();
    let mut visited: HashSet<usize> = HashSet::default();
    // The variables of the `let`s whose value the walk is inside (a count:
    // a malformed program may bind one variable twice).
    let mut open: HashMap<VarId, usize> = HashMap::default();
    let mut stack = vec![Step::Visit(expr.clone())];
    while let Some(step) = stack.pop() {
        let node = match step {
            Step::Visit(node) => node,
            Step::Open(var) => {
                *open.entry(var).or_default() += 1;
                continue;
            }
            Step::Close(var) => {
                if let Some(count) = open.get_mut(&var) {
                    *count -= 1;
                    if *count == 0 {
                        open.remove(&var);
                    }
                }
                continue;
            }
        };
        // Before the visited check: a variable node is shared by all its
        // uses, so its first visit may have been elsewhere.
        if let ExprKind::Var(data) = node.kind() {
            if open.contains_key(&data.id) {
                features = features.with(Feature::LetRec);
            }
        }
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
            // The variable, then its value with the variable open, then
            // the body (pushed in reverse).
            ExprKind::Let { var, value, body } => {
                stack.push(Step::Visit(body.clone()));
                stack.push(Step::Close(var.id()));
                stack.push(Step::Visit(value.clone()));
                stack.push(Step::Open(var.id()));
                stack.push(Step::Visit(var.expr().clone()));
                continue;
            }
            _ => {}
        }
        let mut children = Vec::new();
        for_each_child_except_pattern_vars(&node, |child| children.push(child.clone()));
        // Reversed so that children are visited first to last, as TVM does.
        stack.extend(children.into_iter().rev().map(Step::Visit));
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

#[cfg(test)]
mod tests {
    use super::*;
    use relay_ir::Var;
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
        // Deeper in the value, through a nested `let` in value position.
        let nested = features("let %a = (let %b = negative(%a); %b); %a");
        assert!(nested.contains(Feature::LetRec));
        // A use in the body, or in the value of a later `let`, is not.
        let later = features("let %a = 1f; let %b = (let %c = %a; %c); add(%a, %b)");
        assert!(!later.contains(Feature::LetRec), "{later}");
    }

    #[test]
    fn nested_lets_in_value_position_are_walked_once() {
        // `let %v0 = (let %v1 = (… %x …); %v1); %v0`, 20,000 deep (built,
        // not parsed: deeper than the parser's nesting limit). The walk was
        // quadratic: each `let` searched its whole value for its variable.
        let x = Var::new("x", None, None);
        let mut expr = x.expr().clone();
        for i in 0..20_000 {
            let v = Var::new(format!("v{i}"), None, None);
            expr = Expr::let_(v.clone(), expr, v.expr().clone(), None);
        }
        let features = detect_features(&expr);
        assert!(features.contains(Feature::Let), "{features}");
        assert!(!features.contains(Feature::LetRec), "{features}");
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
