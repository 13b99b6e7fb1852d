package session

import "github.com/memdoctor/memdoctor/agent/record"

// Role is what a stored snapshot was taken for, as its label says (record.Role: the agent
// writes the labels, the tool reads them).
type Role = record.Role

// The roles of snapshots.
const (
	RolePeriodic = record.RolePeriodic
	RoleBefore   = record.RoleBefore
	RoleAfter    = record.RoleAfter
	RoleOther    = record.RoleOther
)

// RoleOf reads a snapshot's role from its label.
func RoleOf(label string) Role { return record.RoleOf(label) }
