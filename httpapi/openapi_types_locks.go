package httpapi

// The wire of locks and elections, for the OpenAPI document; see
// openapi_types.go.

// lockRequestDoc is the body of POST /v1/locks/{name}.
type lockRequestDoc struct {
	// The lease that is to hold the lock; the lock is released when it expires or is revoked.
	Lease int64 `json:"lease" format:"int64" minimum:"1" maximum:"9007199254740991" example:"1234"`
} // @name LockRequest

// lockResponseDoc answers POST /v1/locks/{name}.
type lockResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	// The owner key, name/<lease ID in lowercase hex>: pass it to DELETE /v1/locks/{name} to release the lock. key_base64 instead when the name is not valid UTF-8.
	Key       string `json:"key,omitempty" example:"jobs/4d2"`
	KeyBase64 string `json:"key_base64,omitempty" format:"byte"`
} // @name LockResponse

// campaignRequestDoc is the body of POST /v1/elections/{name}/campaign.
type campaignRequestDoc struct {
	// The candidate's lease; the candidacy ends when it expires or is revoked.
	Lease int64 `json:"lease" format:"int64" minimum:"1" maximum:"9007199254740991" example:"1234"`
	// The value the leader proclaims (or value_base64); none is the empty value.
	Value       string `json:"value,omitempty" example:"10.0.0.7:8080"`
	ValueBase64 string `json:"value_base64,omitempty" format:"byte"`
} // @name CampaignRequest

// leaderKeyDoc identifies a candidacy that won.
type leaderKeyDoc struct {
	// The election's name (or name_base64); optional in requests, where it must be the name in the path.
	Name       string `json:"name,omitempty" example:"db-primary"`
	NameBase64 string `json:"name_base64,omitempty" format:"byte"`
	// The candidate's key, name/<lease ID in lowercase hex> (or key_base64).
	Key       string `json:"key,omitempty" example:"db-primary/4d2"`
	KeyBase64 string `json:"key_base64,omitempty" format:"byte"`
	// The key's create revision: the candidacy, which a key put again later is not.
	Revision int64 `json:"revision" format:"int64" minimum:"1" example:"42"`
	// The candidate's lease.
	Lease int64 `json:"lease" format:"int64" minimum:"1" maximum:"9007199254740991" example:"1234"`
} // @name LeaderKey

// campaignResponseDoc answers POST /v1/elections/{name}/campaign.
type campaignResponseDoc struct {
	Header responseHeaderDoc `json:"header"`
	// The candidacy that leads: what proclaim and resign take.
	Leader leaderKeyDoc `json:"leader"`
} // @name CampaignResponse

// proclaimRequestDoc is the body of POST /v1/elections/{name}/proclaim.
type proclaimRequestDoc struct {
	// The leader, as campaign answered it.
	Leader leaderKeyDoc `json:"leader"`
	// The new value (or value_base64); none is the empty value.
	Value       string `json:"value,omitempty" example:"10.0.0.8:8080"`
	ValueBase64 string `json:"value_base64,omitempty" format:"byte"`
} // @name ProclaimRequest

// resignRequestDoc is the body of POST /v1/elections/{name}/resign.
type resignRequestDoc struct {
	// The leader, as campaign answered it.
	Leader leaderKeyDoc `json:"leader"`
} // @name ResignRequest

// observeMessageDoc is one message of an observe stream: the data of a
// Server-Sent Event, or one NDJSON line. It is exactly one of the schemas
// its fields name, told apart by their type (see watchMessageDoc).
type observeMessageDoc struct {
	Leader    observeLeaderDoc   `json:"leader" extensions:"x-variant"`
	NoLeader  observeNoLeaderDoc `json:"no_leader" extensions:"x-variant"`
	Compacted watchCompactedDoc  `json:"compacted" extensions:"x-variant"`
	Canceled  watchCanceledDoc   `json:"canceled" extensions:"x-variant"`
} // @name ObserveMessage

// observeLeaderDoc names the leader from a revision on (SSE's default
// event, whose id is the revision).
type observeLeaderDoc struct {
	Type string `json:"type" enums:"leader"`
	// The revision of the change: a new leader, or the leader proclaiming a value.
	Header responseHeaderDoc `json:"header"`
	// The leader's key and value from header.revision on.
	KV keyValueDoc `json:"kv"`
} // @name ObserveLeader

// observeNoLeaderDoc says the office is empty from a revision on (SSE
// event no_leader, whose id is the revision).
type observeNoLeaderDoc struct {
	Type string `json:"type" enums:"no_leader"`
	// The revision from which no one leads.
	Header responseHeaderDoc `json:"header"`
} // @name ObserveNoLeader
