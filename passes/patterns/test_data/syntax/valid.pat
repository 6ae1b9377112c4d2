# the examples of docs/patterns.md
nn.conv2d(*, is_constant()) |> nn.bias_add(_, *) |> nn.relu(_)
