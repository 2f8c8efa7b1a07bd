package auth

import "github.com/httpkv/httpkv/kv"

// Sentinel errors. Callers tell failures apart with errors.Is; each
// carries the code the API answers it with. Their messages never name
// keys or other users' permissions, nor the routes that help: the API
// adds those (httpapi/error_hints.go).
var (
	// ErrUnauthenticated: no token, or one that is unknown, expired or
	// revoked, while auth is enabled.
	ErrUnauthenticated = kv.NewError(kv.CodeUnauthenticated, "the token is missing, invalid or expired")
	// ErrBadCredentials: wrong user name or password.
	ErrBadCredentials = kv.NewError(kv.CodeUnauthenticated, "wrong user name or password")
	// ErrPermissionDenied: the user's roles do not allow the operation.
	ErrPermissionDenied = kv.NewError(kv.CodePermissionDenied, "permission denied: the user's roles do not allow this on every key it touches")
	// ErrTooManyAttempts: too many failed token requests for this user or
	// from this address; try again later.
	ErrTooManyAttempts = kv.NewError(kv.CodeTooManyRequests, "too many failed attempts: try again later")
	ErrUserNotFound    = kv.NewError(kv.CodeUserNotFound, "the user does not exist")
	ErrRoleNotFound    = kv.NewError(kv.CodeRoleNotFound, "the role does not exist")
	ErrUserExists      = kv.NewError(kv.CodeAlreadyExists, "the user already exists")
	ErrRoleExists      = kv.NewError(kv.CodeAlreadyExists, "the role already exists")
	// ErrPermissionNotFound: revoking a permission the role does not have.
	ErrPermissionNotFound = kv.NewError(kv.CodePermissionNotFound, "the role has no permission on exactly this range")
	// ErrRootMissing: enabling auth needs a root user holding the root role.
	ErrRootMissing = kv.Errorf(kv.ErrInvalidArgument, "enabling auth needs a user \"root\" with the role \"root\": create them first")
	// ErrNotEnabled: tokens are issued only while auth is enabled.
	ErrNotEnabled = kv.Errorf(kv.ErrInvalidArgument, "auth is not enabled: tokens are issued only once it is")
	// ErrInvalid: a malformed name, password or permission.
	ErrInvalid = kv.Errorf(kv.ErrInvalidArgument, "invalid user, role or permission")
	// ErrCorrupt: a stored record cannot be read.
	ErrCorrupt = kv.NewError(kv.CodeInternal, "corrupt auth record")
)

func invalidf(format string, args ...any) error { return kv.Errorf(ErrInvalid, format, args...) }

func userNotFound(name string) error {
	return kv.Errorf(ErrUserNotFound, "the user %q does not exist", name)
}

func roleNotFound(name string) error {
	return kv.Errorf(ErrRoleNotFound, "the role %q does not exist", name)
}
