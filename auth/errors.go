package auth

import "errors"

// Sentinel errors.
var (
	// ErrUnauthenticated: no token, or one that is unknown, expired or
	// revoked, while auth is enabled.
	ErrUnauthenticated = errors.New("auth: missing, invalid or expired token")
	// ErrBadCredentials: wrong user name or password.
	ErrBadCredentials = errors.New("auth: wrong user name or password")
	// ErrPermissionDenied: the user's roles do not allow the operation.
	ErrPermissionDenied = errors.New("auth: permission denied")
	// ErrTooManyAttempts: too many failed token requests for this user or
	// from this address; try again later.
	ErrTooManyAttempts = errors.New("auth: too many failed attempts, try again later")
	ErrUserNotFound    = errors.New("auth: user not found")
	ErrRoleNotFound    = errors.New("auth: role not found")
	ErrUserExists      = errors.New("auth: user already exists")
	ErrRoleExists      = errors.New("auth: role already exists")
	// ErrPermissionNotFound: revoking a permission the role does not have.
	ErrPermissionNotFound = errors.New("auth: permission not found")
	// ErrRootMissing: enabling auth needs a root user holding the root role.
	ErrRootMissing = errors.New("auth: enabling auth needs a root user with the root role")
	// ErrNotEnabled: tokens are issued only while auth is enabled.
	ErrNotEnabled = errors.New("auth: authentication is not enabled")
	// ErrInvalid: a malformed name, password or permission.
	ErrInvalid = errors.New("auth: invalid argument")
	// ErrCorrupt: a stored record cannot be read.
	ErrCorrupt = errors.New("auth: corrupt record")
)
