# exec in all its forms.
workflow "exec-forms" {
  version = "0.1.0"

  input "argv" { type = list(string) }
  input "name" {
    type    = string
    default = "world"
  }
  secret "token" { env = "TOKEN" }

  step "argv" {
    exec { command = "{{ input.argv }}" }
  }

  step "script" {
    timeout = "10s"
    exec {
      shell   = true
      command = <<-EOT
        echo "hello {{ input.name }}" | tr a-z A-Z
      EOT
      dir     = "/tmp"
      env     = { TOKEN = "{{ secrets.token }}", COUNT = 3, "X-Y" = "z" }
      stdin   = "{{ steps.argv.output.stdout }}"
    }
  }

  step "numbers" {
    exec { command = ["seq", 1, "{{ steps.script.output.exit_code + 2 }}"] }
  }

  output "shout" { value = "{{ steps.script.output.stdout }}" }
  output "both" {
    value = {
      first  = "{{ steps.argv.output.exit_code }}"
      second = ["{{ steps.numbers.output.stdout }}", "literal"]
    }
  }
}
