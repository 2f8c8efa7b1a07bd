#!/usr/bin/env bash
# Generates everything in openapi/ from the annotations on the handlers of
# package httpapi (and web), which name the documents of package wire:
# `go generate ./openapi/` runs it. With a directory as argument it writes
# there instead of here (the staleness test does that and compares).
#
#   swagger.json, swagger.yaml  Swagger 2.0, by swag
#   openapi3.json               OpenAPI 3.0, converted from it (internal/convert)
#   client/client.gen.go        the Go client, by oapi-codegen
#   ts/src/schema.ts            the TypeScript client's types, by openapi-typescript
#                               (needs `npm ci` in ts/; HTTPKV_SKIP_TS=1 skips it)
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-.}
mkdir -p "$out/client" "$out/ts/src"

go tool swag init --quiet --requiredByDefault \
	--generalInfo openapi.go --dir ../httpapi,../web,../wire \
	--output "$out" --outputTypes json,yaml
go run ./internal/convert "$out/swagger.json" "$out/openapi3.json"
go tool oapi-codegen -config client/oapi-codegen.yaml \
	-o "$out/client/client.gen.go" "$out/openapi3.json"
if [[ -z ${HTTPKV_SKIP_TS:-} ]]; then
	ts/node_modules/.bin/openapi-typescript "$out/openapi3.json" \
		--output "$out/ts/src/schema.ts" >/dev/null
fi
