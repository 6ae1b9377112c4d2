//! Dataflow patterns: the nodes of TVM's `tvm.relay.dataflow_pattern`
//! (`DFPattern`) and the constructors of its Python API (`wildcard()`,
//! `is_op(…)`, `p.has_attr(…)`, `p | q`, `p.optional(f)`, …).
//!
//! A [`Pattern`] is an immutable, reference-counted node. Identity matters,
//! as in TVM: a pattern node used twice in one pattern (a clone of the same
//! [`Pattern`]) must match the same expression node both times, while two
//! separately built `wildcard()`s match independently.

use relay_ir::dtype::DataType;
use relay_ir::{AttrValue, Expr, Type};
use std::fmt;
use std::sync::Arc;

/// A dataflow pattern (TVM's `DFPattern`).
#[derive(Clone)]
pub struct Pattern(Arc<PatternKind>);

/// One dimension of a [`PatternKind::Shape`] constraint.
#[derive(Debug, Clone, PartialEq)]
pub enum ShapeDim {
    /// A known extent.
    Known(i64),
    /// `?`: TVM's `Any()` dimension (matches only a dynamic dimension).
    Any,
}

/// The forms of a pattern, one per TVM pattern node.
#[derive(Debug)]
pub enum PatternKind {
    /// `wildcard()`: any expression.
    Wildcard,
    /// `is_var(name)`: a variable, with that name hint unless `name` is empty.
    Var { name: String },
    /// `is_constant()`: any constant.
    Constant,
    /// `is_expr(e)` / `is_op(name)`: an expression structurally equal to `e`.
    Expr(Expr),
    /// `callee(args…)`; `args: None` matches any arguments.
    Call {
        callee: Pattern,
        args: Option<Vec<Pattern>>,
    },
    /// `FunctionPattern(params, body)`; `params: None` matches any parameters.
    Function {
        params: Option<Vec<Pattern>>,
        body: Pattern,
    },
    /// `is_tuple(fields)`; `None` matches any tuple.
    Tuple(Option<Vec<Pattern>>),
    /// `is_tuple_get_item(tuple, index)`; `index: None` matches any index.
    TupleGetItem {
        tuple: Pattern,
        index: Option<usize>,
    },
    /// `is_if(cond, true_branch, false_branch)`.
    If {
        cond: Pattern,
        then_branch: Pattern,
        else_branch: Pattern,
    },
    /// `is_let(var, value, body)`.
    Let {
        var: Pattern,
        value: Pattern,
        body: Pattern,
    },
    /// `left | right`: tried left first.
    Alt(Pattern, Pattern),
    /// `pattern.has_attr({…})`: call attributes, function attributes, or
    /// operator attributes (`TOpPattern`, …) of what `pattern` matched.
    Attr {
        pattern: Pattern,
        attrs: Vec<(String, AttrValue)>,
    },
    /// `has_type(ty, pattern)`.
    Type { pattern: Pattern, ty: Type },
    /// `has_dtype(dtype, pattern)`.
    DataType { pattern: Pattern, dtype: DataType },
    /// `has_shape(shape, pattern)`.
    Shape {
        pattern: Pattern,
        shape: Vec<ShapeDim>,
    },
    /// `dominates(parent, path, child)`: `child` matches the expression, and
    /// every path from it back to an expression matching `parent` goes
    /// through expressions matching `path`, and the parent is dominated.
    Dominator {
        parent: Pattern,
        path: Pattern,
        child: Pattern,
    },
}

impl Pattern {
    pub fn new(kind: PatternKind) -> Pattern {
        Pattern(Arc::new(kind))
    }

    pub fn kind(&self) -> &PatternKind {
        &self.0
    }

    /// The node's identity, the key of the matcher's memo (valid while the
    /// pattern is alive).
    pub fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    pub fn ptr_eq(&self, other: &Pattern) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// `self(args…)`: a call whose callee matches `self`.
    pub fn call(&self, args: Vec<Pattern>) -> Pattern {
        Pattern::new(PatternKind::Call {
            callee: self.clone(),
            args: Some(args),
        })
    }

    /// `self(None)`: a call with any arguments.
    pub fn call_any_args(&self) -> Pattern {
        Pattern::new(PatternKind::Call {
            callee: self.clone(),
            args: None,
        })
    }

    /// `self | other`.
    pub fn or(&self, other: &Pattern) -> Pattern {
        Pattern::new(PatternKind::Alt(self.clone(), other.clone()))
    }

    /// `self.optional(f)` = `self | f(self)`.
    pub fn optional(&self, option: impl FnOnce(&Pattern) -> Pattern) -> Pattern {
        let with = option(self);
        self.or(&with)
    }

    pub fn has_attr(&self, attrs: Vec<(String, AttrValue)>) -> Pattern {
        Pattern::new(PatternKind::Attr {
            pattern: self.clone(),
            attrs,
        })
    }

    pub fn has_type(&self, ty: Type) -> Pattern {
        Pattern::new(PatternKind::Type {
            pattern: self.clone(),
            ty,
        })
    }

    pub fn has_dtype(&self, dtype: DataType) -> Pattern {
        Pattern::new(PatternKind::DataType {
            pattern: self.clone(),
            dtype,
        })
    }

    pub fn has_shape(&self, shape: Vec<ShapeDim>) -> Pattern {
        Pattern::new(PatternKind::Shape {
            pattern: self.clone(),
            shape,
        })
    }

    /// `self.dominates(parent, path)`: `self` is the child.
    pub fn dominates(&self, parent: &Pattern, path: &Pattern) -> Pattern {
        dominates(parent, path, self)
    }

    /// A copy made of new nodes, with the sharing inside `self` kept: what
    /// a named pattern (`@name`) stands for at each use, as a Python
    /// function that builds a pattern gives new nodes at each call.
    pub fn fresh_copy(&self) -> Pattern {
        fn copy(p: &Pattern, seen: &mut std::collections::HashMap<usize, Pattern>) -> Pattern {
            if let Some(done) = seen.get(&p.addr()) {
                return done.clone();
            }
            let mut c = |q: &Pattern| copy(q, seen);
            let kind = match p.kind() {
                PatternKind::Wildcard => PatternKind::Wildcard,
                PatternKind::Var { name } => PatternKind::Var { name: name.clone() },
                PatternKind::Constant => PatternKind::Constant,
                PatternKind::Expr(e) => PatternKind::Expr(e.clone()),
                PatternKind::Call { callee, args } => PatternKind::Call {
                    callee: c(callee),
                    args: args.as_ref().map(|a| a.iter().map(&mut c).collect()),
                },
                PatternKind::Function { params, body } => PatternKind::Function {
                    params: params.as_ref().map(|a| a.iter().map(&mut c).collect()),
                    body: c(body),
                },
                PatternKind::Tuple(fields) => {
                    PatternKind::Tuple(fields.as_ref().map(|a| a.iter().map(&mut c).collect()))
                }
                PatternKind::TupleGetItem { tuple, index } => PatternKind::TupleGetItem {
                    tuple: c(tuple),
                    index: *index,
                },
                PatternKind::If {
                    cond,
                    then_branch,
                    else_branch,
                } => PatternKind::If {
                    cond: c(cond),
                    then_branch: c(then_branch),
                    else_branch: c(else_branch),
                },
                PatternKind::Let { var, value, body } => PatternKind::Let {
                    var: c(var),
                    value: c(value),
                    body: c(body),
                },
                PatternKind::Alt(left, right) => PatternKind::Alt(c(left), c(right)),
                PatternKind::Attr { pattern, attrs } => PatternKind::Attr {
                    pattern: c(pattern),
                    attrs: attrs.clone(),
                },
                PatternKind::Type { pattern, ty } => PatternKind::Type {
                    pattern: c(pattern),
                    ty: ty.clone(),
                },
                PatternKind::DataType { pattern, dtype } => PatternKind::DataType {
                    pattern: c(pattern),
                    dtype: *dtype,
                },
                PatternKind::Shape { pattern, shape } => PatternKind::Shape {
                    pattern: c(pattern),
                    shape: shape.clone(),
                },
                PatternKind::Dominator {
                    parent,
                    path,
                    child,
                } => PatternKind::Dominator {
                    parent: c(parent),
                    path: c(path),
                    child: c(child),
                },
            };
            let fresh = Pattern::new(kind);
            seen.insert(p.addr(), fresh.clone());
            fresh
        }
        copy(self, &mut Default::default())
    }

    /// The direct sub-patterns, in the order TVM's `DFPatternVisitor`
    /// visits them (which orders the partitioned function's parameters).
    pub fn children(&self) -> Vec<&Pattern> {
        match self.kind() {
            PatternKind::Wildcard
            | PatternKind::Var { .. }
            | PatternKind::Constant
            | PatternKind::Expr(_) => Vec::new(),
            PatternKind::Call { callee, args } => {
                let mut out = vec![callee];
                out.extend(args.iter().flatten());
                out
            }
            PatternKind::Function { params, body } => {
                let mut out: Vec<&Pattern> = params.iter().flatten().collect();
                out.push(body);
                out
            }
            PatternKind::Tuple(fields) => fields.iter().flatten().collect(),
            PatternKind::TupleGetItem { tuple, .. } => vec![tuple],
            PatternKind::If {
                cond,
                then_branch,
                else_branch,
            } => vec![cond, then_branch, else_branch],
            PatternKind::Let { var, value, body } => vec![var, value, body],
            PatternKind::Alt(left, right) => vec![left, right],
            PatternKind::Attr { pattern, .. }
            | PatternKind::Type { pattern, .. }
            | PatternKind::DataType { pattern, .. }
            | PatternKind::Shape { pattern, .. } => vec![pattern],
            PatternKind::Dominator {
                parent,
                path,
                child,
            } => vec![parent, path, child],
        }
    }
}

/// The pattern in the text syntax (see [`crate::text`]).
impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::text::pattern_to_text(self))
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern@{:x}(", self.addr())?;
        self.0.fmt(f)?;
        f.write_str(")")
    }
}

/// `wildcard()`.
pub fn wildcard() -> Pattern {
    Pattern::new(PatternKind::Wildcard)
}

/// `is_var(name)`; `""` matches any variable.
pub fn is_var(name: &str) -> Pattern {
    Pattern::new(PatternKind::Var {
        name: name.to_string(),
    })
}

/// `is_constant()`.
pub fn is_constant() -> Pattern {
    Pattern::new(PatternKind::Constant)
}

/// `is_expr(expr)`.
pub fn is_expr(expr: Expr) -> Pattern {
    Pattern::new(PatternKind::Expr(expr))
}

/// `is_op(name)`: `Err` names an operator TVM v0.13 does not register.
pub fn is_op(name: &str) -> Result<Pattern, String> {
    let op = relay_ir::op::lookup(name).ok_or_else(|| format!("unknown operator `{name}`"))?;
    Ok(is_expr(Expr::op(op, None)))
}

/// `is_tuple(fields)`.
pub fn is_tuple(fields: Vec<Pattern>) -> Pattern {
    Pattern::new(PatternKind::Tuple(Some(fields)))
}

/// `is_tuple_get_item(tuple, index)`.
pub fn is_tuple_get_item(tuple: &Pattern, index: Option<usize>) -> Pattern {
    Pattern::new(PatternKind::TupleGetItem {
        tuple: tuple.clone(),
        index,
    })
}

/// `is_if(cond, true_branch, false_branch)`.
pub fn is_if(cond: &Pattern, then_branch: &Pattern, else_branch: &Pattern) -> Pattern {
    Pattern::new(PatternKind::If {
        cond: cond.clone(),
        then_branch: then_branch.clone(),
        else_branch: else_branch.clone(),
    })
}

/// `is_let(var, value, body)`.
pub fn is_let(var: &Pattern, value: &Pattern, body: &Pattern) -> Pattern {
    Pattern::new(PatternKind::Let {
        var: var.clone(),
        value: value.clone(),
        body: body.clone(),
    })
}

/// `FunctionPattern(params, body)`.
pub fn function(params: Option<Vec<Pattern>>, body: &Pattern) -> Pattern {
    Pattern::new(PatternKind::Function {
        params,
        body: body.clone(),
    })
}

/// `dominates(parent, path, child)`.
pub fn dominates(parent: &Pattern, path: &Pattern, child: &Pattern) -> Pattern {
    Pattern::new(PatternKind::Dominator {
        parent: parent.clone(),
        path: path.clone(),
        child: child.clone(),
    })
}

/// Every node of `pattern`, each once, children before parents, in TVM's
/// `DFPatternVisitor` order (the pattern's `IndexedGraph` order).
pub fn post_order(pattern: &Pattern) -> Vec<Pattern> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut stack: Vec<(Pattern, bool)> = vec![(pattern.clone(), false)];
    while let Some((p, expanded)) = stack.pop() {
        if expanded {
            out.push(p);
            continue;
        }
        if !seen.insert(p.addr()) {
            continue;
        }
        stack.push((p.clone(), true));
        for child in p.children().into_iter().rev() {
            if !seen.contains(&child.addr()) {
                stack.push((child.clone(), false));
            }
        }
    }
    out
}
