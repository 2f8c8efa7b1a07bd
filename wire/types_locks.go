package wire

// The wire of locks and elections, for the OpenAPI document; see
// types.go.

// LockRequest is the body of POST /v1/locks/{name}.
type LockRequest struct {
	// The lease that is to hold the lock; the lock is released when it expires or is revoked.
	Lease int64 `json:"lease" format:"int64" minimum:"1" maximum:"9007199254740991" example:"1234"`
} // @name LockRequest

// LockResponse answers POST /v1/locks/{name}.
type LockResponse struct {
	Header ResponseHeader `json:"header"`
	// The owner key, name/<lease ID in lowercase hex>: pass it to DELETE /v1/locks/{name} to release the lock. key_base64 instead when the name is not valid UTF-8.
	Key       string `json:"key,omitempty" example:"jobs/4d2"`
	KeyBase64 string `json:"key_base64,omitempty" format:"byte"`
} // @name LockResponse

// CampaignRequest is the body of POST /v1/elections/{name}/campaign.
type CampaignRequest struct {
	// The candidate's lease; the candidacy ends when it expires or is revoked.
	Lease int64 `json:"lease" format:"int64" minimum:"1" maximum:"9007199254740991" example:"1234"`
	// The value the leader proclaims (or value_base64); none is the empty value.
	Value       string `json:"value,omitempty" example:"10.0.0.7:8080"`
	ValueBase64 string `json:"value_base64,omitempty" format:"byte"`
} // @name CampaignRequest

// LeaderKey identifies a candidacy that won.
type LeaderKey struct {
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

// CampaignResponse answers POST /v1/elections/{name}/campaign.
type CampaignResponse struct {
	Header ResponseHeader `json:"header"`
	// The candidacy that leads: what proclaim and resign take.
	Leader LeaderKey `json:"leader"`
} // @name CampaignResponse

// ProclaimRequest is the body of POST /v1/elections/{name}/proclaim.
type ProclaimRequest struct {
	// The leader, as campaign answered it.
	Leader LeaderKey `json:"leader"`
	// The new value (or value_base64); none is the empty value.
	Value       string `json:"value,omitempty" example:"10.0.0.8:8080"`
	ValueBase64 string `json:"value_base64,omitempty" format:"byte"`
} // @name ProclaimRequest

// ResignRequest is the body of POST /v1/elections/{name}/resign.
type ResignRequest struct {
	// The leader, as campaign answered it.
	Leader LeaderKey `json:"leader"`
} // @name ResignRequest
