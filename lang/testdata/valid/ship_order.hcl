workflow "ship-order" {
  version     = "1.4.0"          # required, MAJOR.MINOR.PATCH
  description = "Charge, reserve, ship; alert on failure."

  input "order_id" { type = string }
  input "amount"   { type = number }
  input "express" {
    type    = bool
    default = false
  }
  secret "alert_token" { env = "ALERT_TOKEN" }

  key      = "input.order_id"    # CEL: run identity for apply (default: hash of inputs)
  deadline = "2h"                # whole run

  concurrency {                  # instance lock / semaphore, lease based
    key         = "'order-' + input.order_id"
    limit       = 1
    on_conflict = "queue"        # queue | skip | fail
  }

  defaults {                     # for every step unless it says otherwise
    timeout = "30s"
    retry {
      attempts   = 4             # total attempts, 1 = no retry
      backoff    = "1s"          # first delay
      multiplier = 2
      max_delay  = "1m"
      jitter     = "500ms"       # uniform random extra, recorded when drawn
    }
  }

  breaker "payments" {           # shared by all runs and workers, persisted
    failures = 3                 # consecutive failures that open it
    cooldown = "30s"             # then half-open: one trial attempt
  }

  step "price" {
    set {
      total = "{{ input.amount * 1.2 }}"
    }
  }

  step "charge" {
    breaker = breaker.payments
    http {
      method = "POST"
      url    = "http://127.0.0.1:8080/charge"
      body   = { order = "{{ input.order_id }}", amount = "{{ steps.price.output.total }}" }
      expect = [200, 201]        # other statuses are errors
    }
    retry {
      attempts = 6
      when     = "error.status >= 500 || error.kind == 'timeout'" # WARNING: error.status may be absent
    }
  }

  step "route" {
    switch {
      case {
        when = "input.express"
        next = [step.ship_express]
      }
      default = [step.ship_standard]
    }
    depends_on = [step.charge]
  }

  step "ship_express" {
    exec {
      command = ["./bin/ship", "--express", "{{ input.order_id }}"]
      env     = { TOKEN = "{{ secrets.alert_token }}" }
    }
  }
  step "ship_standard" {
    exec { command = ["./bin/ship", "{{ input.order_id }}"] }
  }

  step "label" {
    depends_on = [step.ship_express, step.ship_standard]
    join       = "any"           # all (default) | any: run once the others settle and one completed
    foreach {
      items       = "['box-1', 'box-2', 'box-3']"
      concurrency = 2
      on_failure  = "dead_letter" # fail (default) | continue | dead_letter
    }
    exec { command = ["./bin/label", "{{ item }}"] }
  }

  step "approve" {
    wait {
      signal  = "approval"       # flowrun signal RUN approval --data '{...}'
      timeout = "24h"
    }
  }

  step "cool_down" {
    depends_on = [step.approve]
    sleep { duration = "10m" }   # durable: the run is parked, no worker is held
  }

  step "poll" {
    until    = "steps.poll.output.json.state == 'done'"   # repeat the action until true
    interval = "30s"
    exec { command = ["./bin/status", "{{ input.order_id }}"] }
  }

  step "restock" {
    workflow {
      name    = "restock"
      version = "1"              # MAJOR pin; "1.2" pins MINOR
      input   = { sku = "{{ input.order_id }}" }
    }
  }

  step "reject" {
    when = "steps.approve.output.approved == false"
    fail { message = "rejected by {{ steps.approve.output.by }}" }
  }

  output "tracking" { value = "{{ steps.ship_express.output.stdout }}" }

  alert "ops" {                  # on abnormal ends: failed, interrupted (worker died), dead_lettered, timed_out
    on = ["failed", "interrupted", "dead_lettered"]
    http {
      method = "POST"
      url    = "http://127.0.0.1:9000/alert"
      body   = { text = "{{ run.workflow }} {{ run.id }}: {{ event.kind }} {{ event.message }}" }
    }
  }
}
