package httpapi

import (
	"io"
	"net/http"

	"github.com/httpkv/httpkv/openapi"
)

// The OpenAPI document of this API is generated from the annotations on
// the handlers (swag) into package openapi; go generate ./openapi/ makes
// it again. The general part of it is here.

// @title           httpkv
// @version         1
// @description     An etcd-style MVCC key-value store served as an HTTP/JSON API, with watch streams as Server-Sent Events.
// @description
// @description     Keys and values are byte strings. In JSON a key or value is a UTF-8 string field (key, value, range_end...); when its bytes are not valid UTF-8 the object carries the *_base64 twin instead (key_base64, value_base64), never both. Requests accept either form.
// @description
// @description     Every successful answer that reflects the store has "header": {"revision": R}, the store's current revision when the request was served, and the same number in the X-Revision header.
// @description
// @description     Every error is {"error": {"code", "message", ...}}.
// @description
// @description     When auth is enabled, every /v1 call but POST /v1/auth/token and GET /v1/auth/status needs a token from POST /v1/auth/token, as "Authorization: Bearer <token>" or, on GET /v1/watch only (a browser's EventSource cannot set a header), as the access_token query parameter; elsewhere a token in the query answers 401. While auth is disabled no token is needed.
// @BasePath        /
// @accept          json
// @produce         json

// @securityDefinitions.apikey BearerAuth
// @in                         header
// @name                       Authorization
// @description                "Bearer <token>", with a token from POST /v1/auth/token (an HTTP bearer token).

// @securityDefinitions.apikey AccessToken
// @in                         query
// @name                       access_token
// @description                The token as a query parameter, on GET /v1/watch only, for clients that cannot set a header (a browser's EventSource).

// @tag.name        kv
// @tag.description Keys: read, range, put and delete.
// @tag.name        txn
// @tag.description Transactions: compare, then success or failure ops, at one revision.
// @tag.name        watch
// @tag.description Watches as Server-Sent Events.
// @tag.name        leases
// @tag.description Leases: keys attached to one go when it expires or is revoked.
// @tag.name        maintenance
// @tag.description Compaction, status, defragmentation and alarms.
// @tag.name        auth
// @tag.description Users, roles, permissions and tokens.
// @tag.name        service
// @tag.description Health, metrics, this document and the web console.

// openAPI serves GET /openapi.json: the OpenAPI 3.0 document.
//
//	@Summary		The OpenAPI 3.0 document of this API
//	@Description	The OpenAPI 3.0 document of everything this API serves, converted from the Swagger 2.0 one at /swagger.json.
//	@Tags			service
//	@ID				getOpenAPI
//	@Produce		json
//	@Success		200	{object}	object	"An OpenAPI 3.0 document."
//	@Failure		500	{object}	wire.ErrorResponse	"The embedded document is not valid (internal)."
//	@Router			/openapi.json [get]
func (h *Handler) openAPI(w http.ResponseWriter, r *http.Request) {
	if err := h.openAPIValid(); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeDocument(w, openapi.V3())
}

// swagger serves GET /swagger.json: the Swagger 2.0 document swag made.
//
//	@Summary		The Swagger 2.0 document of this API
//	@Description	The Swagger 2.0 document generated from the server's annotations; /openapi.json is the same API as OpenAPI 3.0.
//	@Tags			service
//	@ID				getSwagger
//	@Produce		json
//	@Success		200	{object}	object	"A Swagger 2.0 document."
//	@Router			/swagger.json [get]
func (h *Handler) swagger(w http.ResponseWriter, r *http.Request) {
	writeDocument(w, openapi.V2())
}

func writeDocument(w http.ResponseWriter, doc string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, doc)
}
