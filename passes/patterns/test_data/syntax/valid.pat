# Every form of the syntax, one per line; each prints back in the canonical form.
# TVM's node tests build these: test_expr_pattern, test_var_pattern, test_constant_pattern,
# test_wildcard_pattern, test_CallPattern, test_FunctionPattern, test_TuplePattern,
# test_TupleGetItemPattern, test_AltPattern, test_TypePattern, test_DataTypePattern,
# test_ShapePattern, test_AttrPattern, test_IfPattern, test_LetPattern:
is_var("x")
%x
is_constant()
const
wildcard()
*
add(*, *)
is_op("add")(wildcard(), wildcard())
$a = *; $b = *; fn($a, $b) { add($a, $b) }
fn(...) { * }
is_tuple([*, *])
(*, *)
(*,)
()
(...)
is_tuple(...)
is_tuple_get_item((*, *), 1)
(*, *).1
(*, *).*
add | subtract
has_type(Tensor[(10, 10), float32])
*.has_type(Tensor[(10, 10), float32])
has_dtype("float16")
*.has_dtype(float16)
has_shape([10, 10])
*.has_shape([?, 3])
add {TOpPattern=0}
add.has_attr({"TOpPattern": 0})
has_attr({"Composite": "add"})
is_if(less(%x, %y), %x, %y)
is_let(%lv, less(%x, %y), %lv)
dominates(nn.conv2d(*, *), (* {TOpPattern=0})(*), add(*, *))
add(*, *).dominates(nn.conv2d(*, *))
# pipelines, optional stages, captures
nn.conv2d(*, is_constant()) |> nn.bias_add(_, *) |> nn.relu(_)
nn.conv2d(*, *) |> nn.bias_add(_, *)? |> nn.relu(_)
nn.conv2d(*, *).optional(nn.relu(_))
$x = nn.relu(*); add($x, $x)
add($x, $x)
nn.conv2d($data, $weight) {strides=[1, 1], padding=[0, 0, 0, 0], data_layout="NCHW"}
is_expr(1f) | is_expr(0)
*(...)
(add | subtract)(*, *)
qnn.conv2d(*, *, *, *, *, *)
