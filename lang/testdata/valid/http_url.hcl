workflow "http_url" {
  version = "1.0.0"
  input "base" { type = string }
  input "id" { type = string }
  input "host" { type = string }
  secret "hook" { env = "HOOK_URL" }

  step "path_and_query" {
    http {
      url   = "https://api.example.com/items/{{ input.id }}?q={{ input.id }}#{{ input.id }}"
      query = { page = 2, user = "{{ input.id }}" }
    }
  }

  step "base" {
    http {
      url              = "{{ input.base }}/items/{{ input.id }}"
      follow_redirects = false
      expect           = [200, 302]
    }
  }

  step "host" {
    http { url = "https://{{ input.host }}:8443/x" }
  }

  step "raw" {
    http { url = "https://api.example.com/{{ url.raw(input.id) }}/{{ url.pathEscape(input.id) }}?{{ url.raw('a=' + url.queryEscape(input.id)) }}" }
  }

  step "whole" {
    http { url = "{{ secrets.hook }}" }
  }
}
