# Each line is an error: the message and the range it is about.
nn.conv3(*, *)
conv2d(*, *)
foo
add(*, *
add(*, * *)
nn.relu(_)
* |> nn.relu(*)
add(*, *) extra
add(*, *) => subtract(*, *)
$ = *
@table
is_op(add)
is_op("nope")
is_tuple_get_item(*, x)
*.has_dtype("floaty")
*.has_shape([a])
*.has_type(Tensor[(10, float32])
is_expr(add(%x)
is_expr(%x +)
*.frobnicate()
* {data_layout}
* {x=@}
"text"
$x = *; $x = *; $x
(*, *).-1
dominates(*, *)
fn(*) *
is_expr(%x)
is_expr(meta[relay.Constant][0])
