# Tests of payment-saga.hcl: flowrun test examples/ (spec/testing.md).

test "charged and shipped" {
  mock "reserve" { output = { json = { reservation = "R-1" } } }
  mock "charge" {
    results = [
      { error = { kind = "exec", exit_code = 75, message = "gateway busy" } },
      { output = { json = { charge_id = "CH-1" } } },
    ]
  }
  mock "ship" { output = { json = { tracking = "TR-1" } } }
  expect {
    status  = "completed"
    outputs = { charge_id = "CH-1", tracking = "TR-1" }
    steps = {
      charge  = { status = "completed", attempts = 2 }
      release = { status = "skipped" }
      refund  = { status = "skipped" }
    }
    calls = { charge = 2, ship = 1 }
  }
}

test "declined card releases the stock" {
  inputs = { card = "declined" }
  mock "reserve" { output = { json = { reservation = "R-2" } } }
  mock "charge" { error = { kind = "exec", exit_code = 2, message = "card declined" } }
  mock "release" { output = { stdout = "released" } }
  expect {
    status = "failed"
    steps = {
      charge         = { status = "failed", attempts = 1 } # exit 2 is not retried
      ship           = { status = "skipped" }
      release        = { status = "completed" }
      payment_failed = { status = "failed" }
    }
    calls  = { release = 1, charge = 1 }
    assert = ["steps.settle.output == 'default'"]
  }
}

test "failed shipment is refunded" {
  mock "reserve" { output = { json = { reservation = "R-3" } } }
  mock "charge" { output = { json = { charge_id = "CH-3" } } }
  mock "ship" { error = { kind = "exec", exit_code = 1, message = "discontinued" } }
  mock "refund" { output = { stdout = "refunded" } }
  expect {
    status = "failed"
    steps  = { refund = { status = "completed" }, shipping_failed = { status = "failed" } }
    calls  = { refund = 1 }
  }
}
