# payment-saga: reserve stock, charge, ship; when a later step fails, undo
# what was done, newest first (a saga): compensate blocks, a breaker,
# retry.when and an idempotency key.
#   flowrun apply examples/payment-saga.hcl                          # completes
#   flowrun apply examples/payment-saga.hcl --input card=flaky       # charge retried once
#   flowrun apply examples/payment-saga.hcl --input card=declined    # stock released, run fails
#   flowrun apply examples/payment-saga.hcl --input sku=discontinued # refunded, released, run fails

workflow "payment-saga" {
  version = "2.0.0" # 2: compensate blocks replaced the switch and its steps

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
    compensate { # runs when a later step fails the run
      exec { command = ["./bin/inventory", "release", "{{ steps.reserve.output.json.reservation }}"] }
    }
  }

  step "charge" {
    depends_on      = [step.reserve]
    breaker         = breaker.payments
    timeout         = "15s"
    idempotency_key = "charge-{{ input.order_id }}" # a natural key for the gateway
    retry {
      attempts = 4
      backoff  = "500ms"
      # Retry only what may succeed next time: timeouts and exit 75.
      when = "error.kind == 'timeout' || (has(error.exit_code) && error.exit_code == 75)"
    }
    exec { command = ["./bin/payments", "charge", "{{ input.order_id }}", "{{ input.amount }}", "{{ input.card }}"] }
    compensate {
      retry { attempts = 3 } # a refund must go through
      exec { command = ["./bin/payments", "refund", "{{ steps.charge.output.json.charge_id }}"] }
    }
  }

  step "ship" {
    depends_on = [step.charge]
    exec { command = ["./bin/inventory", "ship", "{{ input.order_id }}", "{{ input.sku }}"] }
  }

  output "charge_id" { value = "{{ steps.charge.output.json.charge_id }}" }
  output "tracking" { value = "{{ steps.ship.output.json.tracking }}" }
}
