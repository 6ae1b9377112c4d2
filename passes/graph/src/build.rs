//! IR → [`Graph`]: one node per value-producing expression, shared
//! expressions (the `%N` bindings of the text) drawn once. A call of a
//! function literal draws the function as a cluster whose parameters are
//! fed by the arguments; `let` names the node of its value; `if` and
//! `match` draw their branches and clauses as clusters whose results flow
//! into the `if`/`match` node.

use crate::labels::{constant_text, key_attributes, type_text};
use crate::model::{Cluster, ClusterKind, Edge, Graph, Node, NodeKind, SourceSpan};
use relay_ir::source::FileId;
use relay_ir::{Expr, ExprKind, Function, IRModule, Pattern, Type, VarId};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// Stack left before a deeper call grows it (deep chains of calls recurse
/// once per link).
const RED_ZONE: usize = 128 * 1024;
const SEGMENT: usize = 8 * 1024 * 1024;

/// Why no graph could be drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphError {
    /// The module has no function of that name; the names it has.
    NoSuchFunction {
        name: String,
        available: Vec<String>,
    },
    /// The module has no function at all.
    NoFunctions,
}

impl std::fmt::Display for GraphError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GraphError::NoSuchFunction { name, available } => write!(
                f,
                "the module has no function `@{name}` (it has: {})",
                available
                    .iter()
                    .map(|n| format!("@{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            GraphError::NoFunctions => write!(f, "the module has no function to draw"),
        }
    }
}

/// The function drawn when none is named: `@main` if there is one, else
/// the first in the module's order.
pub fn default_function(module: &IRModule) -> Option<String> {
    if module.function("main").is_some() {
        return Some("main".to_string());
    }
    module.functions().next().map(|(name, _)| name.to_string())
}

/// The graph of global function `name` (default: [`default_function`]).
pub fn function_graph(module: &IRModule, name: Option<&str>) -> Result<Graph, GraphError> {
    let name = match name {
        Some(name) => name.trim_start_matches('@').to_string(),
        None => default_function(module).ok_or(GraphError::NoFunctions)?,
    };
    let function = module
        .function(&name)
        .ok_or_else(|| GraphError::NoSuchFunction {
            name: name.clone(),
            available: module.functions().map(|(n, _)| n.to_string()).collect(),
        })?;
    Ok(graph_of(&name, function))
}

/// The graph of `function`, named `name`.
pub fn graph_of(name: &str, function: &Function) -> Graph {
    let mut builder = Builder {
        graph: Graph {
            function: name.to_string(),
            ..Graph::default()
        },
        file: function.expr().span().map(|s| s.file),
        memo: HashMap::new(),
        vars: HashMap::new(),
        cluster: None,
    };
    for param in function.params() {
        let node = builder.node(
            NodeKind::Param,
            format!("%{}", param.name()),
            Vec::new(),
            param.expr(),
        );
        builder.vars.insert(param.id(), node);
    }
    let body = function.body();
    let result = builder.value(body);
    let output = builder.node(NodeKind::Output, "output".to_string(), Vec::new(), body);
    builder.graph.nodes[output].span = None;
    builder.edge(result, output, 0, body);
    builder.graph
}

struct Builder {
    graph: Graph,
    /// Spans are kept only when they point into the function's own file
    /// (a pass may build nodes from another text).
    file: Option<FileId>,
    /// The node giving each expression's value, by node address, within
    /// the function being expanded.
    memo: HashMap<usize, usize>,
    vars: HashMap<VarId, usize>,
    cluster: Option<usize>,
}

impl Builder {
    fn span_of(&self, e: &Expr) -> Option<SourceSpan> {
        let span = e.span()?;
        (Some(span.file) == self.file).then(|| SourceSpan {
            start: span.range.start().into(),
            end: span.range.end().into(),
        })
    }

    fn node(&mut self, kind: NodeKind, label: String, details: Vec<String>, e: &Expr) -> usize {
        let span = self.span_of(e);
        self.graph.nodes.push(Node {
            kind,
            label,
            details,
            binding: None,
            cluster: self.cluster,
            span,
            content: 0,
        });
        self.graph.nodes.len() - 1
    }

    /// An edge carrying the value of `source` (whose type labels it).
    fn edge(&mut self, from: usize, to: usize, port: usize, source: &Expr) {
        self.graph.edges.push(Edge {
            from,
            to,
            port,
            label: type_text(value_type(source).as_ref()),
        });
    }

    fn open_cluster(&mut self, kind: ClusterKind, label: String, e: &Expr) -> usize {
        let span = self.span_of(e);
        self.graph.clusters.push(Cluster {
            kind,
            label,
            parent: self.cluster,
            span,
        });
        let id = self.graph.clusters.len() - 1;
        self.cluster = Some(id);
        id
    }

    /// The node whose output is the value of `e`.
    fn value(&mut self, e: &Expr) -> usize {
        stacker::maybe_grow(RED_ZONE, SEGMENT, || self.value_inner(e))
    }

    fn value_inner(&mut self, e: &Expr) -> usize {
        if let Some(&node) = self.memo.get(&e.addr()) {
            return node;
        }
        let node = self.draw(e);
        self.memo.insert(e.addr(), node);
        node
    }

    /// Draws `e` (not drawn yet) and its inputs.
    fn draw(&mut self, e: &Expr) -> usize {
        match e.kind() {
            ExprKind::Var(var) => match self.vars.get(&var.id) {
                Some(&node) => node,
                // A free variable: an input from outside the function.
                None => {
                    let node = self.node(NodeKind::Param, format!("%{}", var.name), vec![], e);
                    self.vars.insert(var.id, node);
                    node
                }
            },
            ExprKind::GlobalVar(g) => {
                self.node(NodeKind::Value, format!("@{}", g.name()), vec![], e)
            }
            ExprKind::Constant(data) => {
                let (label, details) = constant_text(data);
                let node = self.node(NodeKind::Constant, label, details, e);
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                data.data.hash(&mut hasher);
                self.graph.nodes[node].content = hasher.finish();
                node
            }
            ExprKind::Op(op) => self.node(NodeKind::Value, op.name.clone(), vec![], e),
            ExprKind::Constructor(c) => self.node(NodeKind::Value, c.name().to_string(), vec![], e),
            ExprKind::Tuple(fields) => {
                let inputs: Vec<usize> = fields.iter().map(|f| self.value(f)).collect();
                let node = self.node(NodeKind::Tuple, "tuple".to_string(), vec![], e);
                for (port, (field, input)) in fields.iter().zip(inputs).enumerate() {
                    self.edge(input, node, port, field);
                }
                node
            }
            ExprKind::TupleGetItem { tuple, index } => {
                let input = self.value(tuple);
                let node = self.node(NodeKind::Project, format!(".{index}"), vec![], e);
                self.edge(input, node, 0, tuple);
                node
            }
            ExprKind::Call(call) => self.draw_call(e, call),
            ExprKind::Let { .. } => self.draw_lets(e),
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let c = self.value(cond);
                let outer = self.cluster;
                let mut results = Vec::new();
                for (label, branch) in [("then", then_branch), ("else", else_branch)] {
                    self.open_cluster(ClusterKind::Branch, label.to_string(), branch);
                    results.push((self.value(branch), branch));
                    self.cluster = outer;
                }
                let node = self.node(NodeKind::If, "if".to_string(), vec![], e);
                self.edge(c, node, 0, cond);
                for (i, (result, branch)) in results.into_iter().enumerate() {
                    self.edge(result, node, i + 1, branch);
                }
                node
            }
            ExprKind::Match {
                data,
                clauses,
                complete,
            } => {
                let scrutinee = self.value(data);
                let outer = self.cluster;
                let mut results = Vec::new();
                for clause in clauses {
                    self.open_cluster(
                        ClusterKind::Clause,
                        pattern_text(&clause.pattern),
                        &clause.rhs,
                    );
                    self.bind_pattern(&clause.pattern, scrutinee, data);
                    results.push((self.value(&clause.rhs), &clause.rhs));
                    self.cluster = outer;
                }
                let label = if *complete { "match" } else { "match?" };
                let node = self.node(NodeKind::Match, label.to_string(), vec![], e);
                self.edge(scrutinee, node, 0, data);
                for (i, (result, rhs)) in results.into_iter().enumerate() {
                    self.edge(result, node, i + 1, rhs);
                }
                node
            }
            ExprKind::Function(_) => self.draw_function_value(e, None),
            ExprKind::RefCreate(value) => self.unary(NodeKind::Ref, "ref", value, e),
            ExprKind::RefRead(reference) => self.unary(NodeKind::Ref, "ref_read", reference, e),
            ExprKind::RefWrite { reference, value } => {
                let r = self.value(reference);
                let v = self.value(value);
                let node = self.node(NodeKind::Ref, "ref_write".to_string(), vec![], e);
                self.edge(r, node, 0, reference);
                self.edge(v, node, 1, value);
                node
            }
        }
    }

    /// A function literal used as a value: a `fn` node fed by the cluster
    /// of its body. `own_var` names the node inside the body (a closure
    /// bound by `let` may call itself).
    fn draw_function_value(&mut self, e: &Expr, own_var: Option<VarId>) -> usize {
        let function = e.as_function().expect("a function expression");
        let node = self.node(NodeKind::Function, "fn".to_string(), vec![], e);
        if let Some(var) = own_var {
            self.vars.insert(var, node);
        }
        let result = self.expand_function(&function, &[]);
        self.edge(result, node, 0, function.body());
        node
    }

    fn unary(&mut self, kind: NodeKind, label: &str, input: &Expr, e: &Expr) -> usize {
        let from = self.value(input);
        let node = self.node(kind, label.to_string(), vec![], e);
        self.edge(from, node, 0, input);
        node
    }

    /// A chain `let %a = …; let %b = …; body`, walked as a loop (a program
    /// in A-normal form is one long chain).
    fn draw_lets(&mut self, e: &Expr) -> usize {
        let mut current = e.clone();
        while let ExprKind::Let { var, value, body } = current.kind() {
            let node = match self.memo.get(&value.addr()) {
                Some(&node) => node,
                // A recursive closure refers to its own variable.
                None if value.as_function().is_some() => {
                    let node = self.draw_function_value(value, Some(var.id()));
                    self.memo.insert(value.addr(), node);
                    node
                }
                None => self.value(value),
            };
            self.vars.insert(var.id(), node);
            let binding = &mut self.graph.nodes[node].binding;
            if binding.is_none() {
                *binding = Some(format!("%{}", var.name()));
            }
            let next = body.clone();
            current = next;
        }
        self.value(&current)
    }

    fn draw_call(&mut self, e: &Expr, call: &relay_ir::Call) -> usize {
        if let Some(function) = call.callee.as_function() {
            let inputs: Vec<(usize, &Expr)> =
                call.args.iter().map(|a| (self.value(a), a)).collect();
            return self.expand_function(&function, &inputs);
        }
        let inputs: Vec<usize> = call.args.iter().map(|a| self.value(a)).collect();
        let (kind, label, details, callee_input) = match call.callee.kind() {
            ExprKind::Op(op) => (
                NodeKind::OpCall,
                op.name.clone(),
                key_attributes(op, call.attrs.as_ref()),
                None,
            ),
            ExprKind::GlobalVar(g) => (NodeKind::Call, format!("@{}", g.name()), vec![], None),
            ExprKind::Constructor(c) => (NodeKind::Call, c.name().to_string(), vec![], None),
            _ => (
                NodeKind::Call,
                "call".to_string(),
                vec![],
                Some(self.value(&call.callee)),
            ),
        };
        let node = self.node(kind, label, details, e);
        let first_arg_port = match callee_input {
            Some(callee) => {
                self.edge(callee, node, 0, &call.callee);
                1
            }
            None => 0,
        };
        for (i, (arg, input)) in call.args.iter().zip(inputs).enumerate() {
            self.edge(input, node, first_arg_port + i, arg);
        }
        node
    }

    /// Draws a function literal as a cluster; its parameters are fed by
    /// `inputs` when it is called. Returns the node of its body's value.
    fn expand_function(&mut self, function: &Function, inputs: &[(usize, &Expr)]) -> usize {
        let kind = if function.is_primitive() {
            ClusterKind::Primitive
        } else {
            ClusterKind::Function
        };
        let outer_cluster = self.cluster;
        let cluster = self.open_cluster(kind, String::new(), function.expr());
        // Names inside are resolved afresh: the same literal called twice
        // is drawn twice, each fed by its own arguments.
        let outer_memo = std::mem::take(&mut self.memo);
        for (i, param) in function.params().iter().enumerate() {
            let node = self.node(
                NodeKind::Param,
                format!("%{}", param.name()),
                vec![],
                param.expr(),
            );
            if let Some((input, arg)) = inputs.get(i) {
                self.edge(*input, node, 0, arg);
            }
            self.vars.insert(param.id(), node);
        }
        let first_node = self.graph.nodes.len();
        let result = self.value(function.body());
        self.memo = outer_memo;
        self.cluster = outer_cluster;
        self.graph.clusters[cluster].label = cluster_label(function, kind, &self.graph, first_node);
        result
    }

    fn bind_pattern(&mut self, pattern: &Pattern, scrutinee: usize, data: &Expr) {
        match pattern {
            Pattern::Wildcard => {}
            Pattern::Var(var) => {
                let node = self.node(
                    NodeKind::PatternVar,
                    format!("%{}", var.name()),
                    vec![],
                    var.expr(),
                );
                self.edge(scrutinee, node, 0, data);
                self.vars.insert(var.id(), node);
            }
            Pattern::Constructor(_, fields) | Pattern::Tuple(fields) => {
                for field in fields {
                    self.bind_pattern(field, scrutinee, data);
                }
            }
        }
    }
}

/// The type of the value an expression gives (a variable's annotation
/// before inference).
fn value_type(e: &Expr) -> Option<Type> {
    if let Some(t) = e.checked_type() {
        return Some(t.clone());
    }
    e.as_var().and_then(|v| v.type_annotation().cloned())
}

/// A fused function is named as TVM names its kernel (`fused_nn_conv2d_add`)
/// or by its `Composite` pattern; other functions are `fn`.
fn cluster_label(
    function: &Function,
    kind: ClusterKind,
    graph: &Graph,
    first_node: usize,
) -> String {
    if let Some(name) = function.attr("Composite").and_then(|v| v.as_str()) {
        return name.to_string();
    }
    if kind != ClusterKind::Primitive {
        return "fn".to_string();
    }
    let mut name = "fused".to_string();
    for node in &graph.nodes[first_node..] {
        if node.kind == NodeKind::OpCall {
            name.push('_');
            name.push_str(&node.label.replace('.', "_"));
        }
        if name.len() > 60 {
            name.push('…');
            break;
        }
    }
    name
}

/// A pattern as the text writes it.
fn pattern_text(pattern: &Pattern) -> String {
    match pattern {
        Pattern::Wildcard => "_".to_string(),
        Pattern::Var(var) => format!("%{}", var.name()),
        Pattern::Constructor(c, fields) if fields.is_empty() => c.name().to_string(),
        Pattern::Constructor(c, fields) => {
            let fields: Vec<String> = fields.iter().map(pattern_text).collect();
            format!("{}({})", c.name(), fields.join(", "))
        }
        Pattern::Tuple(fields) => {
            let fields: Vec<String> = fields.iter().map(pattern_text).collect();
            format!("({})", fields.join(", "))
        }
    }
}
