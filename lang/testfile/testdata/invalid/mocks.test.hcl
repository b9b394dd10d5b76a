test "unknown step" {
  inputs = { service = "web" }
  mock "biuld" { output = { stdout = "ok" } } # ERROR: Unknown step
  mock "total" { output = { n = 1 } } # ERROR: Step cannot be mocked
  mock "build" { output = { stdout = 5, exit_code = 0 } } # ERROR: Mock output does not match the step
  mock "charge" {
    results = [
      { error = { kind = "http", status = 503 } },
      { output = { status = 200, colour = "red" } }, # ERROR: Mock output does not match the step
      { error = { message = "no kind" } }, # ERROR: Invalid mock error
    ]
  }
  mock "rollout" { # ERROR: Invalid mock
    output = {}
    error  = { kind = "exec" }
  }
  expect { status = "completed" }
}
