# payment-saga: reserve stock, charge, ship; undo what was done when a later
# step fails (a saga): a breaker, retry.when, on_error and a switch.
#   flowrun apply examples/payment-saga.hcl                          # completes
#   flowrun apply examples/payment-saga.hcl --input card=flaky       # charge retried once
#   flowrun apply examples/payment-saga.hcl --input card=declined    # stock released, run fails
#   flowrun apply examples/payment-saga.hcl --input sku=discontinued # refund, run fails

workflow "payment-saga" {
  version = "1.0.0"

  input "order_id" {
    type    = string
    default = "A-1001"
  }
  input "amount" {
    type    = number
    default = 42.5
  }
  input "card" {
    type    = string
    default = "ok"
  }
  input "sku" {
    type    = string
    default = "book-17"
  }

  key = "input.order_id"

  breaker "payments" { # shared by every run: 3 failures in a row open it
    failures = 3
    cooldown = "30s"
  }

  step "reserve" {
    exec { command = ["./bin/inventory", "reserve", "{{ input.order_id }}", "{{ input.sku }}"] }
  }

  step "charge" {
    depends_on      = [step.reserve]
    breaker         = breaker.payments
    timeout         = "15s"
    idempotency_key = "charge-{{ input.order_id }}" # a natural key for the gateway
    on_error        = "continue"                    # failed, but the saga goes on
    retry {
      attempts = 4
      backoff  = "500ms"
      # Retry only what may succeed next time: timeouts and exit 75.
      when = "error.kind == 'timeout' || (has(error.exit_code) && error.exit_code == 75)"
    }
    exec { command = ["./bin/payments", "charge", "{{ input.order_id }}", "{{ input.amount }}", "{{ input.card }}"] }
  }

  step "settle" { # the branch not taken is skipped, with everything after it
    switch {
      case {
        when = "steps.charge.status == 'completed'"
        next = [step.ship]
      }
      default = [step.release]
    }
  }

  step "ship" {
    on_error = "continue"
    exec { command = ["./bin/inventory", "ship", "{{ input.order_id }}", "{{ input.sku }}"] }
  }

  step "release" { # compensation for reserve
    exec { command = ["./bin/inventory", "release", "{{ steps.reserve.output.json.reservation }}"] }
  }

  step "payment_failed" {
    depends_on = [step.release]
    fail { message = "order {{ input.order_id }}: {{ steps.charge.error.message }}" }
  }

  step "refund" { # compensation for charge, only when shipping failed
    when = "steps.ship.status == 'failed'"
    exec { command = ["./bin/payments", "refund", "{{ steps.charge.output.json.charge_id }}"] }
  }
  step "shipping_failed" {
    depends_on = [step.refund]
    fail { message = "order {{ input.order_id }} refunded: {{ steps.ship.error.message }}" }
  }

  output "charge_id" { value = "{{ steps.charge.output.json.charge_id }}" }
  output "tracking" { value = "{{ steps.ship.output.json.tracking }}" }
}
