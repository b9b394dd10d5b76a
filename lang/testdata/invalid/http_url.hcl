workflow "http_url" {
  version = "1.0.0"
  input "h" { type = string }

  step "not_a_url" {
    http { url = "not a url" } # ERROR: Invalid url
  }

  step "relative" {
    http { url = "/orders/1" } # ERROR: Invalid url
  }

  step "number" {
    http { url = 42 } # ERROR: Invalid url
  }

  step "ftp" {
    http { url = "ftp://example.com/x" } # ERROR: Invalid url
  }

  step "port_range" {
    http { url = "http://h:99999/" } # ERROR: Invalid url
  }

  step "no_host" {
    http { url = "http:///x" } # ERROR: Invalid url
  }

  step "bad_port" {
    http { url = "http://example.com:port/x" } # ERROR: Invalid url
  }

  step "scheme_from_value" {
    http { url = "http{{ input.h }}://example.com/x" } # ERROR: Invalid url
  }

  step "scheme_from_raw" {
    http { url = "ht{{ url.raw(input.h) }}://example.com/x" } # ERROR: Invalid url
  }

  step "template_without_host" {
    http { url = "https:///orders/{{ input.h }}" } # ERROR: Invalid url
  }

  step "template_ftp" {
    http { url = "ftp://example.com/{{ input.h }}" } # ERROR: Invalid url
  }

  step "map_in_host" {
    http { url = "https://{{ input }}/x" } # ERROR: Invalid url
  }

  step "list_in_port" {
    http { url = "https://example.com:{{ [input.h] }}/x" } # ERROR: Invalid url
  }

  step "query_not_text" {
    http {
      url   = "https://example.com/x"
      query = { ids = [1, 2] } # ERROR: Incorrect value type
    }
  }

  step "follow_not_bool" {
    http {
      url              = "https://example.com/x"
      follow_redirects = "no" # ERROR: Incorrect value type
    }
  }
}
