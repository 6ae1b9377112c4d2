//! The language features an expression uses, and the check passes make
//! before they run: TVM v0.13's `DetectFeature` / `CheckFeature`
//! (`src/relay/analysis/feature.cc`).
//!
//! A feature is a kind of node (`fVar`, `fCall`, …) plus two properties of
//! the program: `fGraph` (a non-atomic node is reached twice, i.e. the
//! program is a graph rather than a tree) and `fLetRec` (a `let` whose value
//! mentions its own variable). ToCPS, UnCPS, the gradient passes and
//! LazyGradientInit refuse programs with features they do not handle
//! ([`check_features`]): TVM's words for the features (`has unsupported
//! feature: [fGraph, ]`), at the first expression that has one, with what
//! the feature is and which pass to run first, where one makes the program
//! acceptable. TVM's message starts with the whole printed function, which
//! the diagnostic's span replaces here.

use relay_ir::diagnostic::Diagnostic;
use relay_ir::printer::{print_expr, PrintOptions};
use relay_ir::rewrite::for_each_child_except_pattern_vars;
use relay_ir::{Expr, ExprKind, IRModule, VarId};
use std::fmt::Write as _;
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
    walk_features(expr, |feature, _| {
        features = features.with(feature);
    });
    features
}

/// The walk of [`detect_features`], calling `found` with each feature met
/// and the node that has it (for `fGraph`, the node reached again; for
/// `fLetRec`, the use of the variable inside its own value).
fn walk_features(expr: &Expr, mut found: impl FnMut(Feature, &Expr)) {
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
                found(Feature::LetRec, &node);
            }
        }
        if !visited.insert(node.addr()) {
            if !is_atomic(&node) {
                found(Feature::Graph, &node);
            }
            continue;
        }
        found(kind_feature(&node), &node);
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
}

/// The features of every function of `module`.
pub fn detect_module_features(module: &IRModule) -> FeatureSet {
    module.functions().fold(FeatureSet::none(), |set, (_, f)| {
        set.union(detect_features(f.expr()))
    })
}

/// TVM's `CheckFeature(expr, fs)` for the pass `pass`: an error naming
/// the features of `expr` outside `allowed` in TVM's words, at the first
/// expression that has one (the checked expression when that one has no
/// span; a short excerpt of it when neither has one), saying what the
/// features are and, where a normal form removes one, to run that pass
/// first.
pub fn check_features(pass: &str, expr: &Expr, allowed: FeatureSet) -> Result<(), Diagnostic> {
    let mut detected = FeatureSet::none();
    let mut first_site: Option<Expr> = None;
    walk_features(expr, |feature, node| {
        detected = detected.with(feature);
        if !allowed.contains(feature) && first_site.is_none() {
            first_site = Some(node.clone());
        }
    });
    if detected.is_subset_of(allowed) {
        return Ok(());
    }
    let unsupported = detected.minus(allowed);
    let mut message = format!("{pass}: has unsupported feature: {unsupported} (");
    let meanings: Vec<String> = ALL
        .iter()
        .filter(|&&f| unsupported.contains(f))
        .map(|&f| format!("f{f:?}: {}", meaning(f)))
        .collect();
    message.push_str(&meanings.join("; "));
    message.push(')');
    // At the offending expression; one a pass built has no span, so it is
    // quoted, and the diagnostic sits at the checked expression.
    let site = first_site.unwrap_or_else(|| expr.clone());
    let at = if site.span().is_some() {
        &site
    } else {
        let _ = write!(message, "; in {}", excerpt(&site));
        expr
    };
    let mut diagnostic = Diagnostic::pass_failed_at(at, message);
    if let Some(help) = remedy(pass, unsupported, allowed) {
        diagnostic = diagnostic.with_help(help);
    }
    Err(diagnostic)
}

/// What a feature is, for the message.
fn meaning(feature: Feature) -> &'static str {
    match feature {
        Feature::Graph => {
            "an expression is used more than once, so the program is a graph, not a tree"
        }
        Feature::LetRec => "a let-bound function calls itself",
        Feature::Let => "a let binding",
        Feature::If => "an if expression",
        Feature::RefCreate | Feature::RefRead | Feature::RefWrite => {
            "a reference (ref, ref_read, ref_write)"
        }
        Feature::Constructor => "an ADT constructor",
        Feature::Match => "a match expression",
        Feature::GlobalVar => "a global function",
        Feature::Function => "a function literal",
        Feature::Tuple => "a tuple",
        Feature::TupleGetItem => "a tuple projection",
        Feature::Call => "a call",
        Feature::Op => "an operator",
        Feature::Constant => "a constant",
        Feature::Var => "a variable",
    }
}

/// The pass that removes the unsupported features without bringing in
/// others the pass refuses, if there is one.
fn remedy(pass: &str, unsupported: FeatureSet, allowed: FeatureSet) -> Option<String> {
    if unsupported == FeatureSet::of(&[Feature::Graph]) && allowed.contains(Feature::Let) {
        return Some(format!(
            "run ToANormalForm and InferType before {pass}: ToANormalForm binds every \
             expression to a variable, so none is used twice"
        ));
    }
    if unsupported == FeatureSet::of(&[Feature::Let]) && allowed.contains(Feature::Graph) {
        return Some(format!(
            "run ToGraphNormalForm and InferType before {pass}: ToGraphNormalForm replaces \
             let bindings by their values (a dataflow graph)"
        ));
    }
    None
}

/// The first line of `expr`'s text, shortened: for an expression a pass
/// built (no span to point at).
fn excerpt(expr: &Expr) -> String {
    const LONGEST: usize = 80;
    let options = PrintOptions {
        show_meta_data: false,
        ..Default::default()
    };
    let text = print_expr(expr, &options);
    // The printer writes the version header and a `free_var` line per free
    // variable before the expression.
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("#[") && !l.starts_with("free_var "));
    let line = lines.next().unwrap_or("");
    let more = lines.next().is_some();
    if line.chars().count() > LONGEST {
        let cut: String = line.chars().take(LONGEST).collect();
        format!("`{cut}…`")
    } else if more {
        format!("`{line} …`")
    } else {
        format!("`{line}`")
    }
}

/// TVM's `CheckFeature(mod, fs)`: every function of `module`, in order.
pub fn check_module_features(
    pass: &str,
    module: &IRModule,
    allowed: FeatureSet,
) -> Result<(), Diagnostic> {
    module
        .functions()
        .try_for_each(|(_, f)| check_features(pass, f.expr(), allowed))
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
    fn the_check_message_names_the_pass_the_features_and_what_to_run_first() {
        let (expr, _) = parse_and_lower_expr("test", "fn (%x) { %0 = negative(%x); add(%0, %0) }");
        let error =
            check_features("ToCPS", &expr, FeatureSet::all().without(Feature::Graph)).unwrap_err();
        assert_eq!(
            error.message,
            "ToCPS: has unsupported feature: [fGraph, ] (fGraph: an expression is used more \
             than once, so the program is a graph, not a tree)"
        );
        assert_eq!(
            error.help.as_deref(),
            Some(
                "run ToANormalForm and InferType before ToCPS: ToANormalForm binds every \
                 expression to a variable, so none is used twice"
            )
        );
        // At the shared expression, not the whole function.
        let span = error.span.expect("the shared call has a span");
        assert_eq!(
            (u32::from(span.range.start()), u32::from(span.range.end())),
            (15, 27),
            "negative(%x) in {:?}",
            "fn (%x) { %0 = negative(%x); add(%0, %0) }"
        );
    }

    #[test]
    fn a_let_refused_where_graphs_are_allowed_points_to_graph_normal_form() {
        let (expr, _) = parse_and_lower_expr("test", "fn (%x) { let %y = add(%x, %x); %y }");
        let allowed = FeatureSet::all().without(Feature::Let);
        let error = check_features("FirstOrderGradient", &expr, allowed).unwrap_err();
        assert!(
            error
                .message
                .starts_with("FirstOrderGradient: has unsupported feature: [fLet, ] (fLet: "),
            "{}",
            error.message
        );
        assert!(error.help.unwrap().starts_with("run ToGraphNormalForm"));
    }

    #[test]
    fn an_expression_without_a_span_is_quoted_briefly() {
        // Built, not parsed: no span anywhere.
        let x = Var::new("x", None, None);
        let shared = relay_ir::build::op_call("negative", vec![x.expr().clone()]);
        let body = Expr::tuple(vec![shared.clone(), shared], None);
        let function = relay_ir::Function::new(
            relay_ir::FunctionData {
                params: vec![x],
                body,
                ret_type: None,
                type_params: Vec::new(),
                attrs: Default::default(),
                virtual_device: None,
            },
            None,
        );
        let error = check_features(
            "LazyGradientInit",
            function.expr(),
            FeatureSet::all().without(Feature::Graph),
        )
        .unwrap_err();
        assert!(error.span.is_none());
        assert!(
            error.message.ends_with("; in `negative(%x)`"),
            "{}",
            error.message
        );
        assert_eq!(error.message.lines().count(), 1);
    }
}
