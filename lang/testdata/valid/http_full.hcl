workflow "http-full" {
  version = "2.0.1"

  input "order" {
    type = object({ id = string, amount = number, items = list(string) })
  }
  secret "api_key" { env = "API_KEY" }

  breaker "api" {
    failures = 5
    cooldown = "1m"
  }

  step "create" {
    breaker         = breaker.api
    timeout         = "20s"
    idempotency_key = "order-{{ input.order.id }}"
    http {
      method  = "put"
      url     = "https://api.example.com/orders/{{ input.order.id }}"
      headers = { Authorization = "Bearer {{ secrets.api_key }}", "Content-Type" = "application/json" }
      body = {
        id     = "{{ input.order.id }}"
        amount = "{{ input.order.amount }}"
        items  = "{{ input.order.items }}"
        meta   = { source = "flowrun", tries = [1, 2, 3], nothing = null }
      }
      expect = [200, 201, 409]
    }
    retry {
      attempts   = 5
      backoff    = "250ms"
      multiplier = 1.5
      max_delay  = "10s"
      jitter     = "100ms"
      when       = "error.status == 429 || error.status >= 500" # WARNING: error.status may be absent
    }
  }

  step "check" {
    http { url = "https://api.example.com/orders/{{ input.order.id }}/status" }
  }

  step "confirm" {
    when = "steps.create.output.status == 201 && steps.check.output.body.state == 'new'"
    http {
      method = "POST"
      url    = "https://api.example.com/orders/{{ input.order.id }}/confirm"
      body   = "{{ steps.create.output.body }}"
    }
  }

  output "status" { value = "{{ steps.create.output.status }}" }
}
