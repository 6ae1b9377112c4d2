//! Tests of the typed AST: every accessor on hand-written inputs, every node
//! kind cast to its wrapper, and no accessor panicking on broken input (every
//! prefix of the rich inputs).

use super::*;
use crate::literal::NumberValue;
use crate::SyntaxKind::{self, *};
use crate::{parse_expr, parse_module, RelayLanguage, SyntaxNode, TextRange};

/// A module that uses every node kind a module can contain.
const MODULE: &str = r#"#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}
type Unit
def @main(%x: Tensor[(1, 2), float32], %y, %z {virtual_device=meta[VirtualDevice][0]}: float32, %w: (int32, fn [B](B) -> B, ref(bool), _, List[int8]), Primitive=1) -> Tensor[(1, 2), float32] {
  %0 = add(%x, %y);
  let %a: Tensor[(?, meta[tir.Var][0]), float32] = nn.relu(%0, axis=1, relay.reshape_only=True, pads=[1, (2), None], name="x", dt=float32);
  free_var %f: float32;
  %1 = (%a, %0, meta[relay.Constant][0]);
  %2 = %1.0 * 2f - 1 / 3 + 4 < 5 <= 6 > 7 >= 8 == 9 != 10;
  %3 = fn [T](%p: T) -> T { %p };
  %4 = if (%2) { ref(%a) } else { let %r = ref(1); ref_write(%r, 2); ref_read(%r) };
  match (%1) { Cons(%h, _) => %h, (%u: int32, Nil) => @main, _ => () };
  %5 = (%4);
  { %5 };
  match? (%3) { %v => (%v,) }
}
extern type Ext[C]
#[metadata]
{"root": 1}
"#;

/// An expression file with bindings, curried calls and attribute values.
const EXPR: &str = r#"#[version = "0.0.5"]
free_var %x: Tensor[(2), float32];
let %f = fn (%a, %b: int64) { %a };
%0 = %f(%x, 2i64)(1)(3);
nn.conv2d(%0, meta[relay.Constant][0], strides=[1, 1], padding=(0), out_dtype="float32", fn_attr=fn (%q) { %q }, target=@g, nested.=1)
#[metadata]
{}
"#;

/// The example of the brief.
const SMALL: &str = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 2), float32], %y) -> Tensor[(1, 2), float32] { %0 = add(%x, %y); nn.relu(%0, axis=1) }";

fn module(text: &str) -> SourceFile {
    let parse = parse_module(text);
    assert_eq!(parse.errors(), &[], "{}", parse.debug_dump());
    parse.source_file().unwrap()
}

fn expr_file(text: &str) -> ExprFile {
    let parse = parse_expr(text);
    assert_eq!(parse.errors(), &[], "{}", parse.debug_dump());
    parse.expr_file().unwrap()
}

/// Parses `text` as one expression (no errors) and returns it.
fn expr(text: &str) -> Expr {
    expr_file(text).expr().unwrap()
}

/// Parses `text` as one expression, errors allowed.
fn broken_expr(text: &str) -> Expr {
    parse_expr(text).expr_file().unwrap().expr().unwrap()
}

fn main_def(file: &SourceFile) -> Def {
    file.defs().next().unwrap()
}

fn text<N: AstNode<Node = SyntaxNode>>(node: &N) -> String {
    node.syntax().to_string()
}

fn opt_text<N: AstNode<Node = SyntaxNode>>(node: Option<N>) -> Option<String> {
    node.map(|n| text(&n))
}

fn texts<N: AstNode<Node = SyntaxNode>>(nodes: impl Iterator<Item = N>) -> Vec<String> {
    nodes.map(|n| text(&n)).collect()
}

macro_rules! cast {
    ($e:expr, $variant:path) => {
        match $e {
            Some($variant(it)) => it,
            other => panic!("expected {}, got {:?}", stringify!($variant), other),
        }
    };
}

// ---- items ----

#[test]
fn small_example() {
    let file = module(SMALL);
    assert_eq!(
        file.version().unwrap().value().as_deref(),
        Some("\"0.0.5\"")
    );
    assert!(file.version().unwrap().attr().unwrap().is_supported());
    assert!(file.metadata().is_none());
    let def = main_def(&file);
    assert_eq!(def.name().unwrap().name(), "main");
    let params: Vec<Param> = def.params().collect();
    assert_eq!(params.len(), 2);
    assert_eq!(params[0].name().unwrap().name(), "x");
    let ty = cast!(params[0].ty(), Type::TensorType);
    assert_eq!(
        ty.dims().map(|d| d.value()).collect::<Vec<_>>(),
        vec![Some(1), Some(2)]
    );
    assert_eq!(ty.dtype().unwrap().name(), "float32");
    assert!(params[1].ty().is_none());
    assert!(params[1].colon_token().is_none());
    assert!(params[0].colon_token().is_some());
    let ret = cast!(def.ret_type().unwrap().ty(), Type::TensorType);
    assert_eq!(ret.shape().unwrap().dims().count(), 2);
    let body = def.body().unwrap();
    let seq = cast!(body.expr(), Expr::SeqExpr);
    let stmts: Vec<Stmt> = seq.stmts().collect();
    assert_eq!(stmts.len(), 1);
    let binding = cast!(stmts.first().cloned(), Stmt::GraphBinding);
    assert_eq!(binding.number().unwrap().number(), Some(0));
    let add = cast!(binding.value(), Expr::CallExpr);
    assert_eq!(cast!(add.callee(), Expr::PathExpr).name(), "add");
    assert_eq!(texts(add.args()), vec!["%x", "%y"]);
    let relu = cast!(seq.tail_expr(), Expr::CallExpr);
    assert_eq!(cast!(relu.callee(), Expr::PathExpr).name(), "nn.relu");
    let attrs: Vec<Attr> = relu.attrs().collect();
    assert_eq!(attrs.len(), 1);
    assert_eq!(attrs[0].key().as_deref(), Some("axis"));
    let one = cast!(attrs[0].value(), AttrValue::Literal);
    let int = cast!(one.kind(), LiteralKind::Int);
    assert_eq!(int.value(), Some(1));
    // The block helpers see through the sequence.
    assert_eq!(body.stmts().count(), 1);
    assert_eq!(
        opt_text(body.tail_expr()).as_deref(),
        Some("nn.relu(%0, axis=1)")
    );
}

#[test]
fn source_file_items() {
    let file = module(MODULE);
    let items: Vec<Item> = file.items().collect();
    assert_eq!(items.len(), 4);
    assert!(matches!(items[0], Item::TypeDef(_)));
    assert!(matches!(items[2], Item::Def(_)));
    assert!(matches!(items[3], Item::ExternTypeDef(_)));
    let names: Vec<_> = items.iter().map(|i| i.name_text()).collect();
    assert_eq!(
        names,
        vec![
            Some("List".to_string()),
            Some("Unit".to_string()),
            Some("main".to_string()),
            Some("Ext".to_string())
        ]
    );
    assert_eq!(items[2].name_token().unwrap().text(), "@main");
    assert_eq!(file.defs().count(), 1);
    assert_eq!(file.type_defs().count(), 3);
    let metadata = file.metadata().unwrap();
    assert_eq!(metadata.body().as_deref(), Some("\n{\"root\": 1}\n"));
    let token = metadata.metadata().unwrap();
    assert_eq!(&MODULE[token.body_range()], token.body());
}

#[test]
fn type_defs() {
    let file = module(MODULE);
    let list = cast!(file.items().next(), Item::TypeDef);
    assert_eq!(list.name().unwrap().name(), "List");
    let params: Vec<_> = list
        .type_params()
        .map(|p| p.name().unwrap().name().to_string())
        .collect();
    assert_eq!(params, vec!["A"]);
    assert_eq!(list.type_param_list().unwrap().type_params().count(), 1);
    let ctors: Vec<CtorDef> = list.ctors().collect();
    assert_eq!(ctors.len(), 2);
    assert_eq!(list.ctor_list().unwrap().ctors().count(), 2);
    assert_eq!(ctors[0].name().unwrap().name(), "Cons");
    assert_eq!(texts(ctors[0].fields()), vec!["A", "List[A]"]);
    assert_eq!(ctors[0].field_list().unwrap().fields().count(), 2);
    assert_eq!(ctors[1].name().unwrap().name(), "Nil");
    assert!(ctors[1].field_list().is_none());
    assert_eq!(ctors[1].fields().count(), 0);

    let unit = cast!(file.items().nth(1), Item::TypeDef);
    assert_eq!(unit.name().unwrap().name(), "Unit");
    assert!(unit.type_param_list().is_none());
    assert!(unit.ctor_list().is_none());
    assert_eq!(unit.ctors().count(), 0);

    let ext = cast!(file.items().nth(3), Item::ExternTypeDef);
    assert_eq!(ext.name().unwrap().name(), "Ext");
    assert_eq!(ext.type_params().count(), 1);
    assert_eq!(ext.ctors().count(), 0);
    assert!(ext.ctor_list().is_none());
}

#[test]
fn def_signature() {
    let file = module(MODULE);
    let def = main_def(&file);
    assert!(def.type_param_list().is_none());
    assert_eq!(def.type_params().count(), 0);
    let list = def.param_list().unwrap();
    assert_eq!(list.params().count(), 4);
    let attrs: Vec<Attr> = def.attrs().collect();
    assert_eq!(attrs.len(), 1);
    assert_eq!(attrs[0].key().as_deref(), Some("Primitive"));
    assert_eq!(list.attrs().count(), 1);

    let z = def.params().nth(2).unwrap();
    assert_eq!(z.name().unwrap().name(), "z");
    let param_attrs: Vec<Attr> = z.attrs().unwrap().attrs().collect();
    assert_eq!(param_attrs.len(), 1);
    assert_eq!(param_attrs[0].key().as_deref(), Some("virtual_device"));
    let meta = cast!(param_attrs[0].value(), AttrValue::MetaExpr);
    let meta_ref = meta.meta_ref().unwrap();
    assert_eq!(meta_ref.key(), Some("VirtualDevice"));
    assert_eq!(meta_ref.index(), Some(0));
    assert_eq!(
        cast!(z.ty(), Type::ScalarType).dtype().unwrap().name(),
        "float32"
    );
}

#[test]
fn expr_file_parts() {
    let file = expr_file(EXPR);
    assert_eq!(
        file.version().unwrap().value().as_deref(),
        Some("\"0.0.5\"")
    );
    assert_eq!(file.metadata().unwrap().body().as_deref(), Some("\n{}\n"));
    let seq = cast!(file.expr(), Expr::SeqExpr);
    let stmts: Vec<Stmt> = seq.stmts().collect();
    assert_eq!(stmts.len(), 3);
    let free_var = cast!(stmts.first().cloned(), Stmt::FreeVarStmt);
    assert_eq!(free_var.name().unwrap().name(), "x");
    let ty = cast!(free_var.ty(), Type::TensorType);
    assert_eq!(
        ty.dims().filter_map(|d| d.value()).collect::<Vec<_>>(),
        vec![2]
    );

    let let_f = cast!(stmts.get(1).cloned(), Stmt::LetStmt);
    assert_eq!(let_f.name().unwrap().name(), "f");
    assert!(let_f.ty().is_none());
    let fn_expr = cast!(let_f.value(), Expr::FnExpr);
    assert_eq!(fn_expr.params().count(), 2);
    assert!(fn_expr.ret_type().is_none());
    assert_eq!(
        opt_text(fn_expr.body().unwrap().tail_expr()).as_deref(),
        Some("%a")
    );
    assert_eq!(
        cast!(fn_expr.params().nth(1).unwrap().ty(), Type::ScalarType)
            .dtype()
            .unwrap()
            .name(),
        "int64"
    );

    // `%f(%x, 2i64)(1)(3)`: curried calls nest to the left.
    let binding = cast!(stmts.get(2).cloned(), Stmt::GraphBinding);
    let outer = cast!(binding.value(), Expr::CallExpr);
    assert_eq!(texts(outer.args()), vec!["3"]);
    let middle = cast!(outer.callee(), Expr::CallExpr);
    let inner = cast!(middle.callee(), Expr::CallExpr);
    assert_eq!(
        cast!(inner.callee(), Expr::LocalExpr)
            .name()
            .unwrap()
            .name(),
        "f"
    );
    let two = cast!(inner.args().nth(1), Expr::Literal);
    let two = cast!(two.kind(), LiteralKind::Int);
    assert_eq!(two.value(), Some(2));
    assert_eq!(two.bits(), Some(64));
    assert_eq!(two.number(), Ok(NumberValue::Int { value: 2, bits: 64 }));
}

// ---- expressions ----

#[test]
fn call_attrs_and_values() {
    let file = expr_file(EXPR);
    let seq = cast!(file.expr(), Expr::SeqExpr);
    let call = cast!(seq.tail_expr(), Expr::CallExpr);
    assert_eq!(cast!(call.callee(), Expr::PathExpr).name(), "nn.conv2d");
    let segments: Vec<_> = cast!(call.callee(), Expr::PathExpr)
        .segments()
        .map(|s| s.name().to_string())
        .collect();
    assert_eq!(segments, vec!["nn", "conv2d"]);
    let arg_list = call.arg_list().unwrap();
    assert_eq!(
        texts(arg_list.args()),
        vec!["%0", "meta[relay.Constant][0]"]
    );
    let meta = cast!(arg_list.args().nth(1), Expr::MetaExpr);
    assert_eq!(meta.meta_ref().unwrap().key(), Some("relay.Constant"));
    assert_eq!(meta.meta_ref().unwrap().index_text(), Some("0"));

    let attrs: Vec<Attr> = arg_list.attrs().collect();
    let keys: Vec<_> = attrs.iter().map(|a| a.key().unwrap()).collect();
    assert_eq!(
        keys,
        vec![
            "strides",
            "padding",
            "out_dtype",
            "fn_attr",
            "target",
            "nested."
        ]
    );
    let strides = cast!(attrs[0].value(), AttrValue::AttrListValue);
    assert_eq!(texts(strides.values()), vec!["1", "1"]);
    let padding = cast!(attrs[1].value(), AttrValue::AttrParenValue);
    assert_eq!(opt_text(padding.value()).as_deref(), Some("0"));
    let dtype = cast!(attrs[2].value(), AttrValue::Literal);
    let dtype = cast!(dtype.kind(), LiteralKind::String);
    assert_eq!(dtype.value(), "float32");
    assert_eq!(&EXPR[dtype.value_range()], "float32");
    let fn_attr = cast!(attrs[3].value(), AttrValue::Expr);
    assert!(matches!(fn_attr, Expr::FnExpr(_)));
    let target = cast!(attrs[4].value(), AttrValue::Expr);
    let target = cast!(Some(target), Expr::GlobalExpr);
    assert_eq!(target.name().unwrap().name(), "g");
    let key = attrs[5].key_node().unwrap();
    assert!(key.has_trailing_dot());
    assert_eq!(key.name(), "nested.");
    assert_eq!(key.segments().count(), 1);
    assert!(!attrs[0].key_node().unwrap().has_trailing_dot());
}

#[test]
fn module_attr_values() {
    let file = module(MODULE);
    let def = main_def(&file);
    let let_a = cast!(def.body().unwrap().stmts().nth(1), Stmt::LetStmt);
    assert_eq!(let_a.name().unwrap().name(), "a");
    let ty = cast!(let_a.ty(), Type::TensorType);
    let dims: Vec<DimKind> = ty.dims().filter_map(|d| d.kind()).collect();
    assert!(matches!(&dims[0], DimKind::Any(t) if t.text() == "?"));
    assert!(matches!(&dims[1], DimKind::Meta(m) if m.key() == Some("tir.Var")));
    let call = cast!(let_a.value(), Expr::CallExpr);
    let attrs: Vec<Attr> = call.attrs().collect();
    assert_eq!(attrs[1].key().as_deref(), Some("relay.reshape_only"));
    let segments: Vec<_> = attrs[1]
        .key_node()
        .unwrap()
        .segments()
        .map(|s| s.name().to_string())
        .collect();
    assert_eq!(segments, vec!["relay", "reshape_only"]);
    let flag = cast!(attrs[1].value(), AttrValue::Literal);
    assert!(cast!(flag.kind(), LiteralKind::Bool).value());
    let pads = cast!(attrs[2].value(), AttrValue::AttrListValue);
    let values: Vec<AttrValue> = pads.values().collect();
    assert!(matches!(values[0], AttrValue::Literal(_)));
    assert!(matches!(values[1], AttrValue::AttrParenValue(_)));
    let null = cast!(values.get(2).cloned(), AttrValue::AttrNullValue);
    assert_eq!(null.ident().unwrap().name(), "None");
    let name = cast!(attrs[3].value(), AttrValue::Literal);
    assert_eq!(cast!(name.kind(), LiteralKind::String).value(), "x");
    let dt = cast!(attrs[4].value(), AttrValue::Expr);
    assert_eq!(cast!(Some(dt), Expr::PathExpr).name(), "float32");
}

#[test]
fn bin_exprs() {
    let e = expr("%1.0 * 2f - 1 / 3 + 4 < 5 <= 6 > 7 >= 8 == 9 != 10");
    // Walk down the left spine, outermost (lowest precedence) first.
    let mut ops = Vec::new();
    let mut current = e.clone();
    while let Expr::BinExpr(bin) = current {
        let (op, range) = bin.op_details().unwrap();
        assert_eq!(bin.op(), Some(op));
        assert_eq!(bin.op_range(), Some(range));
        let text = bin.syntax().text().to_string();
        let start = bin.syntax().text_range().start();
        let local = range - start;
        assert_eq!(&text[local], op.symbol());
        ops.push(op);
        assert!(bin.rhs().is_some());
        current = bin.lhs().unwrap();
    }
    assert_eq!(
        ops,
        vec![
            BinOp::Ne,
            BinOp::Eq,
            BinOp::Ge,
            BinOp::Gt,
            BinOp::Le,
            BinOp::Lt,
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul
        ]
    );
    let projection = cast!(Some(current), Expr::TupleGetItemExpr);
    assert_eq!(projection.index(), Some(0));
    assert_eq!(projection.index_token().unwrap().text(), "0");
    assert_eq!(
        cast!(projection.tuple(), Expr::GraphExpr)
            .number()
            .unwrap()
            .number(),
        Some(1)
    );

    // `-` binds looser than `/`: its rhs is `1 / 3`.
    let sub = cast!(Some(e), Expr::BinExpr);
    let mut node = sub;
    while node.op() != Some(BinOp::Sub) {
        node = cast!(node.lhs(), Expr::BinExpr);
    }
    let div = cast!(node.rhs(), Expr::BinExpr);
    assert_eq!(div.op(), Some(BinOp::Div));
    assert_eq!(opt_text(div.lhs()).as_deref(), Some("1"));
    assert_eq!(opt_text(div.rhs()).as_deref(), Some("3"));
    let mul = cast!(node.lhs(), Expr::BinExpr);
    let two = cast!(mul.rhs(), Expr::Literal);
    let two = cast!(two.kind(), LiteralKind::Float);
    assert_eq!(two.value(), Some(2.0));
    assert_eq!(two.bits(), Some(32));
}

#[test]
fn bin_op_names() {
    let names: Vec<_> = BinOp::ALL.iter().map(|op| op.op_name()).collect();
    assert_eq!(
        names,
        vec![
            "multiply",
            "divide",
            "add",
            "subtract",
            "less",
            "less_equal",
            "greater",
            "greater_equal",
            "equal",
            "not_equal"
        ]
    );
    for op in BinOp::ALL {
        let e = expr(&format!("%a {} %b", op.symbol()));
        let bin = cast!(Some(e), Expr::BinExpr);
        assert_eq!(bin.op(), Some(op));
        assert_eq!(
            bin.op_range().unwrap().len(),
            crate::TextSize::of(op.symbol())
        );
        assert_eq!(opt_text(bin.lhs()).as_deref(), Some("%a"));
        assert_eq!(opt_text(bin.rhs()).as_deref(), Some("%b"));
    }
    assert!(BinOp::Mul.precedence() > BinOp::Add.precedence());
    assert!(BinOp::Add.precedence() > BinOp::Lt.precedence());
    assert!(BinOp::Lt.precedence() > BinOp::Eq.precedence());
}

#[test]
fn fn_expr_and_if() {
    let file = module(MODULE);
    let stmts: Vec<Stmt> = main_def(&file).body().unwrap().stmts().collect();
    let f = cast!(stmts.get(5).cloned(), Stmt::GraphBinding);
    let f = cast!(f.value(), Expr::FnExpr);
    let tps: Vec<_> = f
        .type_params()
        .map(|t| t.name().unwrap().name().to_string())
        .collect();
    assert_eq!(tps, vec!["T"]);
    assert_eq!(f.type_param_list().unwrap().type_params().count(), 1);
    assert_eq!(f.param_list().unwrap().params().count(), 1);
    assert_eq!(f.attrs().count(), 0);
    let ret = cast!(f.ret_type().unwrap().ty(), Type::NamedType);
    assert_eq!(ret.name().unwrap().name(), "T");
    assert!(ret.type_arg_list().is_none());
    assert_eq!(opt_text(f.body().unwrap().expr()).as_deref(), Some("%p"));

    let if_ = cast!(stmts.get(6).cloned(), Stmt::GraphBinding);
    let if_ = cast!(if_.value(), Expr::IfExpr);
    assert_eq!(opt_text(if_.condition()).as_deref(), Some("%2"));
    assert_eq!(opt_text(if_.condition_node()).as_deref(), Some("(%2)"));
    assert_eq!(if_.else_token().unwrap().text(), "else");
    let then = if_.then_branch().unwrap();
    let create = cast!(then.expr(), Expr::RefCreateExpr);
    assert_eq!(opt_text(create.value()).as_deref(), Some("%a"));
    let else_ = if_.else_branch().unwrap();
    let else_stmts: Vec<Stmt> = else_.stmts().collect();
    assert_eq!(else_stmts.len(), 2);
    let let_r = cast!(else_stmts.first().cloned(), Stmt::LetStmt);
    assert!(matches!(let_r.value(), Some(Expr::RefCreateExpr(_))));
    let write = cast!(else_stmts.get(1).cloned(), Stmt::ExprStmt);
    let write = cast!(write.expr(), Expr::RefWriteExpr);
    assert_eq!(opt_text(write.ref_expr()).as_deref(), Some("%r"));
    assert_eq!(opt_text(write.value()).as_deref(), Some("2"));
    let read = cast!(else_.tail_expr(), Expr::RefReadExpr);
    assert_eq!(opt_text(read.ref_expr()).as_deref(), Some("%r"));
}

#[test]
fn match_exprs_and_patterns() {
    let file = module(MODULE);
    let body = main_def(&file).body().unwrap();
    let stmts: Vec<Stmt> = body.stmts().collect();
    let m = cast!(stmts.get(7).cloned(), Stmt::ExprStmt);
    let m = cast!(m.expr(), Expr::MatchExpr);
    assert!(!m.is_partial());
    assert_eq!(m.match_token().unwrap().text(), "match");
    let scrutinee = cast!(m.scrutinee(), Expr::ParenExpr);
    assert_eq!(opt_text(scrutinee.expr()).as_deref(), Some("%1"));
    let arms: Vec<MatchArm> = m.arms().collect();
    assert_eq!(arms.len(), 3);
    assert_eq!(m.arm_list().unwrap().arms().count(), 3);

    let cons = cast!(arms[0].pattern(), Pattern::CtorPat);
    assert_eq!(cons.name().unwrap().name(), "Cons");
    let fields: Vec<Pattern> = cons.fields().collect();
    let h = cast!(fields.first().cloned(), Pattern::VarPat);
    assert_eq!(h.name().unwrap().name(), "h");
    assert!(h.ty().is_none());
    let wild = cast!(fields.get(1).cloned(), Pattern::WildcardPat);
    assert_eq!(wild.underscore_token().unwrap().text(), "_");
    assert_eq!(cons.pat_list().unwrap().patterns().count(), 2);
    assert_eq!(opt_text(arms[0].body()).as_deref(), Some("%h"));

    let tuple = cast!(arms[1].pattern(), Pattern::TuplePat);
    let fields: Vec<Pattern> = tuple.fields().collect();
    assert_eq!(fields.len(), 2);
    assert_eq!(tuple.pat_list().unwrap().patterns().count(), 2);
    let u = cast!(fields.first().cloned(), Pattern::VarPat);
    assert_eq!(opt_text(u.ty()).as_deref(), Some("int32"));
    let nil = cast!(fields.get(1).cloned(), Pattern::CtorPat);
    assert!(nil.pat_list().is_none());
    assert_eq!(nil.fields().count(), 0);
    let global = cast!(arms[1].body(), Expr::GlobalExpr);
    assert_eq!(global.name().unwrap().name(), "main");

    assert!(matches!(arms[2].pattern(), Some(Pattern::WildcardPat(_))));
    let unit = cast!(arms[2].body(), Expr::TupleExpr);
    assert_eq!(unit.fields().count(), 0);

    let partial = cast!(body.tail_expr(), Expr::MatchExpr);
    assert!(partial.is_partial());
    assert_eq!(partial.match_token().unwrap().text(), "match?");
    let arm = partial.arms().next().unwrap();
    let single = cast!(arm.body(), Expr::TupleExpr);
    assert_eq!(texts(single.fields()), vec!["%v"]);
}

#[test]
fn tuples_parens_blocks() {
    let file = module(MODULE);
    let stmts: Vec<Stmt> = main_def(&file).body().unwrap().stmts().collect();
    let tuple = cast!(stmts.get(3).cloned(), Stmt::GraphBinding);
    let tuple = cast!(tuple.value(), Expr::TupleExpr);
    assert_eq!(
        texts(tuple.fields()),
        vec!["%a", "%0", "meta[relay.Constant][0]"]
    );
    let paren = cast!(stmts.get(8).cloned(), Stmt::GraphBinding);
    let paren = cast!(paren.value(), Expr::ParenExpr);
    assert_eq!(opt_text(paren.expr()).as_deref(), Some("%4"));
    let block = cast!(stmts.get(9).cloned(), Stmt::ExprStmt);
    let block = cast!(block.expr(), Expr::BlockExpr);
    assert_eq!(block.stmts().count(), 0);
    assert_eq!(opt_text(block.tail_expr()).as_deref(), Some("%5"));

    let nested = expr("((%x))");
    assert_eq!(text(&nested.strip_parens().unwrap()), "%x");
    assert!(broken_expr("(").strip_parens().is_none());
}

#[test]
fn literals_and_tokens() {
    let seq = cast!(
        Some(expr(
            "(1, -2i16, 0.5f, 3f64, -inff, True, False, %0, %a/b, @g)"
        )),
        Expr::TupleExpr
    );
    let fields: Vec<Expr> = seq.fields().collect();
    let lit = |i: usize| cast!(fields.get(i).cloned(), Expr::Literal).kind().unwrap();
    assert_eq!(cast!(Some(lit(0)), LiteralKind::Int).value(), Some(1));
    let minus_two = cast!(Some(lit(1)), LiteralKind::Int);
    assert_eq!((minus_two.value(), minus_two.bits()), (Some(-2), Some(16)));
    let half = cast!(Some(lit(2)), LiteralKind::Float);
    assert_eq!((half.value(), half.bits()), (Some(0.5), Some(32)));
    assert_eq!(cast!(Some(lit(3)), LiteralKind::Float).bits(), Some(64));
    assert_eq!(
        cast!(Some(lit(4)), LiteralKind::Float).value(),
        Some(f64::NEG_INFINITY)
    );
    assert!(cast!(Some(lit(5)), LiteralKind::Bool).value());
    assert!(!cast!(Some(lit(6)), LiteralKind::Bool).value());
    let graph = cast!(fields.get(7).cloned(), Expr::GraphExpr);
    assert_eq!(graph.number().unwrap().number(), Some(0));
    let local = cast!(fields.get(8).cloned(), Expr::LocalExpr)
        .name()
        .unwrap();
    assert_eq!(local.name(), "a/b");
    assert_eq!(local.text(), "%a/b");
    let range = local.name_range();
    assert_eq!(range.len(), crate::TextSize::of("a/b"));
    assert_eq!(range.end(), local.syntax().text_range().end());
    let global = cast!(fields.get(9).cloned(), Expr::GlobalExpr)
        .name()
        .unwrap();
    assert_eq!(global.name(), "g");
    assert_eq!(global.name_range().len(), crate::TextSize::of("g"));
    assert_eq!(global.to_string(), "@g");

    // Invalid numbers keep their token but have no value.
    let bad = broken_expr("1.5");
    let bad = cast!(cast!(Some(bad), Expr::Literal).kind(), LiteralKind::Int);
    assert_eq!(bad.value(), None);
    assert_eq!(bad.bits(), None);
    assert!(bad.number().is_err());
}

#[test]
fn version_values() {
    let file = parse_module("#[version = \"0.0.4\"]\n")
        .source_file()
        .unwrap();
    let attr = file.version().unwrap().attr().unwrap();
    assert_eq!(attr.value(), "\"0.0.4\"");
    assert!(!attr.is_supported());
    assert_eq!(attr.to_string(), "#[version = \"0.0.4\"]");
    assert!(parse_module("def @f() { 1 }")
        .source_file()
        .unwrap()
        .version()
        .is_none());
}

#[test]
fn types() {
    let file = module(MODULE);
    let w = main_def(&file).params().nth(3).unwrap();
    let tuple = cast!(w.ty(), Type::TupleType);
    let fields: Vec<Type> = tuple.fields().collect();
    assert_eq!(fields.len(), 5);
    assert_eq!(
        cast!(fields.first().cloned(), Type::ScalarType)
            .dtype()
            .unwrap()
            .name(),
        "int32"
    );
    let fn_ty = cast!(fields.get(1).cloned(), Type::FnType);
    let tps: Vec<_> = fn_ty
        .type_params()
        .map(|t| t.name().unwrap().name().to_string())
        .collect();
    assert_eq!(tps, vec!["B"]);
    assert_eq!(fn_ty.type_param_list().unwrap().type_params().count(), 1);
    assert_eq!(texts(fn_ty.params()), vec!["B"]);
    assert_eq!(opt_text(fn_ty.ret()).as_deref(), Some("B"));
    let ref_ty = cast!(fields.get(2).cloned(), Type::RefType);
    assert_eq!(opt_text(ref_ty.inner()).as_deref(), Some("bool"));
    let incomplete = cast!(fields.get(3).cloned(), Type::IncompleteType);
    assert_eq!(incomplete.underscore_token().unwrap().text(), "_");
    let named = cast!(fields.get(4).cloned(), Type::NamedType);
    assert_eq!(named.name().unwrap().name(), "List");
    assert_eq!(texts(named.args()), vec!["int8"]);
    assert_eq!(named.type_arg_list().unwrap().args().count(), 1);

    let f = module("#[version = \"0.0.5\"]\ndef @f(%f: fn () -> (), %g: fn (int8, (), Tensor[(), bool]) -> Tensor[(meta[V][1], ?), int8]) { %f }");
    let params: Vec<Param> = main_def(&f).params().collect();
    let unit_fn = cast!(params[0].ty(), Type::FnType);
    assert_eq!(unit_fn.params().count(), 0);
    assert_eq!(cast!(unit_fn.ret(), Type::TupleType).fields().count(), 0);
    assert!(unit_fn.type_param_list().is_none());
    let g = cast!(params[1].ty(), Type::FnType);
    assert_eq!(texts(g.params()), vec!["int8", "()", "Tensor[(), bool]"]);
    let scalar_tensor = cast!(g.params().nth(2), Type::TensorType);
    assert_eq!(scalar_tensor.dims().count(), 0);
    assert_eq!(scalar_tensor.dtype().unwrap().name(), "bool");
    let ret = cast!(g.ret(), Type::TensorType);
    let dims: Vec<Dim> = ret.dims().collect();
    assert!(matches!(dims[0].kind(), Some(DimKind::Meta(m)) if m.index() == Some(1)));
    assert!(matches!(dims[1].kind(), Some(DimKind::Any(_))));
    assert_eq!(dims[1].value(), None);
}

#[test]
fn node_at_offset() {
    let file = module(SMALL);
    let root = file.syntax();
    let at = |needle: &str| crate::TextSize::from(SMALL.find(needle).unwrap() as u32);
    let local: LocalExpr = find_node_at_offset(root, at("%y);")).unwrap();
    assert_eq!(local.name().unwrap().name(), "y");
    // At the boundary between `add` and `(` the path is found.
    let path: PathExpr = find_node_at_offset(root, at("(%x, %y)")).unwrap();
    assert_eq!(path.name(), "add");
    // The innermost call around the cursor.
    let call: CallExpr = find_node_at_offset(root, at("axis")).unwrap();
    assert_eq!(cast!(call.callee(), Expr::PathExpr).name(), "nn.relu");
    let def: Def = find_node_at_offset(root, at("%0 =")).unwrap();
    assert_eq!(def.name().unwrap().name(), "main");
    let expr: Expr = find_node_at_offset(root, at("relu")).unwrap();
    assert!(matches!(expr, Expr::PathExpr(_)));
    assert!(find_node_at_offset::<Def>(root, crate::TextSize::from(0)).is_none());
    assert!(find_node_at_offset::<Def>(root, crate::TextSize::from(10_000)).is_none());
    let end = crate::TextSize::of(SMALL);
    assert!(find_node_at_offset::<SourceFile>(root, end).is_some());
}

// ---- broken input ----

#[test]
fn broken_trees_give_partial_answers() {
    // `ref_write` without its first operand: the value is still the value.
    let write = cast!(Some(broken_expr("ref_write(, 2)")), Expr::RefWriteExpr);
    assert!(write.ref_expr().is_none());
    assert_eq!(opt_text(write.value()).as_deref(), Some("2"));

    // An `if` without its then-branch.
    let if_ = cast!(Some(broken_expr("if (%c) else { 2 }")), Expr::IfExpr);
    assert!(if_.then_branch().and_then(|b| b.expr()).is_none());
    assert_eq!(
        opt_text(if_.else_branch().unwrap().expr()).as_deref(),
        Some("2")
    );
    let if_ = cast!(Some(broken_expr("if (%c) { 1 }")), Expr::IfExpr);
    assert!(if_.else_branch().is_none());
    assert!(if_.then_branch().is_some());

    // A binary operator without its right operand.
    let bin = cast!(Some(broken_expr("%a +")), Expr::BinExpr);
    assert_eq!(bin.op(), Some(BinOp::Add));
    assert!(bin.rhs().is_none());
    assert_eq!(opt_text(bin.lhs()).as_deref(), Some("%a"));

    // A path the grammar left with a trailing `.`.
    let call = cast!(Some(broken_expr("nn.(%x)")), Expr::CallExpr);
    let path = cast!(call.callee(), Expr::PathExpr);
    assert_eq!(path.name(), "nn.");
    assert!(path.has_trailing_dot());
    assert_eq!(path.segments().count(), 1);

    // A function type without an arrow.
    let file = parse_module("#[version = \"0.0.5\"]\ndef @f(%x: fn (int32) float32) { %x }");
    let def = file.source_file().unwrap().defs().next().unwrap();
    let fn_ty = cast!(def.params().next().unwrap().ty(), Type::FnType);
    assert_eq!(texts(fn_ty.params()), vec!["int32"]);
    assert_eq!(opt_text(fn_ty.ret()).as_deref(), Some("float32"));

    // A `def` without a name, a `let` without a value.
    let file = parse_module("#[version = \"0.0.5\"]\ndef (%x) { let %y = ; %y }");
    let def = file.source_file().unwrap().defs().next().unwrap();
    assert!(def.name().is_none());
    assert_eq!(def.params().count(), 1);
    let let_y = cast!(def.body().unwrap().stmts().next(), Stmt::LetStmt);
    assert!(let_y.value().is_none());
    assert_eq!(let_y.name().unwrap().name(), "y");

    // A tensor type cut short.
    let file = parse_module("#[version = \"0.0.5\"]\ndef @f(%x: Tensor[(1, 2)]) { %x }");
    let def = file.source_file().unwrap().defs().next().unwrap();
    let tensor = cast!(def.params().next().unwrap().ty(), Type::TensorType);
    assert_eq!(tensor.dims().count(), 2);
    assert!(tensor.dtype().is_none());
}

// ---- every node kind ----

/// Every node kind but `ERROR`, in declaration order.
fn node_kinds() -> Vec<SyntaxKind> {
    use rowan::Language;
    (SOURCE_FILE as u16..=REF_TYPE as u16)
        .map(|raw| RelayLanguage::kind_from_raw(rowan::SyntaxKind(raw)))
        .collect()
}

type CanCast = fn(SyntaxKind) -> bool;

/// Each wrapper struct with its `can_cast`.
fn wrappers() -> Vec<(&'static str, CanCast)> {
    macro_rules! table {
        ($($ty:ident),* $(,)?) => {
            vec![$((stringify!($ty), <$ty as AstNode>::can_cast as CanCast)),*]
        };
    }
    table![
        SourceFile,
        ExprFile,
        Version,
        MetadataSection,
        Def,
        TypeDef,
        ExternTypeDef,
        TypeParamList,
        TypeParam,
        CtorList,
        CtorDef,
        CtorFieldList,
        ParamList,
        Param,
        ParamAttrs,
        RetType,
        SeqExpr,
        LetStmt,
        GraphBinding,
        FreeVarStmt,
        ExprStmt,
        BlockExpr,
        Literal,
        LocalExpr,
        GraphExpr,
        GlobalExpr,
        MetaExpr,
        PathExpr,
        FnExpr,
        IfExpr,
        Condition,
        MatchExpr,
        MatchArmList,
        MatchArm,
        RefCreateExpr,
        RefReadExpr,
        RefWriteExpr,
        ParenExpr,
        TupleExpr,
        TupleGetItemExpr,
        CallExpr,
        ArgList,
        BinExpr,
        Attr,
        AttrKey,
        AttrListValue,
        AttrParenValue,
        AttrNullValue,
        WildcardPat,
        VarPat,
        CtorPat,
        TuplePat,
        PatList,
        TensorType,
        Shape,
        Dim,
        ScalarType,
        TupleType,
        FnType,
        NamedType,
        TypeArgList,
        IncompleteType,
        RefType,
    ]
}

#[test]
fn every_node_kind_has_exactly_one_wrapper() {
    let wrappers = wrappers();
    for kind in node_kinds() {
        let matching: Vec<_> = wrappers
            .iter()
            .filter(|(_, can_cast)| can_cast(kind))
            .map(|(name, _)| *name)
            .collect();
        assert_eq!(matching.len(), 1, "{kind:?}: {matching:?}");
    }
    assert_eq!(wrappers.len(), node_kinds().len());
    for kind in [ERROR, IDENT, LOCAL, WHITESPACE] {
        assert!(wrappers.iter().all(|(_, can_cast)| !can_cast(kind)));
    }
}

const EXPR_KINDS: &[SyntaxKind] = &[
    SEQ_EXPR,
    BLOCK_EXPR,
    LITERAL,
    LOCAL_EXPR,
    GRAPH_EXPR,
    GLOBAL_EXPR,
    META_EXPR,
    PATH_EXPR,
    FN_EXPR,
    IF_EXPR,
    MATCH_EXPR,
    REF_CREATE_EXPR,
    REF_READ_EXPR,
    REF_WRITE_EXPR,
    PAREN_EXPR,
    TUPLE_EXPR,
    TUPLE_GET_ITEM_EXPR,
    CALL_EXPR,
    BIN_EXPR,
];
const STMT_KINDS: &[SyntaxKind] = &[LET_STMT, GRAPH_BINDING, FREE_VAR_STMT, EXPR_STMT];
const ITEM_KINDS: &[SyntaxKind] = &[DEF, TYPE_DEF, EXTERN_TYPE_DEF];
const PATTERN_KINDS: &[SyntaxKind] = &[WILDCARD_PAT, VAR_PAT, CTOR_PAT, TUPLE_PAT];
const TYPE_KINDS: &[SyntaxKind] = &[
    TENSOR_TYPE,
    SCALAR_TYPE,
    TUPLE_TYPE,
    FN_TYPE,
    NAMED_TYPE,
    INCOMPLETE_TYPE,
    REF_TYPE,
];

/// Checks that `E` casts exactly the nodes of `kinds` and keeps the node.
fn check_enum<E: AstNode<Node = SyntaxNode>>(node: &SyntaxNode, kinds: &[SyntaxKind]) {
    let expected = kinds.contains(&node.kind());
    assert_eq!(E::can_cast(node.kind()), expected, "{:?}", node.kind());
    match E::cast(node.clone()) {
        Some(e) => {
            assert!(expected);
            assert_eq!(e.syntax(), node);
        }
        None => assert!(!expected, "{:?}", node.kind()),
    }
}

#[test]
fn rich_inputs_cover_every_node_kind_and_cast() {
    let roots = [
        parse_module(MODULE).syntax_node(),
        parse_expr(EXPR).syntax_node(),
        parse_module(SMALL).syntax_node(),
    ];
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for root in &roots {
        for node in root.descendants() {
            seen.insert(node.kind());
            // `exercise` casts every node to the wrapper of its kind.
            exercise(&node, &mut out);
            check_enum::<Expr>(&node, EXPR_KINDS);
            check_enum::<Stmt>(&node, STMT_KINDS);
            check_enum::<Item>(&node, ITEM_KINDS);
            check_enum::<Pattern>(&node, PATTERN_KINDS);
            check_enum::<Type>(&node, TYPE_KINDS);
            let attr_kinds: Vec<SyntaxKind> = EXPR_KINDS
                .iter()
                .copied()
                .chain([ATTR_LIST_VALUE, ATTR_PAREN_VALUE, ATTR_NULL_VALUE])
                .collect();
            check_enum::<AttrValue>(&node, &attr_kinds);
        }
    }
    for kind in node_kinds() {
        assert!(seen.contains(&kind), "{kind:?} not covered");
    }
    assert!(!seen.contains(&ERROR));
    assert!(!out.is_empty());
}

#[test]
fn attr_value_prefers_specific_variants() {
    let file = expr_file("f(x=1, y=meta[K][0], z=%v)");
    let call = cast!(file.expr(), Expr::CallExpr);
    let values: Vec<AttrValue> = call.attrs().filter_map(|a| a.value()).collect();
    assert!(matches!(values[0], AttrValue::Literal(_)));
    assert!(matches!(values[1], AttrValue::MetaExpr(_)));
    assert!(matches!(values[2], AttrValue::Expr(Expr::LocalExpr(_))));
    let expr: Expr = cast!(values.get(2).cloned(), AttrValue::Expr);
    let value: AttrValue = expr.into();
    assert!(matches!(value, AttrValue::Expr(_)));
}

// ---- no accessor panics ----

fn check<N: AstNode<Node = SyntaxNode> + std::fmt::Display>(node: &SyntaxNode) -> N {
    let n = N::cast(node.clone())
        .unwrap_or_else(|| panic!("{:?} does not cast to its wrapper", node.kind()));
    assert_eq!(n.syntax(), node);
    assert_eq!(n.to_string(), node.to_string());
    n
}

fn inside(outer: TextRange, inner: TextRange) {
    assert!(outer.contains_range(inner), "{inner:?} not in {outer:?}");
}

/// Calls every accessor of every typed token.
fn probe_token(token: &crate::SyntaxToken, out: &mut Vec<String>) {
    let t = token.clone();
    let range = t.text_range();
    if let Some(it) = Local::cast(t.clone()) {
        inside(range, it.name_range());
        out.push(format!("{} {:?}", it.name(), it.name_range()));
    }
    if let Some(it) = Graph::cast(t.clone()) {
        out.push(format!("{:?}", it.number()));
    }
    if let Some(it) = Global::cast(t.clone()) {
        inside(range, it.name_range());
        out.push(format!("{} {:?}", it.name(), it.name_range()));
    }
    if let Some(it) = IntNumber::cast(t.clone()) {
        out.push(format!(
            "{:?} {:?} {:?}",
            it.number(),
            it.value(),
            it.bits()
        ));
    }
    if let Some(it) = FloatNumber::cast(t.clone()) {
        out.push(format!(
            "{:?} {:?} {:?}",
            it.number(),
            it.value(),
            it.bits()
        ));
    }
    if let Some(it) = Bool::cast(t.clone()) {
        out.push(format!("{}", it.value()));
    }
    if let Some(it) = StringLit::cast(t.clone()) {
        inside(range, it.value_range());
        out.push(format!("{} {:?}", it.value(), it.value_range()));
    }
    if let Some(it) = MetaRef::cast(t.clone()) {
        out.push(format!(
            "{:?} {:?} {:?}",
            it.key(),
            it.index_text(),
            it.index()
        ));
    }
    if let Some(it) = VersionAttr::cast(t.clone()) {
        out.push(format!("{} {}", it.value(), it.is_supported()));
    }
    if let Some(it) = Metadata::cast(t.clone()) {
        inside(range, it.body_range());
        out.push(format!("{} {:?}", it.body(), it.body_range()));
    }
    if let Some(it) = Ident::cast(t) {
        out.push(it.name().to_string());
    }
}

/// Casts `node` to the wrapper of its kind and calls every accessor.
fn exercise(node: &SyntaxNode, out: &mut Vec<String>) {
    macro_rules! o {
        ($($e:expr),* $(,)?) => { $( out.push(format!("{:?}", $e)); )* };
    }
    macro_rules! all {
        ($e:expr) => {
            $e.collect::<Vec<_>>()
        };
    }
    let range = node.text_range();
    match node.kind() {
        SOURCE_FILE => {
            let n: SourceFile = check(node);
            o!(
                n.version(),
                all!(n.items()),
                all!(n.defs()),
                all!(n.type_defs()),
                n.metadata()
            );
            for item in n.items() {
                o!(item.name_token(), item.name_text());
            }
        }
        EXPR_FILE => {
            let n: ExprFile = check(node);
            o!(n.version(), n.expr(), n.metadata());
        }
        VERSION => {
            let n: Version = check(node);
            o!(n.attr(), n.value());
        }
        METADATA_SECTION => {
            let n: MetadataSection = check(node);
            o!(n.metadata(), n.body());
        }
        DEF => {
            let n: Def = check(node);
            o!(
                n.name(),
                n.type_param_list(),
                all!(n.type_params()),
                n.param_list(),
                all!(n.params()),
                all!(n.attrs()),
                n.ret_type(),
                n.body()
            );
        }
        TYPE_DEF => {
            let n: TypeDef = check(node);
            o!(
                n.name(),
                n.type_param_list(),
                all!(n.type_params()),
                n.ctor_list(),
                all!(n.ctors())
            );
        }
        EXTERN_TYPE_DEF => {
            let n: ExternTypeDef = check(node);
            o!(
                n.name(),
                n.type_param_list(),
                all!(n.type_params()),
                n.ctor_list(),
                all!(n.ctors())
            );
        }
        TYPE_PARAM_LIST => {
            let n: TypeParamList = check(node);
            o!(all!(n.type_params()));
        }
        TYPE_PARAM => {
            let n: TypeParam = check(node);
            o!(n.name());
        }
        CTOR_LIST => {
            let n: CtorList = check(node);
            o!(all!(n.ctors()));
        }
        CTOR_DEF => {
            let n: CtorDef = check(node);
            o!(n.name(), n.field_list(), all!(n.fields()));
        }
        CTOR_FIELD_LIST => {
            let n: CtorFieldList = check(node);
            o!(all!(n.fields()));
        }
        PARAM_LIST => {
            let n: ParamList = check(node);
            o!(all!(n.params()), all!(n.attrs()));
        }
        PARAM => {
            let n: Param = check(node);
            o!(n.name(), n.attrs(), n.ty(), n.colon_token());
        }
        PARAM_ATTRS => {
            let n: ParamAttrs = check(node);
            o!(all!(n.attrs()));
        }
        RET_TYPE => {
            let n: RetType = check(node);
            o!(n.ty());
        }
        SEQ_EXPR => {
            let n: SeqExpr = check(node);
            o!(all!(n.stmts()), n.tail_expr());
        }
        LET_STMT => {
            let n: LetStmt = check(node);
            o!(n.name(), n.ty(), n.value());
        }
        GRAPH_BINDING => {
            let n: GraphBinding = check(node);
            o!(n.number(), n.value());
        }
        FREE_VAR_STMT => {
            let n: FreeVarStmt = check(node);
            o!(n.name(), n.ty());
        }
        EXPR_STMT => {
            let n: ExprStmt = check(node);
            o!(n.expr());
        }
        BLOCK_EXPR => {
            let n: BlockExpr = check(node);
            o!(n.expr(), all!(n.stmts()), n.tail_expr());
        }
        LITERAL => {
            let n: Literal = check(node);
            o!(n.token(), n.kind());
        }
        LOCAL_EXPR => {
            let n: LocalExpr = check(node);
            o!(n.name());
        }
        GRAPH_EXPR => {
            let n: GraphExpr = check(node);
            o!(n.number());
        }
        GLOBAL_EXPR => {
            let n: GlobalExpr = check(node);
            o!(n.name());
        }
        META_EXPR => {
            let n: MetaExpr = check(node);
            o!(n.meta_ref());
        }
        PATH_EXPR => {
            let n: PathExpr = check(node);
            o!(all!(n.segments()), n.name(), n.has_trailing_dot());
        }
        FN_EXPR => {
            let n: FnExpr = check(node);
            o!(
                n.type_param_list(),
                all!(n.type_params()),
                n.param_list(),
                all!(n.params()),
                all!(n.attrs()),
                n.ret_type(),
                n.body()
            );
        }
        IF_EXPR => {
            let n: IfExpr = check(node);
            o!(
                n.condition_node(),
                n.condition(),
                n.then_branch(),
                n.else_branch(),
                n.else_token()
            );
        }
        CONDITION => {
            let n: Condition = check(node);
            o!(n.expr());
        }
        MATCH_EXPR => {
            let n: MatchExpr = check(node);
            o!(
                n.is_partial(),
                n.match_token(),
                n.scrutinee(),
                n.arm_list(),
                all!(n.arms())
            );
        }
        MATCH_ARM_LIST => {
            let n: MatchArmList = check(node);
            o!(all!(n.arms()));
        }
        MATCH_ARM => {
            let n: MatchArm = check(node);
            o!(n.pattern(), n.body());
        }
        REF_CREATE_EXPR => {
            let n: RefCreateExpr = check(node);
            o!(n.value());
        }
        REF_READ_EXPR => {
            let n: RefReadExpr = check(node);
            o!(n.ref_expr());
        }
        REF_WRITE_EXPR => {
            let n: RefWriteExpr = check(node);
            o!(n.ref_expr(), n.value());
        }
        PAREN_EXPR => {
            let n: ParenExpr = check(node);
            o!(n.expr());
            if let Some(e) = Expr::cast(node.clone()) {
                o!(e.strip_parens());
            }
        }
        TUPLE_EXPR => {
            let n: TupleExpr = check(node);
            o!(all!(n.fields()));
        }
        TUPLE_GET_ITEM_EXPR => {
            let n: TupleGetItemExpr = check(node);
            o!(n.tuple(), n.index_token(), n.index());
        }
        CALL_EXPR => {
            let n: CallExpr = check(node);
            o!(n.callee(), n.arg_list(), all!(n.args()), all!(n.attrs()));
        }
        ARG_LIST => {
            let n: ArgList = check(node);
            o!(all!(n.args()), all!(n.attrs()));
        }
        BIN_EXPR => {
            let n: BinExpr = check(node);
            o!(n.lhs(), n.rhs(), n.op(), n.op_range(), n.op_details());
            if let Some(op) = n.op() {
                o!(op.op_name(), op.symbol(), op.precedence());
            }
            if let Some(op_range) = n.op_range() {
                inside(range, op_range);
            }
        }
        ATTR => {
            let n: Attr = check(node);
            o!(n.key(), n.key_node(), n.value());
        }
        ATTR_KEY => {
            let n: AttrKey = check(node);
            o!(all!(n.segments()), n.name(), n.has_trailing_dot());
        }
        ATTR_LIST_VALUE => {
            let n: AttrListValue = check(node);
            o!(all!(n.values()));
        }
        ATTR_PAREN_VALUE => {
            let n: AttrParenValue = check(node);
            o!(n.value());
        }
        ATTR_NULL_VALUE => {
            let n: AttrNullValue = check(node);
            o!(n.ident());
        }
        WILDCARD_PAT => {
            let n: WildcardPat = check(node);
            o!(n.underscore_token());
        }
        VAR_PAT => {
            let n: VarPat = check(node);
            o!(n.name(), n.ty());
        }
        CTOR_PAT => {
            let n: CtorPat = check(node);
            o!(n.name(), n.pat_list(), all!(n.fields()));
        }
        TUPLE_PAT => {
            let n: TuplePat = check(node);
            o!(n.pat_list(), all!(n.fields()));
        }
        PAT_LIST => {
            let n: PatList = check(node);
            o!(all!(n.patterns()));
        }
        TENSOR_TYPE => {
            let n: TensorType = check(node);
            o!(n.shape(), all!(n.dims()), n.dtype());
        }
        SHAPE => {
            let n: Shape = check(node);
            o!(all!(n.dims()));
        }
        DIM => {
            let n: Dim = check(node);
            o!(n.kind(), n.value());
        }
        SCALAR_TYPE => {
            let n: ScalarType = check(node);
            o!(n.dtype());
        }
        TUPLE_TYPE => {
            let n: TupleType = check(node);
            o!(all!(n.fields()));
        }
        FN_TYPE => {
            let n: FnType = check(node);
            o!(
                n.type_param_list(),
                all!(n.type_params()),
                all!(n.params()),
                n.ret()
            );
        }
        NAMED_TYPE => {
            let n: NamedType = check(node);
            o!(n.name(), n.type_arg_list(), all!(n.args()));
        }
        TYPE_ARG_LIST => {
            let n: TypeArgList = check(node);
            o!(all!(n.args()));
        }
        INCOMPLETE_TYPE => {
            let n: IncompleteType = check(node);
            o!(n.underscore_token());
        }
        REF_TYPE => {
            let n: RefType = check(node);
            o!(n.inner());
        }
        ERROR => {}
        kind => panic!("token kind {kind:?} as a node"),
    }
    // Every child an accessor may return lies inside the node.
    for child in node.children() {
        inside(range, child.text_range());
    }
    for token in node.children_with_tokens().filter_map(|it| it.into_token()) {
        probe_token(&token, out);
    }
}

fn exercise_tree(root: &SyntaxNode) -> usize {
    let mut out = Vec::new();
    let mut count = 0;
    for node in root.descendants() {
        exercise(&node, &mut out);
        count += 1;
    }
    count
}

/// Every prefix of `text` at a char boundary.
fn prefixes(text: &str) -> impl Iterator<Item = &str> {
    (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .map(|i| &text[..i])
}

#[test]
fn accessors_never_panic_on_prefixes() {
    let mut nodes = 0;
    for text in [MODULE, SMALL] {
        for prefix in prefixes(text) {
            nodes += exercise_tree(&parse_module(prefix).syntax_node());
        }
    }
    for text in [EXPR, MODULE] {
        for prefix in prefixes(text) {
            nodes += exercise_tree(&parse_expr(prefix).syntax_node());
        }
    }
    assert!(nodes > 10_000);
}

#[test]
fn accessors_never_panic_on_garbage() {
    let inputs = [
        "",
        "def",
        "def @",
        "def @f(",
        "def @f(%x: Tensor[",
        "def @f(%x: Tensor[(1, ?, meta[K][",
        "type",
        "type A[",
        "type A { B(",
        "extern type A { B }",
        "#[version = ]",
        "#[metadata",
        "fn (%x { %x }",
        "if (%c { 1 } else",
        "match (%x) { A(%y => 1, _ => }",
        "ref_write(%r,",
        "%0 = ; %1 = %0.; %1",
        "f(x=, y=[1,, (2], z=None",
        "%a < = %b",
        "%a ! %b",
        "%a == ",
        "nn.",
        "nn..relu(%x)",
        "(,)",
        "(1,",
        "let %x: fn (A -> B = 1; %x",
        "let %x: ref( = 1; %x",
        "\"unterminated",
        "meta[K",
        "%123456789012345678901234567890",
        "((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))",
        "free_var",
        "{ { { %x; } }",
        "match? %x { (%a, %b: T[) => %a }",
    ];
    for input in inputs {
        let with_header = format!("#[version = \"0.0.5\"]\n{input}");
        exercise_tree(&parse_module(input).syntax_node());
        exercise_tree(&parse_module(&with_header).syntax_node());
        exercise_tree(&parse_expr(input).syntax_node());
        for prefix in prefixes(&with_header) {
            exercise_tree(&parse_expr(prefix).syntax_node());
        }
    }
}

/// The string literals of an expression, decoded.
fn string_values(text: &str) -> Vec<String> {
    parse_expr(text)
        .syntax_node()
        .descendants_with_tokens()
        .filter_map(|element| element.into_token())
        .filter_map(StringLit::cast)
        .map(|lit| lit.value().into_owned())
        .collect()
}

#[test]
fn string_escapes_are_decoded() {
    assert_eq!(string_values(r#"f(a="plain")"#), ["plain"]);
    assert_eq!(
        string_values(r#"f(a="q\"uote", b="back\\slash", c="a\nb\tc\rd")"#),
        ["q\"uote", "back\\slash", "a\nb\tc\rd"]
    );
    // `\xHH` is one byte; the bytes of a UTF-8 character come back as it.
    assert_eq!(
        string_values(r#"f(a="\x01\xC3\xA9\x41", b="\x4a")"#),
        ["\u{1}éA", "J"]
    );
    // Any other escaped character stands for itself, as the lexer reads it;
    // an `\x` without two hex digits too.
    assert_eq!(
        string_values(r#"f(a="\q\é\x4", b="\xzz")"#),
        ["qéx4", "xzz"]
    );
    // Bytes that are not UTF-8 do not panic.
    assert_eq!(string_values(r#"f(a="\xFF")"#), ["\u{FFFD}"]);
}

#[test]
fn string_value_borrows_without_escapes() {
    let parse = parse_expr(r#"f(a="x\ny", b="plain")"#);
    let lits: Vec<StringLit> = parse
        .syntax_node()
        .descendants_with_tokens()
        .filter_map(|element| element.into_token())
        .filter_map(StringLit::cast)
        .collect();
    assert_eq!(lits.len(), 2);
    assert!(matches!(
        lits[1].value(),
        std::borrow::Cow::Borrowed("plain")
    ));
    assert_eq!(lits[0].raw_value(), "x\\ny");
    // The range covers the contents as written.
    assert_eq!(u32::from(lits[0].value_range().len()), 4);
}

/// What a printer that escapes as ours does writes (`\"`, `\\`, `\t`, `\r`,
/// `\n`, `\xHH` outside printable ASCII) reads back as the original text.
#[test]
fn escaped_strings_round_trip() {
    fn escape(s: &str) -> String {
        let mut out = String::from("\"");
        for &c in s.as_bytes() {
            match c {
                b'"' => out.push_str("\\\""),
                b'\\' => out.push_str("\\\\"),
                b'\t' => out.push_str("\\t"),
                b'\r' => out.push_str("\\r"),
                b'\n' => out.push_str("\\n"),
                b' '..=b'~' => out.push(c as char),
                _ => out.push_str(&format!("\\x{c:02X}")),
            }
        }
        out.push('"');
        out
    }
    for original in ["", "a b", "\"\\\t\r\n", "\u{0}\u{7f}é€😀", "x\\\"y"] {
        let text = format!("f(a={})", escape(original));
        assert_eq!(string_values(&text), [original], "{text}");
    }
}
