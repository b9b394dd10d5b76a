test "unclosed" {
  expect {
    status = "completed" = 1 # ERROR: Missing newline after argument
  }
}
