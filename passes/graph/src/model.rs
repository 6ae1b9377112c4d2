//! The graph model: nodes (operator calls, parameters, constants, tuples,
//! control flow), edges carrying the type of the value that flows along
//! them, and clusters (fused `Primitive` functions, function literals, the
//! branches of `if` and the clauses of `match`). Writers and the layout read
//! only this; nothing here knows about the IR.

/// What a node stands for; the writers style nodes by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    /// A parameter of the drawn function or of a nested function.
    Param,
    /// A tensor constant.
    Constant,
    /// A call of a primitive operator.
    OpCall,
    /// A call of a global function, a local closure or a constructor.
    Call,
    /// `(a, b, …)`.
    Tuple,
    /// `t.i`.
    Project,
    /// `if`: the condition and the two branch results flow in.
    If,
    /// `match`: the scrutinee and each clause's result flow in.
    Match,
    /// A variable bound by a `match` pattern.
    PatternVar,
    /// A value without inputs: a global function, constructor or operator
    /// used as a value.
    Value,
    /// A function literal used as a value (its body is a cluster).
    Function,
    /// `ref(…)`, `ref_read(…)`, `ref_write(…)`.
    Ref,
    /// The function's result.
    Output,
}

impl NodeKind {
    /// The name the JSON output and the CSS classes use.
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Param => "param",
            NodeKind::Constant => "constant",
            NodeKind::OpCall => "op",
            NodeKind::Call => "call",
            NodeKind::Tuple => "tuple",
            NodeKind::Project => "project",
            NodeKind::If => "if",
            NodeKind::Match => "match",
            NodeKind::PatternVar => "pattern",
            NodeKind::Value => "value",
            NodeKind::Function => "function",
            NodeKind::Ref => "ref",
            NodeKind::Output => "output",
        }
    }
}

/// A byte range of the source file the function was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceSpan {
    pub start: u32,
    pub end: u32,
}

/// One node.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    /// The first line: the operator, the parameter's name, `if`, …
    pub label: String,
    /// Key attributes (those that differ from the operator's defaults) or
    /// a constant's shape, one `name=value` per entry.
    pub details: Vec<String>,
    /// The `let` variable the value is bound to, if any.
    pub binding: Option<String>,
    /// The innermost cluster holding the node.
    pub cluster: Option<usize>,
    /// Where the expression is written, when it is in the source file.
    pub span: Option<SourceSpan>,
    /// A hash of what the label does not show (a constant's bytes), so a
    /// diff sees a folded constant change; 0 otherwise.
    pub content: u64,
}

/// One edge: a value flowing from `from` into input `port` of `to`.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    /// The argument position at `to` (0-based).
    pub port: usize,
    /// The type of the value, in Relay syntax; empty when not inferred.
    pub label: String,
}

/// What a cluster groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClusterKind {
    /// A fused function (`Primitive=1`).
    Primitive,
    /// Any other function literal.
    Function,
    /// The `then` or `else` branch of an `if`.
    Branch,
    /// One clause of a `match`.
    Clause,
}

impl ClusterKind {
    pub fn name(self) -> &'static str {
        match self {
            ClusterKind::Primitive => "primitive",
            ClusterKind::Function => "function",
            ClusterKind::Branch => "branch",
            ClusterKind::Clause => "clause",
        }
    }
}

/// A group of nodes drawn in one box; clusters nest.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    pub kind: ClusterKind,
    pub label: String,
    pub parent: Option<usize>,
    pub span: Option<SourceSpan>,
}

/// The dataflow graph of one function.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    /// The global function drawn (without `@`).
    pub function: String,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub clusters: Vec<Cluster>,
}

impl Graph {
    /// The clusters enclosing `node`, innermost first.
    pub fn cluster_path(&self, node: usize) -> Vec<usize> {
        let mut path = Vec::new();
        let mut next = self.nodes[node].cluster;
        while let Some(c) = next {
            path.push(c);
            next = self.clusters[c].parent;
        }
        path
    }

    /// How many operator calls the graph has, and how many fused functions.
    pub fn counts(&self) -> GraphCounts {
        GraphCounts {
            op_calls: self
                .nodes
                .iter()
                .filter(|n| n.kind == NodeKind::OpCall)
                .count(),
            primitive_functions: self
                .clusters
                .iter()
                .filter(|c| c.kind == ClusterKind::Primitive)
                .count(),
        }
    }

    /// The nodes whose span contains byte `offset`, the smallest span first
    /// (the node an editor's cursor is on).
    pub fn nodes_at(&self, offset: u32) -> Vec<usize> {
        let mut hits: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                self.nodes[i]
                    .span
                    .is_some_and(|s| s.start <= offset && offset <= s.end)
            })
            .collect();
        hits.sort_by_key(|&i| {
            let s = self.nodes[i].span.expect("filtered on spans");
            (s.end - s.start, i)
        });
        hits
    }
}

/// Sizes an editor shows above a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphCounts {
    pub op_calls: usize,
    pub primitive_functions: usize,
}
