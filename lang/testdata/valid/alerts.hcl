workflow "alerting" {
  version = "1.0.0"
  secret "hook" { env = "HOOK_URL" }

  step "work" {
    exec { command = ["work"] }
  }

  alert "pager" {
    on = ["failed", "timed_out", "interrupted", "dead_lettered"]
    http {
      method  = "POST"
      url     = "{{ secrets.hook }}"
      headers = { "Content-Type" = "application/json" }
      body = {
        text = "{{ run.workflow }} {{ run.id }}: {{ event.kind }} {{ event.message }}"
        step = "{{ event.step }}"
        code = "{{ steps.work.output.exit_code }}"
      }
    }
  }

  alert "log" {
    on = ["failed"]
    exec {
      command = ["logger", "flowrun {{ run.id }} {{ event.kind }}"]
    }
  }
}
