package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// servePetstore answers the petstore operations of the openapi
// testscripts under /petstore/v1: listPets, showPetById (a pet named
// after its id) and createPets (the pet sent, with the X-Request-Id it
// came with as its tag).
func servePetstore(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.Path, "/petstore/v1")
	w.Header().Set("Content-Type", "application/json")
	switch {
	case p == "/pets" && r.Method == http.MethodGet:
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		pets := []map[string]any{}
		for i := 1; i <= min(limit, 3); i++ {
			pets = append(pets, map[string]any{"id": i, "name": "pet-" + strconv.Itoa(i)})
		}
		_ = json.NewEncoder(w).Encode(pets)
	case p == "/pets" && r.Method == http.MethodPost:
		var pet map[string]any
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &pet) != nil {
			http.Error(w, `{"code": 400, "message": "want a JSON pet"}`, http.StatusBadRequest)
			return
		}
		pet["tag"] = r.Header.Get("X-Request-Id")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(pet)
	case strings.HasPrefix(p, "/pets/") && r.Method == http.MethodGet:
		id := strings.TrimPrefix(p, "/pets/")
		n, err := strconv.Atoi(id)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"code": 400, "message": "petId is not an integer: " + id})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": n, "name": "pet-" + id})
	default:
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{"code": 404, "message": "no such route"})
	}
}
