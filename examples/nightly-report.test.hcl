# Tests of nightly-report.hcl: flowrun test examples/ (spec/testing.md).
# The sources are collected three at a time, so the collector's mock gives
# every source the same value.

test "a quiet night publishes and flags nothing" {
  inputs = { date = "2025-01-02" }
  mock "collect" { output = { json = { source = "orders", value = 5 } } }
  mock "publish" { output = { json = { path = "/reports/report-2025-01-02.txt" } } }
  expect {
    status  = "completed"
    outputs = { report = "/reports/report-2025-01-02.txt", high = [] }
    steps   = { flag = { status = "skipped" } }
    calls   = { collect = 3 }
  }
}

test "a busy night is flagged" {
  inputs = { date = "2025-01-03", sources = ["orders"] }
  mock "collect" { output = { json = { source = "orders", value = 500 } } }
  mock "publish" { output = { json = { path = "/reports/r.txt" } } }
  mock "flag" { output = { stdout = "notified" } }
  expect {
    status  = "completed"
    outputs = { high = ["orders"] }
    calls   = { flag = 1 }
  }
}

test "a collector that keeps failing fails the run" {
  inputs = { sources = ["errors"] }
  mock "collect" { error = { kind = "exec", exit_code = 1, message = "source down" } }
  expect {
    status = "failed"
    steps  = { collect = { status = "failed" } }
    calls  = { collect = 2 } # retry.attempts
  }
}
