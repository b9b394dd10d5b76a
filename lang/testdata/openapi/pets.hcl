workflow "pets" {
  version = "1.0.0"

  input "id" {
    type = number
  }
  input "base" {
    type    = string
    default = "http://127.0.0.1:8080/v1"
  }

  step "list" {
    openapi {
      document   = "petstore.yaml"
      operation  = "listPets"
      server     = "{{ input.base }}"
      parameters = { limit = 10, status = "sold" }
    }
  }

  step "show" {
    openapi {
      document   = "petstore.yaml"
      operation  = "showPetById"
      server     = "{{ input.base }}"
      parameters = { petId = "{{ input.id }}" }
    }
  }

  step "create" {
    openapi {
      document   = "petstore.yaml"
      operation  = "createPets"
      parameters = { X-Request-Id = "r-{{ input.id }}" }
      body       = { id = 7, name = "{{ steps.show.output.body.name }}", status = "pending" }
    }
  }

  output "name" {
    value = "{{ steps.show.output.body.name }}"
  }
  output "first" {
    value = "{{ steps.list.output.body[0].id }}"
  }
}
